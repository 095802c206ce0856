"""``ruff check .`` (the rules and exclusions of ``[tool.ruff]`` in pyproject.toml) reports nothing on the whole
repository. Runs the ruff of this interpreter's environment (the ``test`` extra pins it); skipped without one."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from golden import REPO


def _ruff_command() -> list[str]:
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    binary = Path(sys.executable).parent / "ruff"
    if binary.is_file():
        return [str(binary)]
    pytest.skip("ruff is not installed in this environment (pip install -e '.[test]')")


def _ruff(*args: str, target: str = ".") -> subprocess.CompletedProcess[str]:
    # --no-cache: the test writes nothing into the repository
    return subprocess.run([*_ruff_command(), "check", "--no-cache", *args, target], cwd=REPO, capture_output=True,
                          text=True, timeout=600, check=False)


def test_ruff_reports_nothing() -> None:
    result = _ruff("--output-format", "concise")
    assert result.returncode == 0, f"ruff check . found problems:\n{result.stdout}{result.stderr}"


def test_ruff_checks_the_code_and_skips_the_verbatim_folders() -> None:
    result = _ruff("--show-files")
    assert result.returncode == 0, result.stderr
    files = {Path(line).resolve().relative_to(REPO).as_posix() for line in result.stdout.splitlines() if line}
    for linted in ("sciprobe/cli/commands.py", "bench/collect.py", "tests/core/test_lint.py",
                   "metrics/lacer/lacer.py"):
        assert linted in files, linted
    # hostile programs and upstream code kept byte-exact, and rendered templates, are not linted
    assert (REPO / "tests/cases/upstream/idrbench/utils.py").is_file()
    assert not [f for f in files if f.startswith(("tests/cases/", "sciprobe/cli/templates/"))]


def test_a_scaffolded_benchmark_passes_ruff(tmp_path: Path) -> None:
    """The templates are not linted as files; what ``sciprobe new-benchmark`` renders from them is."""
    from sciprobe.cli.scaffold import create_benchmark

    folder = create_benchmark("mybench", "My Bench", root=tmp_path)
    result = _ruff("--config", str(REPO / "pyproject.toml"), "--output-format", "concise", target=str(folder))
    assert result.returncode == 0, f"ruff check of the scaffold found problems:\n{result.stdout}{result.stderr}"
