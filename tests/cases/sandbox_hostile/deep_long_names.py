# must: 30 levels of 255-byte names (7.7 KB paths) are cleaned up; output_dir keeps only paths up to its length
# must: limit (so every copied path stays usable on the host) and says what it left out
# expect: {"limits": {"wall_s": 60}, "exit": "zero", "output_dir": true, "stdout_contains": "long 30", "warnings_contain": "longer than", "unsandboxed_too": true}
import os
with open("result.txt", "w") as fh:
    fh.write("ok")
top = os.open(".", os.O_RDONLY)
for level in range(30):
    name = f"{level:03d}" + "n" * 252
    os.mkdir(name)
    os.chdir(name)
    with open("f" * 255, "w") as fh:
        fh.write("x")
os.fchdir(top)
print("long", level + 1)
