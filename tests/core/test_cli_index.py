"""The light commands' index of the declarations (:mod:`sciprobe.cli.index`): the same rows as computing them, read
from the cache while nothing changed, recomputed when a source file, the benchmark folders or the file itself
changed, and never an error when the cache cannot be read or written. A planted or damaged file (issue 22: the
cases in tests/cases/cli_index_planted.json), one another user owns or could have written, a symlink, a FIFO or an
oversized file never steers or crashes the CLI: the index is recomputed (and stored again when the folder is
ours)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import warnings
import zlib
from pathlib import Path

import pytest

from sciprobe.cli import index as index_module
from sciprobe.cli import task_listing
from sciprobe.core.registry import benchmark_names, get_benchmark
from sciprobe.cli.commands import main

from golden import REPO, load_cases


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
    import sciprobe.core.registry as registry

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
    import sciprobe.core.registry as registry

    real = registry.benchmark_names

    def names_with_a_deprecation() -> list[str]:
        warnings.warn("some library is deprecated", DeprecationWarning, stacklevel=2)
        return real()

    monkeypatch.setattr(registry, "benchmark_names", names_with_a_deprecation)
    with pytest.warns(DeprecationWarning, match="deprecated"):
        index = index_module.cli_index()
    assert json.loads(_stored(home).read_text())["index"] == index


def _run(home: Path, *argv: str) -> dict:
    probe = ("import contextlib, io, json, sys\nimport sciprobe.cli.commands as cli\nout = io.StringIO()\n"
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
    assert "sciprobe.core.declaration" in cold["modules"] and "sciprobe.core.declaration" not in warm["modules"]


def test_tasks_of_an_unknown_benchmark_is_a_one_line_error(tmp_path) -> None:
    env = {**os.environ, "SCIPROBE_HOME": str(tmp_path)}
    for _ in range(2):  # computing the index, then from the cache
        done = subprocess.run([sys.executable, "-m", "sciprobe", "tasks", "idrbench", "nosuch"], capture_output=True,
                              text=True, cwd=REPO, env=env, timeout=300)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.strip() == ("error: unknown benchmark 'nosuch'; known: "
                                       + ", ".join(benchmark_names()))


# ---- planted, damaged and foreign index files (issue 22) ------------------------------------------------------

PLANTED = load_cases("cli_index_planted", "cases")
#: The commands whose output a planted index changed or crashed.
PROBED = (["--help"], ["tasks", "--json"], ["sgibench", "--help"])
NOBODY = 65534  # the conventional unprivileged uid/gid


def _checksum(index) -> int:
    """What the stored checksum is documented to be: crc32 of the index's canonical JSON."""
    return zlib.crc32(json.dumps(index, sort_keys=True, separators=(",", ":")).encode())


def _plant(path: Path, case: dict) -> None:
    stored = json.loads(path.read_text())
    if "append_row" in case:
        stored["index"]["tasks"].append({**stored["index"]["tasks"][0], **case["append_row"]})
    else:
        *parents, last = case["set"]
        target = stored
        for key in parents:
            target = target[key]
        target[last] = case["value"]
    if case["checksum"]:
        stored["checksum"] = _checksum(stored["index"])
    path.write_text(json.dumps(stored))


def _outputs(capsys) -> list[tuple[object, str, str]]:
    """(status, stdout, stderr) of each probed command, run in this process (a traceback fails the test)."""
    seen = []
    for argv in PROBED:
        try:
            status = main(list(argv))
        except SystemExit as exc:  # --help
            status = exc.code
        out, err = capsys.readouterr()
        seen.append((status, out, err))
    return seen


def _planted_copy(home: Path, change) -> Path:
    """The stored index rewritten by ``change(stored)`` with a matching checksum: a file every check but the one
    under test would accept (its only difference: sgibench's help says PLANTED)."""
    index_module.cli_index()
    path = _stored(home)
    stored = json.loads(path.read_text())
    stored["index"]["commands"]["sgibench"]["help"] = "PLANTED"
    change(stored)
    stored["checksum"] = _checksum(stored["index"])
    path.write_text(json.dumps(stored))
    return path


@pytest.mark.parametrize("case", PLANTED, ids=[c["name"] for c in PLANTED])
def test_a_planted_index_never_steers_or_crashes_the_cli(case, home, capsys) -> None:
    clean = _outputs(capsys)
    assert [status for status, _, _ in clean] == [0, 0, 0] and "Beautiful is better" not in clean[2][1]
    path = _stored(home)
    _plant(path, case)
    sys.modules.pop("this", None)
    assert _outputs(capsys) == clean
    assert "this" not in sys.modules  # the module the planted index named was never imported
    stored = json.loads(path.read_text())  # and the file was stored again, from the declarations
    assert stored["index"] == index_module.cli_index() and stored["checksum"] == _checksum(stored["index"])
    assert "planted" not in path.read_text().lower()


def test_a_planted_foreign_module_is_not_imported_by_the_command_line(tmp_path) -> None:
    _run(tmp_path, "tasks")
    (path,) = (tmp_path / "cli-index").glob("*.json")
    _plant(path, PLANTED[0])
    done = subprocess.run([sys.executable, "-m", "sciprobe", "sgibench", "--help"], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "SCIPROBE_HOME": str(tmp_path)}, timeout=300)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("usage: sciprobe sgibench") and "Beautiful is better" not in done.stdout


def test_every_computed_index_passes_its_own_checks(home) -> None:
    index = index_module.cli_index()
    packages = sorted(benchmark_names())
    assert index_module.index_problem(index, packages) is None
    assert all(set(row) == set(task_listing.ROW_FIELDS) for row in index["tasks"])
    assert index_module.index_problem({**index, "tasks": [*index["tasks"], 1]}, packages) is not None


