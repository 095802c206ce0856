"""Sandboxed execution of model-written Python for SGI-Bench dry experiments.

Spec ``shared/spec/sgibench.md``:

* §1.3 / §3.3 step 3 — upstream runs ``python main_[<model>].py`` in each unit-test dir with a **300 s** timeout
  (10 min for the ``data_en.py`` data generation), compares ``f"{stderr}\\n{stdout}".strip()``
  (:attr:`RunResult.output`), and counts a timeout as runtime 300 s with return code −1.
* §8 "Dry experiment (sandbox required)" — arbitrary model code: isolated, network-less, non-root, CPU/memory/disk
  limits, the pinned ``dryexp`` interpreter (see :mod:`sciprobe.runners.sandbox_env`).
* §7 — three items need external files (Adult, MNIST, EM archive): pass them as read-only ``inputs``.

Requirements: bubblewrap >= 0.8.0 (Debian 12: ``apt-get install -y bubblewrap``) and util-linux's ``prlimit``
(and ``setpriv`` when run as root), Linux. Root and normal users are both supported and behave the same for the
program (see ``sandbox_bwrap``): as root the program runs under a fresh unprivileged uid; as a normal user bwrap
needs unprivileged user namespaces (``sysctl user.max_user_namespaces`` > 0; on Ubuntu >= 23.10 AppArmor must allow
them for bwrap) — :func:`sandbox_available` probes exactly that. Input files must be readable by "other" when
run as root (the program's uid owns nothing on the host).

Isolation is bubblewrap (:mod:`sciprobe.runners.sandbox_bwrap` has the exact layout and the seccomp filter;
run dirs and process scans live in :mod:`sciprobe.runners.sandbox_host`). Without a working bwrap,
:func:`run_python` refuses (:class:`SandboxUnavailableError`) unless the caller passes ``allow_unsandboxed=True``;
the unsandboxed fallback keeps the rlimits, clean env, private dir and timeout but has no filesystem, network or
process isolation.

Printed text differs from upstream's in one known way: warnings carry the script path, here
``/workdir/<filename>`` (upstream: its own absolute unit-test dir), so stderr with warnings never matched
exactly across machines anyway (spec §8). ``wall_s`` includes the sandbox start (upstream's included
``conda run``).

Limits and how each is enforced:

=================  ==================================================================================
wall_s             watchdog here: SIGKILL to bwrap's process group; ``--die-with-parent`` then kills the
                   sandbox's pid 1 and with it the whole pid namespace (daemons included)
cpu_s              RLIMIT_CPU per process (SIGXCPU at cpu_s, SIGKILL one second later)
memory_mb          RLIMIT_AS per process, plus the watchdog's sum of PSS over the sandbox's processes
max_procs          RLIMIT_NPROC (processes *and threads*), counted per run (see sandbox_bwrap)
file_size_mb       RLIMIT_FSIZE (SIGXFSZ / EFBIG)
disk_mb            watchdog: allocated bytes under the work dir; also the size of tmpfs /tmp and /dev/shm
output_limit_bytes stdout and stderr each; the run is killed when one exceeds it, the text is cut there
=================  ==================================================================================

``limit_hit`` names the limit that ended a run: ``wall``, ``output``, ``disk`` and watchdog ``memory`` are
certain; ``cpu`` (SIGXCPU, or an unexplained SIGKILL late enough to be the hard CPU limit), ``file_size`` (SIGXFSZ or "File too large"),
``memory`` (MemoryError / "Unable to allocate" in stderr) and ``procs`` ("Resource temporarily unavailable",
"can't start new thread") are read off the exit and are best-effort.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from sciprobe.runners import sandbox_bwrap as bw
from sciprobe.runners import sandbox_host as host
from sciprobe.runners.sandbox_host import SandboxError

__all__ = ["DATA_GENERATION_TIMEOUT_S", "DEFAULT_ENV", "RUN_TIMEOUT_S", "RunResult", "RunSpec", "SandboxError",
           "SandboxLimits", "SandboxUnavailableError", "run_many", "run_python", "sandbox_available"]

#: Upstream timeouts (spec §3.3 steps 1 and 3).
RUN_TIMEOUT_S = 300.0
DATA_GENERATION_TIMEOUT_S = 600.0
#: Environment variables set inside the sandbox (the caller's ``env`` is merged over them). One BLAS/OpenMP
#: thread per run: ``run_many`` already uses every core, and the threads would count against ``max_procs``.
DEFAULT_ENV: dict[str, str] = {
    "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
    "USER": "sandbox", "LOGNAME": "sandbox", "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1",
}
#: --disable-userns, --size, --perms for tmpfs and --json-status-fd all exist from bubblewrap 0.8.0 (Debian 12).
MIN_BWRAP = (0, 8, 0)
_WATCH_INTERVAL_S = 0.2


class SandboxUnavailableError(SandboxError):
    """bubblewrap cannot run here and the caller did not opt out of isolation."""


@dataclass(frozen=True)
class SandboxLimits:
    """Per-run limits (spec §8: CPU/memory/disk limits, 300 s per run). See the module docstring."""

    wall_s: float = RUN_TIMEOUT_S
    cpu_s: float = RUN_TIMEOUT_S
    memory_mb: int = 4096
    max_procs: int = 64
    file_size_mb: int = 512
    disk_mb: int = 2048
    output_limit_bytes: int = 8 << 20
    max_open_files: int = 1024

    def __post_init__(self) -> None:
        for name in ("wall_s", "cpu_s", "memory_mb", "max_procs", "file_size_mb", "disk_mb", "output_limit_bytes",
                     "max_open_files"):
            if not getattr(self, name) > 0:
                raise SandboxError(f"SandboxLimits.{name} must be positive, got {getattr(self, name)!r}")

    @classmethod
    def data_generation(cls, **overrides: Any) -> SandboxLimits:
        """Limits for upstream's ``data_en.py`` step (10 min timeout, spec §3.3 step 1)."""
        base = {"wall_s": DATA_GENERATION_TIMEOUT_S, "cpu_s": DATA_GENERATION_TIMEOUT_S}
        return cls(**{**base, **overrides})


