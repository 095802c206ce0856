"""Build lighteval 0.13 task configs from benchmark declarations (shared/spec/ecosystem.md §4).

One card module serves every registered benchmark (``task_cards/sciprobe_tasks.py`` calls
:func:`registry_tasks_table`). A benchmark's declaration may name its own table builder
(``Benchmark.lighteval_tasks``); otherwise only its single-call tasks become lighteval tasks, and multi-call
runners (tournaments, agents, sandboxes) run through ``sciprobe evaluate``. The query is the declaration's own
prompt: the system message and the user message joined by a blank line (lighteval sends one user turn; pass
``system_prompt`` in the model config instead if you prefer, and record it). Few-shot examples are the
benchmark's fixed ones, read lazily from the dataset's ``fewshot`` split, never sampled by lighteval.
"""

from __future__ import annotations

import functools
from typing import Any

from sciprobe.core.declaration import Benchmark, TaskSpec

#: ``SCIPROBE_<BENCH>_DATA``: the dataset (folder or hub id) a benchmark's lighteval tasks read.
DATA_ENV = "SCIPROBE_{}_DATA"


@functools.lru_cache(maxsize=None)
def _fewshot_rows(repo: str, config: str, split: str) -> tuple:
    import datasets

    return tuple(datasets.load_dataset(repo, config, split=split).to_list())


def render_query(messages: list[dict[str, str]]) -> str:
    return "\n\n".join(m["content"] for m in messages)


def make_prompt_function(task: TaskSpec, repo: str):
    from lighteval.tasks.requests import Doc

    def prompt(line: dict, task_name: str = "") -> Doc:
        examples = (_fewshot_rows(repo, task.config, task.fewshot_split)[: task.num_fewshot]
                    if task.num_fewshot else ())
        messages = task.build_messages(line, examples)
        return Doc(task_name=task_name, query=render_query(messages), choices=[""], gold_index=0,
                   specific={"id": str(line["id"]), "gold": task.gold(line),
                             "fields": {name: line.get(name) for name in task.record_fields}})

    prompt.__name__ = f"{task.name}_prompt"
    return prompt


def _task(benchmark: str, task: str) -> TaskSpec:
    from sciprobe.core.registry import get_benchmark

    return get_benchmark(benchmark).task(task)


def final_text(model_response: Any) -> str | None:
    """The first generated text of a lighteval ``ModelResponse`` (None when there is none)."""
    texts = getattr(model_response, "final_text", None) or getattr(model_response, "text", None) or []
    return texts[0] if texts else None


def _final_text(model_response: Any) -> str:
    return final_text(model_response) or ""


# lighteval pickles metric objects for its worker pool, so they are module-level classes that name their
# task instead of closing over it.
def _computations():
    from lighteval.metrics.metrics_corpus import CorpusLevelComputation
    from lighteval.metrics.metrics_sample import SampleLevelComputation

    class ParseAnswer(SampleLevelComputation):
        """Parse one answer into the record the declaration's scorer takes."""

        def __init__(self, benchmark: str, task: str) -> None:
            self.benchmark, self.task = benchmark, task

        def compute(self, doc: Any, model_response: Any, **kwargs: Any) -> dict:
            parsed = _task(self.benchmark, self.task).parse(_final_text(model_response))
            return {"id": doc.specific["id"], **doc.specific.get("fields", {}), "gold": doc.specific["gold"],
                    "prediction": parsed.value, "official": parsed.extra.get("official")}

    class OfficialParseFailed(SampleLevelComputation):
        def __init__(self, benchmark: str, task: str) -> None:
            self.benchmark, self.task = benchmark, task

        def compute(self, doc: Any, model_response: Any, **kwargs: Any) -> float:
            parsed = _task(self.benchmark, self.task).parse(_final_text(model_response))
            return float(parsed.extra.get("official") is None)

    class ScoreRecords(CorpusLevelComputation):
        """One number of the declaration's scorer over all parsed records."""

        def __init__(self, benchmark: str, task: str, mode: str, key: str) -> None:
            self.benchmark, self.task, self.mode, self.key = benchmark, task, mode, key

        def compute_corpus(self, items: list[dict]) -> float:
            # no number (official mode where upstream's own evaluation gives none) is NaN, never 0
            value = _score_values(self.benchmark, self.task, self.mode, items).get(self.key)
            return float("nan") if value is None else float(value)

    class Mean(CorpusLevelComputation):
        def compute_corpus(self, items: list[float]) -> float:
            return float(sum(items) / len(items)) if items else 0.0

    return ParseAnswer, OfficialParseFailed, ScoreRecords, Mean


