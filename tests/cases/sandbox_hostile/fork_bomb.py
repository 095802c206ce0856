# must: fork until RLIMIT_NPROC refuses, keep every child spinning; the wall timeout ends it and nothing survives
# expect: {"limits": {"wall_s": 4, "max_procs": 32}, "limit_hit": ["wall"], "timed_out": true}
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