@dataclass(frozen=True)
class RunResult:
    """What one run did. ``exit_code`` follows :mod:`subprocess`: negative = killed by that signal (−9 after a
    timeout; upstream records −1 for a timeout, spec §3.3). bwrap reports a signal death of the program as exit
    status 128+N, which is decoded the same way (a program calling ``sys.exit(137)`` reads as SIGKILL)."""

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool
    killed_by_signal: int | None
    limit_hit: str | None
    wall_s: float
    stdout_truncated: bool
    stderr_truncated: bool
    sandboxed: bool

    @property
    def output(self) -> str:
        """Upstream's compared string: ``f"{stderr}\\n{stdout}".strip()`` (spec §3.3 step 3)."""
        return f"{self.stderr}\n{self.stdout}".strip()

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and self.limit_hit is None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RunSpec:
    """One program for :func:`run_many` (same fields as :func:`run_python`'s arguments)."""

    code: str
    inputs: Mapping[str, Path] = field(default_factory=dict)
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    python: str | Path | None = None
    filename: str = "main.py"
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    output_dir: Path | None = None


# --- availability --------------------------------------------------------------------------------------------
_probe_cache: dict[str, tuple[bool, str]] = {}
_probe_lock = threading.Lock()


def bwrap_path() -> str:
    """``$SCIPROBE_BWRAP`` or ``bwrap`` on PATH or ``/usr/bin/bwrap``."""
    return os.environ.get("SCIPROBE_BWRAP") or shutil.which("bwrap") or "/usr/bin/bwrap"


def sandbox_available(*, refresh: bool = False, bwrap: str | None = None) -> tuple[bool, str]:
    """(True, description) when a probe run of the full sandbox succeeds, else (False, one-line reason).

    The probe runs ``true`` with exactly the options real runs use, so a missing binary, disabled user
    namespaces (unprivileged mode) or a missing ``setpriv``/``prlimit`` all show up here. Cached per bwrap path.
    """
    path = bwrap or bwrap_path()
    with _probe_lock:
        if not refresh and path in _probe_cache:
            return _probe_cache[path]
        result = _probe(path)
        _probe_cache[path] = result
        return result


