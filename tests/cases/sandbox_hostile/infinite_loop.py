# must: a busy loop is stopped by RLIMIT_CPU (cpu_s=1) before the 120 s wall limit; limit_hit == cpu, backed by
# must: the CPU time the kernel accounted (not by the exit status alone)
# expect: {"limits": {"wall_s": 120, "cpu_s": 1}, "limit_hit": ["cpu"]}
x = 0
while True:
    x += 1
