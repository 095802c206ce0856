# must: data written into a directory the program made unlistable (write+search only, then 000) still counts: the
# must: issue's attack wrote 72 MB under a 16 MB limit; here the work dir refuses past 16 MB (ENOSPC)
# expect: {"limits": {"wall_s": 30, "disk_mb": 16}, "exit": "zero", "stdout_contains": "hide:ENOSPC", "stdout_ints_at_most": {"hidden_mb": 16}}
import errno, os
os.mkdir("hide")
os.chmod("hide", 0o300)
block = b"x" * (1 << 20)
written = 0
try:
    for i in range(9):
        with open(f"hide/part{i}", "wb") as fh:
            for _ in range(8):
                fh.write(block)
                written += 1
    print("hide:no-limit")
except OSError as exc:
    print(f"hide:{errno.errorcode[exc.errno]}")
os.chmod("hide", 0)
print(f"hidden_mb={written}")
