"""Interrupting the suite (issue 28): a SIGTERM ends a pytest run, serial or parallel, and leaves none of what its
tests started behind, also when a test does not let the interrupt through (tests/interrupt_support.py). How fast
it ends is measured in bench/dev_loop.py; here a generous deadline only keeps a hang from hanging the suite."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from golden import REPO

SCENARIO = "tests/cases/interrupts/scenario_interrupts.py"
HANG_GUARD_S = 300


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] != b"Z"  # a zombie has ended
    except OSError:
        return False


def _wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD_S
    while not predicate():
        assert time.monotonic() < deadline, f"hung: {what}"
        time.sleep(0.1)


def _interrupted_run(tmp_path: Path, test: str, *extra: str, grace_s: int = 60) -> tuple[int, dict, str]:
    ready = tmp_path / "ready.json"
    env = {**os.environ, "SCENARIO_READY": str(ready), "SCIPROBE_TEST_INTERRUPT_GRACE_S": str(grace_s),
           "PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "tests"), os.environ.get("PYTHONPATH")) if p)}
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("SCIPROBE_TEST_PHASE", None)
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                             f"{SCENARIO}::{test}", *extra], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        _wait_for(lambda: ready.is_file() or proc.poll() is not None, "the scenario never got ready")
        assert proc.poll() is None, proc.communicate()[0][-3000:]
        pids = json.loads(ready.read_text())
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=HANG_GUARD_S)
        return proc.returncode, pids, out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("workers", [[], ["-n", "1"]], ids=["serial", "parallel"])
def test_sigterm_runs_the_finalizers_and_ends_the_run(tmp_path, workers) -> None:
    code, pids, out = _interrupted_run(tmp_path, "test_blocked_in_python", *workers)
    assert code != 0 and "KeyboardInterrupt" in out, out[-3000:]
    assert "still running" not in out  # ended by unwinding, not by the watchdog
    for name, pid in pids.items():
        _wait_for(lambda pid=pid: not _alive(pid), f"{name} {pid} survived the interrupt")


def test_a_test_that_ignores_the_interrupt_is_ended_and_its_processes_with_it(tmp_path) -> None:
    code, pids, out = _interrupted_run(tmp_path, "test_ignores_the_interrupt", grace_s=2)
    assert code == 128 + signal.SIGTERM and "still running 2 s after the interrupt" in out, out[-3000:]
    for name in ("pytest", "server", "node", "reaper"):  # the node, orphaned in its own session: by its reaper
        _wait_for(lambda pid=pids[name]: not _alive(pid), f"{name} {pids[name]} survived the interrupt")
