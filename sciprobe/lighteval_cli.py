"""``sciprobe lighteval ...``: lighteval's own CLI, runnable offline.

lighteval 0.13 imports every built-in task module when it resolves task names, and one of them
(``tiny_benchmarks``) downloads a file at import time, so the plain ``lighteval`` command fails without
network (shared/spec/ecosystem.md §4.1). This wrapper runs the same typer app with the registry limited to
the ``--custom-tasks`` module, and builds the bundled sample dataset first when a sciprobe task card has no
``SCIPROBE_<BENCH>_DATA`` set. With network, the plain ``lighteval`` command works the same way.

CPU settings: for the ``accelerate`` (transformers) backend, model arguments without ``batch_size`` get
``batch_size=1``. lighteval's automatic batch-size search otherwise starts from a large batch and backs off on
memory errors, which on a CPU means minutes and gigabytes before the first answer (issue 14: > 17 min and 14 GB for
the bundled model; with ``batch_size=1`` the README's line takes about 80 s).

Bootstrap stderr: lighteval bootstraps the stderr of a corpus metric in a ``multiprocessing.Pool`` forked from
the running process. A process that runs other threads (sciprobe's client event loop, a Ray client's gRPC
threads) can be forked while one of them holds a lock, and the pool then hangs for good (seen in the test suite).
In such a process the wrapper draws the same resamples, with the same seeds and in the same order, in-process;
a process with one thread keeps lighteval's pool.
"""

from __future__ import annotations

import os
import re
from typing import Sequence


def _custom_tasks_only() -> None:
    from lighteval.tasks.registry import Registry

    def load(custom_tasks=None, load_multilingual: bool = False):
        if custom_tasks is None:
            return {}
        return Registry._extract_configs(Registry.create_custom_tasks_module(custom_tasks))

    Registry.load_all_task_configs = staticmethod(load)


def _ensure_sample_data(argv: Sequence[str]) -> None:
    """Build the bundled sample for every sciprobe task card named on the command line without data."""
    from sciprobe.benchmarks import benchmark_names, get_benchmark
    from sciprobe.task_data import sample_dataset_dir

    text = " ".join(argv)
    for name in benchmark_names():
        if re.search(rf"\b{name}:", text) and not os.environ.get(f"SCIPROBE_{name.upper()}_DATA"):
            sample_dataset_dir(get_benchmark(name))


def fork_is_safe() -> bool:
    """No other Python thread runs and no gRPC runtime is loaded (its threads are native)."""
    import sys
    import threading

    return threading.active_count() == 1 and "grpc" not in sys.modules


def _bootstrap_in_process(always: bool = False) -> None:
    """lighteval's bootstrap draws computed here (same samples, same order) unless :func:`fork_is_safe`."""
    import random

    from lighteval.metrics.utils import stderr

    pooled = getattr(stderr._bootstrap_internal.__call__, "lighteval_pool", stderr._bootstrap_internal.__call__)

    def draw(self, cur_experiment):  # mirrors stderr._bootstrap_internal.__call__ (lighteval 0.13)
        if not always and fork_is_safe():
            return pooled(self, cur_experiment)
        population, seed = cur_experiment
        rnd = random.Random()
        rnd.seed(seed)
        return [self.metric(rnd.choices(population, k=len(population))) for _ in range(self.number_draws)]

    draw.lighteval_pool = pooled
    stderr._bootstrap_internal.__call__ = draw


def cpu_settings(argv: Sequence[str]) -> list[str]:
    """``argv`` with ``batch_size=1`` added to an ``accelerate`` command's model arguments that set none."""
    args = list(argv)
    if len(args) >= 2 and args[0] == "accelerate":
        model_args = args[1]
        is_file = model_args.endswith((".yaml", ".yml"))
        if not is_file and not re.search(r"(^|,)\s*batch_size\s*=", model_args):
            args[1] = f"{model_args},batch_size=1" if model_args else "batch_size=1"
    return args


def run(argv: Sequence[str]) -> int:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    argv = cpu_settings(argv)
    _ensure_sample_data(argv)
    _custom_tasks_only()
    _bootstrap_in_process()
    from lighteval.__main__ import app

    try:
        app(args=list(argv), prog_name="lighteval", standalone_mode=False)
    except SystemExit as exc:  # typer exits on --help and usage errors
        return int(exc.code or 0)
    return 0
