# must: a program that locks its own work dir (chmod 000) still has the dir removed afterwards
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": "locked"}
import os
os.makedirs("a/b/c")
with open("a/b/c/f", "w") as fh:
    fh.write("x")
os.chmod("a/b/c", 0)
os.chmod("a/b", 0)
os.chmod("a", 0)
os.chmod(".", 0o500)
print("locked")
