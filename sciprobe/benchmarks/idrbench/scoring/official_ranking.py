"""Official IDRBench I2R ranking scores, quirks included (``irllm-framework@aa621e4``); the generic ranking
metrics and their tie policies are :mod:`sciprobe.scoring.ranking`."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.score_report import Coverage, ScoreReport


def _upstream_dcg(relevance: Sequence[int], k: int) -> float:
    gains = np.asarray(relevance)[:k]
    return float(np.sum(gains / np.log2(np.arange(2, gains.size + 2))))


def idrbench_official_ranking(standings: Sequence[Sequence[str] | None], gold: Sequence[Collection[str] | str], *,
                              scores: Sequence[Sequence[float] | None] | None = None) -> ScoreReport:
    """Official IDRBench I2R scores (``irllm-framework@aa621e4`` ``Evaluator.evaluate_all_recommendations``).

    Per query, the final standings (paper titles, best first; re-sorted stably by ``(-score, title)`` when
    ``scores`` are given, upstream's final sort) are compared with the gold titles by exact string equality:

    - RR = 1 / (first 1-based position whose title is a gold title), 0 if none (``np.isin`` on titles);
    - nDCG@10 = DCG of the binary relevances of the top 10 / DCG of the same relevances sorted descending,
      i.e. the ideal DCG counts only the gold papers that land in the top 10 (not ``min(10, |gold|)``); 0 when
      none does. A title that occurs twice in the standings counts at every position it occupies.

    MRR and nDCG@10 are ``np.mean`` over queries. A ``None`` standing (a failed tournament) scores as an empty
    list and counts in ``n_failed``. Values: ``mrr``, ``ndcg@10``, ``per_query_rr``, ``per_query_ndcg@10``,
    ``n_queries``.
    """
    preds = list(standings)
    refs = list(gold)
    if len(preds) != len(refs):
        raise SciprobeError(f"standings and gold differ in length: {len(preds)} vs {len(refs)}")
    if not preds:
        raise SciprobeError("idrbench_official_ranking needs at least one query")
    score_lists = list(scores) if scores is not None else [None] * len(preds)
    if len(score_lists) != len(preds):
        raise SciprobeError(f"scores and standings differ in length: {len(score_lists)} vs {len(preds)}")
    rr: list[float] = []
    ndcg: list[float] = []
    n_failed = 0
    for i, (ranked, relevant, sc) in enumerate(zip(preds, refs, score_lists)):
        if ranked is None:
            n_failed += 1
            ranked, sc = [], None
        if isinstance(ranked, (str, bytes)):
            raise SciprobeError(f"query {i}: the standings must be a list of titles, got a string")
        titles = list(ranked)
        if sc is not None:
            sc = list(sc)
            if len(sc) != len(titles):
                raise SciprobeError(f"query {i}: {len(sc)} score(s) for {len(titles)} title(s)")
            titles = [t for _, t in sorted(zip(sc, titles), key=lambda pair: (-pair[0], pair[1]))]
        relevant_titles = [relevant] if isinstance(relevant, str) else list(relevant)
        hits = np.flatnonzero(np.isin(np.array(titles), np.array(relevant_titles)))
        rr.append(1.0 / (hits[0] + 1) if hits.size else 0.0)
        relevant_set = set(relevant_titles)
        gains = [1 if t in relevant_set else 0 for t in titles[:10]]
        ideal = _upstream_dcg(sorted(gains, reverse=True), 10)
        ndcg.append(_upstream_dcg(gains, 10) / ideal if ideal > 0 else 0.0)
    values: dict[str, Any] = {"mrr": float(np.mean(rr)), "ndcg@10": float(np.mean(ndcg)),
                              "per_query_rr": [float(x) for x in rr], "per_query_ndcg@10": [float(x) for x in ndcg],
                              "n_queries": len(preds)}
    notes = [f"{n_failed} tournament(s) missing (None); scored as empty standings"] if n_failed else []
    return ScoreReport(metric="ranking", mode="official", values=values,
                       coverage=Coverage(n_items=len(preds), n_scored=len(preds), n_failed=n_failed),
                       params={"tie_break": "title (upstream sort)", "ndcg_ideal": "gold papers in the top 10"},
                       notes=notes)
