# must: symlinks (and fifos) the program leaves are never copied out by output_dir, only regular files
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "output_dir": true, "stdout_contains": "planted"}
import os
os.symlink("__SECRET_FILE__", "secret_link")
os.symlink("/etc", "etc_link")
os.mkfifo("fifo")
with open("result.txt", "w") as fh:
    fh.write("ok")
print("planted")
