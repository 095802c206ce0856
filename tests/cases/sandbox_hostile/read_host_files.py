# must: host files outside the binds are invisible (the test's secret file, /root, /etc/shadow, /work, host /tmp)
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_not_contains": ["LEAK"], "max_wall_s": 15}
import os
for path in ("__SECRET_FILE__", "/root/.bashrc", "/root/.ssh", "/etc/shadow", "/etc/hostname", "/work/shared",
             "/home", "/var/log", "/sys/class/net", "/proc/1/environ"):
    try:
        if os.path.isdir(path):
            print("LEAK dir", path, os.listdir(path)[:5])
        else:
            with open(path, "rb") as fh:
                print("LEAK file", path, fh.read(200))
    except OSError as exc:
        print("hidden", path, type(exc).__name__)
print("root entries:", sorted(os.listdir("/")))
print("tmp entries:", os.listdir("/tmp"))
