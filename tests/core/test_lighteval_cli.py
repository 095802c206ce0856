"""``sciprobe lighteval``'s own settings: lighteval's bootstrap stderr drawn in-process gives exactly the numbers
of lighteval's forked pool (the pool can hang in a process that runs threads; see
``sciprobe.interop.lighteval_cli``)."""

from __future__ import annotations

import json
import subprocess
import sys

from sciprobe.interop.lighteval_cli import cpu_settings

# in a fresh interpreter (no threads yet), so lighteval's own forked pool is safe to run for the comparison
SCRIPT = """
import json, statistics
from lighteval.metrics.utils import stderr
population = [float((7 * i) % 23) for i in range(40)]
pooled = stderr.bootstrap_stderr(statistics.median, population, 300)
from sciprobe.interop.lighteval_cli import _bootstrap_in_process
_bootstrap_in_process(always=True)
here = stderr.bootstrap_stderr(statistics.median, population, 300)
print(json.dumps([pooled, here]))
"""


def test_in_process_bootstrap_equals_lightevals_pool() -> None:
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=600, check=False,
                          env={"LIGHTEVAL_DISABLE_TQDM": "1", "PATH": "/usr/bin:/bin", "HOME": "/tmp"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    pooled, here = json.loads(proc.stdout.strip().splitlines()[-1])
    assert pooled > 0 and here == pooled


def test_fork_is_unsafe_once_another_thread_runs() -> None:
    import threading

    from sciprobe.interop.lighteval_cli import fork_is_safe

    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        assert not fork_is_safe()
    finally:
        stop.set()
        worker.join()


def test_cpu_settings_add_batch_size_one_to_accelerate_only() -> None:
    assert cpu_settings(["accelerate", "model_name=m", "t|0"])[1] == "model_name=m,batch_size=1"
    assert cpu_settings(["accelerate", "model_name=m,batch_size=4", "t|0"])[1] == "model_name=m,batch_size=4"
    assert cpu_settings(["endpoint", "litellm", "model_name=m"]) == ["endpoint", "litellm", "model_name=m"]
