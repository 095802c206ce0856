# must: a program that stops itself (SIGSTOP) is still ended by the wall limit (SIGKILL works on stopped processes)
# expect: {"limits": {"wall_s": 3}, "timed_out": true, "limit_hit": ["wall"]}
import os, signal
print("stopping", flush=True)
os.kill(os.getpid(), signal.SIGSTOP)
print("RESUMED")
