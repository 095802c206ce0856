"""Sandboxed runs on a real Ray cluster (a head and a worker node on loopback, the session's ``ray_cluster``):
the per-node sandbox check, and run_many giving what a local run gives (same results, same order, the same
files for ``output_dir``), with inputs and outputs shipped between the nodes. And ``--executor ray`` with no
cluster to join (issue 22): the single-machine instance sciprobe starts, inspected from outside while it runs
(every listening socket on loopback, its token 0600 in a 0700 folder of its own, no folder open to others, nothing
in ``~/.ray``) and after it ends (closed, at exit, on Ctrl-C: no process, folder or token left). Skips when Ray is
not installed."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from sciprobe.cli.commands import main
from sciprobe.core.executors import get_executor, shutdown_executors
from sciprobe.sandbox.runner import RunSpec, SandboxError, SandboxLimits, run_many, sandbox_available

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


# ---- `--executor ray` with no cluster to join: a private local instance (issue 22) ----------------------------

#: Started as sciprobe does (get_executor("ray")); prints what it started, then ends as stdin says.
PRIVATE_CLUSTER_RUN = """
import json, sys
from sciprobe.core.executors import get_executor, shutdown_executors
executor = get_executor("ray")
nodes = executor.nodes()
print(json.dumps({"nodes": [n["NodeManagerAddress"] for n in nodes]}), flush=True)
if sys.stdin.readline().strip() == "close":
    shutdown_executors()
    print("closed", flush=True)
    sys.stdin.readline()