_CLASSES: tuple | None = None
_SCORED: dict[tuple[str, str, str, str], dict[str, Any]] = {}


def _score_values(benchmark: str, task: str, mode: str, items: list[dict]) -> dict[str, Any]:
    """The scorer's values for ``items``, computed once for every metric of the task that reads them: lighteval
    asks each metric (and its bootstrap stderr, 1,000 resamples drawn with the same seed per metric) separately."""
    import json

    key = (benchmark, task, mode, json.dumps(items, sort_keys=True, default=str))
    if key not in _SCORED:
        if len(_SCORED) >= 8192:
            _SCORED.clear()
        _SCORED[key] = dict(_task(benchmark, task).score(items, mode).values)
    return _SCORED[key]


def _metrics(benchmark: str, task: TaskSpec) -> list:
    from lighteval.metrics.utils.metric_utils import CorpusLevelMetric, SampleLevelMetric
    from lighteval.tasks.requests import SamplingMethod

    global _CLASSES
    if _CLASSES is None:
        _CLASSES = _computations()
        for cls in _CLASSES:  # make them importable by name so pickle finds them
            cls.__module__, cls.__qualname__ = __name__, cls.__name__
            globals()[cls.__name__] = cls
    parse_answer, parse_failed, score_records, mean = _CLASSES
    # A task may declare its own (score key, higher is better) list; the default is the classification set.
    keys = task.corpus_metrics or tuple((k, True) for k in ("macro_f1", "positive_f1", "tpr", "tnr"))
    metrics = []
    for mode in task.modes:
        suffix = "" if mode == task.modes[0] else f"_{mode}"
        for key, higher in keys:
            metrics.append(CorpusLevelMetric(
                metric_name=f"{key}{suffix}", higher_is_better=higher, category=SamplingMethod.GENERATIVE,
                sample_level_fn=parse_answer(benchmark, task.name),
                corpus_level_fn=score_records(benchmark, task.name, mode, key)))
    if task.corpus_metrics:  # such tasks report their own failure rate through the scorer
        return metrics
    metrics.append(SampleLevelMetric(metric_name="official_parse_failure_rate", higher_is_better=False,
                                     category=SamplingMethod.GENERATIVE,
                                     sample_level_fn=parse_failed(benchmark, task.name), corpus_level_fn=mean()))
    return metrics


def tasks_table(benchmark: Benchmark, repo: str) -> list:
    """One ``LightevalTaskConfig`` per single-call task, named ``<bench>:<task>``."""
    from lighteval.tasks.lighteval_task import LightevalTaskConfig

    table = []
    for task in benchmark.tasks.values():
        if task.build_messages is None:
            continue
        table.append(LightevalTaskConfig(
            name=f"{benchmark.name}:{task.name}", prompt_function=make_prompt_function(task, repo), hf_repo=repo,
            hf_subset=task.config, hf_avail_splits=["test"], evaluation_splits=["test"], few_shots_split=None,
            generation_size=task.generation.get("max_tokens"), metrics=_metrics(benchmark.name, task),
            stop_sequence=(), version=0))
    return table


def data_location(benchmark: Benchmark) -> str:
    """The dataset a benchmark's lighteval tasks read: ``SCIPROBE_<BENCH>_DATA``, else the bundled sample's build
    folder (a path only: nothing is built or downloaded here), else ``$SCIPROBE_HOME/datasets/<bench>``."""
    import os

    from sciprobe.data.locations import default_data_dir

    return os.environ.get(DATA_ENV.format(benchmark.name.upper())) or str(default_data_dir(benchmark.name))


def benchmark_tasks_table(benchmark: Benchmark, repo: str | None = None) -> list:
    """One benchmark's lighteval tasks: its declaration's own builder, or :func:`tasks_table`."""
    from sciprobe.core.lazy import resolve

    repo = repo or data_location(benchmark)
    if benchmark.lighteval_tasks:
        return resolve(benchmark.lighteval_tasks)(repo)
    return tasks_table(benchmark, repo)


def registry_tasks_table(names: list[str] | None = None) -> list:
    """The lighteval tasks of every registered benchmark (or of ``names``)."""
    from sciprobe.core.registry import benchmark_names, get_benchmark

    return [config for name in (names or benchmark_names()) for config in benchmark_tasks_table(get_benchmark(name))]
