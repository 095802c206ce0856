# must: the sandbox's root and /dev (bwrap's own tmpfs mounts, without a size cap; in user-namespace mode owned by
# must: the program) take no files: otherwise they would be memory outside every limit
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": ["refused:all", "workdir:ok tmp:ok shm:ok"]}
import os, sys
block = b"x" * (1 << 20)
written = []
for d in ("/", "/etc", "/dev", "/dev/pts", "/usr", "/bin", "/lib", "/proc", os.path.dirname(sys.prefix),
          os.path.dirname(os.path.dirname(sys.prefix)), "/newdir/sub"):
    try:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "__MARKER__-fill"), "wb") as fh:
            fh.write(block)
        written.append(d)
    except OSError:
        pass
    try:
        os.mkdir(os.path.join(d, "__MARKER__-dir"))
        written.append(d + " (dir)")
    except OSError:
        pass
print("refused:all" if not written else f"WROTE {written}")
ok = []
for name, d in (("workdir", "."), ("tmp", "/tmp"), ("shm", "/dev/shm")):
    with open(os.path.join(d, "__MARKER__-ok"), "wb") as fh:
        fh.write(block)
    ok.append(f"{name}:ok")
print(" ".join(ok))
