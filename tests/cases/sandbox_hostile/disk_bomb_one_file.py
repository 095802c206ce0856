# must: RLIMIT_FSIZE stops a single huge file at file_size_mb (SIGXFSZ); the file is gone with the work dir
# expect: {"limits": {"wall_s": 30, "file_size_mb": 20}, "exit": "nonzero", "limit_hit": ["file_size"]}
block = b"x" * (1 << 20)
with open("huge.bin", "wb") as fh:
    while True:
        fh.write(block)
