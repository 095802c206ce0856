# must: RLIMIT_AS turns a runaway allocation into MemoryError; limit_hit == memory, well within the wall limit
# expect: {"limits": {"wall_s": 30, "memory_mb": 512}, "exit": "nonzero", "limit_hit": ["memory"], "max_wall_s": 20, "stderr_contains": "MemoryError"}
chunks = []
while True:
    chunks.append(bytearray(64 << 20))
