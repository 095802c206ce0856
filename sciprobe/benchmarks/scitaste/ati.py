"""The Academic Taste Index (ATI) as plain functions (spec ``scitaste.md`` §1.6, §1.7, §6.1, §6.10).

Use these to recompute gold for a refreshed backup pool, or to check released gold. What is **known** (paper
prose) and what is **reconstructed** (a documented parameter with a placeholder default) is marked per function:

- ``ati_total``: ``Σ w_i·DimensionScore_i`` — form known, weights B–F missing (Table 3) → ``solve_weights``.
- ``citation_score`` (A): blend of a log-normalised score and the percentile of papers *strictly below*;
  the blend coefficient and the log normaliser are **reconstructed** (``log_weight=0.5``, ``log1p(c)/log1p(max)``).
- ``pca_rank_score`` (B–F): impute column mean (then 0), z-score, PC1, sign flip, mean-rank normalisation —
  procedure known; the rank formula is **reconstructed** (``rank_formula="(r-1)/(n-1)"`` or ``"r/n"``).
- ``journal_impact`` (G): ``0.70·IF_pct + 0.15·JCR + 0.15·CAS`` with quartile points Q1..Q4 = 100/75/50/25,
  missing 0 — known; the IF percentile definition is **reconstructed** (same mean-rank formula as B–F).

The population the percentiles/PCA run over (per discipline, per cell, all papers) and the bibliometric
snapshot date are not stated: the caller chooses the population by what it passes in, and must record it.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError
from sciprobe.benchmarks.scitaste.scoring.composite import DIMENSIONS, KNOWN_WEIGHTS, average_ranks

__all__ = ["JOURNAL_BLEND", "QUARTILE_POINTS", "WeightSolve", "ati_total", "citation_score", "journal_impact",
           "mean_rank_percentile", "pca_rank_score", "quartile_points", "solve_weights"]

JOURNAL_BLEND: dict[str, float] = {"if_percentile": 0.70, "jcr": 0.15, "cas": 0.15}
QUARTILE_POINTS: dict[int, float] = {1: 100.0, 2: 75.0, 3: 50.0, 4: 25.0}
_RANK_FORMULAS = ("(r-1)/(n-1)", "r/n")


def _vector(values: Any, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise SciprobeError(f"{name} must be numbers (None/NaN for missing)") from None
    if array.ndim != 1:
        raise SciprobeError(f"{name} must be a flat list")
    return array


def ati_total(dimension_scores: Any, weights: Mapping[str, float] | Sequence[float]) -> np.ndarray:
    """``Σ_i w_i·score_i`` for rows of seven dimension scores (A..G order or dicts keyed by ``DIMENSIONS``)."""
    from sciprobe.benchmarks.scitaste.scoring.composite import resolve_weights

    w, _ = resolve_weights(weights)
    rows = [[r[d] for d in DIMENSIONS] if isinstance(r, Mapping) else r for r in dimension_scores]
    matrix = np.asarray(rows, dtype=float).reshape(-1, 7) if rows else np.zeros((0, 7))
    if not np.isfinite(matrix).all() or (matrix < 0).any() or (matrix > 100).any():
        raise SciprobeError("dimension scores must be finite numbers in [0, 100]")
    return matrix @ w


def mean_rank_percentile(values: Any, rank_formula: str = "(r-1)/(n-1)") -> np.ndarray:
    """Map values to [0, 100] by their average rank (ties averaged): ``100·(r−1)/(n−1)`` or ``100·r/n``."""
    x = _vector(values, "values")
    if rank_formula not in _RANK_FORMULAS:
        raise SciprobeError(f"unknown rank_formula {rank_formula!r}; known: {', '.join(_RANK_FORMULAS)}")
    n = len(x)
    if n == 0:
        return x
    ranks = average_ranks(x)
    if rank_formula == "r/n":
        return 100.0 * ranks / n
    return np.full(n, 50.0) if n == 1 else 100.0 * (ranks - 1.0) / (n - 1.0)


def citation_score(citations: Any, population: Any | None = None, log_weight: float = 0.5) -> np.ndarray:
    """Dimension A: ``log_weight·100·log1p(c)/log1p(max_pop) + (1−log_weight)·100·share(pop < c)``.

    ``population`` (default: the citations themselves) is the reference set for the maximum and the
    percentile. ``log_weight`` is a reconstruction (the paper's blend coefficients are missing).
    """
    c = _vector(citations, "citations")
    pop = np.sort(c if population is None else _vector(population, "population"))
    if (c < 0).any() or not np.isfinite(c).all() or len(pop) == 0 or (pop < 0).any() or not np.isfinite(pop).all():
        raise SciprobeError("citation counts must be finite, >= 0, with a non-empty population")
    if not 0.0 <= log_weight <= 1.0:
        raise SciprobeError(f"log_weight must be in [0, 1], got {log_weight}")
    top = np.log1p(pop[-1])
    log_part = np.zeros_like(c) if top == 0 else np.minimum(100.0 * np.log1p(c) / top, 100.0)
    below = 100.0 * np.searchsorted(pop, c, side="left") / len(pop)   # strictly below the target
    return log_weight * log_part + (1.0 - log_weight) * below


def pca_rank_score(features: Any, rank_formula: str = "(r-1)/(n-1)") -> np.ndarray:
    """Dimensions B–F: rows = papers, columns = raw sub-parameters (NaN = missing), → scores in [0, 100].

    (1) impute each column's mean, columns with no value → 0; (2) z-score (constant column → 0); (3) project
    on PC1; (4) flip the sign when PC1 correlates negatively with the standardised variables (sum of the
    per-column correlations < 0); (5) mean-rank normalisation.
    """
    try:
        x = np.array(features, dtype=float)
    except (TypeError, ValueError):
        raise SciprobeError("features must be a numeric matrix (NaN for missing)") from None
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or len(x) == 0:
        raise SciprobeError("features must be a non-empty papers x sub-parameters matrix")
    missing = np.isnan(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN column: mean NaN, imputed with 0 below
        means = np.nanmean(x, axis=0)
    x = np.where(missing, np.nan_to_num(means, nan=0.0)[None, :], x)
    std = x.std(axis=0)
    z = np.divide(x - x.mean(axis=0), std, out=np.zeros_like(x), where=std > 0)
    if not z.any():
        return mean_rank_percentile(np.zeros(len(z)), rank_formula)
    _, _, vt = np.linalg.svd(z, full_matrices=False)
    pc1 = z @ vt[0]
    corr = [np.corrcoef(pc1, z[:, j])[0, 1] for j in range(z.shape[1]) if z[:, j].std() > 0]
    if np.nansum(corr) < 0:
        pc1 = -pc1
    return mean_rank_percentile(pc1, rank_formula)


def quartile_points(value: Any) -> float:
    """JCR quartile / CAS zone -> points: 1/"Q1"/"zone 1" → 100, 2 → 75, 3 → 50, 4 → 25; missing → 0."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value == "":
        return 0.0
    text = str(value).strip().lower().removeprefix("q").removeprefix("zone").strip()
    try:
        level = int(float(text))
    except ValueError:
        raise SciprobeError(f"unknown quartile/zone {value!r} (expected 1-4, Q1-Q4 or empty)") from None
    if level not in QUARTILE_POINTS:
        raise SciprobeError(f"quartile/zone must be 1-4, got {value!r}")
    return QUARTILE_POINTS[level]


def journal_impact(impact_factors: Any, jcr_quartiles: Sequence[Any], cas_zones: Sequence[Any],
                   rank_formula: str = "(r-1)/(n-1)") -> np.ndarray:
    """Dimension G: ``0.70·IF_pct + 0.15·JCR_points + 0.15·CAS_points``; IF_pct is the mean-rank percentile
    among the *observed* IFs of the population passed in; a missing IF scores 0."""
    ifs = _vector(impact_factors, "impact_factors")
    if not len(ifs) == len(jcr_quartiles) == len(cas_zones):
        raise SciprobeError("impact_factors, jcr_quartiles and cas_zones must have the same length")
    observed = ~np.isnan(ifs)
    if_pct = np.zeros(len(ifs))
    if observed.any():
        if_pct[observed] = mean_rank_percentile(ifs[observed], rank_formula)
    jcr = np.array([quartile_points(q) for q in jcr_quartiles])
    cas = np.array([quartile_points(z) for z in cas_zones])
    b = JOURNAL_BLEND
    return b["if_percentile"] * if_pct + b["jcr"] * jcr + b["cas"] * cas


@dataclass(frozen=True)
class WeightSolve:
    """Result of :func:`solve_weights`: weights by key, fit quality, and the checks against the known two."""

    weights: dict[str, float]
    rank: int
    n_papers: int
    rms_residual: float
    max_abs_residual: float
    known_weight_errors: dict[str, float]

    @property
    def exact(self) -> bool:
        """Full rank and residuals at rounding level (≤ 0.01 points RMS)."""
        return self.rank == 7 and self.rms_residual <= 0.01

    def checks_pass(self, tol: float = 0.002) -> bool:
        """Do the solved A and G weights match the paper's 0.294816 / 0.153112 within ``tol``?"""
        return all(abs(e) <= tol for e in self.known_weight_errors.values())


def solve_weights(dimension_scores: Any, totals: Any, sum_to_one: bool = True) -> WeightSolve:
    """Least-squares ATI weights from released gold: minimise ``‖D·w − t‖²`` (subject to ``Σw = 1`` when
    ``sum_to_one``, solved exactly through the KKT system). Exact when the totals are ``w·dims`` (spec §6.1);
    with rounded released values the residuals show the rounding. The known A/G weights are checks, never
    constraints, so a mismatch reveals a different composite definition."""
    rows = [[r[d] for d in DIMENSIONS] if isinstance(r, Mapping) else r for r in dimension_scores]
    d = np.asarray(rows, dtype=float)
    t = _vector(totals, "totals")
    if d.ndim != 2 or d.shape[1] != 7 or len(d) != len(t):
        raise SciprobeError("need one row of seven dimension scores per total")
    if not (np.isfinite(d).all() and np.isfinite(t).all()):
        raise SciprobeError("dimension scores and totals must be finite")
    if len(d) < 7:
        raise SciprobeError(f"need at least 7 papers to solve 7 weights, got {len(d)}")
    rank = int(np.linalg.matrix_rank(d))
    if sum_to_one:
        kkt = np.zeros((8, 8))
        kkt[:7, :7] = 2 * d.T @ d
        kkt[:7, 7] = kkt[7, :7] = 1.0
        rhs = np.append(2 * d.T @ t, 1.0)
        w = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:7]
    else:
        w = np.linalg.lstsq(d, t, rcond=None)[0]
    resid = d @ w - t
    weights = dict(zip(DIMENSIONS, w.tolist()))
    return WeightSolve(weights=weights, rank=rank, n_papers=len(d),
                       rms_residual=float(np.sqrt(np.mean(resid ** 2))),
                       max_abs_residual=float(np.abs(resid).max()),
                       known_weight_errors={k: weights[k] - v for k, v in KNOWN_WEIGHTS.items()})
