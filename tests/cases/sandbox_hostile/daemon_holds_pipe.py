# must: a daemon keeping stdout open does not make the run hang past the main program's exit
# expect: {"limits": {"wall_s": 30}, "exit": "zero", "stdout_contains": "main exits", "max_wall_s": 10}
import os, time
if os.fork() == 0:
    os.setsid()
    time.sleep(3600)
    os._exit(0)
print("main exits", flush=True)
