"""Host-side helpers of the dry-experiment sandbox: the sandbox's file systems seen from the host, the processes of
a run, and the private run dirs of unsandboxed runs.

Spec ``shared/spec/sgibench.md`` §8 (sandbox required; nothing may be left on the host). Used by
:mod:`sciprobe.sandbox.runner`; no bubblewrap options here.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from sciprobe.core.errors import SciprobeError
from sciprobe.sandbox.tree import remove_tree


class SandboxError(SciprobeError):
    """The sandbox itself failed to start (not the program): bad interpreter, bad input path, bwrap error."""


# --- run dirs (unsandboxed runs only: a sandboxed run's files live in its own tmpfs) --------------------------------
def tmp_root() -> str:
    """Where run dirs go: ``$SCIPROBE_SANDBOX_TMPDIR`` or the system temp dir."""
    return os.environ.get("SCIPROBE_SANDBOX_TMPDIR") or tempfile.gettempdir()


_RUN_PREFIX = "sciprobe-sbx-"
_LEGACY_OWNER_FILE = "owner"
#: Run dirs of this process that could not be removed; retried before each new run (the stale-run reclaimer
#: skips them while this process lives).
_leftovers: set[str] = set()
_leftovers_lock = threading.Lock()


def _proc_start(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _own_pidns() -> str:
    try:
        return "".join(c for c in os.readlink("/proc/self/ns/pid") if c.isdigit()) or "unknown"
    except OSError:
        return "unknown"


def _owner_of(root: str, name: str) -> tuple[int, str, str] | None:
    """(pid, start time, pid namespace) of the process that made a run dir. Ownership is in the dir's *name*
    (``sciprobe-sbx-<pid>-<start>-<pidns>-<random>``): nothing the program does inside can remove it. Dirs of
    older versions kept it in an ``owner`` file inside."""
    parts = name[len(_RUN_PREFIX):].split("-")
    if len(parts) == 4 and parts[0].isdigit():
        return int(parts[0]), parts[1], parts[2]
    try:
        with open(os.path.join(root, name, _LEGACY_OWNER_FILE)) as fh:
            pid_s, start, pidns = fh.read().split()
        return int(pid_s), start, "".join(c for c in pidns if c.isdigit()) or "unknown"
    except (OSError, ValueError):
        return None


def clean_stale_runs(root: str) -> None:
    """Remove run dirs whose owning process died without cleaning up (e.g. SIGKILL-ed mid-run), and retry this
    process's own leftovers. Never raises: what cannot be removed now is tried again next time."""
    with _leftovers_lock:
        for path in sorted(_leftovers):
            if remove_tree(path) is None:
                _leftovers.discard(path)
    try:
        names = [n for n in os.listdir(root) if n.startswith(_RUN_PREFIX)]
    except OSError:
        return
    own_ns = _own_pidns()
    for name in names:
        owner = _owner_of(root, name)
        # only judge owners in our own pid namespace (a /tmp shared with a container sees other pids)
        if owner is not None and owner[2] == own_ns and _proc_start(owner[0]) != owner[1]:
            remove_tree(os.path.join(root, name))


def new_run_root() -> str:
    """A fresh private run dir (0700) under :func:`tmp_root`, after removing orphaned ones."""
    root = tmp_root()
    clean_stale_runs(root)
    pid = os.getpid()
    return tempfile.mkdtemp(prefix=f"{_RUN_PREFIX}{pid}-{_proc_start(pid)}-{_own_pidns()}-", dir=root)


def remove_run_root(path: str) -> str | None:
    """Remove a run dir; when that fails, keep it for a later retry and return the reason (never raises)."""
    problem = remove_tree(path)
    if problem is not None:
        with _leftovers_lock:
            _leftovers.add(path)
    return problem


def check_rel(rel: str) -> str:
    p = Path(rel)
    if p.is_absolute() or not p.parts or ".." in p.parts:
        raise SandboxError(f"input/program path {rel!r} must be relative to the work dir, without '..'")
    return p.as_posix()


