"""LACER-based diversity and novelty of a corpus, month by month (PreScience §4.5, Figure 3).

The reference is upstream's analysis code at ``47384ed`` (``multiturn/analysis/compute_diversity_neighbors.py``,
``compute_novelty_neighbors.py``, ``compute_lacer_{diversity,novelty}.py``, ``plot_lacer_{diversity,novelty}.py``);
``tests/parity/cases/prescience_rollout_metrics.json`` holds its outputs on inputs written for the project, and
these functions reproduce them, random draws included (a ``random.Random`` consumed in upstream's order):

- months: ``YYYY-MM-01`` buckets (upstream ``--time_bucket 30``);
- diversity: per month, the pool is that month's papers of the role (for the real corpus, a random subset as
  large as the synthetic month: size matching); ``n`` sampled papers each get their ``k`` nearest neighbours in
  the pool by cosine, itself excluded;
- novelty: the pool is every paper dated before the first month (real corpus: subsampled to the synthetic
  prior's size); after a month is scored its papers are added (real corpus: subsampled to the synthetic
  month's growth), unless the prior is fixed (H^{<t0});
- a sampled paper's distance is the mean of ``10 - LACER(reference = paper, generation = neighbour)`` over its
  judged neighbours (a neighbour the judge gave no score is left out; a paper with none is left out); a month's
  value is the mean over papers with a percentile bootstrap 95% interval (1,000 resamples of papers), the
  synthetic months pooling the papers of every repeat.

Departure, recorded: where a month has fewer than ``n`` papers (or a pool fewer than ``k + 1``) upstream stops
with an error; with ``strict=False`` the month uses all its papers (``k`` at most pool - 1) and the effective
``n`` and ``k`` are reported per month. ``strict=True`` keeps upstream's error.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError

__all__ = ["MonthInfo", "Neighbourhood", "bootstrap_ci", "diversity_neighbours", "month_of", "monthly_curves",
           "novelty_neighbours", "paper_distances"]

Paper = Mapping[str, Any]


def month_of(date: str) -> str:
    return f"{date[:7]}-01"


def _by_month(papers: Iterable[Paper]) -> dict[str, list[Paper]]:
    out: dict[str, list[Paper]] = {}
    for p in papers:
        out.setdefault(month_of(str(p["date"])), []).append(p)
    return dict(sorted(out.items()))


def _unit_rows(x: np.ndarray) -> np.ndarray:
    x = np.atleast_2d(np.asarray(x, dtype=np.float32)).copy()
    return x / (np.linalg.norm(x, axis=1, keepdims=True) + np.float32(1e-12))


class _Index:
    """Exact cosine search over an ordered pool (ids in insertion order; ties go to the earlier entry)."""

    def __init__(self, ids: Sequence[str], vectors: Mapping[str, np.ndarray]) -> None:
        self.ids = list(ids)
        self.matrix = _unit_rows(np.stack([vectors[i] for i in ids])) if ids else None

    def add(self, ids: Sequence[str], vectors: Mapping[str, np.ndarray]) -> None:
        if ids:
            new = _unit_rows(np.stack([vectors[i] for i in ids]))
            self.matrix = new if self.matrix is None else np.vstack([self.matrix, new])
            self.ids += list(ids)

    def search(self, queries: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        sims = _unit_rows(queries) @ self.matrix.T
        out = []
        for row in sims:
            order = np.lexsort((np.arange(len(row)), -row))[:k]
            out.append([(self.ids[j], float(row[j])) for j in order])
        return out


@dataclass
class Neighbourhood:
    corpus_id: str
    month: str
    neighbours: list[dict[str, Any]]  # {"corpus_id", "distance"} nearest first (distance = 1 - cosine)


@dataclass
class MonthInfo:
    month: str
    pool_size: int
    n_queries: int
    k: int
    notes: list[str] = field(default_factory=list)


def _take(rng: random.Random, papers: list[Paper], n: int, strict: bool, where: str, info: MonthInfo) -> list[Paper]:
    if len(papers) < n:
        if strict:
            raise SciprobeError(f"{where} has only {len(papers)} papers, need {n}")
        info.notes.append(f"{len(papers)} papers < n={n}: all sampled")
        n = len(papers)
    info.n_queries = n
    return rng.sample(papers, n)


def diversity_neighbours(papers: Sequence[Paper], vectors: Mapping[str, np.ndarray], role: str, n: int, k: int,
                         rng: random.Random, *, match_sizes: Mapping[str, int] | None = None,
                         months: Iterable[str] | None = None, strict: bool = True
                         ) -> tuple[list[Neighbourhood], list[MonthInfo]]:
    """Same-month neighbours of ``n`` sampled papers per month (upstream ``compute_diversity_neighbors``)."""
    keep = set(months) if months is not None else None
    buckets = _by_month(p for p in papers if role in (p.get("roles") or []) and str(p["corpus_id"]) in vectors)
    results, infos = [], []
    for month, bucket in buckets.items():
        if keep is not None and month not in keep:
            continue
        pool = bucket
        if match_sizes and month in match_sizes and len(bucket) > match_sizes[month]:
            pool = rng.sample(bucket, match_sizes[month])
        info = MonthInfo(month, len(pool), 0, k)
        infos.append(info)
        sampled = _take(rng, pool, n, strict, f"month {month} pool", info)
        if len(pool) < k + 1:
            if strict:
                raise SciprobeError(f"month {month} pool has only {len(pool)} papers, need at least {k + 1}")
            info.k = len(pool) - 1
            info.notes.append(f"pool of {len(pool)} < k+1: k={info.k}")
        if info.k < 1:
            info.notes.append("no neighbour to compare with: month not scored")
            continue
        index = _Index([str(p["corpus_id"]) for p in pool], vectors)
        qids = [str(p["corpus_id"]) for p in sampled]
        for qid, found in zip(qids, index.search(np.stack([vectors[q] for q in qids]), info.k + 1)):
            neighbours = [{"corpus_id": nid, "distance": float(1.0 - sim)} for nid, sim in found if nid != qid]
            results.append(Neighbourhood(qid, month, neighbours[:info.k]))
    return results, infos


def novelty_neighbours(papers: Sequence[Paper], vectors: Mapping[str, np.ndarray], role: str, n: int, k: int,
                       rng: random.Random, *, fixed: bool, match_prior: int | None = None,
                       match_growth: Mapping[str, int] | None = None, months: Iterable[str] | None = None,
                       strict: bool = True) -> tuple[list[Neighbourhood], list[MonthInfo]]:
    """Neighbours in the literature before each month (upstream ``compute_novelty_neighbors``): the evolving
    H^{<t} (``fixed=False``) or the fixed H^{<t0} of the first month (``fixed=True``)."""
    keep = set(months) if months is not None else None
    buckets = {m: b for m, b in _by_month(p for p in papers if role in (p.get("roles") or [])
                                          and str(p["corpus_id"]) in vectors).items()
               if keep is None or m in keep}
    if not buckets:
        return [], []
    for month, bucket in buckets.items():
        if len(bucket) < n and strict:
            raise SciprobeError(f"month {month} has only {len(bucket)} papers, need {n}")
    by_date: dict[str, list[str]] = defaultdict(list)
    for p in papers:
        by_date[str(p["date"])].append(str(p["corpus_id"]))
    dates = sorted(by_date)
    first = min(buckets)
    prior = list(dict.fromkeys(c for d in dates if d < first for c in by_date[d] if c in vectors))
    if match_prior and len(prior) > match_prior:
        prior = rng.sample(prior, match_prior)
    if len(prior) < k and strict:
        raise SciprobeError(f"the literature before {first} has only {len(prior)} papers, need at least {k}")
    index = _Index(prior, vectors)
    in_prior = set(prior)
    results, infos = [], []
    months_sorted = sorted(buckets)
    for i, month in enumerate(months_sorted):
        info = MonthInfo(month, len(index.ids), 0, min(k, len(index.ids)))
        if info.k < k:
            info.notes.append(f"prior of {len(index.ids)} < k: k={info.k}")
        infos.append(info)
        sampled = _take(rng, buckets[month], n, strict, f"month {month}", info)
        if info.k >= 1 and sampled:
            qids = [str(p["corpus_id"]) for p in sampled]
            for qid, found in zip(qids, index.search(np.stack([vectors[q] for q in qids]), info.k)):
                results.append(Neighbourhood(qid, month, [{"corpus_id": nid, "distance": float(1.0 - sim)}
                                                          for nid, sim in found]))
        if fixed:
            continue
        nxt = months_sorted[i + 1] if i + 1 < len(months_sorted) else None
        growth = [c for d in dates if d >= month and (nxt is None or d < nxt) for c in by_date[d]
                  if c in vectors and c not in in_prior]
        growth = list(dict.fromkeys(growth))
        if match_growth and month in match_growth and len(growth) > match_growth[month]:
            growth = rng.sample(growth, match_growth[month])
        index.add(growth, vectors)
        in_prior.update(growth)
    return results, infos


def paper_distances(scored: Iterable[Mapping[str, Any]]) -> dict[str, list[float]]:
    """Per month, each paper's mean ``10 - LACER`` over its scored neighbours (upstream
    ``compute_per_paper_scores``); records are ``{"month", "neighbours": [{"lacer_score"?}]}``."""
    out: dict[str, list[float]] = defaultdict(list)
    for record in scored:
        scores = [10 - nb["lacer_score"] for nb in record["neighbours"] if nb.get("lacer_score") is not None]
        if scores:
            out[record["month"]].append(float(np.mean(scores)))
    return dict(out)


def bootstrap_ci(values: Sequence[float], n_bootstrap: int, rng: random.Random, ci: float = 0.95
                 ) -> tuple[float, float, float]:
    """(mean, lower, upper): percentile bootstrap of the mean, resampling with ``rng.choices`` as upstream."""
    values = list(values)
    if not values:
        raise SciprobeError("a bootstrap interval needs at least one value")
    means = [np.mean(rng.choices(values, k=len(values))) for _ in range(n_bootstrap)]
    alpha = (1 - ci) / 2
    low, high = np.percentile(means, alpha * 100), np.percentile(means, (1 - alpha) * 100)
    return float(np.mean(values)), float(low), float(high)


def _curve(by_month: Mapping[str, Sequence[float]], n_bootstrap: int, rng: random.Random) -> dict[str, dict]:
    out = {}
    for month, values in sorted(by_month.items()):
        mean, low, high = bootstrap_ci(values, n_bootstrap, rng)
        out[month] = {"mean": mean, "ci95_low": low, "ci95_high": high, "n_papers": len(values)}
    return out


def monthly_curves(natural: Mapping[str, Sequence[float]] | None, synthetic: Sequence[Mapping[str, Sequence[float]]],
                   n_bootstrap: int, seed: int) -> dict[str, dict[str, dict]]:
    """The two curves of a Figure 3 panel as upstream's plot script draws them: one generator seeded with
    ``seed``, the natural months first, then the synthetic months with every repeat's papers pooled."""
    rng = random.Random(seed)
    curves = {"natural": _curve(natural, n_bootstrap, rng) if natural is not None else {}}
    pooled: dict[str, list[float]] = defaultdict(list)
    for run in synthetic:
        for month, values in run.items():
            pooled[month].extend(values)
    curves["synthetic"] = _curve(pooled, n_bootstrap, rng)
    return curves
