"""Diversity and novelty of the synthetic corpora against the real test period, judged by LACER.

For every repeat, the three curves of Figure 3 (:data:`CURVES`) are computed on its synthetic papers (the
upstream scripts' seed for every corpus, as they are run once per corpus); the real ("natural") curves use the
test corpus's targets in the same months with pools size-matched to repeat 0's synthetic pools (upstream
matches against the one synthetic folder it is given). Every (paper, neighbour) pair is judged once per judge
(the judge prompt and parser of :mod:`sciprobe.benchmarks.prescience.lacer_judge`, which are those of upstream's
``compute_lacer_*.py``: the same system message and score regex), through the cached client.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from sciprobe.benchmarks.prescience.rollout.metrics import (
    MonthInfo,
    Neighbourhood,
    diversity_neighbours,
    month_of,
    monthly_curves,
    novelty_neighbours,
    paper_distances,
)
from sciprobe.benchmarks.prescience.rollout.params import RolloutParams

__all__ = ["CURVES", "judge", "neighbourhoods"]

CURVES = ("diversity", "novelty_evolving", "novelty_fixed")


def neighbourhoods(papers: Sequence[Mapping[str, Any]], vectors: Mapping[str, np.ndarray], role: str,
                   params: RolloutParams, months: Sequence[str], match: Mapping[str, Any] | None = None
                   ) -> dict[str, tuple[list[Neighbourhood], list[MonthInfo]]]:
    match = match or {}
    common = {"months": months, "strict": params.strict_pools}
    n, k = params.n_queries, params.k_neighbours
    return {
        "diversity": diversity_neighbours(papers, vectors, role, n, k, random.Random(params.seed),
                                          match_sizes=match.get("sizes"), **common),
        "novelty_evolving": novelty_neighbours(papers, vectors, role, n, k, random.Random(params.seed), fixed=False,
                                               match_prior=match.get("prior"), match_growth=match.get("sizes"),
                                               **common),
        "novelty_fixed": novelty_neighbours(papers, vectors, role, n, k, random.Random(params.seed), fixed=True,
                                            match_prior=match.get("prior"), **common),
    }


def size_match(papers: Sequence[Mapping[str, Any]], role: str, months: Sequence[str]) -> dict[str, Any]:
    """What the real pools are matched to: papers per month of the role, and the literature before them."""
    sizes: dict[str, int] = {}
    for p in papers:
        if role in (p.get("roles") or []):
            sizes[month_of(str(p["date"]))] = sizes.get(month_of(str(p["date"])), 0) + 1
    first = min(months) if months else ""
    return {"sizes": {m: sizes[m] for m in months if sizes.get(m)},
            "prior": sum(1 for p in papers if str(p["date"]) < first)}


#: pairs per judging batch: each request carries the whole judge prompt (upstream's is ~52 KB), so a month of
#: pairs at once would hold gigabytes of messages
JUDGE_BATCH = 1000


def _content_key(reference: Mapping[str, str], generation: Mapping[str, str]) -> str:
    text = "\x1f".join((reference["title"], reference["abstract"], generation["title"], generation["abstract"]))
    return hashlib.sha256(text.encode()).hexdigest()


def judge(pairs: Sequence[tuple[Mapping[str, str], Mapping[str, str], str]], judges: Sequence[Any], template: Any,
          batch: int = JUDGE_BATCH) -> tuple[dict[str, float | None], dict[str, Any]]:
    """LACER for (reference, generation, key) triples: the score per key (None: not scored by every judge), and
    the run's provenance (judge ids, template, new calls). Pairs with the same texts are judged once (the same
    real neighbour recurs across repeats and curves), in batches of ``batch``."""
    from sciprobe.benchmarks.prescience.lacer_judge import judge_pairs

    if not pairs:
        return {}, {"n_pairs": 0, "n_new_calls": 0}
    distinct: dict[str, tuple[Mapping[str, str], Mapping[str, str]]] = {}
    for ref, gen, _ in pairs:
        distinct.setdefault(_content_key(ref, gen), (ref, gen))
    keys = list(distinct)
    by_content: dict[str, float | None] = {}
    n_calls, prompt = 0, {}
    for start in range(0, len(keys), batch):
        chunk = keys[start:start + batch]
        run = judge_pairs(chunk, [distinct[k][1] for k in chunk], [distinct[k][0] for k in chunk], judges, template,
                          desc=f"rollout lacer {start // batch + 1}/{-(-len(keys) // batch)}")
        report = run.average["official"]
        scored = dict(zip(report.values["ids"], report.values["per_item"]))
        by_content.update({k: scored.get(k) for k in chunk})
        n_calls += run.n_calls
        prompt = run.prompt
    scores = {key: by_content[_content_key(ref, gen)] for ref, gen, key in pairs}
    return scores, {"n_pairs": len(pairs), "n_distinct_pairs": len(keys), "n_new_calls": n_calls,
                    "judge_ids": [j.model_id for j in judges],
                    "n_scored": sum(1 for v in scores.values() if v is not None), **prompt}


def pair_key(query: str, neighbour: str) -> str:
    return f"{query}->{neighbour}"


def scored_records(found: Sequence[Neighbourhood], scores: Mapping[str, float | None]) -> list[dict[str, Any]]:
    return [{"corpus_id": nb.corpus_id, "month": nb.month,
             "neighbours": [{**x, "lacer_score": scores.get(pair_key(nb.corpus_id, x["corpus_id"]))}
                            for x in nb.neighbours]} for nb in found]


def curve_summary(records: Sequence[Mapping[str, Any]], infos: Sequence[MonthInfo], n_bootstrap: int,
                  seed: int) -> dict[str, dict[str, Any]]:
    """One corpus's months: mean and interval of the paper distances, with the month's sampling facts."""
    by_month = monthly_curves(None, [paper_distances(records)], n_bootstrap, seed)["synthetic"]
    out = {}
    for info in infos:
        pairs = [nb for r in records if r["month"] == info.month for nb in r["neighbours"]]
        out[info.month] = {**by_month.get(info.month, {"mean": None, "ci95_low": None, "ci95_high": None,
                                                       "n_papers": 0}),
                           **{k: v for k, v in asdict(info).items() if k != "month"},
                           "n_pairs": len(pairs),
                           "n_pairs_scored": sum(1 for p in pairs if p["lacer_score"] is not None)}
    return out
