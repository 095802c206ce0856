"""Run by tests/core/test_interrupts.py in a pytest of its own (not collected: the name does not start with
test_), which then sends that pytest a SIGTERM. Each test starts what a real test leaves running when
interrupted, writes their pids to $SCENARIO_READY, then blocks."""

import json
import os
import subprocess
import sys
import time

import pytest

from interrupt_support import Reaper

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def _ready(**pids: int) -> None:
    path = os.environ["SCENARIO_READY"]
    with open(path + ".tmp", "w") as fh:
        json.dump({**pids, "pytest": os.getpid()}, fh)
    os.replace(path + ".tmp", path)


@pytest.fixture
def server():
    """A server in the test's process group, stopped by its fixture's finalizer."""
    process = subprocess.Popen(SLEEPER)
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_blocked_in_python(server):
    _ready(server=server.pid)
    time.sleep(600)


def test_ignores_the_interrupt(server):
    """A test that swallows KeyboardInterrupt (as native code that defers it does, in effect), with a node in its
    own session that only its reaper can stop."""
    # the node is orphaned at once (its parent exits), as a Ray node's daemons are: no child of this process
    spawn = (f"import subprocess; print(subprocess.Popen({SLEEPER!r}, start_new_session=True, "
             "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)")  # not holding our pipe open
    node = int(subprocess.run([sys.executable, "-c", spawn], capture_output=True, text=True, check=True).stdout)
    reaper = Reaper()
    reaper.watch(node)
    _ready(server=server.pid, node=node, reaper=reaper.process.pid)
    while True:
        try:
            time.sleep(600)
        except KeyboardInterrupt:
            pass
