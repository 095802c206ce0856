# must: RLIMIT_AS turns a runaway allocation into MemoryError long before the wall limit; that is the program's own
# must: error (limit_hit stays None: nothing outside the program can tell it from a program printing "MemoryError")
# expect: {"limits": {"wall_s": 30, "memory_mb": 512}, "exit": "nonzero", "limit_hit": [null], "timed_out": false, "stderr_contains": "MemoryError"}
chunks = []
while True:
    chunks.append(bytearray(64 << 20))
