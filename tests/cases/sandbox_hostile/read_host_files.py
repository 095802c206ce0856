# must: host files outside the binds are invisible (the test's secret file, /root, /etc/shadow, /work, host /tmp)
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_not_contains": ["LEAK"]}
import os
for path in ("__SECRET_FILE__", "/root/.bashrc", "/root/.ssh", "/etc/shadow", "/etc/hostname", "/work/shared",
             "/home", "/var/log", "/sys/class/net"):
    try:
        if os.path.isdir(path):
            print("LEAK dir", path, os.listdir(path)[:5])
        else:
            with open(path, "rb") as fh:
                print("LEAK file", path, fh.read(200))
    except OSError as exc:
        print("hidden", path, type(exc).__name__)
# pid 1 is the sandbox's own init (bwrap); in user-namespace mode it has the program's uid, so its environment is
# readable: it must be the clean one sciprobe starts bwrap with, nothing of the host's
try:
    with open("/proc/1/environ", "rb") as fh:
        env = fh.read()
    print("LEAK pid1 env" if set(env.split(b"\0")) - {b"", b"PATH=/usr/bin:/bin"} else "pid1 env clean")
except OSError as exc:
    print("hidden /proc/1/environ", type(exc).__name__)
print("root entries:", sorted(os.listdir("/")))
print("tmp entries:", os.listdir("/tmp"))
