"""The benchmark registry. Every package under ``sciprobe/benchmarks/`` that exposes ``BENCHMARK`` (a
:class:`~sciprobe.core.declaration.Benchmark` whose ``name`` is the package's name) is a registered benchmark:
adding a benchmark means adding its folder, nothing else. Declarations are imported on first use, never when this
module is imported, and keep their heavy imports lazy. The plugin folder is found by name, so no generic module
imports ``sciprobe.benchmarks`` itself.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

from sciprobe.core.declaration import Benchmark, TaskSpec
from sciprobe.core.errors import SciprobeError


class DeclarationWarning(UserWarning):
    """A benchmark left out because its declaration fails to import (``sciprobe.cli.index`` never caches then)."""


#: the package whose sub-packages are the benchmarks
PLUGINS = "sciprobe.benchmarks"


def _plugin_folder() -> list[str]:
    return list(importlib.import_module(PLUGINS).__path__)


def plugin_entries() -> tuple[str, ...]:
    """The plugin folder's entries, sorted: a cheap key (one directory listing, no import) for caches of what the
    declarations say, which changes when a benchmark folder is added or removed."""
    import os

    return tuple(sorted(name for folder in _plugin_folder() for name in os.listdir(folder)))


def _packages() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(_plugin_folder()) if m.ispkg)


@functools.lru_cache(maxsize=None)
def _load(name: str) -> Benchmark | None:
    benchmark = getattr(importlib.import_module(f"{PLUGINS}.{name}"), "BENCHMARK", None)
    if benchmark is None:
        return None
    if not isinstance(benchmark, Benchmark) or benchmark.name != name:
        raise SciprobeError(f"sciprobe/benchmarks/{name}: BENCHMARK must be a Benchmark named {name!r}")
    return benchmark


def benchmark_names() -> list[str]:
    """Every registered benchmark, by name. A package whose declaration fails to import is left out with a
    warning, so one broken benchmark does not take the others down (``get_benchmark`` raises its error)."""
    import warnings

    names = []
    for name in _packages():
        try:
            if _load(name) is not None:
                names.append(name)
        except Exception as exc:  # noqa: BLE001 - any error of one benchmark's declaration
            warnings.warn(f"benchmark {name!r} is skipped: its declaration fails to import ({exc})",
                          DeclarationWarning, stacklevel=2)
    return names


def get_benchmark(name: str) -> Benchmark:
    benchmark = _load(name) if name in _packages() else None
    if benchmark is None:
        raise SciprobeError(f"unknown benchmark {name!r}; known: {', '.join(benchmark_names())}")
    return benchmark


def resolve_task(ref: str) -> tuple[Benchmark, TaskSpec]:
    """``"idrbench:ipi"`` -> (benchmark, task)."""
    bench, sep, task = ref.partition(":")
    if not sep or not task:
        raise SciprobeError(f"task reference {ref!r} must look like BENCH:TASK (e.g. idrbench:ipi)")
    benchmark = get_benchmark(bench)
    return benchmark, benchmark.task(task)


def canonical_ref(ref: str) -> str:
    """``BENCH:TASK`` under the task's own name (an alias resolved): what results are keyed by."""
    benchmark, task = resolve_task(ref)
    return f"{benchmark.name}:{task.name}"


def task_refs() -> list[str]:
    """``BENCH:TASK`` for every task of every registered benchmark."""
    return [f"{b}:{t}" for b in benchmark_names() for t in get_benchmark(b).tasks]
