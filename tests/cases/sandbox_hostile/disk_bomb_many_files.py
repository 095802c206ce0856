# must: many files each under file_size_mb add up past disk_mb; the watchdog kills the run (limit_hit == disk)
# expect: {"limits": {"wall_s": 60, "file_size_mb": 8, "disk_mb": 64}, "limit_hit": ["disk"], "max_wall_s": 30}
import os, time
block = b"x" * (4 << 20)
i = 0
while True:
    with open(f"part{i}.bin", "wb") as fh:
        fh.write(block)
    i += 1
    time.sleep(0.01)
