"""Starting, watching and ending one run for :mod:`sciprobe.sandbox.runner` (SGI-Bench dry experiments).

Spec ``shared/spec/sgibench.md`` §8 (isolated, limited, nothing left behind). A sandboxed run starts in two steps:
bubblewrap lays out the sandbox, whose first process waits for a "go" line on a pipe; the host opens the
sandbox's three tmpfs mounts (``/workdir``, ``/tmp``, ``/dev/shm``) through ``/proc/<pid>/root`` and only then
lets the program start (if the host dies first, the pipe ends and the program never starts). The
open descriptors give the watchdog exact, permission-proof usage figures (``fstatvfs``) during the run, and the
work dir's files after it, when the sandbox and its mount namespace are gone; closing them frees the memory.

Everything that decides ``limit_hit`` is a fact observed from outside the program: our own kills, the wait status,
the CPU time the kernel accounted (``wait4``), and the state of the sandbox's file systems. Text the program
prints is never read for it.
"""

from __future__ import annotations

import os
import re
import select
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sciprobe.sandbox import bwrap as bw
from sciprobe.sandbox import host as host
from sciprobe.sandbox import tree as tree
from sciprobe.sandbox.host import SandboxError

if TYPE_CHECKING:
    from sciprobe.sandbox.runner import SandboxLimits

#: The sandbox's own file systems, all tmpfs: memory, counted against ``memory_mb``.
SANDBOX_MOUNTS = (bw.SANDBOX_WORKDIR, "/tmp", "/dev/shm")
#: Kernel memory charged per file or directory on those tmpfs mounts (inode + dentry, an estimate).
INODE_BYTES = 1024
#: A tmpfs with less free space than this is full (a failed write leaves at most a partial page).
FULL_SLACK_BYTES = 64 << 10
WATCH_INTERVAL_S = 0.2
_START_TIMEOUT_S = 60.0


@dataclass
class Live:
    """A started run as the host sees it."""

    proc: subprocess.Popen[bytes]
    host_uid: int
    status_fd: int | None = None
    status: bytearray = field(default_factory=bytearray)
    ns_inode: int | None = None
    #: host pid of the sandbox's pid 1 (bwrap's init, which reaps every process of the sandbox)
    init_pid: int | None = None
    #: the most CPU time the kernel had accounted to the sandbox's processes at a watchdog look, and when
    cpu_seen: float = 0.0
    cpu_seen_at: float = 0.0
    #: when the program was let go
    started_at: float = 0.0
    #: sandboxed: mount point -> open directory descriptor of the sandbox's tmpfs
    mounts: dict[str, int] = field(default_factory=dict)
    #: unsandboxed: the host work dir (opened once, walked by the watchdog)
    work_fd: int | None = None

    def close(self) -> None:
        for fd in [*self.mounts.values(), self.work_fd, self.status_fd]:
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.mounts, self.work_fd, self.status_fd = {}, None, None


@dataclass
class Finished:
    """How a run ended (facts only)."""

    exit_code: int
    signal: int | None
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    limit_hit: str | None
    wall_s: float
    cpu_s: float


