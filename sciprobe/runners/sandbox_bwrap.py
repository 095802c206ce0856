"""The bubblewrap command line behind :mod:`sciprobe.runners.sandbox` (SGI-Bench dry experiments).

Spec: ``shared/spec/sgibench.md`` §8 "Dry experiment (sandbox required)": model-written Python runs in an
isolated, network-less sandbox, non-root, with CPU/memory/disk limits. This module only *builds* argv; running,
watching and killing live in ``sandbox.py``.

Two modes, one layout:

* **unprivileged** (any normal user): bwrap creates a user namespace (``--unshare-user``), maps the caller to
  uid 1000 inside and forbids nested user namespaces (``--disable-userns``). ``RLIMIT_NPROC`` is set *inside* the
  new user namespace, so it counts only the sandbox's tasks, not the user's other processes.
* **root** (``euid == 0``, e.g. CI): bwrap runs privileged to lay out the mounts (root can read the interpreter
  under ``/root/.pyenv`` or a 0700 pytest tmp dir, which an unprivileged uid cannot traverse), then ``setpriv``
  drops to a *random unused host uid* with an empty capability set and bounding set before the program starts.
  The program therefore never runs as root: ``RLIMIT_NPROC`` is enforced (the kernel exempts uid 0 from it) and
  counts only this run's processes (the uid is fresh), and it cannot signal or read anything owned by root.

Both modes: new pid/net/ipc/uts(/cgroup) namespaces, a tmpfs root with only ``/usr`` (and the ``/lib``-style
links), a few ``/etc`` files, the interpreter's prefixes and the inputs bound read-only, the private work dir
bound read-write, size-capped tmpfs ``/tmp`` and ``/dev/shm``, a fresh ``/proc`` (only the sandbox's pids),
a minimal ``/dev``, ``--die-with-parent`` and ``--new-session``, a clean environment, and a seccomp filter that
refuses ``CLONE_NEWUSER`` (nested user namespaces: no tmpfs mounts outside the size caps, less kernel surface),
SysV shared memory, ``memfd_create``, the kernel keyring and a few other syscalls (see ``seccomp_filter``).
"""

from __future__ import annotations

import os
import platform
import secrets
import shutil
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: Where the private work dir appears inside the sandbox (the program's cwd).
SANDBOX_WORKDIR = "/workdir"
#: The uid/gid the program sees in unprivileged mode.
SANDBOX_UID = 1000
#: Root mode draws the host uid of each run from [UID_BASE, UID_BASE + UID_SPAN): far above real users and the
#: usual subordinate-uid ranges (100000 + 65536·k for a few k), so a run never shares a uid with a live process.
UID_BASE = 1_900_000_000
UID_SPAN = 100_000_000

_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
_ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/timezone",
              "/etc/nsswitch.conf", "/etc/alternatives", "/etc/fonts", "/etc/mime.types")

# --- seccomp ---------------------------------------------------------------------------------------------------
# Classic BPF over struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6];} (little-endian hosts only).
_BPF_LD_W_ABS, _BPF_JEQ, _BPF_JGE, _BPF_JSET, _BPF_RET = 0x20, 0x15, 0x35, 0x45, 0x06
_RET_ALLOW, _RET_ERRNO, _RET_KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
_EPERM, _ENOSYS, _CLONE_NEWUSER = 1, 38, 0x10000000
# machine -> (AUDIT_ARCH_*, unshare, clone, clone3, check the x32 bit, denied syscalls)
# Denied (EPERM): shmget (SysV segments outlive detaching and are not counted by RLIMIT_AS or the watchdog),
# memfd_create (memory-backed files outside the size-capped tmpfs mounts), keyctl/add_key/request_key (the
# caller's session keyring is inherited and "possessed"), userfaultfd, io_uring_setup, bpf, perf_event_open
# (kernel attack surface no dry-experiment script needs).
_SYSCALLS = {
    "x86_64": (0xC000003E, 272, 56, 435, True, (29, 319, 250, 248, 249, 323, 425, 321, 298)),
    "aarch64": (0xC00000B7, 97, 220, 435, False, (194, 279, 219, 217, 218, 282, 425, 280, 241)),
}


