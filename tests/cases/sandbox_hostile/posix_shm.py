# must: POSIX shared memory (shm_open in /dev/shm) stays in the sandbox's own /dev/shm: nothing named after the
# must: run appears in the host's /dev/shm
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": "shm:private"}
from multiprocessing import shared_memory
seg = shared_memory.SharedMemory(name="__MARKER__", create=True, size=16 << 20)
seg.buf[:4] = b"host"
print("shm:private", seg.name)
seg.close()