def _probe(path: str) -> tuple[bool, str]:
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return False, f"bubblewrap not found at {path} (install the Debian package 'bubblewrap')"
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10, check=False).stdout
        version = tuple(int(x) for x in re.findall(r"\d+", out)[:3])
    except (OSError, subprocess.SubprocessError, ValueError):
        version = ()
    if version < MIN_BWRAP:
        found = ".".join(map(str, version)) or "unknown version"
        return False, f"bubblewrap >= {'.'.join(map(str, MIN_BWRAP))} needed, found {found} at {path}"
    for tool in ("prlimit", "setpriv") if bw.privileged_mode() else ("prlimit",):
        if bw.tool_path(tool) is None:
            return False, f"{tool} (util-linux) not found"
    try:
        proc, _, status_r, _ = _spawn(path, ["true"], workdir_host=None, ro_binds=[], input_binds={},
                                      env={"PATH": "/usr/bin:/bin"}, limits=SandboxLimits(wall_s=10))
        _, err = proc.communicate(timeout=10)
        status = host.read_all(status_r)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bubblewrap probe failed: {exc}"
    if proc.returncode != 0 or b"child-pid" not in status:
        reason = (err.decode(errors="replace").strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        return False, f"bubblewrap probe failed ({reason}); user namespaces may be disabled"
    mode = "root: privileged bwrap + setpriv to a fresh uid" if bw.privileged_mode() else "user namespace"
    return True, f"bubblewrap ok ({mode}{'' if bw.seccomp_filter() else '; no seccomp table for this arch'})"


def _refuse_message(reason: str) -> str:
    return (f"refusing to run untrusted code without a sandbox: {reason}; pass allow_unsandboxed=True "
            "(CLI: --allow-unsandboxed) to run it anyway")


# --- interpreter ------------------------------------------------------------------------------------------------
@lru_cache(maxsize=16)
def interpreter_prefixes(python: str) -> tuple[str, ...]:
    """Directories the interpreter needs (venv prefix, base prefix, exec prefixes), bound read-only."""
    code = "import sys,json;print(json.dumps([sys.prefix,sys.base_prefix,sys.exec_prefix,sys.base_exec_prefix]))"
    try:
        out = subprocess.run([python, "-I", "-c", code], capture_output=True, text=True, timeout=60, check=True,
                             env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"interpreter {python} is not usable: {exc}") from exc
    dirs = {os.path.realpath(p) for p in json.loads(out)} | {os.path.dirname(os.path.realpath(python))}
    dirs |= {os.path.abspath(p) for p in json.loads(out)}
    keep = sorted(d for d in dirs if not any(d != o and d.startswith(o + "/") for o in dirs))
    too_wide = [d for d in keep if d in _TOO_WIDE or os.path.dirname(d) == "/home"]
    if too_wide:
        raise SandboxError(f"interpreter {python} lives in {too_wide[0]}, which would expose too much of the host "
                           "read-only; use a venv in its own directory")
    return tuple(keep)


#: Interpreter prefixes that would bind too much of the host into the sandbox.
_TOO_WIDE = frozenset({"/", "/home", "/root", "/etc", "/var", "/tmp", "/proc", "/sys", "/dev", "/run", "/mnt",
                       "/media", "/srv", "/opt", "/work"})


# --- process handling --------------------------------------------------------------------------------------------
def _spawn(bwrap: str, exec_argv: Sequence[str], *, workdir_host: str | None, ro_binds: Sequence[str],
           input_binds: Mapping[str, str], env: Mapping[str, str], limits: SandboxLimits,
           host_uid: int | None = None) -> tuple[subprocess.Popen[bytes], int, int, bw.BwrapPlan]:
    """Start bwrap; returns (process, host uid of the program, read end of bwrap's JSON status pipe, plan)."""
    status_r, status_w = os.pipe()
    to_close = [status_w]
    seccomp = bw.seccomp_filter()
    seccomp_fd = None
    if seccomp is not None:
        seccomp_fd, w = os.pipe()
        os.write(w, seccomp)
        os.close(w)
        to_close.append(seccomp_fd)
    rl = bw.rlimit_args(cpu_s=limits.cpu_s, memory_mb=limits.memory_mb, max_procs=limits.max_procs,
                        file_size_mb=limits.file_size_mb, max_open_files=limits.max_open_files)
    plan = bw.build_plan(bwrap=bwrap, exec_argv=exec_argv, workdir_host=workdir_host, ro_binds=ro_binds,
                         input_binds=input_binds, env=env, rlimits=rl, tmpfs_mb=limits.disk_mb,
                         status_fd=status_w, seccomp_fd=seccomp_fd, host_uid=host_uid)
    pass_fds = [status_w] + ([seccomp_fd] if seccomp_fd is not None else [])
    for index, content in plan.data:
        r, w = os.pipe()
        os.write(w, content)
        os.close(w)
        plan.argv[index] = str(r)
        pass_fds.append(r)
        to_close.append(r)
    argv = plan.argv
    sep = plan.command_index
    packed = b"".join(a.encode() + b"\0" for a in argv[1:sep])
    if len(packed) < 60000:  # fits a pipe buffer: the sandbox's /proc/1/cmdline then shows no bind paths
        r, w = os.pipe()
        os.write(w, packed)
        os.close(w)
        argv = [argv[0], "--args", str(r), *argv[sep:]]
        pass_fds.append(r)
        to_close.append(r)
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, pass_fds=pass_fds, cwd="/", start_new_session=True,
                                env={"PATH": "/usr/bin:/bin"})
    except BaseException:
        os.close(status_r)
        raise
    finally:
        for fd in to_close:
            os.close(fd)
    return proc, plan.host_uid, status_r, plan