def prepare_workdir(work: str, code: str, filename: str, inputs: Mapping[str, Path]) -> set[str]:
    """Unsandboxed runs: write the program and copy the inputs into the work dir; returns the inputs' paths."""
    script = os.path.join(work, check_rel(filename))
    os.makedirs(os.path.dirname(script), exist_ok=True)
    with open(script, "w", encoding="utf-8") as fh:
        fh.write(code)
    copied = set()
    for rel, src in inputs.items():
        rel = check_rel(str(rel))
        src_path = Path(src).resolve()
        if not src_path.exists():
            raise SandboxError(f"input {rel!r}: {src} does not exist")
        dest = os.path.join(work, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        (shutil.copytree if src_path.is_dir() else shutil.copy2)(src_path, dest)
        copied.add(rel)
    return copied


def resolve_inputs(inputs: Mapping[str, Path]) -> dict[str, str]:
    """Sandboxed runs: relative path in the work dir -> existing host path (bound read-only)."""
    binds = {}
    for rel, src in inputs.items():
        rel = check_rel(str(rel))
        src_path = Path(src).resolve()
        if not src_path.exists():
            raise SandboxError(f"input {rel!r}: {src} does not exist")
        binds[rel] = str(src_path)
    return binds


# --- the sandbox's own file systems ------------------------------------------------------------------------------
def _mount_ids(pid: int, mountpoints: Sequence[str]) -> dict[str, int] | None:
    """Mount ids of ``mountpoints`` (tmpfs) as the sandbox's pid 1 sees them, once all exist. They show under
    these names only after bwrap's final pivot_root, i.e. when the whole layout is in place."""
    try:
        with open(f"/proc/{pid}/mountinfo") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    found = {}
    for line in lines:
        fields = line.split()
        if len(fields) > 4 and fields[4] in mountpoints and " - tmpfs " in line:
            found[fields[4]] = int(fields[0])
    return found if len(found) == len(mountpoints) else None


def _fd_mount_id(fd: int) -> int | None:
    try:
        with open(f"/proc/self/fdinfo/{fd}") as fh:
            for line in fh:
                if line.startswith("mnt_id:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def attach_mounts(pid: int, mountpoints: Sequence[str], alive: Callable[[], bool],
                  timeout: float = 60.0) -> dict[str, int]:
    """Open the sandbox's tmpfs mounts from the host while the sandbox waits to start the program.

    The descriptors keep each file system alive after the sandbox is gone, so the host can measure them during the
    run and read the work dir afterwards without the sandbox's help; closing them frees the memory."""
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while True:
        ids = _mount_ids(pid, mountpoints)
        if ids is not None:
            break
        if not alive():
            raise SandboxError("bubblewrap exited while setting up the sandbox")
        if time.monotonic() >= deadline:
            raise SandboxError(f"bubblewrap did not finish setting up the sandbox within {timeout:.0f} s")
        time.sleep(delay)
        delay = min(delay * 2, 0.01)
    fds: dict[str, int] = {}
    try:
        for mp in mountpoints:
            fds[mp] = os.open(f"/proc/{pid}/root{mp}", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
            if _fd_mount_id(fds[mp]) != ids[mp]:
                raise SandboxError(f"the sandbox's {mp} changed while it was being opened")
    except BaseException:
        for fd in fds.values():
            os.close(fd)
        raise
    return fds


def fs_usage(fd: int) -> tuple[int, int, int]:
    """(bytes allocated, bytes free, inodes used) of the file system holding ``fd``."""
    st = os.fstatvfs(fd)
    return (st.f_blocks - st.f_bfree) * st.f_frsize, st.f_bavail * st.f_frsize, st.f_files - st.f_ffree


# --- processes ---------------------------------------------------------------------------------------------------
def read_all(fd: int) -> bytes:
    chunks = []
    try:
        while True:
            try:
                b = os.read(fd, 65536)
            except BlockingIOError:
                break
            if not b:
                break
            chunks.append(b)
    finally:
        os.close(fd)
    return b"".join(chunks)


def pids_in_namespace(ns_inode: int | None, uid: int) -> list[int]:
    """Host pids of processes in the sandbox's pid namespace (owned by the sandbox's host uid)."""
    if ns_inode is None:
        return []
    want = f"pid:[{ns_inode}]"
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != uid:
                continue
            if os.readlink(f"/proc/{name}/ns/pid") == want:
                found.append(int(name))
        except OSError:
            continue
    return found


def pss_bytes(pids: Sequence[int]) -> int:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except (OSError, ValueError):
            continue
    return total


_CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(reaper: int, pids: Sequence[int]) -> float | None:
    """CPU time the kernel has accounted to ``reaper`` and ``pids`` and the children each of them reaped; None
    once ``reaper`` (the sandbox's pid 1, which reaps everything in it) is gone and the figure means nothing."""
    total = 0
    for pid in (reaper, *pids):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        except (OSError, ValueError, IndexError):
            if pid == reaper:
                return None
    return total / _CLK_TCK


def killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def is_zombie(pid: int) -> bool:
    """Whether ``pid`` has exited and waits only for its parent to reap it (False once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def reap_namespace(ns_inode: int | None, uid: int, timeout: float = 5.0) -> None:
    """Backstop after a run: SIGKILL anything still in the sandbox's pid namespace until none is left.

    Zombies do not count: they are dead already, and reaping them is their parent's business. In user-namespace
    mode the sandbox's pid 1 (bwrap, owned by the caller's uid) ends as a zombie of the host's init once bwrap's
    outer process is gone; an init that reaps only now and then (seen: every ~2 s) or never (a container whose
    pid 1 is an application) would otherwise hold every run here until ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = [pid for pid in pids_in_namespace(ns_inode, uid) if not is_zombie(pid)]
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)


def wait_pid(pid: int, timeout: float) -> tuple[int, float]:
    """wait4 with a timeout (polling with WNOHANG): (wait status, CPU seconds of the process and every descendant
    it and its descendants reaped, i.e. the whole sandbox: bwrap's pid 1 reaps the program and its children)."""
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        wpid, wstatus, usage = os.wait4(pid, os.WNOHANG)
        if wpid == pid:
            return wstatus, usage.ru_utime + usage.ru_stime
        if time.monotonic() >= deadline:
            raise subprocess.TimeoutExpired(str(pid), timeout)
        time.sleep(delay)
        delay = min(delay * 2, 0.02)
