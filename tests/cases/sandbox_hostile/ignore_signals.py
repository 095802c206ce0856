# must: ignoring SIGTERM/SIGINT/SIGHUP/SIGXCPU does not help: the wall timeout uses SIGKILL
# expect: {"limits": {"wall_s": 2}, "timed_out": true, "limit_hit": ["wall"]}
import signal, time
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU, signal.SIGUSR1):
    signal.signal(s, signal.SIG_IGN)
while True:
    time.sleep(0.1)
