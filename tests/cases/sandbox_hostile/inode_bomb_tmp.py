# must: empty files in /tmp and /dev/shm (kernel memory, no bytes) count against max_files: limit_hit == disk
# expect: {"limits": {"wall_s": 60, "max_files": 3000}, "limit_hit": ["disk"]}
import time
i = 0
while True:
    for d in ("/tmp", "/dev/shm"):
        open(f"{d}/__MARKER__-{i}", "w").close()
    i += 1
    if i % 500 == 0:
        time.sleep(0.05)
