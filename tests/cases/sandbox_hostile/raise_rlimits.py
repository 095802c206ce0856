# must: the program cannot raise any hard limit it was given (address space, CPU, tasks, file size, open files)
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_contains": "raise:refused"}
import resource
raised = []
for name in ("AS", "CPU", "NPROC", "FSIZE", "NOFILE"):
    which = getattr(resource, "RLIMIT_" + name)
    soft, hard = resource.getrlimit(which)
    try:
        resource.setrlimit(which, (soft, resource.RLIM_INFINITY))
        raised.append(name)
    except (OSError, ValueError):
        pass
print("raise:refused" if not raised else f"RAISED {raised}")
