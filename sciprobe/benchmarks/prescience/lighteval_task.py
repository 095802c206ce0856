"""lighteval 0.13 task for PreScience T1 contribution generation (spec ``prescience.md`` §9 "lighteval card").

Kept apart from :mod:`sciprobe.lighteval_adapter` because contribution rows are keyed by ``corpus_id`` (no
``id`` column). The query is the declaration's prompt (system + user message joined by a blank line, as the
adapter does); metrics are ROUGE-L and BERTScore (bundled MiniLM, offline) computed by the declaration's scorer
per item (means over items), plus the generation parse-failure rate. LACER is added when a judge is named in
``$SCIPROBE_LACER_JUDGE`` (``SPEC`` or ``SPEC1;SPEC2``; template from ``$SCIPROBE_LACER_TEMPLATE`` or the pinned
official one): a batched metric that judges every answer through sciprobe's client and response cache, as
``sciprobe evaluate prescience:contribution_generation --judge SPEC`` does. The computations are module-level
classes naming their task, so lighteval can pickle them. Importing this module imports lighteval.
"""

from __future__ import annotations

import math
import os
from typing import Any

from lighteval.metrics.metrics_corpus import CorpusLevelComputation
from lighteval.metrics.metrics_sample import SampleLevelComputation
from lighteval.metrics.utils.metric_utils import SampleLevelMetric
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc, SamplingMethod

from sciprobe.lighteval_adapter import final_text, render_query

TASK = "contribution_generation"


def _task() -> Any:
    from sciprobe.benchmarks import get_benchmark

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
        from sciprobe.benchmarks.prescience.lacer import judge_pairs, load_template

        template = load_template(self.template)
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


def tasks_table(repo: str, generation_size: int | None = None) -> list[LightevalTaskConfig]:
    """``prescience:contribution_generation`` over a built dataset folder or hub id (``test`` split)."""
    size = generation_size if generation_size is not None else _task().generation.get("max_tokens")
    return [LightevalTaskConfig(name=f"prescience:{TASK}", prompt_function=contribution_prompt, hf_repo=repo,
                                hf_subset=TASK, hf_avail_splits=["test"], evaluation_splits=["test"],
                                few_shots_split=None, generation_size=size, metrics=metrics(), stop_sequence=(),
                                version=0)]
