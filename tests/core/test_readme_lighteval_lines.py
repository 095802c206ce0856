"""Every lighteval line of the README completes, run as printed (issues 14, 23.11): through bash, in a folder with
the README's relative paths (``task_cards/``), ``sciprobe`` meaning this checkout's CLI, and its results and
details in the output folder the line names, where ``sciprobe leaderboard --import`` takes them. Only what a test
machine cannot have is swapped in: a loopback OpenAI-compatible stub for a remote model (the lines that need
network and a key say so). Lines that load the bundled model are slow (the README says so too)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from golden import REPO

README = REPO / "README.md"
CARD = "task_cards/sciprobe_tasks.py"


def readme_lighteval_lines() -> list[str]:
    """Shell commands of the README's bash blocks that run lighteval (continuation lines joined)."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL):
        for command in block.replace("\\\n", " ").splitlines():
            command = command.split(" #", 1)[0].strip()
            if re.match(r"^(\w+=\S+\s+)*(sciprobe\s+)?lighteval\s", command):
                lines.append(" ".join(command.split()))
    return lines


LINES = readme_lighteval_lines()


def _readme_lines_with_their_comments() -> list[tuple[str, str]]:
    """(line, the comment lines just above it in its bash block) for every lighteval line."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL):
        comments: list[str] = []
        for command in block.replace("\\\n", " ").splitlines():
            stripped = command.strip()
            if stripped.startswith("#"):
                comments.append(stripped)
                continue
            if re.match(r"^(\w+=\S+\s+)*(sciprobe\s+)?lighteval\s", stripped):
                out.append((" ".join(stripped.split(" #", 1)[0].split()), " ".join(comments)))
            if not stripped:
                comments = []
    return out


def test_the_readme_has_lighteval_lines() -> None:
    assert len(LINES) >= 3 and any(" accelerate " in line for line in LINES)
    assert any(" endpoint " in line for line in LINES)


def test_the_readme_lighteval_lines_run_offline_save_details_and_say_what_they_need() -> None:
    """Issue 23.11: the plain `lighteval` line failed offline, no line kept the details `leaderboard --import`
    needs, and nothing said which lines are slow or need a key."""
    text = README.read_text(encoding="utf-8")
    for line, comments in _readme_lines_with_their_comments():
        words = shlex.split(line)
        assert words[:2] == ["sciprobe", "lighteval"], f"shown without the offline wrapper: {line}"
        assert "--save-details" in words and "--output-dir" in words, line
        if " accelerate " in line:
            assert "SLOW" in comments and "min" in comments, line
        if "model_name=openai/" in line:
            assert "network" in comments and "OPENAI_API_KEY" in comments, line
    assert "tinyBenchmarks.pkl" in text  # why plain `lighteval` needs network
    import_dirs = re.findall(r"sciprobe leaderboard --import (\S+?)/?\s", text)
    outputs = {shlex.split(line)[shlex.split(line).index("--output-dir") + 1] for line in LINES}
    assert outputs <= set(import_dirs), (outputs, import_dirs)


def _with_stub_model(line: str, stub_url: str) -> str:
    """The line with a remote model (``model_name=openai/NAME``, which needs network and a key) pointed at the
    loopback stub; nothing else changes."""
    def stub(match: re.Match) -> str:
        name = match.group(1)
        return f'"model_name=openai/{name},base_url={stub_url},provider=openai,api_key=sk-test"'

    return re.sub(r'"model_name=openai/([^",]+)"', stub, line)


def _task_of(line: str) -> str:
    return next(w for w in shlex.split(line) if "|" in w and ":" in w)


def _output_dir(line: str) -> str:
    words = shlex.split(line)
    return words[words.index("--output-dir") + 1]


def _build_named_data(line: str, cwd: Path) -> None:
    """A line naming a built folder (``SCIPROBE_IDRBENCH_DATA=build/idrbench``) gets the bundled sample built there."""
    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.build import build_benchmark

    for name, value in re.findall(r"\bSCIPROBE_(\w+)_DATA=(\S+)", line):
        benchmark = get_benchmark(name.lower())
        build_benchmark(benchmark, benchmark.sample_source, cwd / value)


def _check(proc: subprocess.CompletedProcess, out: Path, task: str) -> None:
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(next((out / "results").rglob("results_*.json")).read_text())
    scores = results["results"][task]
    assert scores and all(isinstance(v, (int, float)) for v in scores.values())
    assert list((out / "details").rglob("*.parquet")), "no details: --save-details missing"


@pytest.mark.parametrize("line", [pytest.param(x, marks=pytest.mark.slow) if " accelerate " in x else x
                                  for x in LINES], ids=[f"line{i}" for i in range(len(LINES))])
def test_readme_lighteval_line_completes(line: str, tmp_path: Path) -> None:
    from sciprobe.leaderboard.importer import import_results_dir
    from sciprobe.leaderboard.store import SQLiteStore
    from sciprobe.testing.stub_server import StubServer

    cwd = tmp_path / "work"
    cwd.mkdir()
    (cwd / "task_cards").symlink_to(REPO / "task_cards", target_is_directory=True)  # the README's relative path
    _build_named_data(line, cwd)
    reply = "Your verdict: Yes\nConfidence score: 80\nSubject: [\"Physics\"]\nPapers: 3\nRanking: a, b"
    with StubServer(reply=lambda body: reply) as server:
        printed = _with_stub_model(line, server.base_url)
        # `sciprobe` is this checkout's CLI, as `pip install -e .` makes it; `$(sciprobe model-path)` runs it too
        script = f'sciprobe() {{ "{sys.executable}" -m sciprobe.cli.commands "$@"; }}\nset -e\n{printed}\n'
        env = {**os.environ, "SCIPROBE_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": "sk-test",
               "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
        proc = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=3600,
                              cwd=cwd)  # lighteval's litellm cache lives in the cwd
        out = cwd / _output_dir(line)
        _check(proc, out, _task_of(line))
        if " endpoint " in line:
            assert server.count > 0
    # what the README says next: `sciprobe leaderboard --import lighteval_out/` reads the run's details; a whole
    # run is imported, a --max-samples run is a subset and skipped with one line saying so (never ranked)
    warnings: list[str] = []
    added = import_results_dir(SQLiteStore(tmp_path / "store"), out, warn=warnings.append)
    if "--max-samples" in line:
        assert added == 0 and any("only complete runs are ranked" in w for w in warnings), warnings
    else:
        assert added >= 1, warnings
