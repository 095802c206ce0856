"""Registry of benchmark declarations. Modules are imported on first use, never at package import."""

from __future__ import annotations

import importlib

from sciprobe.declaration import Benchmark, TaskSpec
from sciprobe.errors import SciprobeError

# name -> module that exposes BENCHMARK. Adding a benchmark means one line here and one module.
_MODULES = {
    "idrbench": "sciprobe.benchmarks.idrbench",
    "sgibench": "sciprobe.benchmarks.sgibench",
    "prescience": "sciprobe.benchmarks.prescience",
    "scitaste": "sciprobe.benchmarks.scitaste",
}


def benchmark_names() -> list[str]:
    return sorted(_MODULES)


def get_benchmark(name: str) -> Benchmark:
    if name not in _MODULES:
        raise SciprobeError(f"unknown benchmark {name!r}; known: {', '.join(benchmark_names())}")
    return importlib.import_module(_MODULES[name]).BENCHMARK


def resolve_task(ref: str) -> tuple[Benchmark, TaskSpec]:
    """``"idrbench:ipi"`` -> (benchmark, task)."""
    bench, sep, task = ref.partition(":")
    if not sep or not task:
        raise SciprobeError(f"task reference {ref!r} must look like BENCH:TASK (e.g. idrbench:ipi)")
    benchmark = get_benchmark(bench)
    return benchmark, benchmark.task(task)