def test_a_declared_command_outside_the_benchmark_folders_is_left_out(home, monkeypatch) -> None:
    import dataclasses

    import sciprobe.core.registry as registry
    from sciprobe.core.declaration import Command

    real = registry.get_benchmark

    def with_a_foreign_command(name: str):
        benchmark = real(name)
        if name != "sgibench":
            return benchmark
        return dataclasses.replace(benchmark, commands=(*benchmark.commands, Command("zen", "the zen", "this")))

    monkeypatch.setattr(registry, "get_benchmark", with_a_foreign_command)
    with pytest.warns(registry.DeclarationWarning, match="'zen'.*'this' is not a module of a benchmark folder"):
        index = index_module.cli_index()
    assert "zen" not in index["commands"] and "sgibench" in index["commands"]
    assert not (home / "cli-index").exists() or not list((home / "cli-index").glob("*.json"))


def test_a_benchmark_command_never_shadows_a_built_in(monkeypatch, capsys) -> None:
    import sciprobe.cli.commands as cli

    monkeypatch.setattr(cli, "_benchmark_commands", lambda: {
        "evaluate": {"module": "sciprobe.benchmarks.sgibench.cli", "help": "not the built-in"},
        "sgibench": {"module": "sciprobe.benchmarks.sgibench.cli", "help": "100% SGI-Bench"}})
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "not the built-in" not in out and "100% SGI-Bench" in out


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_an_index_file_another_user_owns_is_ignored_and_replaced(home, computations) -> None:
    path = _planted_copy(home, lambda stored: None)
    os.chown(path, NOBODY, NOBODY)
    index = index_module.cli_index()
    assert index["commands"]["sgibench"]["help"] != "PLANTED" and len(computations) == 2
    assert path.stat().st_uid == os.geteuid()  # our folder: stored again, as ours
    assert index_module.cli_index() == index and len(computations) == 2


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_an_index_folder_another_user_owns_is_neither_read_nor_written(home, computations) -> None:
    path = _planted_copy(home, lambda stored: None)
    os.chmod(home, 0o1777)  # a shared, world-writable SCIPROBE_HOME where another user made cli-index first
    os.chown(path, NOBODY, NOBODY)
    os.chown(path.parent, NOBODY, NOBODY)
    planted = path.read_bytes()
    for calls in (2, 3):
        assert index_module.cli_index()["commands"]["sgibench"]["help"] != "PLANTED"
        assert len(computations) == calls and path.read_bytes() == planted  # never cached in their folder
    assert [p.name for p in path.parent.iterdir()] == [path.name]


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_an_index_folder_others_can_write_to_is_not_read_then_made_private(mode, home, computations) -> None:
    path = _planted_copy(home, lambda stored: None)
    os.chmod(path.parent, mode)
    assert index_module.cli_index()["commands"]["sgibench"]["help"] != "PLANTED" and len(computations) == 2
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    index_module.cli_index()
    assert len(computations) == 2  # stored again in the now private folder, and read from there


def test_a_world_writable_home_with_our_private_index_folder_is_cached(home, computations) -> None:
    home.mkdir(parents=True)
    os.chmod(home, 0o1777)
    first = index_module.cli_index()
    assert stat.S_IMODE((home / "cli-index").stat().st_mode) == 0o700
    assert index_module.cli_index() == first and len(computations) == 1


@pytest.mark.parametrize("kind", ["group-writable file", "world-writable file", "symlink", "oversized"])
def test_an_index_file_of_the_wrong_kind_is_not_read(kind, home, computations, tmp_path) -> None:
    path = _planted_copy(home, lambda stored: None)
    if kind == "group-writable file":
        os.chmod(path, 0o664)
    elif kind == "world-writable file":
        os.chmod(path, 0o646)
    elif kind == "symlink":
        elsewhere = tmp_path / "elsewhere.json"
        path.rename(elsewhere)
        path.symlink_to(elsewhere)
    else:
        path.write_text(path.read_text() + " " * index_module.MAX_INDEX_BYTES)
    index = index_module.cli_index()
    assert index["commands"]["sgibench"]["help"] != "PLANTED" and len(computations) == 2
    assert path.is_file() and not path.is_symlink() and "PLANTED" not in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) & 0o022 == 0


def test_a_fifo_in_place_of_the_index_does_not_hang(tmp_path) -> None:
    _run(tmp_path, "tasks")
    (path,) = (tmp_path / "cli-index").glob("*.json")
    path.unlink()
    os.mkfifo(path)
    cold = _run(tmp_path, "tasks", "--json")  # a reader blocked on the FIFO would time out here
    assert cold["status"] == 0 and json.loads(cold["output"]) == index_module.cli_index()["tasks"]
    assert path.is_file()  # replaced by the index


def test_an_index_folder_that_is_a_symlink_is_neither_read_nor_written(home, computations, tmp_path) -> None:
    path = _planted_copy(home, lambda stored: None)
    elsewhere = tmp_path / "elsewhere"
    path.parent.rename(elsewhere)  # e.g. planted in a shared home, pointing at a folder of ours
    path.parent.symlink_to(elsewhere, target_is_directory=True)
    planted = (elsewhere / path.name).read_bytes()
    for calls in (2, 3):
        assert index_module.cli_index()["commands"]["sgibench"]["help"] != "PLANTED"
        assert len(computations) == calls and (elsewhere / path.name).read_bytes() == planted
    assert [p.name for p in elsewhere.iterdir()] == [path.name]
