"""Every lighteval line of the README completes (issue 14). Each command is run as written, with only what a
test machine cannot have swapped in: the bundled model's path for ``$(sciprobe model-path)``, a loopback
OpenAI-compatible stub for a remote model, the offline wrapper (``sciprobe lighteval``) for the plain
``lighteval`` command (whose built-in tasks download files at import), an output folder and the absolute path of
the card. Lines that load the bundled model are slow."""

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


def test_the_readme_has_lighteval_lines() -> None:
    assert len(LINES) >= 3 and any(" accelerate " in line for line in LINES)
    assert any(line.startswith("lighteval endpoint") for line in LINES)


def _argv_and_env(line: str, model_dir: str | None, stub_url: str | None) -> tuple[list[str], dict[str, str]]:
    line = line.replace("$(sciprobe model-path)", model_dir or "MODEL")
    words = shlex.split(line)
    env: dict[str, str] = {}
    while "=" in words[0] and not words[0].startswith(("sciprobe", "lighteval")):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if words[0] == "sciprobe":
        words.pop(0)
    assert words[0] == "lighteval"
    argv = [sys.executable, "-m", "sciprobe.cli", *words]
    for i, word in enumerate(argv):
        if word == CARD:
            argv[i] = str(REPO / CARD)
        if word.startswith("model_name=") and stub_url and "endpoint" in argv:
            name = word.split("=", 1)[1].split(",", 1)[0].split("/", 1)[1]
            argv[i] = f"model_name=openai/{name},base_url={stub_url},provider=openai,api_key=sk-test"
    return argv, env


def _task_of(line: str) -> str:
    return next(w for w in shlex.split(line) if "|" in w and ":" in w)


def _check(proc: subprocess.CompletedProcess, out: Path, task: str) -> None:
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(next((out / "results").rglob("results_*.json")).read_text())
    scores = results["results"][task]
    assert scores and all(isinstance(v, (int, float)) for v in scores.values())


def _data_env(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """A line naming a built folder (``SCIPROBE_IDRBENCH_DATA=build/idrbench``) gets the bundled sample built there."""
    from sciprobe.benchmarks import get_benchmark
    from sciprobe.build import build_benchmark

    out = {}
    for key, value in env.items():
        match = re.fullmatch(r"SCIPROBE_(\w+)_DATA", key)
        if match:
            benchmark = get_benchmark(match.group(1).lower())
            folder = tmp_path / value
            build_benchmark(benchmark, benchmark.sample_source, folder)
            out[key] = str(folder)
        else:
            out[key] = value
    return out


@pytest.mark.parametrize("line", [pytest.param(x, marks=pytest.mark.slow) if " accelerate " in x else x
                                  for x in LINES], ids=[f"line{i}" for i in range(len(LINES))])
def test_readme_lighteval_line_completes(line: str, tmp_path: Path) -> None:
    from sciprobe.llm.stub_server import StubServer

    model_dir = None
    if "$(sciprobe model-path)" in line:
        from sciprobe.llm.local import ensure_local_model

        model_dir = str(ensure_local_model("smollm2"))
    reply = "Your verdict: Yes\nConfidence score: 80\nSubject: [\"Physics\"]\nPapers: 3\nRanking: a, b"
    with StubServer(reply=lambda body: reply) as server:
        argv, env = _argv_and_env(line, model_dir, server.base_url)
        out = tmp_path / "out"
        env = {**os.environ, "SCIPROBE_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": "sk-test",
               **_data_env(env, tmp_path)}
        proc = subprocess.run([*argv, "--output-dir", str(out)], env=env, capture_output=True, text=True,
                              timeout=3600, cwd=tmp_path)  # lighteval's litellm cache lives in the cwd
        _check(proc, out, _task_of(line))
        if "endpoint" in argv:
            assert server.count > 0
