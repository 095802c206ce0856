"""The prompt-set machinery (issue 12, "upstream prompts at run time"): upstream files read without executing
them, fetched by pinned sha256 and cached, overridable by a local folder offline, and refused with one line where a
task has no upstream template. The templates used here are our own text in upstream's format
(``tests/cases/upstream/``); nothing from upstream is stored in this repository."""

from __future__ import annotations

import functools
import hashlib
import http.server
import threading
from pathlib import Path

import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.cli.commands import main
from sciprobe.core.declaration import Upstream
from sciprobe.core.errors import SciprobeError
from sciprobe.run.upstream import (
    UpstreamTexts,
    check_prompt_set,
    dir_env,
    no_upstream_prompt_reason,
    prompt_set_for,
    python_constants,
)

from golden import CASES_DIR
from upstream_support import pin_stand_ins

CASES = CASES_DIR / "upstream"


def test_python_constants_reads_literals_and_never_runs_the_file() -> None:
    source = '''
import os
raise SystemExit("never executed")
A = "first"
B = {"k": [1, 2], "s": "x"}
C = """  padded  """.strip()
D = os.environ["HOME"]            # not a literal: left out
A = "second"                      # the later assignment wins, as at run time
E = F = "both"
def f():
    G = "inside a function: not module level"
'''
    values = python_constants(source)
    assert values == {"A": "second", "B": {"k": [1, 2], "s": "x"}, "C": "padded", "E": "both", "F": "both"}


def test_python_constants_syntax_error_is_one_line() -> None:
    with pytest.raises(SciprobeError) as err:
        python_constants("x = (", "up:utils.py")
    assert "up:utils.py" in str(err.value) and "\n" not in str(err.value)


def test_prompt_set_names() -> None:
    assert check_prompt_set(None) == "sciprobe" and check_prompt_set("upstream") == "upstream"
    with pytest.raises(SciprobeError, match="unknown prompt set"):
        check_prompt_set("paper")


def _pinned(path: str, body: bytes) -> Upstream:
    return Upstream("owner/repo", "a" * 40, {path: hashlib.sha256(body).hexdigest()})


def test_local_folder_override_at_repo_path_or_under_the_benchmark_name(tmp_path: Path) -> None:
    body = b'T = "hello %s"\n'
    upstream = _pinned("src/p.py", body)
    (tmp_path / "flat" / "src").mkdir(parents=True)
    (tmp_path / "flat" / "src" / "p.py").write_bytes(body)
    (tmp_path / "nested" / "mybench" / "src").mkdir(parents=True)
    (tmp_path / "nested" / "mybench" / "src" / "p.py").write_bytes(b'T = "changed %s"\n')
    flat = UpstreamTexts("mybench", upstream, tmp_path / "flat")
    assert flat.constant("src/p.py", "T") == "hello %s" and flat.warnings() == []
    assert flat.provenance()["files"]["src/p.py"]["matches_pin"] is True
    nested = UpstreamTexts("mybench", upstream, tmp_path / "nested")
    assert nested.constant("src/p.py", "T") == "changed %s"
    (warning,) = nested.warnings()
    assert "differs from owner/repo@aaaaaaa" in warning and "local copy" in warning
    with pytest.raises(SciprobeError, match="defines no literal 'U'"):
        nested.constant("src/p.py", "U")
    with pytest.raises(SciprobeError, match="is a str, expected dict"):
        nested.constant("src/p.py", "T", dict)
    with pytest.raises(SciprobeError, match="not a pinned prompt file"):
        nested.file("other.py")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SciprobeError, match="not found in the upstream folder"):
        UpstreamTexts("mybench", upstream, empty).text("src/p.py")
    with pytest.raises(SciprobeError, match="upstream folder .* not found"):
        UpstreamTexts("mybench", upstream, tmp_path / "missing")


