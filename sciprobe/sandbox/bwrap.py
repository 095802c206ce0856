"""The bubblewrap command line behind :mod:`sciprobe.sandbox.runner` (SGI-Bench dry experiments).

Spec: ``shared/spec/sgibench.md`` §8 "Dry experiment (sandbox required)": model-written Python runs in an
isolated, network-less sandbox, non-root, with CPU/memory/disk limits. This module only *builds* argv; running,
watching and killing live in ``sandbox.py``.

Two modes, one layout:

* **unprivileged** (any normal user): bwrap creates a user namespace (``--unshare-user``), maps the caller to
  uid 1000 inside and forbids nested user namespaces (``--disable-userns``). ``RLIMIT_NPROC`` is set *inside* the
  new user namespace, so it counts only the sandbox's tasks, not the user's other processes.
* **root** (``euid == 0``, e.g. CI): bwrap runs privileged to lay out the mounts (root can read an interpreter
  under its own home, e.g. a pyenv build, or a 0700 pytest tmp dir, which an unprivileged uid cannot traverse),
  then ``setpriv`` drops to a *random unused host uid* with an empty capability set and bounding set before the
  program starts. The program therefore never runs as root: ``RLIMIT_NPROC`` is enforced (the kernel exempts uid 0
  from it) and counts only this run's processes (the uid is fresh), and it cannot signal or read anything owned by
  root.

Both modes: new pid/net/ipc/uts(/cgroup) namespaces, a tmpfs root with only ``/usr`` (and the ``/lib``-style
links), a few ``/etc`` files, the interpreter's prefixes and the inputs bound read-only, the work dir, ``/tmp``
and ``/dev/shm`` as size-capped tmpfs mounts of the sandbox's own (the program file is written into the work dir
by bwrap; the host opens the three mounts while a ``sh`` gate waits to start the program, see
``sandbox_supervise``), a fresh
``/proc`` (only the sandbox's pids), a minimal ``/dev``, ``--die-with-parent`` and ``--new-session``, a clean
environment, and a seccomp filter that refuses ``CLONE_NEWUSER`` (nested user namespaces: no tmpfs mounts outside
the size caps, less kernel surface), SysV shared memory, ``memfd_create``, the kernel keyring, ptrace and the
other cross-process calls, socket families other than Unix, IPv4, IPv6 and netlink-route, and a few other
syscalls (see ``seccomp_filter``).
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
_EPERM, _ENOSYS, _EAFNOSUPPORT, _CLONE_NEWUSER = 1, 38, 97, 0x10000000
#: Socket families a dry-experiment script may use: AF_UNIX, AF_INET, AF_INET6 (only the sandbox's own loopback
#: exists) and AF_NETLINK for NETLINK_ROUTE only (interface lookups). Everything else -- AF_VSOCK (reaches the
#: hypervisor host, not namespaced), AF_PACKET, AF_ALG, AF_BLUETOOTH, AF_CAN, AF_TIPC, AF_XDP, ... -- fails with
#: EAFNOSUPPORT, as on a kernel built without them.
_SOCKET_FAMILIES = (1, 2, 10)
_AF_UNIX, _AF_NETLINK, _NETLINK_ROUTE = 1, 16, 0
#: prctl(PR_SET_PDEATHSIG) is refused: bwrap's pid 1 runs under this filter too, and in user-namespace mode the
#: program can write its memory (/proc/1/mem, same uid); it must not be able to make pid 1 outlive the host.
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class _Arch:
    audit_arch: int
    unshare: int
    clone: int
    clone3: int
    socket: int
    socketpair: int
    prctl: int
    x32: bool  # refuse the x32 ABI (syscall numbers with bit 30 set)
    # Denied (EPERM): shmget (SysV segments outlive detaching and are not counted by RLIMIT_AS or the watchdog),
    # memfd_create (memory-backed files outside the size-capped tmpfs mounts), keyctl/add_key/request_key (the
    # caller's session keyring is inherited and "possessed"), userfaultfd, io_uring_setup (it also opens sockets
    # without socket(2)), bpf, perf_event_open (kernel attack surface no dry-experiment script needs); ptrace,
    # process_vm_readv/writev, pidfd_getfd (in user-namespace mode bwrap's pid 1 has the program's uid: the
    # program could stop or rewrite the sandbox's reaper).
    denied: tuple[int, ...]


_SYSCALLS = {
    "x86_64": _Arch(0xC000003E, 272, 56, 435, 41, 53, 157, True,
                    (29, 319, 250, 248, 249, 323, 425, 321, 298, 101, 310, 311, 438)),
    "aarch64": _Arch(0xC00000B7, 97, 220, 435, 198, 199, 167, False,
                     (194, 279, 219, 217, 218, 282, 425, 280, 241, 117, 270, 271, 438)),
}


def _assemble(items: Sequence[tuple]) -> bytes:
    """BPF from (code, jt, jf, k) tuples and ("label", name) markers; jt/jf may be label names."""
    where, index = {}, 0
    for item in items:
        if item[0] == "label":
            where[item[1]] = index
        else:
            index += 1
    out, index = [], 0
    for item in items:
        if item[0] == "label":
            continue
        code, jt, jf, k = item
        jt = where[jt] - index - 1 if isinstance(jt, str) else jt
        jf = where[jf] - index - 1 if isinstance(jf, str) else jf
        out.append(struct.pack("=HBBI", code, jt, jf, k))
        index += 1
    return b"".join(out)


def seccomp_filter(machine: str | None = None) -> bytes | None:
    """A seccomp program for the sandboxed program, or None on an architecture without a table here.

    ``unshare``/``clone`` with ``CLONE_NEWUSER`` fail with EPERM; ``clone3`` fails with ENOSYS (its flags live in
    memory a filter cannot read; glibc then falls back to ``clone``, so threads and fork keep working); the
    syscalls in the deny list and ``prctl(PR_SET_PDEATHSIG)`` fail with EPERM; sockets outside
    ``_SOCKET_FAMILIES`` fail with EAFNOSUPPORT;
    syscalls of a foreign ABI (i386, x32) kill the process.
    """
    sc = _SYSCALLS.get(machine or platform.machine())
    if sc is None or struct.pack("=I", 1) != struct.pack("<I", 1):
        return None
    ld, jeq, ret = _BPF_LD_W_ABS, _BPF_JEQ, _BPF_RET
    arg0, arg2 = 16, 32  # low 32 bits of args[0] and args[2]
    prog: list[tuple] = [(ld, 0, 0, 4), (jeq, 0, "kill", sc.audit_arch), (ld, 0, 0, 0)]
    if sc.x32:
        prog += [(_BPF_JGE, "kill", 0, 0x40000000)]
    prog += [(jeq, "eperm", 0, nr) for nr in sc.denied]
    prog += [(jeq, "enosys", 0, sc.clone3), (jeq, "userns", 0, sc.unshare), (jeq, "userns", 0, sc.clone),
             (jeq, "socket", 0, sc.socket), (jeq, "socketpair", 0, sc.socketpair), (jeq, "prctl", 0, sc.prctl),
             (ret, 0, 0, _RET_ALLOW),
             ("label", "prctl"), (ld, 0, 0, arg0), (jeq, "eperm", "allow", _PR_SET_PDEATHSIG),
             ("label", "userns"), (ld, 0, 0, arg0), (_BPF_JSET, "eperm", "allow", _CLONE_NEWUSER),
             ("label", "socket"), (ld, 0, 0, arg0)]
    prog += [(jeq, "allow", 0, family) for family in _SOCKET_FAMILIES]
    prog += [(jeq, 0, "eafnosupport", _AF_NETLINK), (ld, 0, 0, arg2), (jeq, "allow", "eafnosupport", _NETLINK_ROUTE),
             ("label", "socketpair"), (ld, 0, 0, arg0), (jeq, "allow", "eafnosupport", _AF_UNIX),
             ("label", "allow"), (ret, 0, 0, _RET_ALLOW),
             ("label", "eperm"), (ret, 0, 0, _RET_ERRNO | _EPERM),
             ("label", "enosys"), (ret, 0, 0, _RET_ERRNO | _ENOSYS),
             ("label", "eafnosupport"), (ret, 0, 0, _RET_ERRNO | _EAFNOSUPPORT),
             ("label", "kill"), (ret, 0, 0, _RET_KILL_PROCESS)]
    return _assemble(prog)


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


def cpu_rlimit_seconds(cpu_s: float) -> int:
    """The soft RLIMIT_CPU set for ``cpu_s`` (whole seconds, at least one)."""
    return max(1, round(cpu_s))


def rlimit_args(*, cpu_s: float, memory_mb: int, max_procs: int, file_size_mb: int, max_open_files: int) -> list[str]:
    """prlimit(1) options: soft CPU limit (SIGXCPU), hard = soft + 1 s (SIGKILL), address space, file size,
    tasks (processes + threads), open files, no core dumps."""
    cpu = cpu_rlimit_seconds(cpu_s)
    return [f"--cpu={cpu}:{cpu + 1}", f"--as={memory_mb << 20}", f"--fsize={file_size_mb << 20}",
            f"--nproc={max_procs}", f"--nofile={max_open_files}", "--core=0"]


#: Mount points made before any directory is created (their modes must stay as mounted: /tmp is 1777).
_MOUNTED = ("/proc", "/dev", "/dev/shm", "/tmp")


def build_plan(*, bwrap: str, exec_argv: Sequence[str], ro_binds: Sequence[str], env: Mapping[str, str],
               rlimits: Sequence[str], workdir_mb: int, tmp_mb: int, status_fd: int | None, seccomp_fd: int | None,
               gate: bool = False, program: tuple[str, bytes] | None = None,
               input_binds: Mapping[str, str] | None = None, privileged: bool | None = None,
               host_uid: int | None = None) -> BwrapPlan:
    """The bwrap argv. ``ro_binds``: host paths bound read-only at the same path (interpreter prefixes);
    ``program``: (path relative to the work dir, its text), written into the work dir; ``input_binds``: path
    relative to the work dir -> host path, bound read-only; ``exec_argv``: the program (run under prlimit, and
    setpriv in root mode). The work dir is a tmpfs of ``workdir_mb``, ``/tmp`` and ``/dev/shm`` tmpfs of
    ``tmp_mb`` each. ``gate``: the sandbox reads a line from its stdin and starts the program (with stdin from
    /dev/null) only on ``go`` (the host opens the tmpfs mounts in between): if the host goes away instead, the
    pipe ends and the program never starts. File contents (passwd, group, the program) are appended to
    ``plan.data`` with placeholder fds the caller replaces (see ``sandbox_supervise.spawn``)."""
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
          "--size", str(tmp_mb << 20), "--perms", "1777", "--tmpfs", "/tmp",
          "--size", str(tmp_mb << 20), "--perms", "1777", "--tmpfs", "/dev/shm"]
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
    # The work dir is the sandbox's own tmpfs: its size is enforced by the kernel, /proc/self/mountinfo shows no
    # host path for it, and it disappears with the sandbox (the host reads it through an open descriptor).
    a += ["--size", str(workdir_mb << 20), "--perms", "0755", "--tmpfs", SANDBOX_WORKDIR]
    if program is not None:
        plan.data.append((len(a) + 3, program[1]))
        a += ["--perms", "0644", "--file", "FD", f"{SANDBOX_WORKDIR}/{program[0]}"]
    for rel, src in (input_binds or {}).items():
        a += ["--ro-bind", src, f"{SANDBOX_WORKDIR}/{rel}"]
    # bwrap's own tmpfs mounts at / and /dev have no size limit, and in user-namespace mode the program owns
    # them: read-only once laid out (not recursive: /tmp, /dev/shm and the work dir stay writable)
    a += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", SANDBOX_WORKDIR]
    for k, v in env.items():
        a += ["--setenv", k, v]
    if status_fd is not None:
        a += ["--json-status-fd", str(status_fd)]
    if seccomp_fd is not None:
        a += ["--seccomp", str(seccomp_fd)]
    plan.command_index = len(a)
    a.append("--")
    if gate:
        # not bwrap's --block-fd: bwrap goes on when that fd reaches EOF, i.e. also when the host died
        a += ["/bin/sh", "-c", 'read -r go && [ "$go" = go ] || exit 125; exec "$@" </dev/null', "sandbox-gate"]
    if priv:
        a += [tool_path("setpriv") or "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
              "--inh-caps=-all", "--bounding-set=-all", "--"]
    a += [tool_path("prlimit") or "/usr/bin/prlimit", *rlimits, "--", *exec_argv]
    return plan
