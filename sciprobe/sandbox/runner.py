"""Sandboxed execution of model-written Python for SGI-Bench dry experiments.

Spec ``shared/spec/sgibench.md``:

* §1.3 / §3.3 step 3 — upstream runs ``python main_[<model>].py`` in each unit-test dir with a **300 s** timeout
  (10 min for the ``data_en.py`` data generation), compares ``f"{stderr}\\n{stdout}".strip()``
  (:attr:`RunResult.output`), and counts a timeout as runtime 300 s with return code −1.
* §8 "Dry experiment (sandbox required)" — arbitrary model code: isolated, network-less, non-root, CPU/memory/disk
  limits, the pinned ``dryexp`` interpreter (see :mod:`sciprobe.sandbox.env`).
* §7 — three items need external files (Adult, MNIST, EM archive): pass them as read-only ``inputs``.

Requirements: bubblewrap >= 0.8.0 (Debian 12: ``apt-get install -y bubblewrap``) and util-linux's ``prlimit``
(and ``setpriv`` when run as root), Linux. Root and normal users are both supported and behave the same for the
program (see ``sandbox_bwrap``): as root the program runs under a fresh unprivileged uid; as a normal user bwrap
needs unprivileged user namespaces (``sysctl user.max_user_namespaces`` > 0; on Ubuntu >= 23.10 AppArmor must allow
them for bwrap) — :func:`sandbox_available` probes exactly that. Input files must be readable by "other" when
run as root (the program's uid owns nothing on the host).

Isolation is bubblewrap (:mod:`sciprobe.sandbox.bwrap` has the exact layout and the seccomp filter;
starting and watching a run is :mod:`sciprobe.sandbox.supervise`, the file-tree walks
:mod:`sciprobe.sandbox.tree`). The program's work dir is the sandbox's own tmpfs, like ``/tmp`` and
``/dev/shm``: nothing the program writes touches the host's disk, and all of it disappears with the sandbox.
Without a working bwrap, :func:`run_python` refuses (:class:`SandboxUnavailableError`) unless the caller passes
``allow_unsandboxed=True``; the unsandboxed fallback keeps the rlimits, clean env, private dir (on the host
disk), timeout and disk watchdog but has no filesystem, network or process isolation.

Printed text differs from upstream's in one known way: warnings carry the script path, here
``/workdir/<filename>`` (upstream: its own absolute unit-test dir), so stderr with warnings never matched
exactly across machines anyway (spec §8). ``wall_s`` includes the sandbox start (upstream's included
``conda run``).

Limits and how each is enforced:

=================  ==================================================================================
wall_s             watchdog here: SIGKILL to bwrap's process group; ``--die-with-parent`` then kills the
                   sandbox's pid 1 and with it the whole pid namespace (daemons included)
cpu_s              RLIMIT_CPU per process (SIGXCPU at cpu_s, SIGKILL one second later)
memory_mb          RLIMIT_AS per process; the watchdog's sum of the processes' PSS, the space used on the
                   three tmpfs mounts and an estimate of their inodes' kernel memory; /tmp and /dev/shm are
                   each sized memory_mb / 2
max_procs          RLIMIT_NPROC (processes *and threads*), counted per run (see sandbox_bwrap)
file_size_mb       RLIMIT_FSIZE (SIGXFSZ / EFBIG)
disk_mb            size of the work dir tmpfs (the kernel refuses writes beyond it: ENOSPC); unsandboxed:
                   the watchdog's sum of allocated blocks under the work dir. Also the budget of what
                   ``output_dir`` receives (apparent size, so sparse and hard-linked files count in full)
max_files          files and directories on the three tmpfs mounts together (unsandboxed: in the work dir)
output_limit_bytes stdout and stderr each; the run is killed when one exceeds it, the text is cut there
=================  ==================================================================================

``limit_hit`` names the limit that ended a run, from facts observed outside the program, never from what it
prints: ``wall``, ``output``, ``disk`` and ``memory`` when the watchdog killed the run; ``cpu`` for a
SIGXCPU/SIGKILL death after the kernel accounted ``cpu_s`` of CPU time; after any other failure, ``file_size``
when a file reached RLIMIT_FSIZE, ``disk`` when the work dir is full, ``memory`` when /tmp or /dev/shm is full.
A MemoryError under RLIMIT_AS or a refused thread under RLIMIT_NPROC is the program's own error
(``limit_hit`` None). See ``sandbox_supervise._limit_from_facts``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from sciprobe.sandbox import bwrap as bw
from sciprobe.sandbox import host as host
from sciprobe.sandbox import supervise as sv
from sciprobe.sandbox import tree as tree
from sciprobe.sandbox.host import SandboxError

__all__ = ["DATA_GENERATION_TIMEOUT_S", "DEFAULT_ENV", "RUN_TIMEOUT_S", "RunResult", "RunSpec", "SandboxError",
           "SandboxLimits", "SandboxUnavailableError", "run_many", "run_python", "sandbox_available",
           "sandbox_status"]

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
#: Directory levels ``output_dir`` receives at most (the work dir's own files are level 1), and the longest
#: relative path (bytes): deeper or longer entries are left out, so every copied path stays usable on the host.
MAX_OUTPUT_DEPTH = 64
MAX_OUTPUT_PATH = 1024


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
    max_files: int = 200_000

    def __post_init__(self) -> None:
        for name in ("wall_s", "cpu_s", "memory_mb", "max_procs", "file_size_mb", "disk_mb", "output_limit_bytes",
                     "max_open_files", "max_files"):
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
    status 128+N, which is decoded the same way (a program calling ``sys.exit(137)`` reads as SIGKILL; it never
    makes a ``limit_hit``). ``cpu_s``: CPU seconds of the whole run as the kernel accounted them. ``warnings``:
    what did not go as asked without failing the run (entries ``output_dir`` did not receive, a run dir left
    for a later cleanup)."""

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
    cpu_s: float | None = None
    warnings: tuple[str, ...] = ()

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
        live = sv.start(path, ["true"], program=None, ro_binds=[], input_binds={}, env={"PATH": "/usr/bin:/bin"},
                        limits=SandboxLimits(wall_s=10), host_uid=None)
        try:
            finished = sv.supervise(live, SandboxLimits(wall_s=10), time.monotonic())
        finally:
            live.close()
    except (OSError, SandboxError) as exc:
        reason = str(exc).removeprefix("bubblewrap failed to start the sandbox: ")
        return False, f"bubblewrap probe failed ({reason}); user namespaces may be disabled"
    if finished.exit_code != 0:
        reason = (finished.stderr.strip().splitlines() or [f"exit {finished.exit_code}"])[-1]
        return False, f"bubblewrap probe failed ({reason})"
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
    (the host environment is never passed). ``output_dir``: copy the regular files and directories the program
    left in the work dir there afterwards (e.g. the data ``data_en.py`` generates, spec §3.3 step 1), within
    ``disk_mb``, ``max_files``, :data:`MAX_OUTPUT_DEPTH` and :data:`MAX_OUTPUT_PATH`; what is left out is listed in
    ``RunResult.warnings``. The work dir is always gone afterwards.

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
    if not ok:
        return _run_unsandboxed(code, interp, filename, args, inputs or {}, run_env, limits, output_dir)
    binds = host.resolve_inputs(inputs or {})
    prefixes = interpreter_prefixes(interp)
    run_env["PATH"] = f"{os.path.dirname(interp)}:{run_env['PATH']}"
    host_uid = bw.fresh_uid() if bw.privileged_mode() else None
    start = time.monotonic()
    live = sv.start(bwrap_path(), [interp, filename, *args], program=(filename, code.encode()), ro_binds=prefixes,
                    input_binds=binds, env=run_env, limits=limits, host_uid=host_uid)
    try:
        finished = sv.supervise(live, limits, start)
        warnings = []
        if output_dir is not None:
            warnings = _copy_outputs(live.mounts[bw.SANDBOX_WORKDIR], Path(output_dir), limits, set(binds),
                                     fix_perms=not bw.privileged_mode())
    finally:
        live.close()  # frees the sandbox's tmpfs mounts
    return _result(finished, sandboxed=True, warnings=warnings)


