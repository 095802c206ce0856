# must: thousands of small files in many directories are copied by output_dir and removed afterwards
# expect: {"limits": {"wall_s": 60}, "exit": "zero", "output_dir": true, "stdout_contains": "made 5000", "output_entries_at_least": 5100, "unsandboxed_too": true}
import os
for d in range(100):
    os.mkdir(f"dir{d:03d}")
    for f in range(50):
        with open(f"dir{d:03d}/f{f:02d}", "w") as fh:
            fh.write("x")
with open("result.txt", "w") as fh:
    fh.write("ok")
print("made", 100 * 50)
