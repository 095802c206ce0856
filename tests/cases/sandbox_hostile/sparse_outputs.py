# must: 12 sparse files of 1 GiB each (a few KB allocated) do not expand on the host through output_dir: the copy
# must: is budgeted by apparent size within disk_mb (the attack put 384 MB on the host under a 64 MB limit)
# expect: {"limits": {"wall_s": 60, "disk_mb": 64, "file_size_mb": 2048}, "exit": "zero", "output_dir": true, "stdout_contains": "sparse 12", "warnings_contain": "output budget", "unsandboxed_too": true}
import os
with open("result.txt", "w") as fh:
    fh.write("ok")
for i in range(12):
    with open(f"sparse{i:02d}.bin", "wb") as fh:
        fh.truncate(1 << 30)
        fh.seek((1 << 30) - 1)
        fh.write(b"x")
print("sparse", 12)
