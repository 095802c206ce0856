# must: a program that closes stdout and stderr and keeps running is waited for; its real exit code is kept
# expect: {"limits": {"wall_s": 30}, "exit_code": 3, "timed_out": false, "limit_hit": [null]}
import os, time
os.close(1)
os.close(2)
time.sleep(0.5)
os._exit(3)
