# must: a busy loop is stopped by RLIMIT_CPU (cpu_s=1) long before the 120 s wall limit (CPU time, so a loaded host stretches the wall time); limit_hit == cpu
# expect: {"limits": {"wall_s": 120, "cpu_s": 1}, "limit_hit": ["cpu"], "max_wall_s": 40}
x = 0
while True:
    x += 1