# --- starting ------------------------------------------------------------------------------------------------
def _memfd(name: str, content: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    os.write(fd, content)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def spawn(bwrap: str, exec_argv: Sequence[str], *, program: tuple[str, bytes] | None, ro_binds: Sequence[str],
          input_binds: Mapping[str, str], env: Mapping[str, str], limits: SandboxLimits,
          host_uid: int | None) -> tuple[subprocess.Popen[bytes], int, int]:
    """Start bwrap; returns (process, host uid of the program, read end of the JSON status pipe). The sandbox
    waits for ``go`` on ``process.stdin`` before it starts the program."""
    status_r, status_w = os.pipe()
    pass_fds = [status_w]
    seccomp = bw.seccomp_filter()
    seccomp_fd = None
    if seccomp is not None:
        seccomp_fd = _memfd("seccomp", seccomp)
        pass_fds.append(seccomp_fd)
    rl = bw.rlimit_args(cpu_s=limits.cpu_s, memory_mb=limits.memory_mb, max_procs=limits.max_procs,
                        file_size_mb=limits.file_size_mb, max_open_files=limits.max_open_files)
    plan = bw.build_plan(bwrap=bwrap, exec_argv=exec_argv, ro_binds=ro_binds, env=env, rlimits=rl,
                         workdir_mb=limits.disk_mb, tmp_mb=max(1, limits.memory_mb // 2), status_fd=status_w,
                         seccomp_fd=seccomp_fd, gate=True, program=program, input_binds=input_binds,
                         host_uid=host_uid)
    for index, content in plan.data:
        fd = _memfd("data", content)
        plan.argv[index] = str(fd)
        pass_fds.append(fd)
    sep = plan.command_index
    # the options travel through a memfd: the sandbox's /proc/1/cmdline then shows no bind paths
    args_fd = _memfd("args", b"".join(a.encode() + b"\0" for a in plan.argv[1:sep]))
    pass_fds.append(args_fd)
    argv = [plan.argv[0], "--args", str(args_fd), *plan.argv[sep:]]
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                pass_fds=pass_fds, cwd="/", start_new_session=True, env={"PATH": "/usr/bin:/bin"})
    except BaseException:
        os.close(status_r)
        raise
    finally:
        for fd in pass_fds:
            os.close(fd)
    return proc, plan.host_uid, status_r


def start(bwrap: str, exec_argv: Sequence[str], *, program: tuple[str, bytes] | None, ro_binds: Sequence[str],
          input_binds: Mapping[str, str], env: Mapping[str, str], limits: SandboxLimits,
          host_uid: int | None) -> Live:
    """Spawn bwrap, open the sandbox's tmpfs mounts from the host, hand the work dir to the program's uid (root
    mode), then let the program start (see ``sandbox_bwrap.build_plan``'s ``gate``). Raises
    :class:`SandboxError` (with bwrap's message) when setup fails."""
    proc, uid, status_r = spawn(bwrap, exec_argv, program=program, ro_binds=ro_binds, input_binds=input_binds,
                                env=env, limits=limits, host_uid=host_uid)
    assert proc.stdin is not None
    live = Live(proc, uid, status_fd=status_r)
    try:
        child = live.init_pid = _read_child_pid(live, time.monotonic() + _START_TIMEOUT_S)
        live.mounts = host.attach_mounts(child, SANDBOX_MOUNTS, alive=lambda: proc.poll() is None,
                                         timeout=_START_TIMEOUT_S)
        if bw.privileged_mode():
            tree.chown_tree(live.mounts[bw.SANDBOX_WORKDIR], uid)
        proc.stdin.write(b"go\n")
        proc.stdin.close()
        live.started_at = time.monotonic()
    except BaseException as exc:
        host.killpg(proc.pid)
        try:
            proc.stdin.close()  # EOF: the program never starts
        except OSError:
            pass
        proc.stdin = None
        try:
            _, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            err = b""
        live.close()
        if isinstance(exc, (SandboxError, OSError)):
            lines = (err or b"").decode(errors="replace").strip().splitlines()
            raise SandboxError(f"bubblewrap failed to start the sandbox: {lines[-1] if lines else exc}") from exc
        raise
    return live


def _read_child_pid(live: Live, deadline: float) -> int:
    """Read bwrap's first status document: the host pid of the sandbox's pid 1 and its pid-namespace inode."""
    assert live.status_fd is not None
    while True:
        m = re.search(rb'"child-pid":\s*(\d+)[^}]*}', live.status)
        if m:
            ns = re.search(rb'"pid-namespace":\s*(\d+)', live.status)
            live.ns_inode = int(ns.group(1)) if ns else None
            return int(m.group(1))
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SandboxError("bubblewrap reported no sandbox process")
        ready, _, _ = select.select([live.status_fd], [], [], min(remaining, 1.0))
        if ready:
            data = os.read(live.status_fd, 65536)
            if not data:
                raise SandboxError("bubblewrap exited before starting the sandbox")
            live.status += data


def start_unsandboxed(argv: Sequence[str], work: str, env: Mapping[str, str]) -> Live:
    proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=work, env=dict(env), start_new_session=True)
    return Live(proc, os.getuid(), work_fd=tree.open_dir(work))


