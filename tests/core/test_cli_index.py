"""The light commands' index of the declarations (:mod:`sciprobe.cli_index`): the same rows as computing them, read
from the cache while nothing changed, recomputed when a source file, the benchmark folders or the file itself
changed, and never an error when the cache cannot be read or written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from sciprobe import cli_index as index_module
from sciprobe import task_listing
from sciprobe.benchmarks import benchmark_names, get_benchmark

from golden import REPO


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SCIPROBE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def computations(monkeypatch) -> list[int]:
    """One entry per time the index was computed from the declarations."""
    calls: list[int] = []
    real = task_listing.task_rows

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(task_listing, "task_rows", counting)
    return calls


def _stored(home: Path) -> Path:
    (path,) = (home / "cli-index").glob("*.json")
    return path


def test_index_is_what_the_declarations_say(home) -> None:
    index = index_module.cli_index()
    assert index["tasks"] == task_listing.task_rows()
    assert index["commands"] == {c.name: {"module": c.module, "help": c.help}
                                 for b in benchmark_names() for c in get_benchmark(b).commands}
    assert index_module.cli_index() == index  # and so is the cached copy


def test_cached_until_a_source_changes(home, computations) -> None:
    first = index_module.cli_index()
    assert index_module.cli_index() == first and len(computations) == 1
    stored = json.loads(_stored(home).read_text())
    declaration = str(Path(sys.modules["sciprobe.benchmarks.idrbench"].__file__))
    assert declaration in [source for source, _, _ in stored["sources"]]
    for source in stored["sources"]:  # as if the declaration had been edited since
        if source[0] == declaration:
            source[2] -= 1
    _stored(home).write_text(json.dumps(stored))
    assert index_module.cli_index() == first and len(computations) == 2
    assert index_module.cli_index() == first and len(computations) == 2


@pytest.mark.parametrize("change", ["new benchmark folder", "source gone", "other format", "garbage", "empty",
                                    "no index", "other installation"])
def test_recomputed_when_the_cache_does_not_match(change, home, computations) -> None:
    first = index_module.cli_index()
    path = _stored(home)
    stored = json.loads(path.read_text())
    if change == "new benchmark folder":
        stored["packages"] = stored["packages"][:-1]
    elif change == "source gone":
        stored["sources"].append([str(home / "gone.py"), 1, 1])
    elif change == "other format":
        stored["format"] += 1
    elif change == "no index":
        del stored["index"]["tasks"]
    elif change == "other installation":
        stored["benchmarks"] = str(home / "elsewhere" / "benchmarks")
    path.write_text("{not json" if change == "garbage" else "" if change == "empty" else json.dumps(stored))
    assert index_module.cli_index() == first and len(computations) == 2
    assert json.loads(path.read_text())["format"] == index_module.INDEX_FORMAT  # and stored again


def test_an_unwritable_home_is_not_an_error(tmp_path, monkeypatch, computations) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("SCIPROBE_HOME", str(blocker / "home"))  # mkdir fails: a file is in the way
    first, second = index_module.cli_index(), index_module.cli_index()
    assert first == second and first["tasks"] and first["commands"]
    assert len(computations) == 2  # nothing could be stored, so every call computes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_a_broken_declaration_is_never_cached(home, monkeypatch) -> None:
    import sciprobe.benchmarks as registry

    def names_with_a_broken_one() -> list[str]:
        warnings.warn("benchmark 'broken' is skipped: its declaration fails to import (boom)",
                      registry.DeclarationWarning, stacklevel=2)
        return ["idrbench"]

    monkeypatch.setattr(registry, "benchmark_names", names_with_a_broken_one)
    with pytest.warns(registry.DeclarationWarning, match="'broken' is skipped"):
        index = index_module.cli_index()
    assert {row["task"].split(":")[0] for row in index["tasks"]} == {"idrbench"}
    assert not (home / "cli-index").exists()  # the next run warns again


def test_another_warning_while_importing_is_shown_and_the_index_still_cached(home, monkeypatch) -> None:
    import sciprobe.benchmarks as registry

    real = registry.benchmark_names

    def names_with_a_deprecation() -> list[str]:
        warnings.warn("some library is deprecated", DeprecationWarning, stacklevel=2)
        return real()

    monkeypatch.setattr(registry, "benchmark_names", names_with_a_deprecation)
    with pytest.warns(DeprecationWarning, match="deprecated"):
        index = index_module.cli_index()
    assert json.loads(_stored(home).read_text())["index"] == index


def _run(home: Path, *argv: str) -> dict:
    probe = ("import contextlib, io, json, sys\nimport sciprobe.cli as cli\nout = io.StringIO()\n"
             "with contextlib.redirect_stdout(out):\n    try:\n        status = cli.main(sys.argv[1:])\n"
             "    except SystemExit as exc:\n        status = exc.code\n"
             "print(json.dumps({'status': status, 'output': out.getvalue(), 'modules': sorted(sys.modules)}))")
    env = {**os.environ, "SCIPROBE_HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, cwd=REPO, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("argv", [["tasks"], ["tasks", "--json"], ["tasks", "scitaste", "idrbench"], ["--help"]],
                         ids=" ".join)
def test_a_cached_command_imports_no_declaration(argv, tmp_path) -> None:
    cold, warm = _run(tmp_path, *argv), _run(tmp_path, *argv)
    assert cold["status"] == warm["status"] == 0
    assert warm["output"] == cold["output"]
    assert "sciprobe.declaration" in cold["modules"] and "sciprobe.declaration" not in warm["modules"]


def test_tasks_of_an_unknown_benchmark_is_a_one_line_error(tmp_path) -> None:
    env = {**os.environ, "SCIPROBE_HOME": str(tmp_path)}
    for _ in range(2):  # computing the index, then from the cache
        done = subprocess.run([sys.executable, "-m", "sciprobe", "tasks", "idrbench", "nosuch"], capture_output=True,
                              text=True, cwd=REPO, env=env, timeout=300)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.strip() == ("error: unknown benchmark 'nosuch'; known: "
                                       + ", ".join(benchmark_names()))