_MEMORY_RE = re.compile(r"MemoryError|Unable to allocate|std::bad_alloc|Cannot allocate memory")
_PROCS_RE = re.compile(r"Resource temporarily unavailable|can't start new thread|BlockingIOError")


def _classify(exit_code: int, sig: int | None, stderr: str, wall: float, limits: SandboxLimits) -> str | None:
    tail = stderr[-4000:]
    # A SIGKILL we did not send is RLIMIT_CPU's hard limit when enough CPU could have been spent by then
    # (bwrap does not pass the program's rusage back, so CPU time is not measured).
    hard_cpu = sig == signal.SIGKILL and wall * max(1, os.cpu_count() or 1) >= limits.cpu_s
    if sig == signal.SIGXCPU or hard_cpu:
        return "cpu"
    if sig == signal.SIGXFSZ or "File too large" in tail:
        return "file_size"
    if exit_code != 0 and _MEMORY_RE.search(tail):
        return "memory"
    if exit_code != 0 and _PROCS_RE.search(tail):
        return "procs"
    return None


def _supervise(proc: subprocess.Popen[bytes], *, status_fd: int | None, limits: SandboxLimits, work: str,
               host_uid: int, start: float) -> tuple[RunResult, int | None]:
    """Read output, enforce wall/output/disk/memory limits, reap. Returns (result, pid-namespace inode).
    Any exception here (KeyboardInterrupt included) kills the sandbox before propagating."""
    try:
        return _supervise_inner(proc, status_fd=status_fd, limits=limits, work=work, host_uid=host_uid,
                                start=start)
    except BaseException:
        if proc.returncode is None:  # not reaped yet, so the pid cannot have been reused
            host.killpg(proc.pid)
            try:
                host.wait_pid(proc.pid, 5.0)
                proc.returncode = -signal.SIGKILL
            except (OSError, subprocess.TimeoutExpired):
                pass
        raise


