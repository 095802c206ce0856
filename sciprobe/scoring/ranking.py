"""Ranking metrics shared by IDRBench I2R and PreScience (spec ``idrbench.md`` §5.2, §9.9;
``prescience.md`` §2 T2/T3/T5 and pitfall 9).

Input per query: a ranked list of candidate ids, the set of relevant ids and, optionally, one score per
candidate. Relevance is binary. Three tie policies decide the order that is scored:

``as_given``
    The list order as is (scores, if given, are only validated).
``alphabetical``
    The ordering rule of IDRBench I2R (``irllm-framework@aa621e4``): final standings sorted by ``(-score, id)``
    with Python's default string order (ids are paper titles there); the rank is the first 1-based position
    whose id is relevant. MRR under this policy equals the official one when titles are unique; the official
    nDCG@10 (ideal DCG over the gold papers in the top 10) and duplicate titles are handled only by
    :func:`sciprobe.benchmarks.idrbench.scoring.official_ranking.idrbench_official_ranking`, which the I2R task uses
    in official mode.
``expected_rank``
    Corrected rule: within every group of candidates with exactly equal score the order is uniformly random,
    and each metric is its exact expectation over those orderings. Metrics that are linear in the per-position
    relevance (nDCG, recall, R-precision) use the expected relevance k/m of a position inside a tie group of
    size m holding k relevant items. Reciprocal rank and hits@k depend on the first relevant item, which sits
    in the first tie group holding any relevant item; its offset j (0-based) in that group of size m with k
    relevant items has probability C(m-j-1, k-1) / C(m, k).

Metric definitions (binary gains): RR = 1/rank of the first relevant item, 0 if none is ranked; MRR = mean RR;
nDCG@k = Σ_{i<k} rel_i / log2(i+2) divided by the ideal DCG over min(k, n_relevant) positions; hits@k = 1 if a
relevant item is in the top k; recall@k = (#relevant in top k) / n_relevant; R-precision = (#relevant in the
top n_relevant) / n_relevant. ``n_relevant`` counts every relevant id, also those missing from the ranked list.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.score_report import Coverage, ScoreReport

__all__ = ["TIE_POLICIES", "ranking_metrics", "reciprocal_rank"]

TIE_POLICIES: tuple[str, ...] = ("as_given", "alphabetical", "expected_rank")


@dataclass(frozen=True)
class _QueryRelevance:
    """What every metric of one query needs, for deterministic and expected orderings alike.

    ``expected_rel[p]`` = probability that position p holds a relevant item; ``first_pos`` / ``first_prob`` =
    the distribution of the 0-based position of the first relevant item (empty when none is ranked).
    """

    expected_rel: np.ndarray
    first_pos: np.ndarray
    first_prob: np.ndarray
    n_relevant: int


def _first_offset_distribution(m: int, k: int) -> np.ndarray:
    """P(first relevant item at offset j) for j = 0..m-k in a uniformly shuffled group of m holding k relevant.

    Equals C(m-j-1, k-1) / C(m, k), computed as P(0) = k/m and P(j+1)/P(j) = (m-j-k)/(m-j-1) so that large
    groups (m = 1000) never overflow.
    """
    j = np.arange(m - k)  # ratios for j = 0 .. m-k-1; denominators m-j-1 >= k >= 1
    ratios = (m - j - k) / (m - j - 1)
    return (k / m) * np.concatenate(([1.0], np.cumprod(ratios)))


def _check_query(i: int, ranked: Any, relevant: Any, scores: Any, tie_policy: str,
                 require_relevant_in_candidates: bool) -> tuple[list[Hashable], frozenset, np.ndarray | None]:
    if isinstance(ranked, (str, bytes)) or not isinstance(ranked, Iterable):
        raise SciprobeError(f"query {i}: the ranked list must be a sequence of ids, got {type(ranked).__name__}")
    ranked_list = list(ranked)
    if isinstance(relevant, str):
        rel_set: frozenset = frozenset([relevant])
    elif isinstance(relevant, Iterable):
        try:
            rel_set = frozenset(relevant)
        except TypeError as exc:
            raise SciprobeError(f"query {i}: relevant ids must be hashable ({exc})") from None
    else:
        raise SciprobeError(f"query {i}: relevant ids must be a collection of ids, got {type(relevant).__name__}")
    if not rel_set:
        raise SciprobeError(f"query {i}: no relevant id given (reciprocal rank and nDCG are undefined)")
    try:
        unique = set(ranked_list)
    except TypeError as exc:
        raise SciprobeError(f"query {i}: candidate ids must be hashable ({exc})") from None
    if len(unique) != len(ranked_list):
        seen: set = set()
        dup = next(c for c in ranked_list if c in seen or seen.add(c))
        raise SciprobeError(f"query {i}: duplicate id {dup!r} in the ranked list")
    if require_relevant_in_candidates:
        missing = rel_set - unique
        if missing:
            raise SciprobeError(f"query {i}: relevant id(s) not among the candidates: "
                                f"{sorted(map(repr, missing))[:3]}")
    score_arr = None
    if scores is not None:
        if isinstance(scores, (str, bytes)) or not isinstance(scores, Iterable):
            raise SciprobeError(f"query {i}: scores must be a sequence of numbers")
        try:
            score_arr = np.asarray(list(scores), dtype=float)
        except (TypeError, ValueError):
            raise SciprobeError(f"query {i}: scores must be numbers") from None
        if score_arr.ndim != 1 or score_arr.size != len(ranked_list):
            raise SciprobeError(f"query {i}: {score_arr.size} score(s) for {len(ranked_list)} candidate(s)")
        if not np.all(np.isfinite(score_arr)):
            raise SciprobeError(f"query {i}: scores must be finite numbers")
    elif tie_policy != "as_given":
        raise SciprobeError(f"query {i}: tie_policy={tie_policy!r} needs scores")
    return ranked_list, rel_set, score_arr


def _query_relevance(i: int, ranked: Any, relevant: Any, scores: Any, tie_policy: str,
                     require_relevant_in_candidates: bool) -> _QueryRelevance:
    ranked_list, rel_set, score_arr = _check_query(i, ranked, relevant, scores, tie_policy,
                                                   require_relevant_in_candidates)
    n_rel = len(rel_set)
    if not ranked_list:
        empty = np.zeros(0)
        return _QueryRelevance(empty, empty.astype(int), empty, n_rel)
    if tie_policy == "alphabetical":
        assert score_arr is not None
        try:
            ranked_list = [c for _, c in sorted(zip((-score_arr).tolist(), ranked_list))]
        except TypeError as exc:
            raise SciprobeError(f"query {i}: ids cannot be sorted for tie_policy='alphabetical' ({exc})") from None
    rel = np.fromiter((c in rel_set for c in ranked_list), dtype=float, count=len(ranked_list))

    if tie_policy != "expected_rank":
        hits = np.flatnonzero(rel)
        first = hits[:1]
        return _QueryRelevance(rel, first, np.ones(first.size), n_rel)

    assert score_arr is not None
    order = np.argsort(-score_arr, kind="stable")
    sorted_scores = score_arr[order]
    rel_sorted = rel[order]
    new_group = np.concatenate(([True], sorted_scores[1:] != sorted_scores[:-1]))
    group_id = np.cumsum(new_group) - 1
    starts = np.flatnonzero(new_group)
    sizes = np.bincount(group_id)
    n_rel_in_group = np.bincount(group_id, weights=rel_sorted)
    expected = (n_rel_in_group / sizes)[group_id]
    with_rel = np.flatnonzero(n_rel_in_group > 0)
    if with_rel.size == 0:
        empty = np.zeros(0)
        return _QueryRelevance(expected, empty.astype(int), empty, n_rel)
    g = with_rel[0]
    m, k = int(sizes[g]), round(n_rel_in_group[g])
    prob = _first_offset_distribution(m, k)
    return _QueryRelevance(expected, starts[g] + np.arange(prob.size), prob, n_rel)


def _validate_k_values(k_values: Iterable[int]) -> list[int]:
    if isinstance(k_values, (int, np.integer)):
        k_values = [int(k_values)]
    out: list[int] = []
    for k in k_values:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise SciprobeError(f"k_values must be positive integers, got {k!r}")
        if int(k) not in out:
            out.append(int(k))
    return out


def _discounts(n: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, n + 2, dtype=float))


def reciprocal_rank(ranked: Sequence[Hashable], relevant: Collection[Hashable] | str, *,
                    scores: Sequence[float] | None = None, tie_policy: str = "as_given",
                    require_relevant_in_candidates: bool = False) -> float:
    """Reciprocal rank of one query (expected RR under ``tie_policy="expected_rank"``); 0 if none is ranked.

    Same input rules as :func:`ranking_metrics` for a single query (spec ``idrbench.md`` §5.2).
    """
    if tie_policy not in TIE_POLICIES:
        raise SciprobeError(f"tie_policy must be one of {list(TIE_POLICIES)}, got {tie_policy!r}")
    q = _query_relevance(0, ranked, relevant, scores, tie_policy, require_relevant_in_candidates)
    return float(np.sum(q.first_prob / (q.first_pos + 1.0)))


def ranking_metrics(predictions: Sequence[Sequence[Hashable] | None],
                    references: Sequence[Collection[Hashable] | str], *,
                    scores: Sequence[Sequence[float] | None] | None = None, tie_policy: str = "as_given",
                    k_values: Iterable[int] = (1, 3, 5, 10),
                    require_relevant_in_candidates: bool = False) -> ScoreReport:
    """MRR, nDCG@k, hits@k, recall@k and R-precision over queries (spec ``idrbench.md`` §5.2, §9.9).

    Args:
        predictions: per query, the candidate ids in ranked order (best first), or ``None`` when the ranking
            for that query failed (scored as an empty ranking and counted in ``n_failed``, never dropped).
        references: per query, the relevant ids (list or set; a bare string is one id). Must be non-empty.
        scores: per query, one score per candidate aligned with ``predictions`` (higher = better). Required
            by ``alphabetical`` and ``expected_rank``; validated but unused by ``as_given``. Ties are exact
            float equality.
        tie_policy: ``"as_given"``, ``"alphabetical"`` (official IDRBench I2R: sort by ``(-score, id)``) or
            ``"expected_rank"`` (exact expectation over uniformly random orderings within tie groups).
        k_values: cut-offs for ``ndcg@k``, ``hits@k``, ``recall@k``.
        require_relevant_in_candidates: raise if a relevant id is missing from a query's candidates (a
            tournament's standings always contain the gold papers, so a miss there is a data error).

    Returns:
        A :class:`ScoreReport` (``mode`` = the tie policy) with values ``mrr``, ``per_query_rr`` (list, for
        paired significance tests), ``r_precision``, ``n_queries`` and ``ndcg@k`` / ``hits@k`` / ``recall@k``
        for every k; all are means over queries.

    Raises:
        SciprobeError: empty input, length mismatches, a duplicate id in a ranked list, an empty relevant set,
            a missing relevant id when required, missing or non-finite scores (messages name the query index).
    """
    if tie_policy not in TIE_POLICIES:
        raise SciprobeError(f"tie_policy must be one of {list(TIE_POLICIES)}, got {tie_policy!r}")
    ks = _validate_k_values(k_values)
    preds = list(predictions)
    refs = list(references)
    if len(preds) != len(refs):
        raise SciprobeError(f"predictions and references differ in length: {len(preds)} vs {len(refs)}")
    if not preds:
        raise SciprobeError("ranking_metrics needs at least one query, got empty predictions/references")
    score_lists: list[Any]
    if scores is None:
        score_lists = [None] * len(preds)
    else:
        score_lists = list(scores)
        if len(score_lists) != len(preds):
            raise SciprobeError(f"scores and predictions differ in length: {len(score_lists)} vs {len(preds)}")

    n = len(preds)
    rr = np.zeros(n)
    r_prec = np.zeros(n)
    ndcg = np.zeros((n, len(ks)))
    hits = np.zeros((n, len(ks)))
    recall = np.zeros((n, len(ks)))
    k_arr = np.asarray(ks)
    n_failed = 0
    disc = _discounts(max(ks))
    ideal_cum = np.cumsum(disc)

    for i, (ranked, relevant, sc) in enumerate(zip(preds, refs, score_lists, strict=True)):
        require = require_relevant_in_candidates
        if ranked is None:  # a failed ranking: empty list, never dropped, not a data error
            n_failed += 1
            ranked, sc, require = [], (None if tie_policy == "as_given" else []), False
        q = _query_relevance(i, ranked, relevant, sc, tie_policy, require)
        length = q.expected_rel.size
        needed = max(length, q.n_relevant)
        if needed > disc.size:
            disc = _discounts(max(needed, 2 * disc.size))
            ideal_cum = np.cumsum(disc)
        rr[i] = np.sum(q.first_prob / (q.first_pos + 1.0))
        cum_rel = np.concatenate(([0.0], np.cumsum(q.expected_rel)))
        cum_dcg = np.concatenate(([0.0], np.cumsum(q.expected_rel * disc[:length])))
        cut = np.minimum(k_arr, length)
        ideal = ideal_cum[np.minimum(k_arr, q.n_relevant) - 1]
        ndcg[i] = cum_dcg[cut] / ideal
        recall[i] = cum_rel[cut] / q.n_relevant
        hits[i] = [float(np.sum(q.first_prob[q.first_pos < k])) for k in ks]
        r_prec[i] = cum_rel[min(q.n_relevant, length)] / q.n_relevant

    values: dict[str, Any] = {"mrr": float(rr.mean()), "per_query_rr": [float(x) for x in rr],
                              "r_precision": float(r_prec.mean()), "n_queries": n}
    for j, k in enumerate(ks):
        values[f"ndcg@{k}"] = float(ndcg[:, j].mean())
    for j, k in enumerate(ks):
        values[f"hits@{k}"] = float(hits[:, j].mean())
    for j, k in enumerate(ks):
        values[f"recall@{k}"] = float(recall[:, j].mean())
    notes: list[str] = []
    if n_failed:
        notes.append(f"{n_failed} query ranking(s) missing (None); scored as empty rankings (RR = 0)")
    if tie_policy == "as_given" and scores is not None:
        notes.append("tie_policy='as_given' scores the list order; the given scores were not used")
    return ScoreReport(metric="ranking", mode=tie_policy, values=values,
                       coverage=Coverage(n_items=n, n_scored=n, n_failed=n_failed),
                       params={"tie_policy": tie_policy, "k_values": ks,
                               "require_relevant_in_candidates": require_relevant_in_candidates},
                       notes=notes)
