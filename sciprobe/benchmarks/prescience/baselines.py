"""Non-LLM baselines for every PreScience ranking and forecasting task (spec ``prescience.md`` §2 T2–T7).

Each baseline reads only H^{<t_p} through :class:`~.history.HistoryView` (or, for topics, the history window's
counts), so it cannot see the labels:

- T2 ``collaborator_frequency``: co-authorship counts over the seed author's 10 most recent papers;
- T3 ``prior_work_frequency``: references cited in the team's ≤ 10 most recent papers each;
- T5 ``cocitation_frequency``: Σ over pre-t_P citers X of P's references of |R_P ∩ K_X| for q ∈ K_X \\ R_P,
  then ``citation_frequency`` (how often q is a key reference of pre-t_P papers) for the rest;
- T4 ``citation_mean`` (mean training label) and ``citation_linear`` (least squares on log1p bibliometric
  features at t_p — team size, author h-index / papers / citations, reference count and citations — fitted on
  the train targets, predictions ``expm1``-inverted and clipped at 0);
- T6/T7 ``trend_mean`` (every unit = mean inner-forecast count × forecast/inner length; inner split = first
  6 / last 6 history months) and ``trend_linear`` (per-unit OLS on the 12 monthly history counts, summed over
  the forecast months, negatives clipped).

Ties are broken by recency (newer first) and then corpus id, so every ranking is deterministic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from sciprobe.benchmarks.prescience.history import CorpusIndex, HistoryView
from sciprobe.core.errors import SciprobeError

RECENT_PAPERS = 10


def _ranked(scores: Mapping[int, float], k: int) -> list[int]:
    """Rows by score desc, then newer (higher row) first."""
    return [row for row, _ in sorted(scores.items(), key=lambda kv: (-kv[1], -kv[0]))[:k]]


def _ids(index: CorpusIndex, rows: Sequence[int]) -> list[str]:
    return [index.ids[int(r)].as_py() for r in rows]


def _ref_rows(index: CorpusIndex, view: HistoryView, row: int) -> list[int]:
    refs = index.table["key_references"][int(row)].as_py() or []
    out = []
    for r in refs:
        q = index.row_of(r["corpus_id"])
        if q is not None and q < view.n:
            out.append(q)
    return out


# ---------------------------------------------------------------- T2
def collaborator_frequency(index: CorpusIndex, seed_author_id: str, date: str, k: int = 1000) -> list[str]:
    view = index.view(date)
    counts: Counter[str] = Counter()
    last: dict[str, int] = {}
    for row in view.author_history_rows(seed_author_id)[-RECENT_PAPERS:].tolist():
        for a in index.table["authors"][row].as_py() or []:
            aid = a.get("author_id")
            if aid and aid != seed_author_id:
                counts[aid] += 1
                last[aid] = max(last.get(aid, -1), row)
    order = sorted(counts, key=lambda a: (-counts[a], -last[a], a))
    return order[:k]


# ---------------------------------------------------------------- T3
def prior_work_frequency(index: CorpusIndex, author_ids: Sequence[str], date: str, k: int = 1000) -> list[str]:
    view = index.view(date)
    counts: Counter[int] = Counter()
    for aid in author_ids:
        for row in view.author_history_rows(aid)[-RECENT_PAPERS:].tolist():
            for q in _ref_rows(index, view, row):
                counts[q] += 1
    return _ids(index, _ranked(counts, k))


# ---------------------------------------------------------------- T5
def citation_frequency_scores(index: CorpusIndex, view: HistoryView) -> np.ndarray:
    """Per row: number of key-reference citations from papers dated < t (vectorised over the edge list)."""
    edges = index.citations
    cited = np.repeat(np.arange(index.n_papers), np.diff(edges.offsets))
    return np.bincount(cited[edges.rows < view.n], minlength=index.n_papers).astype(float)


def cocitation_frequency(index: CorpusIndex, corpus_id: str, date: str, k: int = 1000,
                         popularity: np.ndarray | None = None) -> list[str]:
    view = index.view(date)
    p = index.row_of(corpus_id)
    if p is None:
        raise SciprobeError(f"unknown target corpus_id {corpus_id!r}")
    refs = set(_ref_rows(index, view, p))
    scores: Counter[int] = Counter()
    for r in refs:
        citers = index.citations.rows_of(r)
        for x in citers[:int(np.searchsorted(citers, view.n))].tolist():
            kx = set(_ref_rows(index, view, x))
            overlap = len(refs & kx)
            for q in kx - refs:
                if q != p:
                    scores[q] += overlap
    ranked = _ranked(scores, k)
    if len(ranked) < k:
        pop = popularity if popularity is not None else citation_frequency_scores(index, view)
        taken = set(ranked) | {p}
        order = np.lexsort((-np.arange(view.n), -pop[:view.n]))
        for q in order.tolist():
            if len(ranked) >= k:
                break
            if q not in taken and pop[q] > 0:
                ranked.append(q)
    return _ids(index, ranked)


# ---------------------------------------------------------------- T4
def bibliometric_features(row: Mapping) -> np.ndarray:
    """log1p features at t_p from a target row (no text, no trajectory)."""
    authors = row.get("authors") or []
    refs = row.get("key_references") or []

    def stat(name: str, fn) -> float:
        values = [a.get(name) or 0 for a in authors]
        return float(np.log1p(fn(values))) if values else 0.0

    ref_cites = [r.get("num_citations") or 0 for r in refs]
    return np.array([1.0, np.log1p(len(authors)), stat("h_index", max), stat("h_index", np.mean),
                     stat("num_papers", np.mean), stat("num_citations", max), np.log1p(len(refs)),
                     float(np.log1p(np.mean(ref_cites))) if ref_cites else 0.0])


class CitationLinear:
    """Least squares on :func:`bibliometric_features` against log1p(label) (T4)."""

    def __init__(self) -> None:
        self.coef: np.ndarray | None = None

    def fit(self, rows: Sequence[Mapping], labels: Sequence[float]) -> CitationLinear:
        if not rows:
            raise SciprobeError("no training targets to fit the citation baseline")
        x = np.stack([bibliometric_features(r) for r in rows])
        y = np.log1p(np.asarray(labels, dtype=float))
        self.coef = np.linalg.lstsq(x.T @ x + 1e-3 * np.eye(x.shape[1]), x.T @ y, rcond=None)[0]
        return self

    def predict(self, rows: Sequence[Mapping]) -> list[float]:
        if self.coef is None:
            raise SciprobeError("CitationLinear.predict before fit")
        x = np.stack([bibliometric_features(r) for r in rows])
        return np.clip(np.expm1(x @ self.coef), 0, None).tolist()


def citation_mean(train_labels: Sequence[float], n: int) -> list[float]:
    if not train_labels:
        raise SciprobeError("no training labels for the mean baseline")
    return [float(np.mean(train_labels))] * n


# ---------------------------------------------------------------- T6 / T7
def trend_mean(monthly: Mapping[str, Sequence[int]], units: Sequence[str], forecast_months: int) -> list[float]:
    """Constant forecast: mean over units of the inner-forecast (last 6 months) count, scaled to the horizon."""
    inner = [sum(monthly.get(u, [0] * 12)[6:]) for u in units]
    value = float(np.mean(inner)) * forecast_months / 6.0 if inner else 0.0
    return [value] * len(units)


def trend_linear(monthly: Mapping[str, Sequence[int]], units: Sequence[str], forecast_months: int) -> list[float]:
    """Per-unit OLS on monthly history counts, summed over the next ``forecast_months`` months, clipped at 0."""
    x = np.arange(12, dtype=float)
    future = np.arange(12, 12 + forecast_months, dtype=float)
    out = []
    for u in units:
        y = np.asarray(monthly.get(u, [0] * 12), dtype=float)
        slope, intercept = np.polyfit(x, y, 1)
        out.append(float(np.clip(intercept + slope * future, 0, None).sum()))
    return out


def pair_monthly(label_sets_by_month: Sequence[tuple[int, Sequence[str]]]) -> dict[str, list[int]]:
    from itertools import combinations

    from sciprobe.benchmarks.prescience.instances import pair_id

    out: dict[str, list[int]] = {}
    for month, labels in label_sets_by_month:
        for a, b in combinations(sorted(set(labels)), 2):
            out.setdefault(pair_id(a, b), [0] * 12)[month] += 1
    return out
