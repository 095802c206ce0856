"""sciprobe: science-of-science LLM benchmarks as Hugging Face-native evaluation.

Importing this package is cheap and offline: models, datasets and litellm load lazily, and so does every name
below. This is the public face: code outside the package (the metric modules, dataset builders, task cards, the
Space, your scripts) imports from here rather than from deep paths, which may move.

    import sciprobe
    benchmark = sciprobe.get_benchmark("idrbench")
    sciprobe.build(benchmark, source, out_dir)
    path, results = sciprobe.evaluate(sciprobe.EvaluationRequest(tasks=["idrbench:ipi"], model="..."))
    data = sciprobe.load_results(path)
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

from sciprobe import _compat  # noqa: E402
from sciprobe.core.errors import SciprobeError  # noqa: E402

_compat.install()

#: public name -> (module, attribute), imported on first use
_PUBLIC = {
    "get_benchmark": ("sciprobe.core.registry", "get_benchmark"),
    "benchmark_names": ("sciprobe.core.registry", "benchmark_names"),
    "resolve_task": ("sciprobe.core.registry", "resolve_task"),
    "build": ("sciprobe.data.build", "build_benchmark"),
    "load_task_data": ("sciprobe.data.task_data", "load_task_data"),
    "EvaluationRequest": ("sciprobe.run.task_runner", "EvaluationRequest"),
    "evaluate": ("sciprobe.run.evaluation", "evaluate"),
    "score_predictions": ("sciprobe.run.score_predictions", "score_file"),
    "run_baselines": ("sciprobe.run.baselines", "run_baselines"),
    "load_results": ("sciprobe.results.read", "load_results_file"),
    "compare_files": ("sciprobe.results.compare", "compare_files"),
    "export_results": ("sciprobe.results.export", "export_results"),
    "metric_info": ("sciprobe.interop.metric_module", "metric_info"),
}

__all__ = ["SciprobeError", "__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'sciprobe' has no attribute {name!r}")
    import importlib

    module, attribute = _PUBLIC[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
