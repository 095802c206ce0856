# must: preallocating (fallocate) past disk_mb fails; a 1 TiB sparse file is allowed but filling it page by page
# must: stops at disk_mb (space is counted by allocated blocks, not apparent size)
# expect: {"limits": {"wall_s": 60, "disk_mb": 64, "file_size_mb": 2000000}, "exit": "zero", "stdout_contains": "fallocate:ENOSPC sparse:ok fill:ENOSPC", "stdout_ints_at_most": {"fill_mb": 64}}
import errno, os
fd = os.open("prealloc.bin", os.O_WRONLY | os.O_CREAT, 0o644)
try:
    os.posix_fallocate(fd, 0, 1 << 30)
    out = ["fallocate:ALLOWED"]
except OSError as exc:
    out = [f"fallocate:{errno.errorcode[exc.errno]}"]
os.close(fd)
os.unlink("prealloc.bin")
fd = os.open("sparse.bin", os.O_WRONLY | os.O_CREAT, 0o644)
os.ftruncate(fd, 1 << 40)
out.append("sparse:ok")
pages = 0
try:
    while pages < 1 << 20:
        os.pwrite(fd, b"x", pages * (1 << 20))
        pages += 1
    out.append("fill:no-limit")
except OSError as exc:
    out.append(f"fill:{errno.errorcode[exc.errno]}")
print(" ".join(out), f"fill_mb={pages * 4096 >> 20}")
