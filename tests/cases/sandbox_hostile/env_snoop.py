# must: the sandbox gets a clean environment: none of the host's variables (the test sets a secret one)
# expect: {"limits": {"wall_s": 20}, "exit": "zero", "stdout_not_contains": ["SCIPROBE_TEST_HOST_SECRET", "sk-host-secret"]}
import os
for k, v in sorted(os.environ.items()):
    print(f"{k}={v}")
