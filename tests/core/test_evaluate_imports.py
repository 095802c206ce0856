"""Import hygiene of ``evaluate`` (issue 28): a dry run answers from the declaration and the data's Parquet
files, and a run on the direct HTTP transport never needs litellm, so neither imports the heavy libraries.
Each case runs in a fresh interpreter and reports ``sys.modules`` after the command; nothing is timed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("litellm", "torch", "transformers", "datasets", "sklearn", "scipy", "evaluate", "pandas")

_PROBE = """
import io, json, sys, contextlib
from sciprobe.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    status = main(sys.argv[1:])
print(json.dumps({"status": status, "modules": sorted(sys.modules)}))
"""


def _modules_after(args: list[str], home: Path) -> set[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "SCIPROBE_HOME": str(home), "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] in (0, None), report["status"]
    return set(report["modules"])


def _heavy(modules: set[str], allowed: tuple[str, ...] = ()) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY and m.split(".")[0] not in allowed)


@pytest.fixture(scope="module")
def built_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled IDRBench sample, built once (building may use anything; loading it must not)."""
    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.build import build_benchmark

    benchmark = get_benchmark("idrbench")
    out = tmp_path_factory.mktemp("data") / "idrbench"
    build_benchmark(benchmark, benchmark.sample_source, out)
    return out


def test_a_dry_run_imports_no_heavy_library(built_sample: Path, tmp_path: Path) -> None:
    modules = _modules_after(["evaluate", "idrbench:ipi", "--limit", "3", "--dry-run", "--model",
                              "openai/x,base_url=http://127.0.0.1:9", "--data", str(built_sample)], tmp_path)
    assert _heavy(modules) == []


def test_a_direct_http_run_imports_no_litellm_and_no_scorer_library(built_sample: Path, tmp_path: Path) -> None:
    from sciprobe.testing.stub_server import StubServer

    with StubServer() as server:
        modules = _modules_after(["evaluate", "idrbench:ipi", "--limit", "4", "--no-cache", "--model",
                                  f"openai/x,base_url={server.base_url}", "--data", str(built_sample),
                                  "--output-dir", str(tmp_path / "out")], tmp_path)
    assert "aiohttp" in modules  # the call really went out, over the direct transport
    # pandas: pyarrow itself imports it on its first array built from Python objects (the details Parquet file)
    assert _heavy(modules, allowed=("pandas",)) == []
