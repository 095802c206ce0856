# must: file names with newlines, tabs, backslashes, invalid UTF-8, leading dashes, spaces, globs, 255 bytes and
# must: right-to-left marks are copied by output_dir under the same names and removed afterwards
# expect: {"limits": {"wall_s": 30}, "exit": "zero", "output_dir": true, "stdout_contains": "named 13", "output_files": ["new\nline-dir/inner.txt", "-rf", "*", "?[a]"], "output_entries_at_least": 15, "unsandboxed_too": true}
import os
names = ["new\nline", "tab\there", "back\\slash", "-rf", " lead", "trail ", "...", "x" * 255, "é-ünï", "\u202eRTL",
         "*", "?[a]"]
for name in names:
    with open(name, "w") as fh:
        fh.write(name)
fd = os.open(b"\xff\xfe-not-utf8", os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b"bytes")
os.close(fd)
os.mkdir("new\nline-dir")
with open("new\nline-dir/inner.txt", "w") as fh:
    fh.write("inner")
with open("result.txt", "w") as fh:
    fh.write("ok")
print("named", len(names) + 1)
