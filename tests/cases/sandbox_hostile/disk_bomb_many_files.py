# must: many files each under file_size_mb add up past disk_mb; the work dir (a tmpfs of disk_mb) refuses more
# must: (ENOSPC), the program fails, and limit_hit == disk because the work dir is full
# expect: {"limits": {"wall_s": 60, "file_size_mb": 8, "disk_mb": 64}, "limit_hit": ["disk"]}
import os, time
block = b"x" * (4 << 20)
i = 0
while True:
    with open(f"part{i}.bin", "wb") as fh:
        fh.write(block)
    i += 1
    time.sleep(0.01)
