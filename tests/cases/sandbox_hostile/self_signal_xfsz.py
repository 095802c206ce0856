# must: a program that sends itself SIGXFSZ dies of it, but no file reached RLIMIT_FSIZE: no limit_hit
# expect: {"limits": {"wall_s": 20, "file_size_mb": 8}, "exit": "nonzero", "killed_by_signal": 25, "limit_hit": [null]}
import os, signal
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
os.kill(os.getpid(), signal.SIGXFSZ)