# --- watching -----------------------------------------------------------------------------------------------------
def _watch(live: Live, limits: SandboxLimits) -> str | None:
    """One watchdog look: the limit the run is over right now, if any."""
    if live.mounts:
        used = inodes = 0
        for fd in live.mounts.values():
            fs_used, _, fs_inodes = host.fs_usage(fd)
            used += fs_used
            inodes += fs_inodes
        if inodes > limits.max_files:
            return "disk"
        pids = host.pids_in_namespace(live.ns_inode, live.host_uid)
        if live.init_pid is not None:
            # bwrap exits without reaping the sandbox's pid 1, so wait4 never sees the program's CPU time: sample
            # it (pid 1's reaped children plus every live process). A lower figure than before means a process
            # was between its death and its reaping, counted nowhere: that look does not count as a full one.
            cpu = host.cpu_seconds(live.init_pid, pids)
            if cpu is not None and cpu >= live.cpu_seen:
                live.cpu_seen, live.cpu_seen_at = cpu, time.monotonic()
        if host.pss_bytes(pids) + used + inodes * INODE_BYTES > limits.memory_mb << 20:
            return "memory"
        return None
    if live.work_fd is not None:
        try:
            used, entries = tree.tree_usage(live.work_fd, max_entries=limits.max_files, fix_perms=True)
        except (OSError, tree.TreeChanged):
            return None  # the program is busy moving things; look again next time
        if used > limits.disk_mb << 20 or entries > limits.max_files:
            return "disk"
    return None


def supervise(live: Live, limits: SandboxLimits, start_time: float) -> Finished:
    """Read output, enforce wall/output/disk/memory limits, reap. Any exception here (KeyboardInterrupt
    included) kills the run before propagating."""
    proc = live.proc
    try:
        return _supervise(live, limits, start_time)
    except BaseException:
        if proc.returncode is None:  # not reaped yet, so the pid cannot have been reused
            host.killpg(proc.pid)
            try:
                host.wait_pid(proc.pid, 5.0)
                proc.returncode = -signal.SIGKILL
            except (OSError, subprocess.TimeoutExpired):
                pass
        raise


def _supervise(live: Live, limits: SandboxLimits, start_time: float) -> Finished:
    proc = live.proc
    assert proc.stdout is not None and proc.stderr is not None
    sel = selectors.DefaultSelector()
    bufs: dict[int, bytearray] = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    truncated = {fd: False for fd in bufs}
    for fd in bufs:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    if live.status_fd is not None:
        os.set_blocking(live.status_fd, False)
        sel.register(live.status_fd, selectors.EVENT_READ)
    deadline = start_time + limits.wall_s
    next_watch = time.monotonic() + WATCH_INTERVAL_S
    live.cpu_seen_at = live.started_at or start_time  # nothing to see before the program starts
    cores = os.cpu_count() or 1
    near_cpu_limit = bw.cpu_rlimit_seconds(limits.cpu_s) - 2 * WATCH_INTERVAL_S * cores
    killed_for: str | None = None
    kill_time: float | None = None

    def kill(reason: str) -> None:
        nonlocal killed_for, kill_time
        if killed_for is None:
            killed_for, kill_time = reason, time.monotonic()
            host.killpg(proc.pid)

    while sel.get_map():
        now = time.monotonic()
        if now >= deadline:
            kill("wall")
        if kill_time is not None and now - kill_time > 5.0:
            break  # something still holds a pipe; the namespace reaper below ends it
        timeout = max(0.0, min(deadline, next_watch) - now) if killed_for is None else 0.1
        for key, _ in sel.select(timeout):
            fd = key.fd
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not data:
                sel.unregister(fd)
                continue
            if fd == live.status_fd:
                live.status += data
                continue
            buf = bufs[fd]
            room = limits.output_limit_bytes - len(buf)
            if room > 0:
                buf += data[:room]
            if len(data) > room:
                truncated[fd] = True
                kill("output")
        if killed_for is None and time.monotonic() >= next_watch:
            over = _watch(live, limits)
            if over is not None:
                kill(over)
            # look more often when the CPU limit is near: the CPU-time evidence is then fresher
            next_watch = time.monotonic() + (WATCH_INTERVAL_S if live.cpu_seen < near_cpu_limit else 0.02)
    sel.close()
    remaining = max(0.1, deadline - time.monotonic()) if killed_for is None else 5.0
    try:
        wstatus, cpu = host.wait_pid(proc.pid, remaining)
    except subprocess.TimeoutExpired:
        kill("wall")
        wstatus, cpu = host.wait_pid(proc.pid, 10.0)
    ended_at = time.monotonic()
    wall = ended_at - start_time
    proc.returncode = os.waitstatus_to_exitcode(wstatus)
    if live.status_fd is not None:
        try:
            live.status += host.read_all(live.status_fd)
        except OSError:
            pass
        live.status_fd = None
    host.reap_namespace(live.ns_inode, live.host_uid)
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    stdout = bytes(bufs[out_fd]).decode("utf-8", errors="replace")
    stderr = bytes(bufs[err_fd]).decode("utf-8", errors="replace")
    proc.stdout.close()
    proc.stderr.close()
    code = proc.returncode
    sig: int | None = -code if code < 0 else None
    if live.mounts and sig is None and 128 < code < 128 + 65:
        sig = code - 128  # bwrap reports a signal death of the program as 128 + N
    exit_code = -sig if sig is not None else code
    if live.mounts and code in (126, 127) and re.match(r"(prlimit|setpriv): ", stderr):
        raise SandboxError(f"sandbox could not start the interpreter: {stderr.strip()[-500:]}")
    # CPU the watchdog cannot have seen: whatever the sandbox could spend since its last look (a sandbox only)
    unseen = (ended_at - live.cpu_seen_at) * cores if live.mounts else 0.0
    cpu = max(cpu, live.cpu_seen)
    limit = killed_for or _limit_from_facts(live, exit_code, sig, cpu, unseen, limits)
    return Finished(exit_code=exit_code, signal=sig, stdout=stdout, stderr=stderr,
                    stdout_truncated=truncated[out_fd], stderr_truncated=truncated[err_fd], limit_hit=limit,
                    wall_s=wall, cpu_s=cpu)


