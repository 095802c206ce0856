# must: a sleeping program (no CPU) is killed by the wall-clock timeout: timed_out, limit_hit == wall
# expect: {"limits": {"wall_s": 2}, "timed_out": true, "limit_hit": ["wall"]}
import time
print("sleeping", flush=True)
time.sleep(10 ** 6)
