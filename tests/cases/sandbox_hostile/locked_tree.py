# must: files and directories the program locks (000, execute-only, write-only, read-only dirs) are still copied by
# must: output_dir and removed afterwards, whoever runs the sandbox
# expect: {"limits": {"wall_s": 30}, "exit": "zero", "output_dir": true, "stdout_contains": "locked", "output_files": ["a/b/c/secret.txt", "a/top.txt", "ro/kept.txt", "wo/hidden.txt"], "unsandboxed_too": true}
import os
os.makedirs("a/b/c")
for path in ("a/b/c/secret.txt", "a/top.txt"):
    with open(path, "w") as fh:
        fh.write("data")
    os.chmod(path, 0)
os.mkdir("ro")
with open("ro/kept.txt", "w") as fh:
    fh.write("kept")
os.chmod("ro", 0o500)
os.mkdir("wo")
with open("wo/hidden.txt", "w") as fh:
    fh.write("hidden")
os.chmod("wo", 0o300)
os.chmod("a/b/c", 0)
os.chmod("a/b", 0o100)
os.chmod("a", 0o200)
with open("result.txt", "w") as fh:
    fh.write("ok")
print("locked")