"""
LOOPBACK_ADDRESSES = {"127.0.0.1", "::1", "::ffff:127.0.0.1"}


@pytest.fixture
def no_cluster(tmp_path):
    """(environment, its home, its Ray temp folder): no cluster to join (no $RAY_ADDRESS, an empty Ray temp
    folder: short, as Ray puts socket paths there when it is the one used), a home of its own, and a token in the
    environment that the private instance must not use. Skips when Ray is not installed."""
    import shutil
    import tempfile

    from sciprobe.core.executors import ray_installed

    if not ray_installed():
        pytest.skip("Ray is not installed (pip install 'sciprobe[ray]')")
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN_PATH")}
    home, ray_tmp = tmp_path / "home", Path(tempfile.mkdtemp(prefix="sciprobe-test-"))
    home.mkdir()
    try:
        yield ({**env, "HOME": str(home), "RAY_TMPDIR": str(ray_tmp),
                "RAY_AUTH_TOKEN": "a-token-of-the-user-not-for-this-instance"}, home, ray_tmp)
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)


def _listening(processes) -> list[tuple[str, str, int]]:
    """(process, address, port) of every listening TCP socket and bound UDP socket of these processes."""
    import psutil

    found = []
    for process in processes:
        try:
            for conn in process.net_connections(kind="inet"):
                if conn.laddr and (conn.status == psutil.CONN_LISTEN or conn.type == 2):  # 2: SOCK_DGRAM
                    found.append((process.name(), conn.laddr.ip, conn.laddr.port))
        except psutil.NoSuchProcess:
            continue
    return found


def _assert_private_and_loopback(started: dict, processes, home: Path) -> Path:
    """Checks the running instance from outside; its folder (where the node's token is)."""
    names = {p.name() for p in processes}
    assert {"gcs_server", "raylet"} <= names, names  # the instance's own processes are the ones inspected
    assert started["nodes"] == ["127.0.0.1"]
    sockets = _listening(processes)
    assert len(sockets) >= 5, sockets
    assert [s for s in sockets if s[1] not in LOOPBACK_ADDRESSES] == []
    raylet = next(p for p in processes if p.name() == "raylet")
    environment = raylet.environ()  # what the node itself was started with
    assert "RAY_AUTH_TOKEN" not in environment and environment.get("RAY_AUTH_MODE") == "token"
    token = Path(environment["RAY_AUTH_TOKEN_PATH"])
    folder = token.parent
    assert folder.name.startswith("sciprobe-ray-") and token.read_text().strip()
    assert stat.S_IMODE(token.stat().st_mode) == 0o600 and token.stat().st_uid == os.geteuid()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and folder.stat().st_uid == os.geteuid()
    session_sockets = (folder / "ray" / "session_latest" / "sockets").resolve()
    assert session_sockets.is_dir() and stat.S_IMODE(session_sockets.stat().st_mode) & 0o022 == 0
    open_to_others = [str(d) for d in folder.rglob("*") if d.is_dir() and d.stat().st_mode & 0o002]
    assert open_to_others == []
    assert not (home / ".ray").exists()
    return folder


@pytest.mark.parametrize("end", ["close", "exit", "ctrl-c"])
def test_a_private_local_instance_is_loopback_only_and_leaves_nothing(end, no_cluster, tmp_path) -> None:
    import psutil

    env, home, ray_tmp = no_cluster
    errors = tmp_path / "stderr.txt"
    with open(errors, "w") as stderr:  # a session of its own: Ctrl-C reaches its whole process group
        child = subprocess.Popen([sys.executable, "-c", PRIVATE_CLUSTER_RUN], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=stderr, text=True, env=env, start_new_session=True)
    processes: list = []
    try:
        line = child.stdout.readline()
        assert line, errors.read_text()[-3000:]
        started = json.loads(line)
        driver = psutil.Process(child.pid)
        processes = [driver, *driver.children(recursive=True)]
        folder = _assert_private_and_loopback(started, processes, home)
        if end == "close":
            child.stdin.write("close\n")
            child.stdin.flush()
            assert child.stdout.readline() == "closed\n"
            assert not folder.exists()  # removed by the close, while the process still runs
        elif end == "exit":
            child.stdin.write("exit\n")
            child.stdin.flush()
        else:  # as a terminal's Ctrl-C: SIGINT to the foreground process group
            os.killpg(child.pid, signal.SIGINT)
        child.stdin.close()
        child.wait(timeout=300)
        _, alive = psutil.wait_procs(processes, timeout=120)
        assert alive == [] and not folder.exists()
        assert os.listdir(ray_tmp) == [] and not (home / ".ray").exists()
    finally:  # whatever failed: nothing of the instance outlives the test
        if child.poll() is None:
            try:
                driver = psutil.Process(child.pid)
                processes = [*processes, driver, *driver.children(recursive=True)]
            except psutil.NoSuchProcess:
                pass
        for process in processes:
            try:
                process.kill()
            except psutil.NoSuchProcess:
                pass
        child.wait(timeout=60)


def test_sandbox_check_without_a_cluster_runs_on_a_private_loopback_node(no_cluster) -> None:
    env, home, ray_tmp = no_cluster
    done = subprocess.run([sys.executable, "-m", "sciprobe", "sandbox", "check", "--executor", "ray"],
                          capture_output=True, text=True, env=env, timeout=600)
    node_lines = [line for line in done.stdout.splitlines() if " node " in line]
    assert done.returncode == (0 if sandbox_available()[0] else 1), done.stderr[-2000:]
    assert len(node_lines) == 1 and " 127.0.0.1 node " in node_lines[0]
    assert "Traceback" not in done.stderr
    assert os.listdir(ray_tmp) == [] and not (home / ".ray").exists()


@pytest.mark.parametrize("case, joins", [("no address file", False), ("our address file", True),
                                         ("another user's address file", False), ("a symlinked address file", False),
                                         ("RAY_ADDRESS=local", False), ("RAY_ADDRESS=HOST:PORT", True)])
def test_which_cluster_ray_joins(case, joins, no_cluster, tmp_path) -> None:
    """`--executor ray` joins a running cluster only when $RAY_ADDRESS names one or the address file the last
    `ray start` left is ours; else it starts its private instance (in a subprocess: Ray reads its settings once
    per process)."""
    env, _, ray_tmp = no_cluster
    address_file = ray_tmp / "ray" / "ray_current_cluster"
    if case != "no address file" and not case.startswith("RAY_ADDRESS"):
        address_file.parent.mkdir()
        target = tmp_path / "elsewhere" if case == "a symlinked address file" else address_file
        target.write_text("127.0.0.1:6379")
        if target != address_file:
            address_file.symlink_to(target)
        if case == "another user's address file":
            if os.geteuid() != 0:
                pytest.skip("chown to another user needs root")
            os.chown(address_file, 65534, 65534)
    if case.startswith("RAY_ADDRESS"):
        env["RAY_ADDRESS"] = "local" if case.endswith("local") else "127.0.0.1:6379"
    done = subprocess.run([sys.executable, "-c", "from sciprobe.core.executors import joins_running_cluster as j; "
                           "print(j())"], capture_output=True, text=True, env=env, timeout=300)
    assert done.stdout.strip() == str(joins), done.stderr[-2000:]
