"""Host-side helpers of the dry-experiment sandbox: private run dirs and the processes of a run.

Spec ``shared/spec/sgibench.md`` §8 (sandbox required; nothing may be left on the host). Used by
:mod:`sciprobe.runners.sandbox`; no bubblewrap options here (only where the work dir appears inside).
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from sciprobe.errors import SciprobeError
from sciprobe.runners.sandbox_bwrap import SANDBOX_WORKDIR


class SandboxError(SciprobeError):
    """The sandbox itself failed to start (not the program): bad interpreter, bad input path, bwrap error."""


#: The disk watchdog stops counting (and the run is killed for "disk") past this many work-dir entries.
MAX_SCAN_ENTRIES = 200_000


# --- work dir ----------------------------------------------------------------------------------------------------
def tmp_root() -> str:
    """Where run dirs go: ``$SCIPROBE_SANDBOX_TMPDIR`` or the system temp dir."""
    return os.environ.get("SCIPROBE_SANDBOX_TMPDIR") or tempfile.gettempdir()


_RUN_PREFIX = "sciprobe-sbx-"
_OWNER_FILE = "owner"


def _proc_start(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _clean_stale_runs(root: str) -> None:
    """Remove run dirs whose owning process died without cleaning up (e.g. SIGKILL-ed mid-run; the sandbox
    itself died with it through --die-with-parent). Each run dir records its owner's pid and start time."""
    try:
        names = [n for n in os.listdir(root) if n.startswith(_RUN_PREFIX)]
    except OSError:
        return
    for name in names:
        path = os.path.join(root, name)
        try:
            with open(os.path.join(path, _OWNER_FILE)) as fh:
                pid_s, start, pidns = fh.read().split()
        except (OSError, ValueError):
            continue
        # only judge owners in our own pid namespace (a /tmp shared with a container sees other pids)
        if pidns == _own_pidns() and _proc_start(int(pid_s)) != start:
            rmtree(path)


def _own_pidns() -> str:
    try:
        return os.readlink("/proc/self/ns/pid").replace(" ", "")
    except OSError:
        return "unknown"


def new_run_root() -> str:
    """A fresh private run dir (0700) under :func:`tmp_root`, after removing orphaned ones."""
    root = tmp_root()
    _clean_stale_runs(root)
    run_root = tempfile.mkdtemp(prefix=_RUN_PREFIX, dir=root)
    with open(os.path.join(run_root, _OWNER_FILE), "w") as fh:
        fh.write(f"{os.getpid()} {_proc_start(os.getpid())} {_own_pidns()}\n")
    return run_root


def check_rel(rel: str) -> str:
    p = Path(rel)
    if p.is_absolute() or not p.parts or ".." in p.parts:
        raise SandboxError(f"input/program path {rel!r} must be relative to the work dir, without '..'")
    return p.as_posix()


def _chown(path: str, uid: int | None) -> None:
    if uid is not None:
        os.chown(path, uid, uid, follow_symlinks=False)


def prepare_workdir(work: str, code: str, filename: str, inputs: Mapping[str, Path], uid: int | None,
                     copy_inputs: bool) -> dict[str, str]:
    """Write the program, create mount points (or copies) for inputs; returns sandbox dest -> host source."""
    binds: dict[str, str] = {}
    script = os.path.join(work, check_rel(filename))
    os.makedirs(os.path.dirname(script), exist_ok=True)
    with open(script, "w", encoding="utf-8") as fh:
        fh.write(code)
    for rel, src in inputs.items():
        rel = check_rel(str(rel))
        src_path = Path(src).resolve()
        if not src_path.exists():
            raise SandboxError(f"input {rel!r}: {src} does not exist")
        dest = os.path.join(work, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if copy_inputs:
            (shutil.copytree if src_path.is_dir() else shutil.copy2)(src_path, dest)
        elif src_path.is_dir():
            os.makedirs(dest, exist_ok=True)
        else:
            open(dest, "a").close()
        binds[f"{SANDBOX_WORKDIR}/{rel}"] = str(src_path)
    for root, dirs, files in os.walk(work):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            _chown(name, uid)
    return binds


def rmtree(path: str) -> None:
    """Remove a run dir even if the program chmod-ed parts of it to 000 (matters for non-root callers).

    Only real directories are chmod-ed (``lstat``, never through a symlink the program planted); the program
    is dead by now, so nothing can swap them in between."""
    stack = [path]
    while stack:
        d = stack.pop()
        try:
            if not stat.S_ISDIR(os.lstat(d).st_mode):
                continue
            os.chmod(d, 0o700)
            with os.scandir(d) as it:
                stack.extend(e.path for e in it if e.is_dir(follow_symlinks=False))
        except OSError:
            continue
    shutil.rmtree(path, ignore_errors=True)


def disk_usage(path: str) -> tuple[int, int]:
    """(allocated bytes, entries) under path, stopping after MAX_SCAN_ENTRIES entries."""
    total = entries = 0
    stack = [path]
    while stack and entries <= MAX_SCAN_ENTRIES:
        try:
            it = os.scandir(stack.pop())
        except OSError:
            continue
        with it:
            for e in it:
                entries += 1
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                total += st.st_blocks * 512
                if stat.S_ISDIR(st.st_mode):
                    stack.append(e.path)
    return total, entries


def collect_outputs(work: str, output_dir: Path, skip: set[str]) -> None:
    """Copy regular files and directories the program left (never symlinks, fifos or input mount points)."""
    output_dir.mkdir(parents=True, exist_ok=True)
    for root, dirs, files in os.walk(work):
        rel_root = os.path.relpath(root, work)
        for d in list(dirs):
            rel = os.path.normpath(os.path.join(rel_root, d))
            full = os.path.join(root, d)
            if rel in skip or os.path.islink(full):
                dirs.remove(d)
            else:
                (output_dir / rel).mkdir(parents=True, exist_ok=True)
        for f in files:
            rel = os.path.normpath(os.path.join(rel_root, f))
            full = os.path.join(root, f)
            if rel in skip or not stat.S_ISREG(os.lstat(full).st_mode):
                continue
            shutil.copyfile(full, output_dir / rel, follow_symlinks=False)


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


def killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def reap_namespace(ns_inode: int | None, uid: int, timeout: float = 5.0) -> None:
    """Backstop after a run: SIGKILL anything still in the sandbox's pid namespace until none is left."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = pids_in_namespace(ns_inode, uid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)


def wait_pid(pid: int, timeout: float) -> tuple[int, int]:
    """waitpid with a timeout (polling with WNOHANG)."""
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        wpid, wstatus = os.waitpid(pid, os.WNOHANG)
        if wpid == pid:
            return wpid, wstatus
        if time.monotonic() >= deadline:
            raise subprocess.TimeoutExpired(str(pid), timeout)
        time.sleep(delay)
        delay = min(delay * 2, 0.02)
