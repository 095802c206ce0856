"""Sandboxed runs on a real Ray cluster (a head and a worker node on loopback, the session's ``ray_cluster``):
the per-node sandbox check, and run_many giving what a local run gives (same results, same order, the same
files for ``output_dir``), with inputs and outputs shipped between the nodes. Skips when Ray is not installed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sciprobe.cli import main
from sciprobe.executors import get_executor, shutdown_executors
from sciprobe.runners.sandbox import RunSpec, SandboxError, SandboxLimits, run_many, sandbox_available

needs_sandbox = pytest.mark.skipif(not sandbox_available()[0], reason="bubblewrap sandbox not available here")
pytestmark = pytest.mark.ray_cluster

#: What a result says about the program (wall_s and cpu_s are measurements, not outcomes).
OUTCOME = ("exit_code", "stdout", "stderr", "timed_out", "killed_by_signal", "limit_hit", "stdout_truncated",
           "stderr_truncated", "sandboxed", "warnings")


def _outcome(result) -> dict:
    return {k: getattr(result, k) for k in OUTCOME}


def _tree(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*"))}


def test_sandbox_check_runs_on_every_node(ray_cluster, capsys) -> None:
    status = main(["sandbox", "check", "--executor", ray_cluster.address])
    lines = capsys.readouterr().out.strip().splitlines()
    node_lines = [line for line in lines if "node " in line and not line.startswith("sandbox ")]
    assert len(node_lines) == 1 and "127.0.0.3" in node_lines[0]  # the head has no CPUs: it runs no task
    here_ok, here_reason = sandbox_available()
    assert status == (0 if here_ok else 1)
    assert node_lines[0].startswith("ok " if here_ok else "NOT")
    assert here_reason in node_lines[0]
    assert lines[-1].startswith("sandbox available: " if here_ok else "sandbox NOT available: ")


def _programs(tmp_path: Path) -> list[RunSpec]:
    data = tmp_path / "inputs"
    (data / "tree" / "sub").mkdir(parents=True)
    (data / "table.csv").write_text("a,b\n1,2\n3,4\n")
    (data / "tree" / "sub" / "deep.txt").write_text("deep")
    os.chmod(data, 0o755)
    quick = SandboxLimits(wall_s=20, cpu_s=20)
    reader = ("rows = open('data/table.csv').read().split()\nprint(len(rows), rows[-1])\n"
              "print(open('tree/sub/deep.txt').read())\n"
              "import os\nos.makedirs('made/inner')\n"
              "open('made/inner/out.txt', 'w').write('written in the sandbox')\n")
    return [
        RunSpec(code=reader, inputs={"data/table.csv": data / "table.csv", "tree": data / "tree"}, limits=quick,
                output_dir=tmp_path / "out-{}"),
        RunSpec(code="import sys\nprint('to stderr', file=sys.stderr)\nraise SystemExit(3)\n", limits=quick),
        RunSpec(code="raise ValueError('model-written bug')\n", limits=quick),
        RunSpec(code="while True:\n    pass\n", limits=SandboxLimits(wall_s=3, cpu_s=30)),
        RunSpec(code="import sys\nprint(sys.argv[1:], open('data/table.csv').read().count(','))\n",
                inputs={"data/table.csv": data / "table.csv"}, args=("x", "y"), limits=quick),
        *[RunSpec(code=f"print(sum(range({n})))\n", limits=quick) for n in range(6)],
    ]


def _with_output_dir(specs: list[RunSpec], label: str) -> list[RunSpec]:
    from dataclasses import replace

    return [replace(s, output_dir=Path(str(s.output_dir).format(label))) if s.output_dir else s for s in specs]


@needs_sandbox
def test_run_many_on_the_cluster_matches_a_local_run(ray_cluster, tmp_path: Path) -> None:
    executor = get_executor(ray_cluster.address)
    specs = _programs(tmp_path)
    local = run_many(_with_output_dir(specs, "local"))
    remote = run_many(_with_output_dir(specs, "ray"), executor=executor)
    assert [_outcome(r) for r in remote] == [_outcome(r) for r in local]
    assert remote[0].stdout == "3 3,4\ndeep\n" and remote[0].ok
    assert remote[2].exit_code == 1 and "ValueError: model-written bug" in remote[2].stderr
    assert remote[3].limit_hit == "wall" and remote[3].timed_out
    assert remote[4].stdout == "['x', 'y'] 3\n"
    assert [r.stdout for r in remote[5:]] == [f"{sum(range(n))}\n" for n in range(6)]
    received = _tree(tmp_path / "out-ray")
    assert received == _tree(tmp_path / "out-local")
    assert received["made/inner/out.txt"] == b"written in the sandbox"


@needs_sandbox
def test_a_missing_input_fails_here_before_anything_is_shipped(ray_cluster, tmp_path: Path) -> None:
    spec = RunSpec(code="print(1)\n", inputs={"data/x.csv": tmp_path / "absent.csv"})
    with pytest.raises(SandboxError, match="does not exist"):
        run_many([spec], executor=get_executor(ray_cluster.address))


@needs_sandbox
def test_executor_ray_finds_the_cluster_through_ray_address(ray_cluster, monkeypatch) -> None:
    shutdown_executors()  # one Ray connection per process: this test makes its own
    monkeypatch.setenv("RAY_ADDRESS", ray_cluster.address)
    try:
        executor = get_executor("ray")
        assert [r.stdout for r in run_many(["print(6 * 7)\n"], executor=executor)] == ["42\n"]
        assert executor.describe()["nodes"] == 1 and executor.describe()["cpus"] == 2
    finally:
        shutdown_executors()