def seccomp_filter(machine: str | None = None) -> bytes | None:
    """A seccomp program refusing new user namespaces, or None on an architecture without a table here.

    ``unshare``/``clone`` with ``CLONE_NEWUSER`` fail with EPERM; ``clone3`` fails with ENOSYS (its flags live in
    memory a filter cannot read; glibc then falls back to ``clone``, so threads and fork keep working); the
    syscalls in the deny list fail with EPERM; syscalls of a foreign ABI (i386, x32) kill the process.
    """
    entry = _SYSCALLS.get(machine or platform.machine())
    if entry is None or struct.pack("=I", 1) != struct.pack("<I", 1):
        return None
    arch, unshare, clone, clone3, x32, denied = entry

    def op(code: int, jt: int, jf: int, k: int) -> bytes:
        return struct.pack("=HBBI", code, jt, jf, k)

    prog = [op(_BPF_LD_W_ABS, 0, 0, 4), op(_BPF_JEQ, 1, 0, arch), op(_BPF_RET, 0, 0, _RET_KILL_PROCESS),
            op(_BPF_LD_W_ABS, 0, 0, 0)]
    if x32:
        prog += [op(_BPF_JGE, 0, 1, 0x40000000), op(_BPF_RET, 0, 0, _RET_KILL_PROCESS)]
    for nr in denied:
        prog += [op(_BPF_JEQ, 0, 1, nr), op(_BPF_RET, 0, 0, _RET_ERRNO | _EPERM)]
    prog += [op(_BPF_JEQ, 0, 1, clone3), op(_BPF_RET, 0, 0, _RET_ERRNO | _ENOSYS),
             op(_BPF_JEQ, 1, 0, unshare), op(_BPF_JEQ, 0, 3, clone),
             op(_BPF_LD_W_ABS, 0, 0, 16),  # low 32 bits of args[0] (flags)
             op(_BPF_JSET, 0, 1, _CLONE_NEWUSER), op(_BPF_RET, 0, 0, _RET_ERRNO | _EPERM),
             op(_BPF_RET, 0, 0, _RET_ALLOW)]
    return b"".join(prog)


# --- argv -------------------------------------------------------------------------------------------------------
@dataclass
class BwrapPlan:
    """Everything one bwrap invocation needs: argv plus the fds to hand over (and their contents)."""

    argv: list[str]
    #: fd contents to write into pipes whose read ends bwrap reads: (placeholder index in argv, bytes)
    data: list[tuple[int, bytes]] = field(default_factory=list)
    privileged: bool = False
    host_uid: int = 0
    #: index of the "--" that separates bwrap's options from the command
    command_index: int = 0


def privileged_mode() -> bool:
    """Root lays out mounts itself and drops to a fresh uid; anyone else uses an unprivileged user namespace."""
    return os.geteuid() == 0


def fresh_uid() -> int:
    return UID_BASE + secrets.randbelow(UID_SPAN)


