# must: exit status 137 (SIGKILL as bwrap reports it) after no CPU use is neither a CPU nor any other limit hit
# expect: {"limits": {"wall_s": 20, "cpu_s": 30}, "exit": "nonzero", "limit_hit": [null], "timed_out": false}
import sys
sys.exit(128 + 9)