def _result(finished: sv.Finished, *, sandboxed: bool, warnings: Sequence[str]) -> RunResult:
    return RunResult(exit_code=finished.exit_code, stdout=finished.stdout, stderr=finished.stderr,
                     timed_out=finished.limit_hit == "wall", killed_by_signal=finished.signal,
                     limit_hit=finished.limit_hit, wall_s=finished.wall_s, stdout_truncated=finished.stdout_truncated,
                     stderr_truncated=finished.stderr_truncated, sandboxed=sandboxed, cpu_s=finished.cpu_s,
                     warnings=tuple(warnings))


def _copy_outputs(work_fd: int, output_dir: Path, limits: SandboxLimits, skip: set[str], *,
                  fix_perms: bool) -> list[str]:
    """Copy what the program left into ``output_dir`` within the run's disk budget; never raises (a failure
    becomes a warning: the run's result must not be lost to its output files)."""
    try:
        return tree.copy_tree(work_fd, output_dir, max_bytes=limits.disk_mb << 20, max_entries=limits.max_files,
                              max_depth=MAX_OUTPUT_DEPTH, max_path=MAX_OUTPUT_PATH, skip=skip, fix_perms=fix_perms)
    except OSError as exc:
        return [f"output copy to {output_dir} failed: {exc}"]


