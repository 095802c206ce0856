# must: one 10 MB file with 40 hard links (10 MB on disk) does not become 410 MB on the host through output_dir
# expect: {"limits": {"wall_s": 60, "disk_mb": 64}, "exit": "zero", "output_dir": true, "stdout_contains": "links 40", "warnings_contain": "output budget", "unsandboxed_too": true}
import os
with open("result.txt", "w") as fh:
    fh.write("ok")
with open("base.bin", "wb") as fh:
    fh.write(b"x" * (10 << 20))
for i in range(40):
    os.link("base.bin", f"link{i:02d}.bin")
print("links", 40)
