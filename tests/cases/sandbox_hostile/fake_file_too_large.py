# must: a program that prints "File too large" (the case) and exits 0 has no limit_hit
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "limit_hit": [null]}
import sys
print("OSError: [Errno 27] File too large")
print("OSError: [Errno 27] File too large", file=sys.stderr)