def _supervise_inner(proc: subprocess.Popen[bytes], *, status_fd: int | None, limits: SandboxLimits, work: str,
                     host_uid: int, start: float) -> tuple[RunResult, int | None]:
    assert proc.stdout is not None and proc.stderr is not None
    sel = selectors.DefaultSelector()
    bufs: dict[int, bytearray] = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    truncated = {fd: False for fd in bufs}
    for fd in bufs:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    status = bytearray()
    if status_fd is not None:
        os.set_blocking(status_fd, False)
        sel.register(status_fd, selectors.EVENT_READ)
    deadline = start + limits.wall_s
    next_watch = start + _WATCH_INTERVAL_S
    killed_for: str | None = None
    kill_time: float | None = None
    ns_inode: int | None = None
    while sel.get_map():
        now = time.monotonic()
        if killed_for is None and now >= deadline:
            killed_for, kill_time = "wall", now
            host.killpg(proc.pid)
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
            if fd == status_fd:
                status += data
                if ns_inode is None:
                    m = re.search(rb'"pid-namespace":\s*(\d+)', status)
                    ns_inode = int(m.group(1)) if m else None
                continue
            buf = bufs[fd]
            room = limits.output_limit_bytes - len(buf)
            if room > 0:
                buf += data[:room]
            if len(data) > room:
                truncated[fd] = True
                if killed_for is None:
                    killed_for, kill_time = "output", time.monotonic()
                    host.killpg(proc.pid)
        now = time.monotonic()
        if killed_for is None and now >= next_watch:
            next_watch = now + _WATCH_INTERVAL_S
            used, entries = host.disk_usage(work)
            if used > limits.disk_mb << 20 or entries > host.MAX_SCAN_ENTRIES:
                killed_for, kill_time = "disk", now
                host.killpg(proc.pid)
            else:
                pids = host.pids_in_namespace(ns_inode, host_uid)
                if len(pids) > 1 and host.pss_bytes(pids) > limits.memory_mb << 20:
                    killed_for, kill_time = "memory", now
                    host.killpg(proc.pid)
    sel.close()
    remaining = max(0.1, deadline - time.monotonic()) if killed_for is None else 5.0
    try:
        _, wstatus = host.wait_pid(proc.pid, remaining)
    except subprocess.TimeoutExpired:
        killed_for = killed_for or "wall"
        host.killpg(proc.pid)
        _, wstatus = host.wait_pid(proc.pid, 10.0)
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(wstatus)
    if status_fd is not None:
        try:
            status += host.read_all(status_fd)
        except OSError:
            pass
        if ns_inode is None:
            m = re.search(rb'"pid-namespace":\s*(\d+)', status)
            ns_inode = int(m.group(1)) if m else None
    host.reap_namespace(ns_inode, host_uid)
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    stdout = bytes(bufs[out_fd]).decode("utf-8", errors="replace")
    stderr = bytes(bufs[err_fd]).decode("utf-8", errors="replace")
    proc.stdout.close()
    proc.stderr.close()
    code = proc.returncode
    sig: int | None = -code if code < 0 else None
    if status_fd is not None and sig is None and 128 < code < 128 + 65:
        sig = code - 128  # bwrap reports a signal death of the program as 128 + N
    exit_code = -sig if sig is not None else code
    limit = killed_for or _classify(exit_code, sig, stderr, wall, limits)
    if status_fd is not None and b"child-pid" not in status and killed_for is None:
        raise SandboxError(f"bubblewrap failed to start the sandbox: {stderr.strip()[-500:]}")
    if code in (126, 127) and re.match(r"(prlimit|setpriv): ", stderr):
        raise SandboxError(f"sandbox could not start the interpreter: {stderr.strip()[-500:]}")
    result = RunResult(exit_code=exit_code, stdout=stdout, stderr=stderr, timed_out=killed_for == "wall",
                       killed_by_signal=sig, limit_hit=limit, wall_s=wall, stdout_truncated=truncated[out_fd],
                       stderr_truncated=truncated[err_fd], sandboxed=status_fd is not None)
    return result, ns_inode


