"""Start-up stays light: the CLI's help, ``tasks`` and ``cutoffs`` (and every subcommand's ``--help``) and importing
every benchmark declaration load none of the heavy libraries. Each case runs in a fresh interpreter and reads its
``sys.modules`` afterwards (behaviour, not timing: ``bench/cli_startup.py`` measures the time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from golden import REPO

#: Libraries no light command may import (each costs from tens to thousands of milliseconds, or, urllib.request,
#: stands for network code).
HEAVY = ("numpy", "pyarrow", "pandas", "datasets", "torch", "transformers", "litellm", "aiohttp", "matplotlib",
         "gradio", "scipy", "sklearn", "evaluate", "lighteval", "ray", "urllib.request")

_CLI_PROBE = """
import contextlib, io, json, sys
import sciprobe.cli.commands as cli
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        status = cli.main(sys.argv[1:])
    except SystemExit as exc:
        status = exc.code
print(json.dumps({"status": status, "output": out.getvalue(), "modules": sorted(sys.modules)}))
"""

_DECLARATIONS_PROBE = """
import json, sys
from sciprobe.core.registry import benchmark_names, get_benchmark
from sciprobe.run.runners.single_call import runner_of
names = benchmark_names()
tasks = {name: {t: runner_of(task).kind for t, task in get_benchmark(name).tasks.items()} for name in names}
print(json.dumps({"tasks": tasks, "modules": sorted(sys.modules)}))
"""


def _probe(code: str, *args: str) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def _heavy(modules: list[str]) -> list[str]:
    return [name for name in HEAVY if name in modules]


def _subcommands() -> list[str]:
    from sciprobe.core.registry import benchmark_names, get_benchmark
    from sciprobe.cli.commands import COMMANDS, MODULE_COMMANDS

    return [*COMMANDS, *MODULE_COMMANDS, *(c.name for b in benchmark_names() for c in get_benchmark(b).commands)]


@pytest.mark.parametrize("argv, shows", [
    (["--help"], "new-benchmark"),
    (["tasks"], "idrbench:ipi"),
    (["tasks", "--json"], "\"kind\""),
    (["tasks", "sgibench"], "sgibench:dry_experiment"),
    (["cutoffs"], "gpt-4o"),
    (["paper", "idrbench"], "0.630"),
    (["--version"], "sciprobe"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_light_commands_import_no_heavy_library(argv: list[str], shows: str) -> None:
    run = _probe(_CLI_PROBE, *argv)
    assert run["status"] == 0 and shows in run["output"]
    assert _heavy(run["modules"]) == []


@pytest.mark.parametrize("command", _subcommands())
def test_every_subcommand_help_imports_no_heavy_library(command: str) -> None:
    run = _probe(_CLI_PROBE, command, "--help")
    assert run["status"] == 0 and f"usage: sciprobe {command}" in run["output"]
    assert _heavy(run["modules"]) == []


def test_importing_every_declaration_imports_no_heavy_library() -> None:
    """The registry imports every declaration (and builds every runner object) without loading a heavy library:
    declarations name their scorers, parsers, prompts and readers lazily (sciprobe.core.lazy)."""
    run = _probe(_DECLARATIONS_PROBE)
    registered = sorted(p.name for p in (REPO / "sciprobe" / "benchmarks").iterdir() if (p / "__init__.py").is_file())
    assert sorted(run["tasks"]) == registered  # none was skipped for failing to import
    assert all(run["tasks"][name] for name in registered)
    assert _heavy(run["modules"]) == []


def test_the_probe_sees_a_heavy_import() -> None:
    """The check itself: a command that does load numpy is caught."""
    run = _probe(_CLI_PROBE.replace("import sciprobe.cli.commands as cli",
                                    "import numpy, sciprobe.cli.commands as cli"), "--version")
    assert _heavy(run["modules"]) == ["numpy"]
