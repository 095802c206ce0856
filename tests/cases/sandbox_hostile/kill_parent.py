# must: killing the parent, pid 1 or everything (kill -1) cannot reach the host; the run ends normally
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": "still here"}
import os, signal
for target in (os.getppid(), 1, -1):
    try:
        os.kill(target, signal.SIGKILL)
        print("sent", target)
    except OSError as exc:
        print("refused", target, type(exc).__name__)
print("still here", flush=True)