# --- public API ----------------------------------------------------------------------------------------------------
def run_python(code: str, *, inputs: Mapping[str, Path] | None = None, limits: SandboxLimits | None = None,
               python: str | Path | None = None, allow_unsandboxed: bool = False, filename: str = "main.py",
               args: Sequence[str] = (), env: Mapping[str, str] | None = None,
               output_dir: Path | None = None) -> RunResult:
    """Run ``code`` as ``python <filename> [args]`` in a fresh private work dir inside the sandbox.

    ``inputs`` maps paths relative to the work dir (e.g. ``"data/adult.data"``) to host files or directories,
    bound read-only (spec §7 external files); parent directories stay writable. ``python`` is the interpreter
    (default: this one) — pass the pinned ``dryexp`` venv's python (``sandbox_env.create_env``) to reproduce
    upstream's printed digits; its prefixes are bound read-only. ``env`` is merged over :data:`DEFAULT_ENV`
    (the host environment is never passed). ``output_dir``: copy the regular files the program left in the
    work dir there afterwards (e.g. the data ``data_en.py`` generates, spec §3.3 step 1). The work dir is
    always deleted.

    Raises :class:`SandboxUnavailableError` when bubblewrap cannot run here, unless ``allow_unsandboxed``.
    """
    limits = limits or SandboxLimits()
    interp = str(python) if python is not None else sys.executable
    if not os.path.isabs(interp):
        interp = os.path.abspath(shutil.which(interp) or interp)
    ok, reason = sandbox_available()
    if not ok and not allow_unsandboxed:
        raise SandboxUnavailableError(_refuse_message(reason))
    run_env = {**DEFAULT_ENV, **(env or {})}
    filename = host.check_rel(filename)
    run_root = host.new_run_root()
    try:
        work = os.path.join(run_root, "work")
        os.mkdir(work, 0o700)
        if ok:
            privileged = bw.privileged_mode()
            host_uid = bw.fresh_uid() if privileged else os.getuid()
            binds = host.prepare_workdir(work, code, filename, inputs or {}, host_uid if privileged else None, False)
            prefixes = interpreter_prefixes(interp)
            run_env["PATH"] = f"{os.path.dirname(interp)}:{run_env['PATH']}"
            start = time.monotonic()
            proc, host_uid, status_r, _ = _spawn(bwrap_path(), [interp, filename, *args], workdir_host=work,
                                                 ro_binds=prefixes, input_binds=binds, env=run_env,
                                                 limits=limits, host_uid=host_uid)
            result, _ = _supervise(proc, status_fd=status_r, limits=limits, work=work, host_uid=host_uid,
                                   start=start)
        else:
            binds = host.prepare_workdir(work, code, filename, inputs or {}, None, True)
            result = _run_unsandboxed(interp, filename, args, work, run_env, limits)
        if output_dir is not None:
            skip = {os.path.relpath(d, bw.SANDBOX_WORKDIR) for d in binds}
            host.collect_outputs(work, Path(output_dir), skip)
        return result
    finally:
        host.rmtree(run_root)


def _run_unsandboxed(interp: str, filename: str, args: Sequence[str], work: str, env: dict[str, str],
                     limits: SandboxLimits) -> RunResult:
    """The explicit opt-out: rlimits (via prlimit when present), clean env, private dir, process-group kill.
    No filesystem/network/pid isolation; a daemon that calls setsid() can outlive the run, and RLIMIT_NPROC
    does not bind a root caller."""
    env = {**env, "HOME": work, "TMPDIR": work}
    argv = [interp, filename, *args]
    prlimit = bw.tool_path("prlimit")
    if prlimit:
        argv = [prlimit, *bw.rlimit_args(cpu_s=limits.cpu_s, memory_mb=limits.memory_mb,
                                         max_procs=limits.max_procs, file_size_mb=limits.file_size_mb,
                                         max_open_files=limits.max_open_files), "--", *argv]
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=work, env=env, start_new_session=True)
    result, _ = _supervise(proc, status_fd=None, limits=limits, work=work, host_uid=os.getuid(), start=start)
    return result


def run_many(specs: Sequence[RunSpec | str], *, workers: int | None = None, allow_unsandboxed: bool = False,
             limits: SandboxLimits | None = None, python: str | Path | None = None) -> list[RunResult]:
    """Run many programs in parallel (``workers`` threads, default ``os.cpu_count()``); results in input order.

    Plain strings are programs run with ``limits``/``python``; :class:`RunSpec` items carry their own settings
    (``limits``/``python`` given here fill in only where the spec leaves the default interpreter).
    """
    ok, reason = sandbox_available()
    if not ok and not allow_unsandboxed:
        raise SandboxUnavailableError(_refuse_message(reason))
    items = [RunSpec(code=s, limits=limits or SandboxLimits(), python=python) if isinstance(s, str)
             else (replace(s, python=python) if s.python is None else s) for s in specs]

    def one(spec: RunSpec) -> RunResult:
        return run_python(spec.code, inputs=spec.inputs, limits=spec.limits, python=spec.python,
                          allow_unsandboxed=allow_unsandboxed, filename=spec.filename, args=spec.args,
                          env=spec.env, output_dir=spec.output_dir)

    with ThreadPoolExecutor(max_workers=max(1, workers or os.cpu_count() or 1)) as pool:
        return list(pool.map(one, items))
