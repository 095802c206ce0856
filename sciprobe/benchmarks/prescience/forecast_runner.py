"""The runner of the PreScience forecasting tasks T2-T7 with a model (spec ``prescience.md`` §2): one call per
instance, its prompt built from H^{<t} (:mod:`.forecast_context` facts, :mod:`.forecast_prompts` wording and
context budget), the answer parsed (official, then tolerant) and scored with the task's existing metric.

- Rankings (T2 collaborators, T3 prior work, T5 future combination): the parsed ids are de-duplicated, ids that
  were not listed as candidates are dropped and counted (``n_unknown``), and the list is padded to k = 1000 with
  a seeded random draw from the task's whole candidate pool (``n_padded``; upstream's harness pads with random
  pre-cutoff candidates). ``model_ranking`` keeps what the model ranked.
- Counts (T4 12-month citations, T6/T7 forecast-period paper counts): the parsed number.

Every record keeps the parse path, both parses, the raw answer, and ``context_cut`` (what the budget left out).
A predictions file scores with no model call: ``{"id", "prediction": [ids, best first]}`` (T2/T3/T5, scored as
given, like upstream's ``evaluate.py``) or ``{"id", "prediction": number}`` (T4, T6, T7).

Per-task options (``EvaluationRequest.per_task[ref]``): ``context_chars`` (default
:data:`~.forecast_prompts.DEFAULT_CONTEXT_CHARS`) and ``max_candidates`` (default
:data:`~.forecast_prompts.DEFAULT_MAX_CANDIDATES`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sciprobe.benchmarks.prescience.forecast_prompts as fp
from sciprobe.core.declaration import ItemRecord, Parsed, Runner, TaskSpec
from sciprobe.core.errors import SciprobeError
from sciprobe.data.predictions import check_fields

if TYPE_CHECKING:
    from sciprobe.results.write import TaskResult
    from sciprobe.run.task_runner import RunContext

RANKING_TASKS = ("collaborator_prediction", "prior_work_selection", "future_combination")
COUNT_LABELS = {"citation_prediction": "Citations", "topic_trends": "Papers", "topic_pair_trends": "Papers"}


@dataclass
class Prompt:
    """One instance's messages and what the answer is checked against."""

    messages: list[dict[str, str]]
    candidates: list[str] = field(default_factory=list)   # ranking tasks: the ids listed in the prompt
    padding: list[str] = field(default_factory=list)      # ranking tasks: seeded pool draw to pad to k
    cut: dict[str, Any] = field(default_factory=dict)     # what the context budget left out
    extra: dict[str, Any] = field(default_factory=dict)   # row fields the scorer needs (topics)


def item_id(row: Mapping[str, Any]) -> str:
    return str(row["topic"] if "topic" in row else row["corpus_id"])


def build_prompt(task: str, corpus: Any, row: Mapping[str, Any], *, context_chars: int = fp.DEFAULT_CONTEXT_CHARS,
                 max_candidates: int = fp.DEFAULT_MAX_CANDIDATES) -> Prompt:
    """The prompt of one instance of ``task`` from the corpus (a :class:`~.forecast_context.Corpus`)."""
    import sciprobe.benchmarks.prescience.forecast_context as fc
    from sciprobe.benchmarks.prescience.schema import RANKING_K

    if context_chars < 500:
        raise SciprobeError(f"context_chars={context_chars} is too small for a PreScience prompt (>= 500)")
    if max_candidates < 1:
        raise SciprobeError(f"max_candidates must be >= 1, got {max_candidates}")
    budget = fp.Budget(context_chars)
    row = dict(row)
    key = item_id(row)
    if task == "collaborator_prediction":
        facts = fc.collaborator_facts(corpus.test, row)
        messages, shown = fp.collaborator_messages(facts, budget, max_candidates)
        return Prompt(messages, shown, fc.padding_draw(facts.pool, key, RANKING_K), budget.cut)
    if task == "prior_work_selection":
        facts = fc.prior_work_facts(corpus.test, row)
        messages, shown = fp.prior_work_messages(facts, budget, max_candidates)
        return Prompt(messages, shown, fc.padding_draw(facts.pool, key, RANKING_K), budget.cut)
    if task == "future_combination":
        facts = fc.combination_facts(corpus.test, row)
        messages, shown = fp.combination_messages(facts, budget, max_candidates)
        return Prompt(messages, shown, fc.padding_draw(facts.pool, key, RANKING_K), budget.cut)
    if task == "citation_prediction":
        return Prompt(fp.citation_messages(fc.citation_facts(corpus.test, row), budget), cut=budget.cut)
    if task in ("topic_trends", "topic_pair_trends"):
        return Prompt(fp.trend_messages(fc.trend_facts(corpus, row), budget), cut=budget.cut, extra=trend_fields(row))
    raise SciprobeError(f"prescience:{task} is not a forecasting task ({', '.join([*RANKING_TASKS, *COUNT_LABELS])})")


def trend_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """What the topic-trend scorer needs besides the gold count (paper mode: the windows' paper counts)."""
    return {"history": row.get("history_count"), "history_papers": row.get("history_papers"),
            "forecast_papers": row.get("forecast_papers")}


def parse_answer(task: str, text: str | None, candidates: Sequence[str] = ()) -> Parsed:
    if task in RANKING_TASKS:
        return fp.parse_ranking(text, candidates)
    return fp.parse_count(text, COUNT_LABELS[task])


