"""IDRBench idea generation (``idrbench:idea_generation``; paper §5.3, Table 19; config ``data_exp_4_1.json``).

What follows upstream and what follows the paper:

- **Prompt and answer (upstream ``generate_task`` at aa621e4).** The papers of the two sides come first, each
  ``Title: ...; Abstract: ...``, one line per paper, then the instruction; the model writes the abstract of a
  working paper that integrates the two and a confidence score. The answer is read as upstream reads it: the text
  between ``Your abstract:`` and ``Confidence score: N`` (case-insensitive, across lines); an answer without that
  shape has no abstract (``official``). The tolerant parse also takes a Markdown-bold label or an answer with no
  confidence line. The wording is sciprobe's own (written for this package, not copied).
- **Scoring (the paper: upstream's ``evaluation.py`` has no generation metric).** The paper has experts rate each
  generated idea from 1 to 5 for Correctness and Clarity. Here a judge panel (``--judge``) rates each abstract on
  the same two criteria; ``correctness`` (headline) and ``clarity`` are the means over the items the judges rated,
  averaged over the panel. A judge reply without both ratings is a failed verdict: counted, never scored as 1.
  Judge ratings stand in for the paper's human ratings and are not comparable with them or across judges.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sciprobe.core.declaration import Parsed, Runner
from sciprobe.core.errors import SciprobeError

Messages = list[dict[str, str]]
CRITERIA = ("correctness", "clarity")
JUDGE_PARAMS: dict[str, Any] = {"temperature": 0.0}

_INSTRUCTION = (
    "The two groups of papers above come from two different disciplines. Propose one interdisciplinary research "
    "idea that integrates them: write the abstract of a working paper that combines a contribution of Discipline 1 "
    "with one of Discipline 2, then say how confident you are that the integration is valid, feasible and useful.\n"
    "Answer in exactly this format:\n"
    "Your abstract: <the abstract, one paragraph>\n"
    "Confidence score: <an integer from 0 to 100>"
)
_OFFICIAL = re.compile(r"Your abstract:\s*(?P<abstract>.+?)\s*Confidence score:\s*(?P<score>\d+)",
                       re.IGNORECASE | re.DOTALL)
_LABEL = re.compile(r"\**\s*Your abstract\s*:?\s*\**\s*:?", re.IGNORECASE)
_CONFIDENCE = re.compile(r"\**\s*Confidence score\s*:?\s*\**\s*:?\s*(\d+)", re.IGNORECASE)


def _side(papers: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(f"Title: {p['title']}; Abstract: {p['abstract']}" for p in papers)


def idea_messages(row: Mapping[str, Any], examples: Sequence[Mapping[str, Any]] = ()) -> Messages:
    """The generation prompt: both sides, then the instruction (the order of upstream's ``prompt_exp_4``)."""
    text = (f"Discipline 1:\n{_side(row['side_b'])}\n\nDiscipline 2:\n{_side(row['side_c'])}\n\n{_INSTRUCTION}")
    return [{"role": "user", "content": text}]


def parse_idea(text: str | None) -> Parsed:
    """``value``: the abstract (None: none found); ``official``: upstream's reading; ``extra.confidence``."""
    text = text or ""
    match = _OFFICIAL.search(text)
    if match:
        abstract = match["abstract"].strip()
        return Parsed(abstract, "official", {"confidence": int(match["score"]), "official": abstract})
    label = _LABEL.search(text)
    if label:
        rest = text[label.end():]
        confidence = _CONFIDENCE.search(rest)
        abstract = (rest[:confidence.start()] if confidence else rest).strip().strip("*").strip()
        if abstract:
            extra = {"confidence": int(confidence[1])} if confidence else {}
            return Parsed(abstract, "tolerant:label", {**extra, "official": None})
    return Parsed(None, "failed", {"official": None})


# ---------------------------------------------------------------- the judge (paper §5.3 criteria)

_RATING = re.compile(r"(correctness|clarity)\W{0,5}([1-5])\b", re.IGNORECASE)


def rating_messages(row: Mapping[str, Any], abstract: str) -> Messages:
    """Ask a judge for the paper's two ratings of one generated idea, given the papers it integrates."""
    text = (
        "You rate a research idea that integrates papers from two disciplines.\n\n"
        f"Discipline 1 papers:\n{_side(row['side_b'])}\n\nDiscipline 2 papers:\n{_side(row['side_c'])}\n\n"
        f"Proposed abstract:\n{abstract}\n\n"
        "Rate it from 1 (poor) to 5 (excellent) on two criteria:\n"
        "- Correctness: the abstract is a sound, feasible integration of the two disciplines' papers.\n"
        "- Clarity: the abstract states the problem, the integration and the expected result clearly.\n"
        "Answer with exactly two lines:\nCorrectness: <1-5>\nClarity: <1-5>"
    )
    return [{"role": "user", "content": text}]


def parse_rating(reply: str | None) -> dict[str, int] | None:
    """``{"correctness": n, "clarity": m}`` from a judge reply (the last rating of each wins); None when one is
    missing."""
    found: dict[str, int] = {}
    for name, value in _RATING.findall(reply or ""):
        found[name.lower()] = int(value)
    return found if set(found) == set(CRITERIA) else None


def _replies(record: Mapping[str, Any]) -> dict[str, str | None]:
    value = record.get("rating_replies") or {}
    if isinstance(value, str):
        value = json.loads(value)
    return dict(value)


def score_generation(records: Sequence[Mapping[str, Any]], mode: str = "paper") -> Any:
    """Mean judge ratings (1-5) over the rated items, averaged over the judges of the panel; the share of answers
    with an abstract (``parse_rate``) and their mean stated confidence."""
    from sciprobe.scoring.score_report import Coverage, ScoreReport

    if mode != "paper":
        raise SciprobeError(f"unknown mode {mode!r} for idea generation (paper)")
    n = len(records)
    answered = [r for r in records if r.get("prediction")]
    confidences = [json.loads(r.get("parsed_extra") or "{}").get("confidence") for r in answered]
    confidences = [c for c in confidences if c is not None]
    judges = sorted({j for r in records for j in _replies(r)})
    per_item: list[float | None] = []
    by_judge: dict[str, dict[str, float | None]] = {}
    n_rated = 0
    for judge in judges:
        ratings = [parse_rating(_replies(r).get(judge)) for r in records]
        rated = [x for x in ratings if x]
        n_rated += len(rated)
        by_judge[judge] = {c: (sum(x[c] for x in rated) / len(rated) if rated else None) for c in CRITERIA}
    for k, record in enumerate(records):
        scores = [parse_rating(_replies(record).get(j)) for j in judges]
        scores = [s["correctness"] for s in scores if s]
        per_item.append(sum(scores) / len(scores) if scores else None)
    values: dict[str, Any] = {
        c: (sum(v[c] for v in by_judge.values() if v[c] is not None) / len(by_judge)
            if by_judge and all(v[c] is not None for v in by_judge.values()) else None) for c in CRITERIA}
    values.update({"parse_rate": len(answered) / n if n else None,
                   "mean_confidence": sum(confidences) / len(confidences) if confidences else None,
                   "correctness_by_judge": {j: v["correctness"] for j, v in by_judge.items()},
                   "clarity_by_judge": {j: v["clarity"] for j, v in by_judge.items()},
                   "per_item_correctness": per_item})
    scored = sum(1 for v in per_item if v is not None)
    notes = ["ratings by an LLM judge on the paper's human-evaluation criteria (§5.3): not comparable with the "
             "paper's expert ratings nor across judges"] if judges else [
             "no judge ratings: correctness and clarity need --judge"]
    return ScoreReport("idea_rating", mode, values, Coverage(n, scored, n - scored),
                       params={"judges": judges, "scale": "1-5", "n_verdicts": n_rated}, notes=notes)


def generation_items(records: Sequence[Mapping[str, Any]], mode: str, report: Any, headline: str = "") -> Any:
    """The headline (correctness) as the mean of the per-item panel means; an unrated item is a failure."""
    from sciprobe.scoring.item_scores import mean_items

    values = list(report.values.get("per_item_correctness") or [None] * len(records))
    return mean_items(values, [v is None for v in values])


# ---------------------------------------------------------------- the runner

def run_generation(ctx: Any) -> list[Any]:
    """One generation per row (the generic single call), then each judge of the panel rates every abstract."""
    from sciprobe.benchmarks.sgibench.judged_runners import _panel, ask, mark_judge_failures
    from sciprobe.run.runners.single_call import run_single_call

    rows = ctx.data.rows
    records, phash, n_calls = run_single_call(ctx.task, rows, ctx.data.fewshot, ctx.client, ctx.params)
    panel = _panel(ctx)
    if not panel:
        raise SciprobeError(f"{ctx.task.name}: the ratings need a judge; pass --judge SPEC")
    params = dict(ctx.options.get("judge_params") or JUDGE_PARAMS)
    ids = [str(r["id"]) for r in rows]
    messages = [rating_messages(row, rec["prediction"]) if rec.get("prediction") else None
                for row, rec in zip(rows, records)]
    replies: list[dict[str, str | None]] = [{} for _ in rows]
    for judge_id, client in panel:
        texts, errors = ask(client, messages, ids, params, f"idea rating {judge_id}")
        for reply, text in zip(replies, texts):
            reply[judge_id] = text
        mark_judge_failures(records, errors, f"judge {judge_id}")
    for record, reply in zip(records, replies):
        record["rating_replies"] = json.dumps(reply, ensure_ascii=False)
    n_judge_calls = sum(m is not None for m in messages) * len(panel)
    return [ctx.result(records, phash, n_calls, judge_params=params, n_judge_calls=n_judge_calls,
                       idea_judges=[j for j, _ in panel])]


class IdeaGenerationRunner(Runner):
    """``idrbench:idea_generation``: one abstract per pair, then the judge panel's ratings (``--judge``)."""

    name = "idr_idea_generation"
    kind = "judged"
    judge = "required"
    replay_refusal = None

    def run(self, ctx: Any) -> list[Any]:
        return run_generation(ctx)


IDEA_GENERATION = IdeaGenerationRunner()
