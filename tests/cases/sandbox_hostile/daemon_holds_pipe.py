# must: a daemon keeping stdout open does not make the run hang past the main program's exit
# must: (a hang would end in the wall limit: timed_out must stay false)
# expect: {"limits": {"wall_s": 30}, "exit": "zero", "timed_out": false, "stdout_contains": "main exits"}
import os, time
if os.fork() == 0:
    os.setsid()
    time.sleep(3600)
    os._exit(0)
print("main exits", flush=True)
