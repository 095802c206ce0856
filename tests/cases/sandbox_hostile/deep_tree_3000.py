# must: a 3,000-level directory tree (paths far beyond PATH_MAX) with locked levels (chmod 000) is cleaned up
# must: without recursion; output_dir gets the levels within its depth limit and a warning names the rest
# expect: {"limits": {"wall_s": 60}, "exit": "zero", "output_dir": true, "stdout_contains": "built 3000", "warnings_contain": "deeper than", "output_files": ["d/d/leaf.txt"], "unsandboxed_too": true}
import os
with open("result.txt", "w") as fh:
    fh.write("ok")
top = os.open(".", os.O_RDONLY)
locked = []
for level in range(1, 3001):
    os.mkdir("d")
    os.chdir("d")
    if level in (2, 1500, 2999):
        with open("leaf.txt", "w") as fh:
            fh.write(str(level))
    if level in (1, 10, 1000, 2990):
        locked.append(os.open(".", os.O_RDONLY))
os.fchdir(top)
for fd in reversed(locked):
    os.fchmod(fd, 0)
print("built", level)
