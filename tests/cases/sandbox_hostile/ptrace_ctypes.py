# must: no privilege tricks: ptrace of pid 1 / the parent, unshare(CLONE_NEWUSER), mount and setuid(0) all fail
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_not_contains": ["ESCAPED"], "stdout_contains": "checked"}
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH, CLONE_NEWUSER, CLONE_NEWNS = 16, 0x10000000, 0x00020000
for pid in (1, os.getppid()):
    if libc.ptrace(PTRACE_ATTACH, pid, None, None) == 0:
        print("ESCAPED ptrace", pid)
if libc.unshare(CLONE_NEWUSER) == 0:
    print("ESCAPED unshare user")
if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0:
    print("ESCAPED unshare user+mnt")
if libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0:
    print("ESCAPED mount")
try:
    os.setuid(0)
    print("ESCAPED setuid")
except OSError:
    pass
print("uid", os.getuid(), "euid", os.geteuid())
print("checked")
