# must: 6 children each touching 300 MB stay under the per-process RLIMIT_AS (512 MB) but not under the total;
# must: the watchdog's summed PSS kills the whole sandbox (limit_hit == memory) and no child survives
# expect: {"limits": {"wall_s": 60, "memory_mb": 512}, "limit_hit": ["memory"]}
import os, time
for _ in range(6):
    if os.fork() == 0:
        block = bytearray(300 << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(120)
        os._exit(0)
time.sleep(120)
