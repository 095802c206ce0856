# must: a deleted but still open file (invisible to any directory walk) cannot grow past disk_mb: ENOSPC
# expect: {"limits": {"wall_s": 30, "disk_mb": 32, "file_size_mb": 512}, "exit": "zero", "stdout_contains": "hidden:ENOSPC", "stdout_ints_at_most": {"hidden_mb": 32}}
import errno, os
fd = os.open("ghost.bin", os.O_WRONLY | os.O_CREAT, 0o600)
os.unlink("ghost.bin")
block = b"x" * (1 << 20)
written = 0
try:
    while written < 1024:
        os.write(fd, block)
        written += 1
    print("hidden:no-limit")
except OSError as exc:
    print(f"hidden:{errno.errorcode[exc.errno]}")
print(f"hidden_mb={written}")
