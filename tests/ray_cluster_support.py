"""A real Ray cluster on loopback for tests and benches: a head and worker nodes, each a ``ray start --block``
process, every one on its own loopback address (head 127.0.0.2, workers 127.0.0.3, 127.0.0.4, ...: Ray turns
127.0.0.1 into the machine's network address, these it keeps) and its own free ports, with a fresh auth token.

    with LoopbackRayCluster(worker_cpus=(2,)) as cluster:
        run_many(specs, executor=get_executor(cluster.address))     # cluster.address = "ray://127.0.0.2:PORT"

The head has no CPUs (it only schedules), so every task runs on a worker node. Stopping ends each node's own
process group (SIGTERM, then SIGKILL after a short grace: every node process is in that group); never ``ray stop``,
which would stop every Ray cluster on the machine. The driver's ``RAY_AUTH_*`` variables are set while the cluster
runs: start the cluster before this process first talks to Ray (Ray reads them once).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from interrupt_support import Reaper

HEAD_IP = "127.0.0.2"
STARTED = "Ray runtime started"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class LoopbackRayCluster:
    def __init__(self, worker_cpus: Sequence[int] = (2,), *, start_timeout_s: float = 600.0,
                 object_store_mb: int = 200, extra_env: dict[str, str] | None = None,
                 token: str | None = None, stop_grace_s: float = 1.0) -> None:
        self.stop_grace_s = stop_grace_s
        self.worker_cpus = tuple(worker_cpus)
        self.extra_env = dict(extra_env or {})
        self.start_timeout_s = start_timeout_s
        self.object_store_bytes = object_store_mb << 20
        self.token = token or secrets.token_hex(32)  # one process talking to several clusters: pass one token
        self.temp_dir = Path(tempfile.mkdtemp(prefix="sciprobe-ray-"))  # short: Ray's socket paths live here
        self.gcs_port = free_port(HEAD_IP)
        self.client_port = free_port(HEAD_IP)
        self.address = f"ray://{HEAD_IP}:{self.client_port}"
        self.processes: list[tuple[subprocess.Popen, Path]] = []
        self.reaper: Reaper | None = None  # stops the nodes if this process dies before stop() (issue 28)
        self._saved_env: dict[str, str | None] = {}

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, **self.extra_env, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": self.token,
                "RAY_USAGE_STATS_ENABLED": "0"}

    def _node_args(self, ip: str) -> list[str]:
        ports = {"--node-manager-port": free_port(ip), "--object-manager-port": free_port(ip),
                 "--dashboard-agent-listen-port": free_port(ip), "--dashboard-agent-grpc-port": free_port(ip),
                 "--runtime-env-agent-port": free_port(ip), "--metrics-export-port": free_port(ip)}
        args = ["--block", "--node-ip-address", ip, "--disable-usage-stats",
                "--object-store-memory", str(self.object_store_bytes)]
        for flag, port in ports.items():
            args += [flag, str(port)]
        return args

    def _start_node(self, name: str, args: list[str]) -> None:
        log = self.temp_dir / f"{name}.log"
        ray = str(Path(sys.executable).with_name("ray"))
        with open(log, "wb") as out:
            process = subprocess.Popen([ray, "start", *args], stdout=out, stderr=subprocess.STDOUT, env=self.env,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        self.processes.append((process, log))
        if self.reaper is None:
            self.reaper = Reaper()
        self.reaper.watch(process.pid)  # its own session: the group id is its pid
        deadline = time.monotonic() + self.start_timeout_s
        while STARTED not in log.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                self.stop()
                raise RuntimeError(f"ray node {name} did not start (exit {process.poll()}):\n{tail}")
            time.sleep(0.5)

    def start(self) -> LoopbackRayCluster:
        # before the driver first talks to Ray: Ray reads its auth settings once per process
        for key in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN"):
            self._saved_env[key] = os.environ.get(key)
        os.environ.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=self.token)
        self._start_node("head", ["--head", "--port", str(self.gcs_port), "--ray-client-server-port",
                                  str(self.client_port), "--num-cpus", "0", "--include-dashboard", "false",
                                  "--temp-dir", str(self.temp_dir), *self._node_args(HEAD_IP)])
        for n, cpus in enumerate(self.worker_cpus):
            self._start_node(f"worker{n}", ["--address", f"{HEAD_IP}:{self.gcs_port}", "--num-cpus", str(cpus),
                                            *self._node_args(f"127.0.0.{3 + n}")])
        return self

    def wait_for_cpus(self, executor, timeout_s: float = 300.0) -> None:
        """Until the cluster reports every worker's CPUs (a node registers a little after its log line)."""
        want = sum(self.worker_cpus)
        deadline = time.monotonic() + timeout_s
        while (cpus := sum(n["Resources"].get("CPU", 0) for n in executor.nodes())) < want:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cluster reports {cpus} CPUs, not {want}")
            time.sleep(1.0)

    def stop(self) -> None:
        # A worker node's graceful stop takes ~30 s (it waits on the head), the head's ~60 s if it goes first:
        # a throwaway cluster gains nothing from it, so each node gets a short grace, then its group is killed.
        for process, _ in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        grace_ends = time.monotonic() + self.stop_grace_s
        for process, _ in reversed(self.processes):
            try:
                process.wait(timeout=max(0.0, grace_ends - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:  # the node, and what it left in its group (its raylet, GCS, object store and workers)
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait(timeout=30)
        self.processes.clear()
        if self.reaper is not None:
            self.reaper.release()
            self.reaper = None
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env.clear()
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> LoopbackRayCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
