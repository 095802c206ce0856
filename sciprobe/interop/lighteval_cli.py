"""``sciprobe lighteval ...``: lighteval's own CLI, runnable offline.

lighteval 0.13 imports every built-in task module when it resolves task names, and one of them
(``tiny_benchmarks``) downloads a file at import time, so the plain ``lighteval`` command fails without
network (shared/spec/ecosystem.md §4.1). This wrapper runs the same typer app with the registry limited to
the ``--custom-tasks`` module, and builds the bundled sample dataset first when a sciprobe task card has no
``SCIPROBE_<BENCH>_DATA`` set. With network, the plain ``lighteval`` command works the same way.

CPU settings: for the ``accelerate`` (transformers) backend, model arguments without ``batch_size`` get
``batch_size=1``. lighteval's automatic batch-size search otherwise starts from a large batch and backs off on
memory errors, which on a CPU means minutes and gigabytes before the first answer (issue 14: > 17 min and 14 GB for
the bundled model; with ``batch_size=1`` the README's line takes about 80 s). torch's intra-op threads are the
bundled generator's (two, or ``SCIPROBE_TORCH_THREADS``; sciprobe.llm.local.generator_threads) instead of torch's
one per core: on a 2-core machine shared with other work, the README's IPI line took 3 min 24 s with torch's
default and 21 s with one thread (issue 28).

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

from sciprobe.core.errors import SciprobeError

#: lighteval subcommands whose model engine is a package of their own: subcommand -> package (lighteval's extra).
#: ``sciprobe lighteval vllm MODEL_ARGS TASKS --custom-tasks ...`` is passed through unchanged; sciprobe does not
#: install the engines (they need a GPU): see :func:`check_engine`.
ENGINE_PACKAGES = {"vllm": "vllm", "sglang": "sglang"}


def _custom_tasks_only() -> None:
    from lighteval.tasks.registry import Registry

    def load(custom_tasks=None, load_multilingual: bool = False):
        if custom_tasks is None:
            return {}
        return Registry._extract_configs(Registry.create_custom_tasks_module(custom_tasks))

    Registry.load_all_task_configs = staticmethod(load)


def _ensure_sample_data(argv: Sequence[str]) -> None:
    """Build the bundled sample for every sciprobe task card named on the command line without data."""
    from sciprobe.core.registry import benchmark_names, get_benchmark
    from sciprobe.data.task_data import sample_dataset_dir

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
    if len(args) >= 2 and args[0] == "accelerate" and not args[1].startswith("-"):  # not `accelerate --help`
        model_args = args[1]
        is_file = model_args.endswith((".yaml", ".yml"))
        if not is_file and not re.search(r"(^|,)\s*batch_size\s*=", model_args):
            args[1] = f"{model_args},batch_size=1" if model_args else "batch_size=1"
    return args


def check_engine(argv: Sequence[str]) -> None:
    """One clear error when a GPU backend's engine (vllm, sglang) is missing or not the version lighteval pins,
    instead of lighteval's traceback from deep inside the run. ``--help`` works without it."""
    if not argv or argv[0] not in ENGINE_PACKAGES or "--help" in argv:
        return
    from importlib.metadata import PackageNotFoundError, version

    from lighteval.utils.imports import is_package_available, required_dependencies

    package = ENGINE_PACKAGES[argv[0]]
    if is_package_available(package):
        return
    requirement = required_dependencies()[0][package]
    try:
        found = f"{package} {version(package)} is installed"
    except PackageNotFoundError:
        found = f"{package} is not installed"
    raise SciprobeError(f"`lighteval {argv[0]}` needs {requirement} ({found}); on a machine with a GPU: "
                        f"pip install 'lighteval[{package}]'")


def run(argv: Sequence[str]) -> int:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    check_engine(argv)
    argv = cpu_settings(argv)
    _ensure_sample_data(argv)
    _custom_tasks_only()
    _bootstrap_in_process()
    if argv and argv[0] == "accelerate":
        import torch

        from sciprobe.llm.local import generator_threads

        torch.set_num_threads(generator_threads())
    from lighteval.__main__ import app

    try:
        app(args=list(argv), prog_name="lighteval", standalone_mode=False)
    except SystemExit as exc:  # typer exits on --help and usage errors
        return int(exc.code or 0)
    except ImportError as exc:
        if "requested the use of" not in str(exc):  # not lighteval's "install this backend" message
            raise
        raise SciprobeError(" ".join(str(exc).split())) from None
    return 0