# --- why it ended ---------------------------------------------------------------------------------------------------
def _limit_from_facts(live: Live, exit_code: int, sig: int | None, cpu: float, unseen: float,
                      limits: SandboxLimits) -> str | None:
    """The rlimit or file-system limit that ended a run the watchdog did not kill, from evidence the program
    cannot fake by printing: the CPU time the kernel accounted for a SIGXCPU/SIGKILL death, a file that reached
    RLIMIT_FSIZE, a full work dir (``disk``) or a full /tmp or /dev/shm (``memory``). An exit status of 128+N is
    only ever read as signal N together with such evidence. A failure the program reports itself (MemoryError
    under RLIMIT_AS, "can't start new thread" under RLIMIT_NPROC) is not a limit hit: nothing outside the
    program can tell it from a program printing the same words.

    In a sandbox, CPU time is the watchdog's last sample (exact for an unsandboxed child); ``unseen`` is the most
    it can have missed since (wall time since that sample times the cores), kept small near the limit. The kernel
    reports exact run time, but RLIMIT_CPU counts scheduler ticks, which a busy host hands out unevenly: a genuine
    hit can show a little less than ``cpu_s`` (12 % at 1 s was seen), hence a tick-sampling margin of
    0.4·√cpu_s seconds (10 ms ticks, four standard deviations; 7 s at the default 300 s)."""
    soft = bw.cpu_rlimit_seconds(limits.cpu_s)
    if sig in (signal.SIGXCPU, signal.SIGKILL) and cpu >= soft - unseen - 0.05 - 0.4 * soft ** 0.5:
        return "cpu"
    if sig is None and exit_code == 0:
        return None
    if live.mounts:
        fix = not bw.privileged_mode()
        largest = max(tree.largest_file(fd, max_entries=limits.max_files, fix_perms=fix)
                      for fd in live.mounts.values())
        if largest >= limits.file_size_mb << 20:
            return "file_size"
        free = {mp: host.fs_usage(fd)[1] for mp, fd in live.mounts.items()}
        if free[bw.SANDBOX_WORKDIR] < FULL_SLACK_BYTES:
            return "disk"
        if min(free.values()) < FULL_SLACK_BYTES:
            return "memory"
        return None
    if live.work_fd is not None:
        largest = tree.largest_file(live.work_fd, max_entries=limits.max_files, fix_perms=True)
        if largest >= limits.file_size_mb << 20:
            return "file_size"
    return None
