# must: a setsid() daemon that execs a plain `sleep` with an empty environment (invisible to an env-marker scan)
# must: still dies with the run: the test checks that no host process keeps the run's uid
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": "spawned"}
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execve("/usr/bin/sleep", ["sleep", "3600"], {})
    os._exit(0)
os.wait()
print("spawned", flush=True)
