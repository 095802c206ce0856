"""Build lighteval 0.13 task configs from a benchmark declaration (shared/spec/ecosystem.md §4).

Only single-call tasks become lighteval tasks; multi-call runners (IDRBench I2R) run through
``sciprobe evaluate``. The query is the declaration's own prompt: the system message and the user message
joined by a blank line (lighteval sends one user turn; pass ``system_prompt`` in the model config instead if
you prefer, and record it). Few-shot examples are the benchmark's fixed ones, read lazily from the
dataset's ``fewshot`` split, never sampled by lighteval.
"""

from __future__ import annotations

import functools
from typing import Any

from sciprobe.declaration import Benchmark, TaskSpec


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
                   specific={"id": str(line["id"]), "pa_id": line.get("pa_id"), "gold": task.gold(line)})

    prompt.__name__ = f"{task.name}_prompt"
    return prompt


def _metrics(task: TaskSpec) -> list:
    from lighteval.metrics.metrics_sample import SampleLevelComputation
    from lighteval.metrics.utils.metric_utils import CorpusLevelMetric, SampleLevelMetric
    from lighteval.tasks.requests import SamplingMethod

    class ParseAnswer(SampleLevelComputation):
        """Parse one answer into the record the declaration's scorer takes."""

        def compute(self, doc: Any, model_response: Any, **kwargs: Any) -> dict:
            parsed = task.parse(model_response.final_text[0] if model_response.final_text else "")
            return {"id": doc.specific["id"], "pa_id": doc.specific.get("pa_id"), "gold": doc.specific["gold"],
                    "prediction": parsed.value, "official": parsed.extra.get("official")}

    class ParseFailed(SampleLevelComputation):
        def compute(self, doc: Any, model_response: Any, **kwargs: Any) -> float:
            parsed = task.parse(model_response.final_text[0] if model_response.final_text else "")
            return float(parsed.extra.get("official") is None)

    def corpus(mode: str, key: str):
        def aggregate(items: list[dict]) -> float:
            return float(task.score(items, mode).values[key])

        aggregate.__name__ = f"{task.name}_{mode}_{key}"
        return aggregate

    metrics = []
    for mode in task.modes:
        suffix = "" if mode == task.modes[0] else f"_{mode}"
        for key in ("macro_f1", "positive_f1", "tpr", "tnr"):
            metrics.append(CorpusLevelMetric(metric_name=f"{key}{suffix}", higher_is_better=True,
                                             category=SamplingMethod.GENERATIVE, sample_level_fn=ParseAnswer(),
                                             corpus_level_fn=corpus(mode, key)))
    metrics.append(SampleLevelMetric(metric_name="official_parse_failure_rate", higher_is_better=False,
                                     category=SamplingMethod.GENERATIVE, sample_level_fn=ParseFailed(),
                                     corpus_level_fn=lambda xs: float(sum(xs) / len(xs)) if xs else 0.0))
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
            generation_size=task.generation.get("max_tokens"), metrics=_metrics(task), stop_sequence=(),
            version=0))
    return table
