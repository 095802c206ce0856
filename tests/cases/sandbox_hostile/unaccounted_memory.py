# must: memory outside RLIMIT_AS and the watchdog's view is refused: SysV shm segments (shmget) and memfd files
# must: are denied by the seccomp filter, and a nested user namespace (to mount an uncapped tmpfs) is refused
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": "shmget:denied memfd:denied userns:denied"}
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
IPC_PRIVATE, IPC_CREAT, CLONE_NEWUSER = 0, 0o1000, 0x10000000
res = []
shm = libc.shmget(IPC_PRIVATE, ctypes.c_size_t(1 << 30), IPC_CREAT | 0o600)
res.append("shmget:" + ("denied" if shm == -1 else "ALLOWED"))
try:
    fd = os.memfd_create("bomb")
    res.append("memfd:ALLOWED")
except OSError:
    res.append("memfd:denied")
res.append("userns:" + ("denied" if libc.unshare(CLONE_NEWUSER) != 0 else "ALLOWED"))
print(" ".join(res))
