# must: a double-forked, setsid()-ed daemon that ignores SIGHUP/SIGTERM does not outlive the run (pid namespace dies)
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": "parent done"}
import os, signal, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for fd in (0, 1, 2):
            os.close(fd)
        time.sleep(3600)
    os._exit(0)
os.wait()
time.sleep(0.3)
print("parent done")
sys.stdout.flush()
