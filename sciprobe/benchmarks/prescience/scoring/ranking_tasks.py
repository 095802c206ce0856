"""PreScience ranking scores (T2 collaborators, T3 prior work, T5 future combination) (spec ``prescience.md`` §2,
pitfalls 9-10).

Two modes:

``official`` (T2/T3: ``task_coauthor_prediction`` / ``task_priorwork_prediction`` ``evaluate.py`` of
``allenai/prescience@47384ed``)
    Per instance, on the ranked list exactly as given (no id clean-up, no padding): nDCG = ``utils.calculate_ndcg``
    (DCG over the whole list / IDCG over all ``len(gold)`` positions, duplicates included; 0 when the list is
    empty, the gold is empty, or the list is shorter than the gold); with ``R = len(gold)``,
    ``calculate_precision_recall_f1(pred[:R], gold)`` on **sets**: R-precision = |set(top R) ∩ set(gold)| /
    |set(top R)|, recall@R = |∩| / |set(gold)|, F1@R their harmonic mean (0s when a side is empty). Means are
    ``sum(...) / n`` as upstream. Ids are compared as given: an integer id never matches a string id; a
    duplicated predicted id counts at every position (nDCG can exceed 1); a duplicated gold id adds a term to
    the ideal DCG. Lists are cut at k = 1000 (the tasks' output contract; upstream's lists have 1000 ids).
    Means are left-to-right sums (the ``sum()`` of Python 3.10/3.11; PreScience documents Python 3.10+, and
    Python >= 3.12 compensates float sums, which can move the last bit).
    T5 (``ndcg_at_k``, a later upstream commit) keeps the strict computation below in both modes.
``strict`` (corrected)
    Input hygiene (pitfall 10): ids are strings, a duplicate id is an error; ids outside the candidate pool
    H^{<t_p} (hallucinated or future ids) are dropped and counted (``unknown="drop"``) or rejected
    (``unknown="error"``); short lists are padded to k with pool candidates drawn by a seeded generator
    (deterministic, unlike upstream's random padding) when a pool is given; a missing ranking (``None``) is a
    recorded failure scored as an empty list; gold ids are de-duplicated and an empty gold is an error.
    R-precision = hits / |gold| (the upstream analysis scripts' definition). nDCG comes from
    :func:`sciprobe.scoring.ranking.ranking_metrics` (IDCG over ``min(k, |gold|)``) with per-query factors:
    ``calculate_ndcg`` (T2/T3) multiplies by ``IDCG(min(k,|gold|)) / IDCG(|gold|)`` and gives 0 when the list is
    shorter than the gold; ``ndcg_at_k`` (T5) keeps it and divides R-precision by ``min(|gold|, |pred|)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.ranking import ranking_metrics
from sciprobe.scoring.summation import plain_sum
from sciprobe.scoring.score_report import Coverage, ScoreReport

VARIANTS = ("calculate_ndcg", "ndcg_at_k")


def _idcg(n: int) -> float:
    return float(np.sum(1.0 / np.log2(np.arange(2, n + 2))))


class Pool:
    """A candidate pool: membership test + an ordered id array to pad from (e.g. a HistoryView)."""

    def __init__(self, contains: Callable[[str], bool], ids: Callable[[], Sequence[str]]) -> None:
        self.contains = contains
        self._ids = ids

    @classmethod
    def of(cls, obj: Any) -> Pool:
        if isinstance(obj, Pool):
            return obj
        if hasattr(obj, "candidate_ids"):  # HistoryView
            return cls(obj.__contains__, lambda: obj.candidate_ids())
        ids = list(obj)
        members = set(ids)
        return cls(members.__contains__, lambda: ids)

    def ids(self) -> Sequence[str]:
        return self._ids()


def clean_ranking(ranked: Sequence[str], pool: Any | None, *, k: int, unknown: str, pad: bool, seed: int,
                  query: int) -> tuple[list[str], int, int]:
    """(list cut to k, #unknown ids dropped, #padded ids). Raises on duplicates / unknown ids (``error``)."""
    ranked = [str(x) for x in ranked]
    seen: set[str] = set()
    for cid in ranked:
        if cid in seen:
            raise SciprobeError(f"query {query}: duplicate id {cid!r} in the ranked list")
        seen.add(cid)
    dropped = 0
    if pool is not None:
        pool = Pool.of(pool)
        kept = [c for c in ranked if pool.contains(c)]
        dropped = len(ranked) - len(kept)
        if dropped and unknown == "error":
            bad = next(c for c in ranked if not pool.contains(c))
            raise SciprobeError(f"query {query}: id {bad!r} is not in the candidate pool (H^<t_p)")
        ranked = kept
    ranked = ranked[:k]
    padded = 0
    if pad and pool is not None and len(ranked) < k:
        ids = pool.ids()
        present = set(ranked)
        rng = np.random.default_rng([seed, query])
        budget = min(k - len(ranked), len(ids) - len(present))
        attempts = 0
        while padded < budget and attempts < 20 * k:
            for j in rng.integers(len(ids), size=max(2 * (budget - padded), 8)).tolist():
                cid = ids[j] if isinstance(ids, list) else ids[j].as_py()
                if cid not in present:
                    present.add(cid)
                    ranked.append(cid)
                    padded += 1
                    if padded >= budget:
                        break
            attempts += 1
    return ranked, dropped, padded


MODES = ("official", "strict")


def _calculate_ndcg(retrieved: Sequence[Any], relevant: Sequence[Any]) -> float:
    """``utils.calculate_ndcg`` of the pinned code: sequential sums, IDCG over every gold entry."""
    if not retrieved or not relevant or len(retrieved) < len(relevant):
        return 0.0
    relevant_set = set(relevant)
    dcg = 0.0
    for position, rid in enumerate(retrieved):
        dcg += (1 if rid in relevant_set else 0) / np.log2(position + 2)
    idcg = 0.0
    for position in range(len(relevant)):
        idcg += 1 / np.log2(position + 2)
    return float(dcg / idcg)


def _set_precision_recall_f1(retrieved: Sequence[Any], relevant: Sequence[Any]) -> tuple[float, float, float]:
    if not retrieved or not relevant:
        return 0.0, 0.0, 0.0
    got, want = set(retrieved), set(relevant)
    hits = len(got & want)
    precision = hits / len(got)
    recall = hits / len(want)
    f1 = 2 * (precision * recall) / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1


def _official_rankings(predictions: Sequence[Sequence[Any] | None], references: Sequence[Sequence[Any]],
                       k: int) -> ScoreReport:
    per_query: list[tuple[float, float, float, float]] = []
    n_failed = n_cut = 0
    for i, (ranked, gold) in enumerate(zip(predictions, references)):
        if ranked is None:
            n_failed += 1
            ranked = []
        elif isinstance(ranked, (str, bytes)) or not isinstance(ranked, Sequence):
            raise SciprobeError(f"query {i}: the ranked list must be a list of ids, got {type(ranked).__name__}")
        if isinstance(gold, (str, bytes)) or not isinstance(gold, Sequence):
            raise SciprobeError(f"query {i}: the gold ids must be a list, got {type(gold).__name__}")
        ranked, gold = list(ranked), list(gold)
        if len(ranked) > k:
            n_cut += 1
            ranked = ranked[:k]
        per_query.append((_calculate_ndcg(ranked, gold), *_set_precision_recall_f1(ranked[:len(gold)], gold)))
    n = len(per_query)
    columns = list(zip(*per_query))
    ndcg, precision, recall, f1 = (plain_sum(c) / n for c in columns)  # Python 3.10/3.11 sum(), as documented
    notes = []
    if n_failed:
        notes.append(f"{n_failed} missing ranking(s) scored as empty lists")
    if n_cut:
        notes.append(f"{n_cut} list(s) longer than k={k} cut to k")
    return ScoreReport(metric="ranking", mode="official",
                       values={f"ndcg@{k}": float(ndcg), "r_precision": float(precision), "recall@R": float(recall),
                               "f1@R": float(f1), "n_queries": n, "per_query_ndcg": [float(x) for x in columns[0]]},
                       coverage=Coverage(n, n, n_failed),
                       params={"variant": "calculate_ndcg", "k": k, "definition": "evaluate.py"}, notes=notes)


def score_rankings(predictions: Sequence[Sequence[str] | None], references: Sequence[Sequence[str]], *,
                   variant: str, k: int = 1000, pools: Sequence[Any] | None = None, unknown: str = "drop",
                   pad: bool = True, seed: int = 0, mode: str = "official") -> ScoreReport:
    """nDCG@k and R-precision of one PreScience ranking task (see the module docstring for the modes and
    variants). ``pools``, ``unknown``, ``pad`` and ``seed`` apply to the strict computation only."""
    if variant not in VARIANTS:
        raise SciprobeError(f"unknown nDCG variant {variant!r} ({', '.join(VARIANTS)})")
    if mode not in MODES:
        raise SciprobeError(f"unknown mode {mode!r} for PreScience ranking ({', '.join(MODES)})")
    if unknown not in ("drop", "error"):
        raise SciprobeError(f"unknown must be 'drop' or 'error', got {unknown!r}")
    if len(predictions) != len(references):
        raise SciprobeError(f"predictions and references differ in length: {len(predictions)} vs {len(references)}")
    if not references:
        raise SciprobeError("no queries to score")
    if pools is not None and len(pools) != len(references):
        raise SciprobeError("pools must give one candidate pool per query")
    if mode == "official" and variant == "calculate_ndcg":
        return _official_rankings(predictions, references, k)
    ndcg, rprec = np.zeros(len(references)), np.zeros(len(references))
    n_failed = n_dropped = n_padded = 0
    for i, (ranked, gold) in enumerate(zip(predictions, references)):
        gold_list = list(dict.fromkeys(str(g) for g in gold))
        if not gold_list:
            raise SciprobeError(f"query {i}: empty gold list")
        if ranked is None:
            n_failed += 1
            ranked = []
        elif not isinstance(ranked, (list, tuple)):
            raise SciprobeError(f"query {i}: the ranked list must be a list of ids, got {type(ranked).__name__}")
        pool = pools[i] if pools is not None else None
        cleaned, dropped, padded = clean_ranking(ranked, pool, k=k, unknown=unknown, pad=pad, seed=seed, query=i)
        n_dropped += dropped
        n_padded += padded
        if not cleaned:
            continue
        report = ranking_metrics([cleaned], [gold_list], k_values=[k])
        g, n = len(gold_list), len(cleaned)
        nd, rp = report.values[f"ndcg@{k}"], report.values["r_precision"]
        if variant == "calculate_ndcg":
            nd = 0.0 if n < g else nd * _idcg(min(k, g)) / _idcg(g)
        else:
            rp = rp * g / min(g, n)
        ndcg[i], rprec[i] = nd, rp
    notes = []
    if n_failed:
        notes.append(f"{n_failed} missing ranking(s) scored as empty lists")
    if n_dropped:
        notes.append(f"{n_dropped} id(s) outside the candidate pool dropped")
    return ScoreReport(metric="ranking", mode=mode,
                       values={f"ndcg@{k}": float(ndcg.mean()), "r_precision": float(rprec.mean()),
                               "n_queries": len(references), "n_unknown_dropped": n_dropped,
                               "n_padded": n_padded, "per_query_ndcg": [float(x) for x in ndcg]},
                       coverage=Coverage(len(references), len(references), n_failed),
                       params={"variant": variant, "k": k, "unknown": unknown, "pad": pad, "seed": seed,
                               "definition": "strict"},
                       notes=notes)
