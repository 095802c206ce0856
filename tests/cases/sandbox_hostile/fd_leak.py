# must: the program inherits no host file descriptors beyond stdin/stdout/stderr
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": "fds: [0, 1, 2]"}
import os
fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))
# the highest entry is the directory fd listdir itself had open while reading
print("fds:", fds[:-1])
