# must: /proc shows only the sandbox's own processes (no host pids, no host command lines)
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_not_contains": ["host-marker-process"], "stdout_contains": "pids:"}
import os
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print("pids:", pids)
for pid in pids:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            print(pid, fh.read().replace(b"\0", b" ")[:200])
    except OSError:
        pass
print("count", len(pids))
