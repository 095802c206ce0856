# must: fifos, bound unix sockets, device nodes and hard links left in the work dir neither block nor fool the
# must: copy-back (only regular files and directories arrive) nor the cleanup; device nodes cannot be made
# expect: {"limits": {"wall_s": 30}, "exit": "zero", "output_dir": true, "sandboxed_stdout_contains": "mknod:denied", "warnings_contain": "not a regular file", "output_files": ["hard1", "hard2"], "unsandboxed_too": true}
import os, socket, stat
os.mkfifo("fifo")
os.mkfifo("result-fifo")
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.bind("listening.sock")
sock.listen(1)
with open("hard1", "w") as fh:
    fh.write("h")
os.link("hard1", "hard2")
os.symlink("/", "root-link")
try:
    os.mknod("null-dev", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    print("mknod:MADE")
except OSError:
    print("mknod:denied")
with open("result.txt", "w") as fh:
    fh.write("ok")
