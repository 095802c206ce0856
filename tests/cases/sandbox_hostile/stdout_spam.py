# must: endless output is cut at output_limit_bytes, flagged as truncated, and the run is stopped (limit_hit == output)
# expect: {"limits": {"wall_s": 60, "output_limit_bytes": 1048576}, "limit_hit": ["output"], "stdout_truncated": true}
import sys
line = "spam" * 16384
while True:
    sys.stdout.write(line)
    sys.stderr.write("e")
