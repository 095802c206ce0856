# must: files in the work dir, /tmp and /dev/shm are memory (tmpfs): 70 MB in each (each under its own cap) plus
# must: the process itself exceed memory_mb=200, and the watchdog kills the run (limit_hit == memory)
# expect: {"limits": {"wall_s": 60, "memory_mb": 200, "disk_mb": 512}, "limit_hit": ["memory"], "timed_out": false}
import time
block = b"x" * (1 << 20)
for d in (".", "/tmp", "/dev/shm"):
    with open(f"{d}/__MARKER__-fill", "wb") as fh:
        for _ in range(70):
            fh.write(block)
print("filled", flush=True)
time.sleep(120)
