"""Validating a similarity metric against human similarity rankings (spec ``prescience.md`` §3 "Validation",
Appendix B.3, pitfall 20).

Input: per paper (target), per annotator, a ranking string of candidate ids by conceptual similarity to the
target, most similar first, ties allowed: ``"3>1=2>4"``. A ranking becomes rank scores (higher = more
similar): every tie group gets the same score, groups ordered by position.

- :func:`metric_agreement`: Kendall τ_b (``scipy.stats.kendalltau(variant="b")``) per (paper, annotator)
  between the human rank scores and the metric's scores over the candidates that annotator ranked (and the
  metric scored); averaged over papers per annotator, then over annotators (the paper's order of averaging).
- :func:`inter_annotator_agreement`: for every annotator pair, per-paper τ_b over the candidates both ranked,
  averaged over the papers both annotated; then averaged over pairs.

Decisions: τ_b is undefined when one side is constant (all candidates tied): such (paper, annotator) cells are
skipped and counted in ``n_undefined``; candidates a metric did not score are left out of that cell. An optional
percentile bootstrap over papers (``bootstrap=N``) gives a 95% CI (the upstream bootstrap script also resamples
annotators and generations; not reproduced).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.score_report import Coverage, ScoreReport

__all__ = ["inter_annotator_agreement", "kendall_tau_b", "metric_agreement", "parse_ranking"]

Rankings = Mapping[str, Mapping[str, str | Sequence]]  # paper -> annotator -> ranking
_SPLIT = re.compile(r"\s*>\s*")


def parse_ranking(ranking: str | Sequence) -> dict[str, float]:
    """``"3>1=2>4"`` (or ``[["3"], ["1", "2"], ["4"]]``) -> ``{"3": 3, "1": 2, "2": 2, "4": 1}``."""
    if isinstance(ranking, str):
        groups = [[c.strip() for c in g.split("=")] for g in _SPLIT.split(ranking.strip()) if g.strip()]
    else:
        groups = [[str(c) for c in (g if isinstance(g, (list, tuple)) else [g])] for g in ranking]
    out: dict[str, float] = {}
    for k, group in enumerate(groups):
        for cand in group:
            if not cand:
                raise SciprobeError(f"empty candidate in ranking {ranking!r}")
            if cand in out:
                raise SciprobeError(f"candidate {cand!r} appears twice in ranking {ranking!r}")
            out[cand] = float(len(groups) - k)
    if not out:
        raise SciprobeError(f"empty ranking {ranking!r}")
    return out


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """τ_b, or None when undefined (fewer than 2 items, or one side constant)."""
    from scipy.stats import kendalltau

    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return None
    tau = kendalltau(x, y, variant="b").statistic
    return None if tau is None or math.isnan(tau) else float(tau)


def _bootstrap_papers(cells: Mapping[str, Mapping[str, float]], n: int,
                      seed: int) -> tuple[float | None, float | None]:
    """Resample papers with replacement; statistic = mean over annotators of the per-annotator paper mean."""
    papers = sorted(cells)
    if n <= 0 or len(papers) < 2:
        return None, None
    rng = np.random.default_rng(seed)
    stats = []
    for _ in range(n):
        picked = [papers[i] for i in rng.integers(len(papers), size=len(papers))]
        per_annotator: dict[str, list[float]] = {}
        for p in picked:
            for a, tau in cells[p].items():
                per_annotator.setdefault(a, []).append(tau)
        if per_annotator:
            stats.append(float(np.mean([np.mean(v) for v in per_annotator.values()])))
    return float(np.percentile(stats, 2.5)), float(np.percentile(stats, 97.5))


def metric_agreement(rankings: Rankings, metric_scores: Mapping[str, Mapping[str, float | None]], *,
                     metric: str = "metric", bootstrap: int = 0, seed: int = 0) -> ScoreReport:
    """Mean Kendall τ_b between each annotator's ranking and the metric's scores (higher = more similar)."""
    cells: dict[str, dict[str, float]] = {}  # paper -> annotator -> tau
    n_cells = n_undefined = 0
    for paper, by_annotator in rankings.items():
        scores = metric_scores.get(paper) or {}
        for annotator, ranking in by_annotator.items():
            n_cells += 1
            human = parse_ranking(ranking)
            common = [c for c in human if scores.get(c) is not None]
            tau = kendall_tau_b([human[c] for c in common], [float(scores[c]) for c in common])
            if tau is None:
                n_undefined += 1
                continue
            cells.setdefault(paper, {})[annotator] = tau
    per_annotator: dict[str, list[float]] = {}
    for by_annotator in cells.values():
        for annotator, tau in by_annotator.items():
            per_annotator.setdefault(annotator, []).append(tau)
    annotator_means = {a: float(np.mean(v)) for a, v in sorted(per_annotator.items())}
    value = float(np.mean(list(annotator_means.values()))) if annotator_means else None
    low, high = _bootstrap_papers(cells, bootstrap, seed)
    return ScoreReport(
        metric="kendall_tau_b", mode="official",
        values={"tau_b": value, "ci95_low": low, "ci95_high": high, "per_annotator": annotator_means,
                "per_cell": {p: dict(c) for p, c in cells.items()}, "metric_name": metric},
        coverage=Coverage(n_cells, n_cells - n_undefined, n_undefined),
        params={"variant": "b", "averaging": "papers within annotator, then annotators",
                "bootstrap": {"resamples": bootstrap, "unit": "paper", "seed": seed} if bootstrap else None},
        notes=[f"{n_undefined} (paper, annotator) cell(s) with undefined tau_b skipped"] if n_undefined else [])


def inter_annotator_agreement(rankings: Rankings) -> ScoreReport:
    """Human IAA: mean over annotator pairs of the per-paper mean τ_b between their rankings."""
    annotators = sorted({a for by in rankings.values() for a in by})
    pair_means: dict[str, float] = {}
    n_cells = n_undefined = 0
    for a, b in itertools.combinations(annotators, 2):
        taus = []
        for by in rankings.values():
            if a not in by or b not in by:
                continue
            n_cells += 1
            ra, rb = parse_ranking(by[a]), parse_ranking(by[b])
            common = [c for c in ra if c in rb]
            tau = kendall_tau_b([ra[c] for c in common], [rb[c] for c in common])
            if tau is None:
                n_undefined += 1
                continue
            taus.append(tau)
        if taus:
            pair_means[f"{a}|{b}"] = float(np.mean(taus))
    value = float(np.mean(list(pair_means.values()))) if pair_means else None
    notes: list[Any] = []
    if len(annotators) < 2:
        notes.append("fewer than two annotators: IAA undefined")
    if n_undefined:
        notes.append(f"{n_undefined} (paper, pair) cell(s) with undefined tau_b skipped")
    return ScoreReport(metric="kendall_tau_b_iaa", mode="official",
                       values={"tau_b": value, "per_pair": pair_means},
                       coverage=Coverage(n_cells, n_cells - n_undefined, n_undefined),
                       params={"variant": "b", "averaging": "papers within annotator pair, then pairs"},
                       notes=notes)
