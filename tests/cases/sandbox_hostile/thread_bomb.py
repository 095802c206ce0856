# must: thread creation stops at max_procs (threads count); the program reports the refusal and exits non-zero
# expect: {"limits": {"wall_s": 20, "max_procs": 16}, "exit": "nonzero", "limit_hit": ["procs"], "max_wall_s": 20}
import threading, time
threads = []
while True:
    t = threading.Thread(target=time.sleep, args=(60,), daemon=True)
    t.start()
    threads.append(t)
