# must: /tmp and /dev/shm are tmpfs sized from memory_mb (half each) and counted against it: with memory_mb=128
# must: neither takes more than 64 MB (the attack got 480 MB of host shared memory); either ENOSPC stops
# must: the program or the watchdog kills the run for memory; nothing reaches the host
# expect: {"limits": {"wall_s": 60, "file_size_mb": 8, "memory_mb": 128}, "limit_hit": [null, "memory"], "stdout_contains": "tmp:ENOSPC", "stdout_ints_at_most": {"tmp_mb": 64, "shm_mb": 64}}
import errno
block = b"x" * (1 << 20)
for name, d in (("tmp", "/tmp"), ("shm", "/dev/shm")):
    written, outcome = 0, "no-limit"
    for i in range(120):
        try:
            with open(f"{d}/__MARKER__-{i}", "wb") as fh:
                for _ in range(4):
                    fh.write(block)
                    written += 1
        except OSError as exc:
            outcome = errno.errorcode.get(exc.errno, str(exc.errno))
            break
    print(f"{name}:{outcome} {name}_mb={written}", flush=True)
