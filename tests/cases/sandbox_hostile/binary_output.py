# must: invalid UTF-8, NUL bytes and a 200 KB line without newline on both streams are captured (decoded with
# must: replacement characters), not a crash of the runner
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": "after-binary"}
import os
for fd in (1, 2):
    os.write(fd, b"\xff\xfe\x00\x80\xc3(\xed\xa0\x80" + b"y" * 200_000)
os.write(1, b"\nafter-binary\n")
