# must: exit status 153 (SIGXFSZ as bwrap reports it) with no file at RLIMIT_FSIZE is not a file-size-limit hit
# expect: {"limits": {"wall_s": 20, "file_size_mb": 8}, "exit": "nonzero", "limit_hit": [null]}
import sys
with open("small.bin", "wb") as fh:
    fh.write(b"x" * 1000)
sys.exit(128 + 25)
