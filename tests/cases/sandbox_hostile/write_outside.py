# must: every write outside the work dir fails or lands in the sandbox's private tmpfs; nothing appears on the host
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": "workdir:WROTE", "stdout_not_contains": ["etc:WROTE", "usr:WROTE", "repo:WROTE", "root:WROTE", "interp:WROTE"]}
import os, sys
targets = {
    "tmp": "/tmp/__MARKER__-tmp",
    "home": os.path.expanduser("~/__MARKER__-home"),
    "roothome": "/root/__MARKER__-roothome",
    "etc": "/etc/__MARKER__-etc",
    "usr": "/usr/__MARKER__-usr",
    "repo": "__REPO__/__MARKER__-repo",
    "root": "/__MARKER__-root",
    "interp": os.path.join(sys.prefix, "__MARKER__-interp"),
    "workdir": "__MARKER__-workdir",
}
for name, path in targets.items():
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as fh:
            fh.write("escaped")
        print(f"{name}:WROTE")
    except OSError as exc:
        print(f"{name}:denied:{type(exc).__name__}")
