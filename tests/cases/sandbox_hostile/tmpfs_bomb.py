# must: /tmp and /dev/shm are size-capped tmpfs (disk_mb); filling them ends with ENOSPC, nothing reaches the host
# expect: {"limits": {"wall_s": 60, "file_size_mb": 8, "disk_mb": 32}, "exit": "zero", "stdout_contains": "tmp:ENOSPC shm:ENOSPC", "max_wall_s": 30}
import errno
block = b"x" * (1 << 20)
res = []
for name, d in (("tmp", "/tmp"), ("shm", "/dev/shm")):
    i, outcome = 0, "no-limit"
    while i < 200:
        try:
            with open(f"{d}/__MARKER__-{i}", "wb") as fh:
                for _ in range(4):
                    fh.write(block)
        except OSError as exc:
            outcome = errno.errorcode.get(exc.errno, str(exc.errno))
            break
        i += 1
    res.append(f"{name}:{outcome}")
print(" ".join(res))