def tool_path(name: str) -> str | None:
    for d in ("/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        p = os.path.join(d, name)
        if os.access(p, os.X_OK):
            return p
    return shutil.which(name)


def _ancestors(path: str) -> list[str]:
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def rlimit_args(*, cpu_s: float, memory_mb: int, max_procs: int, file_size_mb: int, max_open_files: int) -> list[str]:
    """prlimit(1) options: soft CPU limit (SIGXCPU), hard = soft + 1 s (SIGKILL), address space, file size,
    tasks (processes + threads), open files, no core dumps."""
    cpu = max(1, round(cpu_s))
    return [f"--cpu={cpu}:{cpu + 1}", f"--as={memory_mb << 20}", f"--fsize={file_size_mb << 20}",
            f"--nproc={max_procs}", f"--nofile={max_open_files}", "--core=0"]


#: Mount points made before any directory is created (their modes must stay as mounted: /tmp is 1777).
_MOUNTED = ("/proc", "/dev", "/dev/shm", "/tmp")


def build_plan(*, bwrap: str, exec_argv: Sequence[str], workdir_host: str | None, ro_binds: Sequence[str],
               input_binds: Mapping[str, str], env: Mapping[str, str], rlimits: Sequence[str], tmpfs_mb: int,
               status_fd: int | None, seccomp_fd: int | None, privileged: bool | None = None,
               host_uid: int | None = None) -> BwrapPlan:
    """The bwrap argv. ``ro_binds``: host paths bound read-only at the same path (interpreter prefixes);
    ``input_binds``: sandbox path -> host path, bound read-only (mount points must already exist in the work dir);
    ``exec_argv``: the program (run under prlimit, and setpriv in root mode). Passwd/group data are appended to
    ``plan.data`` with placeholder fds the caller replaces (see ``sandbox._spawn``)."""
    priv = privileged_mode() if privileged is None else privileged
    uid = (host_uid if host_uid is not None else fresh_uid()) if priv else SANDBOX_UID
    a: list[str] = [bwrap]
    if priv:
        a += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
              "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
    else:
        a += ["--unshare-all", "--unshare-user", "--disable-userns", "--uid", str(uid), "--gid", str(uid)]
    a += ["--die-with-parent", "--new-session", "--hostname", "sandbox", "--clearenv"]
    # The kernel file systems and the size-capped tmpfs mounts first, so that a bound path below /tmp (a venv
    # in a CI checkout under /tmp) gets its parent directories inside the tmpfs, not hidden under it.
    a += ["--proc", "/proc", "--dev", "/dev",
          "--size", str(tmpfs_mb << 20), "--perms", "1777", "--tmpfs", "/tmp",
          "--size", str(tmpfs_mb << 20), "--perms", "1777", "--tmpfs", "/dev/shm"]
    # Then directories, world-traversable: privileged bwrap would otherwise create 0700 parents.
    dests = [*ro_binds, *(p for p in _ETC_FILES if os.path.exists(p)), SANDBOX_WORKDIR]
    made: set[str] = set(_MOUNTED)
    for d in dests:
        for anc in _ancestors(d):
            if anc not in made and anc != "/usr" and not os.path.islink(anc):
                made.add(anc)
                a += ["--perms", "0755", "--dir", anc]
    a += ["--ro-bind", "/usr", "/usr"]
    for link in _SYSTEM_LINKS:
        if os.path.islink(link):
            a += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            a += ["--ro-bind", link, link]
    for p in _ETC_FILES:
        a += ["--ro-bind-try", p, p]
    for p in ro_binds:
        if p != "/usr" and not p.startswith("/usr/"):
            a += ["--ro-bind", p, p]
    plan = BwrapPlan(a, privileged=priv, host_uid=uid if priv else os.getuid())
    passwd = f"root:x:0:0::/root:/usr/sbin/nologin\nsandbox:x:{uid}:{uid}::/tmp:/usr/sbin/nologin\n".encode()
    group = f"root:x:0:\nsandbox:x:{uid}:\n".encode()
    for dest, content in (("/etc/passwd", passwd), ("/etc/group", group)):
        plan.data.append((len(a) + 1, content))
        a += ["--ro-bind-data", "FD", dest]
    if workdir_host is not None:
        a += ["--bind", workdir_host, SANDBOX_WORKDIR]
        for dest, src in input_binds.items():
            a += ["--ro-bind", src, dest]
        a += ["--chdir", SANDBOX_WORKDIR]
    for k, v in env.items():
        a += ["--setenv", k, v]
    if status_fd is not None:
        a += ["--json-status-fd", str(status_fd)]
    if seccomp_fd is not None:
        a += ["--seccomp", str(seccomp_fd)]
    plan.command_index = len(a)
    a.append("--")
    if priv:
        a += [tool_path("setpriv") or "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
              "--inh-caps=-all", "--bounding-set=-all", "--"]
    a += [tool_path("prlimit") or "/usr/bin/prlimit", *rlimits, "--", *exec_argv]
    return plan
