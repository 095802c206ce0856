# must: thread creation stops at max_procs (threads count); the program reports the refusal and exits non-zero
# must: (limit_hit stays None: a refused thread is the program's own error, see memory_bomb.py)
# expect: {"limits": {"wall_s": 20, "max_procs": 16}, "exit": "nonzero", "limit_hit": [null], "timed_out": false, "stderr_contains": "can't start new thread"}
import threading, time
threads = []
while True:
    t = threading.Thread(target=time.sleep, args=(60,), daemon=True)
    t.start()
    threads.append(t)