def finalize_ranking(ids: Sequence[str] | None, prompt: Prompt, k: int | None = None) -> tuple[list[str] | None, dict]:
    """(ranking padded to k, what happened): listed candidates only, de-duplicated, then the seeded padding."""
    from sciprobe.benchmarks.prescience.schema import RANKING_K

    k = k or RANKING_K
    if ids is None:
        return None, {"model_ranking": None, "n_unknown": 0, "n_padded": 0}
    allowed = set(prompt.candidates)
    ranked = list(dict.fromkeys(str(i) for i in ids if str(i) in allowed))
    n_unknown = len([i for i in ids if str(i) not in allowed])
    if not ranked:
        return None, {"model_ranking": [], "n_unknown": n_unknown, "n_padded": 0}
    present = set(ranked)
    padded = ranked + [c for c in prompt.padding if c not in present][:max(0, k - len(ranked))]
    return padded[:k], {"model_ranking": ranked, "n_unknown": n_unknown, "n_padded": len(padded) - len(ranked)}


def answer_record(task: str, prompt: Prompt, text: str | None, error: str | None = None) -> dict[str, Any]:
    """The parsed part of a record from the model's answer (None + ``error`` when the call failed)."""
    if error is None:
        parsed = parse_answer(task, text, prompt.candidates)
    else:
        parsed = Parsed(None, "error", {"official": None})
    out: dict[str, Any] = {"official": parsed.official, "parse_path": parsed.path}
    if task in RANKING_TASKS:
        prediction, info = finalize_ranking(parsed.value, prompt)
        if parsed.value is not None and prediction is None:
            out["parse_path"] = "failed:no_candidate"
        out.update({"prediction": prediction, **info, "n_candidates_shown": len(prompt.candidates)})
    else:
        out["prediction"] = parsed.value
    out["parsed_extra"] = json.dumps({k: v for k, v in parsed.extra.items() if k != "official"}, sort_keys=True)
    return out


class ForecastRunner(Runner):
    """T2-T7: one call per instance with context from H^{<t}; rankings padded to k, counts as parsed."""

    name = "prescience_forecast"
    kind = "single call"
    judge = "no"
    reads_predictions = True

    def run(self, ctx: RunContext) -> list[TaskResult]:
        from sciprobe.benchmarks.prescience.forecast_context import load_corpus
        from sciprobe.llm.types import Request
        from sciprobe.run.runners.single_call import prompt_hash

        task = ctx.task
        options = ctx.options
        context_chars = int(options.get("context_chars", fp.DEFAULT_CONTEXT_CHARS))
        max_candidates = int(options.get("max_candidates", fp.DEFAULT_MAX_CANDIDATES))
        corpus = load_corpus(ctx.data.location, None if _is_local(ctx.data.location) else ctx.data.revision)
        rows = ctx.data.rows
        prompts = [build_prompt(task.name, corpus, row, context_chars=context_chars, max_candidates=max_candidates)
                   for row in rows]
        requests = [Request.of(p.messages, dict(ctx.params), item_id=item_id(row)) for p, row in zip(prompts, rows)]
        completions = ctx.client.complete_many(requests, desc=task.name)
        records = []
        for row, prompt, completion in zip(rows, prompts, completions):
            records.append({
                "id": item_id(row), "gold": task.gold(row) if task.gold else None, **prompt.extra,
                **answer_record(task.name, prompt, completion.text, None if completion.ok else completion.error),
                "response": completion.text, "error": completion.error, "context_cut": prompt.cut,
                "cached": completion.cached, "prompt_tokens": completion.prompt_tokens,
                "completion_tokens": completion.completion_tokens, "request_hash": completion.request_hash,
            })
        return [ctx.result(records, prompt_hash(requests), len(requests), prompt_version=fp.PROMPT_VERSION,
                           context_budget={"context_chars": context_chars, "max_candidates": max_candidates,
                                           "n_items_cut": sum(1 for p in prompts if p.cut)})]

    def prediction_fields(self, task: TaskSpec) -> tuple[str, ...]:
        return ("prediction",)

    def records_from_predictions(self, task: TaskSpec, rows: Sequence[Mapping[str, Any]],
                                 predictions: Mapping[str, Mapping[str, Any]]) -> list[ItemRecord]:
        """``{"id", "prediction"}`` lines scored as given (a ranked id list, or a number); no line = missing."""
        records: list[ItemRecord] = []
        for row in rows:
            key = item_id(row)
            base: dict[str, Any] = {"id": key, "gold": task.gold(row) if task.gold else None}
            if task.name in COUNT_LABELS and task.name != "citation_prediction":
                base.update(trend_fields(row))
            item = predictions.get(key)
            if item is None:
                records.append({**base, "prediction": None, "official": None, "parse_path": "missing",  # type: ignore
                                "response": None, "error": "no prediction submitted"})
                continue
            check_fields(item, ("prediction",), f"prediction for id {key!r}")
            value = _checked(task.name, item["prediction"], key)
            records.append({**base, "prediction": value, "official": value,  # type: ignore[typeddict-item]
                            "parse_path": "submitted" if value is not None else "failed", "response": None,
                            "error": None})
        return records

    def plan_notes(self, task: TaskSpec) -> list[str]:
        return [f"prompts are built from H^<t of the corpus (context budget {fp.DEFAULT_CONTEXT_CHARS} characters "
                "unless the per-task option context_chars says otherwise)"]


def _is_local(source: str) -> bool:
    from pathlib import Path

    return Path(source).exists()


def _checked(task: str, value: Any, key: str) -> Any:
    where = f"prediction for id {key!r}"
    if value is None:
        return None
    if task in RANKING_TASKS:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise SciprobeError(f"{where}: a ranking must be a list of ids, best first (got {type(value).__name__})")
        return list(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SciprobeError(f"{where}: must be a number or null, got {value!r}")
    return value


FORECAST = ForecastRunner()
