"""Interrupting the suite stops it within seconds (issue 28).

- SIGTERM is handled like Ctrl-C in every pytest process (the main one and each xdist worker): a
  KeyboardInterrupt, so pytest unwinds and the fixtures' finalizers stop what they started (stub servers, the
  Space, the loopback Ray cluster). The main process passes a SIGTERM on to its workers, as a terminal's Ctrl-C
  reaches them all.
- A KeyboardInterrupt reaches Python only between bytecodes: a test blocked in native code (a Ray client call, a
  model's forward pass) delays it. So the first signal also wakes a watchdog thread, through the signal module's
  wakeup file descriptor (written by the C-level handler, whatever the main thread is doing). If the process is
  still alive ``GRACE_S`` later, the watchdog kills the process's children (their process groups when they lead
  one) and ends the process.
- What must not outlive even a killed process (the Ray cluster's daemons, in their own sessions) has its own
  reaper process: see :class:`Reaper`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable

GRACE_S = float(os.environ.get("SCIPROBE_TEST_INTERRUPT_GRACE_S", "10"))
_installed = False
_capture = None  # pytest's capture manager
_on_sigterm = None
_reapers: set[int] = set()


def _child_pids() -> list[int]:
    me, children = str(os.getpid()), []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read().decode(errors="replace")
        except OSError:
            continue
        if stat.rsplit(")", 1)[-1].split()[1] == me:  # field 4, after the parenthesised command name
            children.append(int(name))
    return children


def _watchdog(read_fd: int, clock_wait: Callable[[float], None]) -> None:
    # every signal with a Python handler writes its number here (pytest-timeout's SIGALRM too): wait for ours
    while not {signal.SIGINT, signal.SIGTERM} & set(os.read(read_fd, 64)):
        pass
    clock_wait(GRACE_S)
    for pid in _child_pids():
        if pid in _reapers:  # they stop their groups when this process is gone
            continue
        try:
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if _capture is not None:  # pytest captures fd 2 while a test runs: say it on the terminal
        try:
            _capture.suspend_global_capture(in_=True)
        except Exception:  # noqa: BLE001 - best effort, the process ends next
            pass
    sys.stdout.flush()
    sys.stderr.write(f"\nsciprobe tests: still running {GRACE_S:.0f} s after the interrupt; stopped\n")
    sys.stderr.flush()
    os._exit(128 + signal.SIGTERM)


def install(*, forward_to_children: bool, capture=None) -> None:
    """SIGTERM as KeyboardInterrupt, and the watchdog; for the main thread of a pytest process, once."""
    global _installed, _capture
    _capture = capture
    if _installed or threading.current_thread() is not threading.main_thread():
        return

    def on_sigterm(signum, frame):
        if forward_to_children:
            for pid in _child_pids():
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        raise KeyboardInterrupt(f"signal {signum}")

    global _on_sigterm
    _on_sigterm = on_sigterm
    signal.signal(signal.SIGTERM, on_sigterm)
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    if previous != -1:  # someone else owns the wakeup fd (an event loop): keep theirs, no watchdog
        signal.set_wakeup_fd(previous)
        return
    threading.Thread(target=_watchdog, args=(read_fd, threading.Event().wait), name="interrupt-watchdog",
                     daemon=True).start()
    _installed = True


REAPER = r"""
import os, signal, sys, time
groups = []
for line in sys.stdin:  # one process group per line; "done" when the owner stopped them itself
    if line.strip() == "done":
        sys.exit(0)
    groups.append(int(line))
# EOF without "done": the owner died, however it died
for sig in (signal.SIGTERM, signal.SIGKILL):
    for group in groups:
        try:
            os.killpg(group, sig)
        except (ProcessLookupError, PermissionError):
            pass
    if sig == signal.SIGTERM:
        time.sleep(2)
"""


class Reaper:
    """A process that kills the process groups it is told of when this process dies (even by SIGKILL), unless
    told first that they were stopped: for processes in their own session, which no signal to the test's
    process group reaches and no finalizer of a killed process stops."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", REAPER], stdin=subprocess.PIPE, text=True,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        _reapers.add(self.process.pid)

    def watch(self, process_group: int) -> None:
        self.process.stdin.write(f"{process_group}\n")
        self.process.stdin.flush()

    def release(self) -> None:
        """The groups were stopped by their owner: the reaper ends without killing anything."""
        try:
            self.process.stdin.write("done\n")
            self.process.stdin.close()
        except (BrokenPipeError, ValueError):
            pass
        self.process.wait(timeout=30)


def reassert() -> None:
    """Put our SIGTERM handler back if a test replaced it: ``ray.init`` installs one that raises SystemExit, which
    pytest reports as a failed test and goes on to the next one."""
    if _on_sigterm is not None and threading.current_thread() is threading.main_thread() \
            and signal.getsignal(signal.SIGTERM) is not _on_sigterm:
        signal.signal(signal.SIGTERM, _on_sigterm)
