# must: a program that sends itself SIGXCPU dies of it, but spent no CPU: no limit_hit
# expect: {"limits": {"wall_s": 20, "cpu_s": 30}, "exit": "nonzero", "killed_by_signal": 24, "limit_hit": [null]}
import os, signal
signal.signal(signal.SIGXCPU, signal.SIG_DFL)
os.kill(os.getpid(), signal.SIGXCPU)
