# must: data at the bottom of a 2,000-level tree (beyond PATH_MAX, where path-based accounting cannot reach)
# must: still counts against disk_mb: ENOSPC at 16 MB
# expect: {"limits": {"wall_s": 60, "disk_mb": 16}, "exit": "zero", "stdout_contains": "deep:ENOSPC", "stdout_ints_at_most": {"deep_mb": 16}}
import errno, os
for _ in range(2000):
    os.mkdir("d")
    os.chdir("d")
block = b"x" * (1 << 20)
written = 0
try:
    for i in range(20):
        with open(f"part{i}", "wb") as fh:
            for _ in range(4):
                fh.write(block)
                written += 1
    print("deep:no-limit")
except OSError as exc:
    print(f"deep:{errno.errorcode[exc.errno]}")
print(f"deep_mb={written}")
