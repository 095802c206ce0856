# must: /proc/self/mountinfo (and mounts, mountstats, pid 1's view, the cwd link) show no host path of the run's
# must: folder: the work dir is the sandbox's own tmpfs
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": [" / /workdir ", "cwd=/workdir"], "stdout_not_contains": ["__TMP_ROOT__", "sciprobe-sbx", "/tmp/pytest"]}
import os
for path in ("/proc/self/mountinfo", "/proc/self/mounts", "/proc/self/mountstats", "/proc/1/mountinfo",
             "/proc/thread-self/mountinfo"):
    try:
        with open(path) as fh:
            print(path, fh.read())
    except OSError as exc:
        print(path, "unreadable", type(exc).__name__)
print(f"cwd={os.getcwd()} link={os.readlink('/proc/self/cwd')}")
