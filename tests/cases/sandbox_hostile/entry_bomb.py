# must: creating empty files without end (no bytes, so no disk size) is stopped at max_files (limit_hit == disk)
# expect: {"limits": {"wall_s": 60, "max_files": 3000}, "limit_hit": ["disk"], "unsandboxed_too": true}
import os, time
i = 0
while True:
    open(f"e{i}", "w").close()
    i += 1
    if i % 1000 == 0:
        time.sleep(0.05)
