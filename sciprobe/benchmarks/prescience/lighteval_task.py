"""lighteval 0.13 tasks of PreScience: all seven tasks (spec ``prescience.md`` §9 "lighteval card").

T2-T7 (and ``prescience:impact_prediction``, the newest upstream's name of T4) build their query exactly as
``sciprobe evaluate`` does (:func:`sciprobe.benchmarks.prescience.forecast_runner.build_prompt`: facts from H^{<t}
of the dataset's own ``papers`` corpus, the default context budget), parse and pad the answer as the runner does,
and report the declaration's scorer over all records per mode (``<key>`` for the first mode, ``<key>_<mode>``
for the others) plus ``parse_failure_rate``.

T1 contribution generation is kept apart from :mod:`sciprobe.interop.lighteval_tasks` because contribution rows are
keyed
by ``corpus_id`` (no ``id`` column). The query is the declaration's prompt (system + user message joined by a blank
line, as the adapter does); metrics are ROUGE-L and BERTScore (bundled MiniLM, offline) computed by the
declaration's scorer per item (means over items), plus the generation parse-failure rate. LACER is added when a
judge is named in ``$SCIPROBE_LACER_JUDGE`` (``SPEC`` or ``SPEC1;SPEC2``; judge prompt from
``$SCIPROBE_LACER_TEMPLATE``, else upstream's pinned template and system message, from
``$SCIPROBE_PRESCIENCE_UPSTREAM`` or the cache): a batched metric that judges every answer through sciprobe's
client and response cache, as ``sciprobe evaluate prescience:contribution_generation --judge SPEC`` does. The
computations are module-level classes naming their task, so lighteval can pickle them. Importing this module
imports lighteval.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from lighteval.metrics.metrics_corpus import CorpusLevelComputation
from lighteval.metrics.metrics_sample import SampleLevelComputation
from lighteval.metrics.utils.metric_utils import CorpusLevelMetric, SampleLevelMetric
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc, SamplingMethod

from sciprobe.interop.lighteval_tasks import final_text, render_query

TASK = "contribution_generation"


def _task() -> Any:
    from sciprobe.core.registry import get_benchmark

    return get_benchmark("prescience").task(TASK)




def contribution_prompt(line: dict, task_name: str = "") -> Doc:
    task = _task()
    query = render_query(task.build_messages(line, ()))
    return Doc(task_name=task_name, query=query, choices=[""], gold_index=0, id=str(line["corpus_id"]),
               specific={"id": str(line["corpus_id"]), "gold": task.gold(line)})


class ContributionItem(SampleLevelComputation):
    """One answer -> one number: ROUGE-L F or BERTScore F1 against the gold (0 for an unparsable answer, as the
    declaration's scorer does), or 1.0/0.0 for a parse failure. Sample-level, so lighteval's stderr bootstrap
    averages floats instead of re-running BERTScore 1,000 times."""

    def __init__(self, key: str) -> None:
        self.key = key

    def compute(self, doc: Doc, model_response: Any, **kwargs: Any) -> float:
        from sciprobe.benchmarks.prescience.contribution import score_records

        parsed = _task().parse(final_text(model_response))
        if self.key == "parse_failure_rate":
            return float(parsed.value is None)
        record = {"id": doc.specific["id"], "gold": doc.specific["gold"], "prediction": parsed.value}
        return float(score_records([record], "official", bertscore=self.key == "bertscore_f1").values[self.key])


class Mean(CorpusLevelComputation):
    def compute_corpus(self, items: list[float]) -> float:
        return float(sum(items) / len(items)) if items else 0.0


LACER_JUDGE_ENV = "SCIPROBE_LACER_JUDGE"


class LacerJudge(SampleLevelComputation):
    """Batched: all answers judged at once by every judge (official parsing). An item's value is the mean over
    judges when every judge scored it, else NaN: the corpus mean over the non-NaN items is then the official
    multi-judge LACER (averaged over the intersection of scored ids, failures excluded as upstream)."""

    def __init__(self, judges: str, template: str | None) -> None:
        self.judges, self.template = judges, template

    def compute(self, responses: list[Any], docs: list[Doc], **kwargs: Any) -> list[float]:
        from sciprobe.benchmarks.prescience.contribution import _judge_specs
        from sciprobe.llm.cache import ResponseCache, default_cache_path
        from sciprobe.llm.client import LLMClient
        from sciprobe.benchmarks.prescience.lacer_judge import judge_pairs, load_template

        template = load_template(self.template, option=None)  # lighteval has no --upstream-dir: environment only
        clients = [LLMClient(spec, cache=ResponseCache(default_cache_path())) for spec in _judge_specs(self.judges)]
        generations = [_task().parse(final_text(r)).value for r in responses]
        run = judge_pairs([d.specific["id"] for d in docs], generations, [d.specific["gold"] for d in docs],
                          clients, template, desc=None)
        per_judge = [run.per_judge[c.model_id]["official"].values["per_item"] for c in clients]
        return [float(sum(scores) / len(scores)) if all(s is not None for s in scores) else math.nan
                for scores in zip(*per_judge)]


class MeanOfScored(CorpusLevelComputation):
    def compute_corpus(self, items: list[float]) -> float:
        scored = [x for x in items if not math.isnan(x)]
        return float(sum(scored) / len(scored)) if scored else math.nan


def metrics() -> list[SampleLevelMetric]:
    keys = [*_task().corpus_metrics, ("parse_failure_rate", False)]
    out = [SampleLevelMetric(metric_name=key, higher_is_better=higher, category=SamplingMethod.GENERATIVE,
                             sample_level_fn=ContributionItem(key), corpus_level_fn=Mean())
           for key, higher in keys]
    judges = os.environ.get(LACER_JUDGE_ENV, "").strip()
    if judges:
        out.append(SampleLevelMetric(
            metric_name="lacer", higher_is_better=True, category=SamplingMethod.GENERATIVE,
            sample_level_fn=LacerJudge(judges, os.environ.get("SCIPROBE_LACER_TEMPLATE") or None),
            corpus_level_fn=MeanOfScored(), batched_compute=True))
    return out


# ---------------------------------------------------------------- T2-T7
#: (score key, higher is better) per forecasting task, reported in every mode of the task
FORECAST_KEYS = {
    "collaborator_prediction": (("ndcg@1000", True), ("r_precision", True)),
    "prior_work_selection": (("ndcg@1000", True), ("r_precision", True)),
    "future_combination": (("ndcg@1000", True), ("r_precision", True)),
    "citation_prediction": (("mae", False), ("pearson", True), ("spearman", True), ("r2", True)),
    "topic_trends": (("delta_share_r2", True), ("delta_share_pearson", True), ("delta_share_spearman", True),
                     ("delta_share_mae", False)),
    "topic_pair_trends": (("delta_share_r2", True), ("delta_share_pearson", True), ("delta_share_spearman", True),
                          ("delta_share_mae", False)),
}


def _forecast_task(name: str) -> Any:
    from sciprobe.core.registry import get_benchmark

    return get_benchmark("prescience").task(name)


def forecast_prompt_function(task_name: str, repo: str):
    """The prompt function of one forecasting task over the dataset at ``repo`` (its corpus indexed once)."""
    from sciprobe.benchmarks.prescience.forecast_context import load_corpus
    from sciprobe.benchmarks.prescience.forecast_runner import build_prompt, item_id

    def prompt(line: dict, task_name_: str = "") -> Doc:
        task = _forecast_task(task_name)
        built = build_prompt(task.name, load_corpus(repo), line)
        key = item_id(line)
        return Doc(task_name=task_name_, query=render_query(built.messages), choices=[""], gold_index=0, id=key,
                   specific={"id": key, "gold": task.gold(line), "candidates": built.candidates,
                             # JSON text: lighteval's --save-details writes `specific` to Parquet, which has no
                             # empty struct for a prompt the budget cut nothing of ({})
                             "padding": built.padding, "context_cut": json.dumps(built.cut, sort_keys=True),
                             **built.extra})

    prompt.__name__ = f"{task_name}_prompt"
    return prompt


class ForecastRecord(SampleLevelComputation):
    """One answer -> the record the declaration's scorer takes (parsed, filtered to the listed candidates and
    padded as ``sciprobe evaluate`` does)."""

    def __init__(self, task: str) -> None:
        self.task = task

    def compute(self, doc: Doc, model_response: Any, **kwargs: Any) -> dict:
        from sciprobe.benchmarks.prescience.forecast_runner import Prompt, answer_record

        spec = doc.specific
        prompt = Prompt([], list(spec.get("candidates") or []), list(spec.get("padding") or []))
        extra = {k: spec[k] for k in ("history", "history_papers", "forecast_papers") if k in spec}
        return {"id": spec["id"], "gold": spec["gold"], **extra,
                **answer_record(self.task, prompt, final_text(model_response))}


class ForecastScore(CorpusLevelComputation):
    """One number of the declaration's scorer over all records (NaN when it is undefined, e.g. a correlation over
    constant values); ``parse_failure_rate`` = the share of answers without a usable prediction."""

    def __init__(self, task: str, mode: str, key: str) -> None:
        self.task, self.mode, self.key = task, mode, key

    def compute_corpus(self, items: list[dict]) -> float:
        if self.key == "parse_failure_rate":
            return float(sum(1 for r in items if r.get("prediction") is None) / len(items)) if items else math.nan
        value = _forecast_task(self.task).score(items, self.mode).values.get(self.key)
        return math.nan if value is None else float(value)


def forecast_metrics(task_name: str) -> list[CorpusLevelMetric]:
    task = _forecast_task(task_name)
    out = []
    for mode in task.modes:
        suffix = "" if mode == task.modes[0] else f"_{mode}"
        for key, higher in FORECAST_KEYS[task.name]:
            out.append(CorpusLevelMetric(metric_name=f"{key}{suffix}", higher_is_better=higher,
                                         category=SamplingMethod.GENERATIVE, sample_level_fn=ForecastRecord(task.name),
                                         corpus_level_fn=ForecastScore(task.name, mode, key)))
    out.append(CorpusLevelMetric(metric_name="parse_failure_rate", higher_is_better=False,
                                 category=SamplingMethod.GENERATIVE, sample_level_fn=ForecastRecord(task.name),
                                 corpus_level_fn=ForecastScore(task.name, task.modes[0], "parse_failure_rate")))
    return out


def forecast_tasks_table(repo: str, names: tuple[str, ...] = (*FORECAST_KEYS, "impact_prediction"),
                         generation_size: int | None = None) -> list[LightevalTaskConfig]:
    table = []
    for name in names:
        task = _forecast_task(name)
        size = generation_size if generation_size is not None else task.generation.get("max_tokens")
        table.append(LightevalTaskConfig(
            name=f"prescience:{name}", prompt_function=forecast_prompt_function(name, repo), hf_repo=repo,
            hf_subset=task.config, hf_avail_splits=["test"], evaluation_splits=["test"], few_shots_split=None,
            generation_size=size, metrics=forecast_metrics(name), stop_sequence=(), version=0))
    return table


def tasks_table(repo: str, generation_size: int | None = None) -> list[LightevalTaskConfig]:
    """Every PreScience task over a built dataset folder or hub id (``test`` split): T1 and T2-T7 (+ the
    ``impact_prediction`` alias of T4)."""
    size = generation_size if generation_size is not None else _task().generation.get("max_tokens")
    return [LightevalTaskConfig(name=f"prescience:{TASK}", prompt_function=contribution_prompt, hf_repo=repo,
                                hf_subset=TASK, hf_avail_splits=["test"], evaluation_splits=["test"],
                                few_shots_split=None, generation_size=size, metrics=metrics(), stop_sequence=(),
                                version=0),
            *forecast_tasks_table(repo, generation_size=generation_size)]
