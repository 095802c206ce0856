# must: the caller's kernel keyrings (session keyring inherited across exec) are out of reach: keyctl is denied
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": "keyctl:denied add_key:denied"}
import ctypes, platform
libc = ctypes.CDLL(None, use_errno=True)
KEYCTL, ADD_KEY = {"x86_64": (250, 248), "aarch64": (219, 217)}[platform.machine()]
KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING = 0, -3
r = libc.syscall(KEYCTL, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0)
out = ["keyctl:" + ("denied" if r == -1 else f"ALLOWED({r})")]
r = libc.syscall(ADD_KEY, b"user", b"x", b"secret", 6, KEY_SPEC_SESSION_KEYRING)
out.append("add_key:" + ("denied" if r == -1 else "ALLOWED"))
print(" ".join(out))