def test_download_is_checked_against_the_pin_cached_then_read_offline(tmp_path: Path, monkeypatch) -> None:
    """Served from a loopback HTTP server standing in for raw.githubusercontent.com."""
    body = b'CONTEXT = """Solve it.""".strip()\n'
    site = tmp_path / "site"
    (site / "owner" / "repo").mkdir(parents=True)
    (site / "owner" / "repo" / "p.py").write_bytes(body)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setattr(Upstream, "raw_url", lambda self, path: f"{base}/{self.repo}/{path}")
    monkeypatch.delenv(dir_env("mybench"), raising=False)
    try:
        wrong = Upstream("owner/repo", "b" * 40, {"p.py": "0" * 64})
        with pytest.raises(SciprobeError, match="expected 000000000000"):
            UpstreamTexts("mybench", wrong, offline_mode=False).text("p.py")
        texts = UpstreamTexts("mybench", _pinned("p.py", body), offline_mode=False)
        assert texts.constant("p.py", "CONTEXT") == "Solve it."
    finally:
        server.shutdown()
    again = UpstreamTexts("mybench", _pinned("p.py", body), offline_mode=True)  # no server: from the cache
    assert again.constant("p.py", "CONTEXT") == "Solve it."
    assert "cached" in again.provenance()["files"]["p.py"]["source"]
    other = Upstream("owner/repo", "c" * 40, {"p.py": hashlib.sha256(b"x").hexdigest()})
    with pytest.raises(SciprobeError) as err:
        UpstreamTexts("mybench", other, offline_mode=True).text("p.py")
    message = str(err.value)
    assert "not cached" in message and "--upstream-dir" in message and dir_env("mybench") in message
    assert "\n" not in message


def test_the_environment_variable_names_the_local_folder(monkeypatch) -> None:
    bench = get_benchmark("idrbench")
    monkeypatch.setenv(dir_env("idrbench"), str(pin_stand_ins(monkeypatch, "idrbench")))
    prompts = prompt_set_for(bench, bench.task("ipi"), "upstream")
    assert prompts.name == "upstream" and set(prompts.builders) == {"build_messages"}
    assert prompts.record()["upstream_prompts"]["commit"] == bench.upstream.commit
    assert prompts.warnings == ()


def test_every_upstream_prompt_factory_builds_from_local_copies() -> None:
    """Every task that declares an upstream prompt set builds it from our stand-in files, and the stand-ins
    differ from the pinned files (so no upstream text is committed here)."""
    from sciprobe.core.registry import benchmark_names

    built = 0
    for name in benchmark_names():
        bench = get_benchmark(name)
        for task in bench.tasks.values():
            if task.upstream_prompt is None:
                continue
            with pytest.raises(SciprobeError, match="--allow-modified-prompts"):
                prompt_set_for(bench, task, "upstream", local_dir=CASES / name)
            prompts = prompt_set_for(bench, task, "upstream", local_dir=CASES / name, allow_modified=True)
            assert prompts.builders and prompts.warnings  # built, and flagged as not the pinned files
            assert prompts.name == "upstream-modified"
            assert all(not f["matches_pin"] for f in prompts.provenance["files"].values())
            built += 1
    assert built >= 13


def test_tasks_without_an_upstream_template_refuse_with_the_reason(tmp_path: Path, capsys) -> None:
    scitaste, prescience = get_benchmark("scitaste"), get_benchmark("prescience")
    assert "no public upstream code" in no_upstream_prompt_reason(scitaste, scitaste.task("pure_qa"))
    assert "no model-facing template" in no_upstream_prompt_reason(prescience,
                                                                   prescience.task("citation_prediction"))
    assert main(["evaluate", "scitaste:pure_qa", "--model", "local/smollm2", "--prompts", "upstream",
                 "--output-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: task scitaste:pure_qa has no upstream prompt set") and err.count("\n") == 1
    assert not (tmp_path / "results").exists()


def test_unknown_prompt_set_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["evaluate", "idrbench:ipi", "--model", "local/smollm2", "--prompts", "paper"])
    assert exc.value.code == 2 and "invalid choice" in capsys.readouterr().err
