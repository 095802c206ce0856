# must: a program that prints every limit's usual error text and exits 1 has no limit_hit (it hit none)
# expect: {"limits": {"wall_s": 20}, "exit": "nonzero", "limit_hit": [null]}
import sys
for text in ("MemoryError", "numpy.core._exceptions.MemoryError: Unable to allocate 8.00 GiB",
             "BlockingIOError: [Errno 11] Resource temporarily unavailable", "RuntimeError: can't start new thread",
             "OSError: [Errno 28] No space left on device", "OSError: [Errno 27] File too large", "Killed",
             "CPU time limit exceeded", "std::bad_alloc"):
    print(text)
    print(text, file=sys.stderr)
sys.exit(1)
