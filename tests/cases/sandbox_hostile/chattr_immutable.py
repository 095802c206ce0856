# must: immutable/append-only flags cannot be set in the sandbox; sticky and setgid directories and files with no
# must: permissions do not stop the cleanup (unsandboxed as root the flags *are* set on the host disk: the cleanup
# must: clears them)
# expect: {"limits": {"wall_s": 30}, "exit": "zero", "stdout_contains": "flags:done", "sandboxed_stdout_contains": "immutable:denied append:denied dir:denied", "unsandboxed_too": true}
import fcntl, os, struct
FS_IOC_SETFLAGS, FS_IMMUTABLE_FL, FS_APPEND_FL = 0x40086602, 0x10, 0x20
os.makedirs("sticky/sub")
with open("sticky/sub/zero.txt", "w") as fh:
    fh.write("z")
os.chmod("sticky/sub/zero.txt", 0)
os.chmod("sticky/sub", 0o3000)
os.chmod("sticky", 0o1700)
for path, flag, label in (("frozen.txt", FS_IMMUTABLE_FL, "immutable"), ("append.txt", FS_APPEND_FL, "append"),
                          ("sticky", FS_IMMUTABLE_FL, "dir")):
    if not os.path.exists(path):
        with open(path, "w") as fh:
            fh.write("x")
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("i", flag))
        print(f"{label}:SET", end=" ")
    except OSError:
        print(f"{label}:denied", end=" ")
    os.close(fd)
print("flags:done")
