# must: exit status 152 (what bwrap reports for a SIGXCPU death) without spending CPU is not a CPU-limit hit
# expect: {"limits": {"wall_s": 20, "cpu_s": 30}, "exit": "nonzero", "limit_hit": [null]}
import sys
sys.exit(128 + 24)