def _run_unsandboxed(code: str, interp: str, filename: str, args: Sequence[str], inputs: Mapping[str, Path],
                     env: dict[str, str], limits: SandboxLimits, output_dir: Path | None) -> RunResult:
    """The explicit opt-out: rlimits (via prlimit when present), clean env, private dir on the host disk,
    process-group kill. No filesystem/network/pid isolation; a daemon that calls setsid() can outlive the run,
    and RLIMIT_NPROC does not bind a root caller."""
    run_root = host.new_run_root()
    warnings: list[str] = []
    try:
        work = os.path.join(run_root, "work")
        os.mkdir(work, 0o700)
        copied = host.prepare_workdir(work, code, filename, inputs)
        env = {**env, "HOME": work, "TMPDIR": work}
        argv = [interp, filename, *args]
        prlimit = bw.tool_path("prlimit")
        if prlimit:
            argv = [prlimit, *bw.rlimit_args(cpu_s=limits.cpu_s, memory_mb=limits.memory_mb,
                                             max_procs=limits.max_procs, file_size_mb=limits.file_size_mb,
                                             max_open_files=limits.max_open_files), "--", *argv]
        start = time.monotonic()
        live = sv.start_unsandboxed(argv, work, env)
        try:
            finished = sv.supervise(live, limits, start)
            if output_dir is not None and live.work_fd is not None:
                warnings = _copy_outputs(live.work_fd, Path(output_dir), limits, copied, fix_perms=True)
        finally:
            live.close()
    finally:
        problem = host.remove_run_root(run_root)
        if problem is not None:
            warnings.append(f"{problem} (left for a later cleanup)")
    return _result(finished, sandboxed=False, warnings=warnings)


def sandbox_status(executor: Any = None, *, refresh: bool = False) -> tuple[bool, str]:
    """:func:`sandbox_available` here, or, for a remote executor (a Ray cluster), on every node that runs tasks
    (all must pass; the reason names the first that does not). Cached per executor unless ``refresh``."""
    if executor is None or not executor.remote:
        return sandbox_available(refresh=refresh)
    from sciprobe.sandbox.ship import cluster_sandbox_status

    with _probe_lock:
        cached = _cluster_cache.get(executor.name)
    if cached is None or refresh:
        ok, reason, _ = cluster_sandbox_status(executor, fresh_sandbox_probe if refresh else sandbox_available)
        cached = (ok, reason)
        with _probe_lock:
            _cluster_cache[executor.name] = cached
    return cached


_cluster_cache: dict[str, tuple[bool, str]] = {}


def fresh_sandbox_probe() -> tuple[bool, str]:
    """:func:`sandbox_available` probed anew (a module-level function, so a cluster can run it on each node)."""
    return sandbox_available(refresh=True)


def _run_shipped(run: Any, bundle: Any) -> tuple[Any, bytes | None]:
    """One shipped run on a cluster worker, with this module's ``run_python`` (see :mod:`.sandbox_ship`)."""
    from sciprobe.sandbox.ship import run_shipped

    return run_shipped(run, bundle, run_python=run_python)


def run_many(specs: Sequence[RunSpec | str], *, workers: int | None = None, allow_unsandboxed: bool = False,
             limits: SandboxLimits | None = None, python: str | Path | None = None,
             executor: Any = None) -> list[RunResult]:
    """Run many programs in parallel (``workers`` at a time, default ``os.cpu_count()``); results in input order.

    Plain strings are programs run with ``limits``/``python``; :class:`RunSpec` items carry their own settings
    (``limits``/``python`` given here fill in only where the spec leaves the default interpreter).
    ``executor`` (:mod:`sciprobe.core.executors`): where the runs happen; None or a local one: threads here; a remote
    one (a Ray cluster): tasks on its nodes, inputs and outputs shipped (:mod:`sciprobe.sandbox.ship`),
    as many at a time as the cluster has CPUs (or ``workers``), same results in the same order.
    """
    ok, reason = sandbox_status(executor)
    if not ok and not allow_unsandboxed:
        raise SandboxUnavailableError(_refuse_message(reason))
    items = [RunSpec(code=s, limits=limits or SandboxLimits(), python=python) if isinstance(s, str)
             else (replace(s, python=python) if s.python is None else s) for s in specs]
    if executor is not None and executor.remote:
        from sciprobe.sandbox.ship import run_many_shipped

        items = [s if s.python is not None else replace(s, python=sys.executable) for s in items]
        return run_many_shipped(items, executor, allow_unsandboxed=allow_unsandboxed, run_remote=_run_shipped,
                                workers=workers)

    def one(spec: RunSpec) -> RunResult:
        return run_python(spec.code, inputs=spec.inputs, limits=spec.limits, python=spec.python,
                          allow_unsandboxed=allow_unsandboxed, filename=spec.filename, args=spec.args,
                          env=spec.env, output_dir=spec.output_dir)

    if executor is None:
        from sciprobe.core.executors import LocalExecutor

        executor = LocalExecutor()
    return executor.map(one, items, workers=workers)
