# must: a program that fills the work dir and dies of the ENOSPC error gets limit_hit == disk (the work dir is full:
# must: a fact observed from outside, not the error text)
# expect: {"limits": {"wall_s": 30, "disk_mb": 24}, "exit": "nonzero", "limit_hit": ["disk"], "timed_out": false}
block = b"x" * (1 << 20)
i = 0
while True:
    with open(f"fill{i}.bin", "wb") as fh:
        fh.write(block)
    i += 1
