# must: syscalls no dry-experiment script needs and that widen the kernel surface are refused: io_uring_setup (it
# must: can also open sockets without socket(2)), bpf, perf_event_open, userfaultfd, keyctl, and those reaching
# must: into other processes of the sandbox (ptrace, process_vm_readv/writev, pidfd_getfd), and changing the
# must: parent-death signal (bwrap's pid 1 runs under the same filter: it must keep dying with the host)
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": "surface:refused"}
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
numbers = {"x86_64": {"io_uring_setup": 425, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250,
                      "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438,
                      "prctl": 157},
           "aarch64": {"io_uring_setup": 425, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
                       "keyctl": 219, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
                       "pidfd_getfd": 438, "prctl": 167}}[platform.machine()]
params = ctypes.create_string_buffer(256)
allowed = []
for name, nr in numbers.items():
    if name == "io_uring_setup":
        r = libc.syscall(nr, 8, params)
    elif name == "perf_event_open":
        r = libc.syscall(nr, params, 0, -1, -1, 0)
    elif name == "ptrace":
        r = libc.syscall(nr, 0x4206, os.getppid(), 0, 0)  # PTRACE_SEIZE the parent
    elif name == "prctl":
        r = libc.syscall(nr, 1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG 0
    elif name.startswith("process_vm"):
        r = libc.syscall(nr, os.getppid(), params, 0, params, 0, 0)  # zero iovecs: succeeds unless refused
    else:
        r = libc.syscall(nr, 0, 0, 0)
    if r >= 0 or ctypes.get_errno() != 1:
        allowed.append(f"{name}:{r}:{ctypes.get_errno()}")
print("surface:refused" if not allowed else f"ALLOWED {allowed}")
