"""SciTaste-Bench Scheme 2: WAPE, letter grade A–F and the 0–100 score (spec ``scitaste.md`` §4.2, §4.4, §6.2,
§6.5–§6.9).

Known from the paper (``mode="paper"``):
    ``WAPE = Σ|pᵢ − gᵢ| / Σgᵢ`` over the successfully scored items (failures dropped), expressed in percent;
    grades A < 5 %, B 5–10 %, C 10–20 %, D 20–30 %, E 30–50 %, F ≥ 50 % (lower bound of each band inclusive);
    the A band maps to 90–100.

Reconstructed (documented parameter ``knots``):
    the 0–100 score is piecewise-linear in WAPE between the knots ``KNOTS_V1`` (preset
    ``"scitaste-v1-reconstructed"``): 0→100, 5→90, 10→75, 20→60, 30→40, 50→20, 100→0, and 0 beyond 100 %.
    It reproduces the paper's 13.1 % → 70.4 (grade C) and every stated grade; it does not reproduce the
    anomalous 74.4 % → 6.3 sub-run (gives 10.24), see the metric card.

Decisions (spec "decision needed"), recorded in the report's ``params`` and the metric card:
    - headline = pooled WAPE over all scored items; with ``groups`` the per-group breakdown and the macro
      average of the group scores / WAPEs are reported beside it (§4.2 "Aggregation").
    - a prediction that is ``None``/NaN is a failure: dropped (``failure_policy="drop"``, the paper) or scored
      as 0 (``"zero"``, the strict variant, ``mode="strict"``); always counted in ``n_failed``.
    - predictions outside [0, 100] raise (``out_of_range="error"``) or are clipped and counted (``"clip"``).
    - Σg = 0, NaN/negative/over-100 gold, mismatched lengths: :class:`SciprobeError`, never ``inf``.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.score_report import Coverage, ScoreReport

__all__ = ["GRADES", "GRADE_BOUNDS_PCT", "KNOTS_V1", "KNOT_PRESETS", "as_float_array", "grade_wape",
           "resolve_knots", "scheme2_score", "wape_grade"]

#: Paper-stated grade bands: upper bounds in percent, lower bound inclusive (A < 5 ≤ B < 10 ...).
GRADES: tuple[str, ...] = ("A", "B", "C", "D", "E", "F")
GRADE_BOUNDS_PCT: tuple[float, ...] = (5.0, 10.0, 20.0, 30.0, 50.0)

#: Reconstructed knots (WAPE % -> score), spec §4.2 ``scitaste-v1-reconstructed``; beyond the last knot: 0.
KNOTS_V1: tuple[tuple[float, float], ...] = ((0, 100), (5, 90), (10, 75), (20, 60), (30, 40), (50, 20), (100, 0))
KNOT_PRESETS: dict[str, tuple[tuple[float, float], ...]] = {"scitaste-v1-reconstructed": KNOTS_V1}

SCORE_RANGE: tuple[float, float] = (0.0, 100.0)
_FAILURE_POLICIES = {"drop": "paper", "zero": "strict"}
_OUT_OF_RANGE = ("error", "clip")


def resolve_knots(knots: Any = "scitaste-v1-reconstructed") -> tuple[np.ndarray, np.ndarray]:
    """Knot table (preset name or ``[[wape_pct, score], ...]``) -> (x, y) arrays, validated.

    Rules: at least two knots, first WAPE 0, WAPE strictly increasing, score non-increasing, scores in [0, 100].
    """
    if isinstance(knots, str):
        if knots not in KNOT_PRESETS:
            raise SciprobeError(f"unknown knots preset {knots!r}; known: {', '.join(KNOT_PRESETS)}")
        knots = KNOT_PRESETS[knots]
    try:
        table = np.asarray(knots, dtype=float)
    except (TypeError, ValueError):
        raise SciprobeError("knots must be a preset name or a list of [wape_pct, score] pairs") from None
    if table.ndim != 2 or table.shape[1] != 2 or len(table) < 2 or not np.isfinite(table).all():
        raise SciprobeError("knots must be at least two finite [wape_pct, score] pairs")
    x, y = table[:, 0], table[:, 1]
    if x[0] != 0 or np.any(np.diff(x) <= 0):
        raise SciprobeError("knot WAPE values must start at 0 and strictly increase")
    if np.any(np.diff(y) > 0) or y.min() < 0 or y.max() > 100:
        raise SciprobeError("knot scores must lie in [0, 100] and never increase with WAPE")
    return x, y


def grade_wape(wape_pct: float) -> str | None:
    """Letter grade of a WAPE in percent (paper bands; ``None`` for NaN)."""
    if wape_pct is None or np.isnan(wape_pct):
        return None
    if wape_pct < 0:
        raise SciprobeError(f"WAPE must be >= 0, got {wape_pct}")
    return GRADES[int(np.searchsorted(GRADE_BOUNDS_PCT, wape_pct, side="right"))]


def scheme2_score(wape_pct: float, knots: Any = "scitaste-v1-reconstructed") -> float | None:
    """0–100 score of a WAPE in percent by piecewise-linear interpolation between the knots (0 past the last)."""
    if wape_pct is None or np.isnan(wape_pct):
        return None
    if wape_pct < 0:
        raise SciprobeError(f"WAPE must be >= 0, got {wape_pct}")
    x, y = resolve_knots(knots)
    return float(np.interp(wape_pct, x, y, right=y[-1]))


def _rows_as_array(values: Any) -> np.ndarray | None:
    """A list of equal-length rows of numbers as one float64 array in a single pass (``np.fromiter`` over the
    chained rows: half the time of ``np.asarray``, which first walks every row to discover the shape); None
    when the input is anything else, and the general conversion decides."""
    if not isinstance(values, (list, tuple)) or not values or not isinstance(values[0], (list, tuple)):
        return None
    try:
        widths = set(map(len, values))
        if len(widths) != 1:
            return None
        width = widths.pop()
        flat = np.fromiter(chain.from_iterable(values), dtype=float, count=width * len(values))
    except (TypeError, ValueError):  # a row without len(), a value that is not a number: the general path
        return None
    return flat.reshape(len(values), width)


def as_float_array(values: Any, name: str) -> np.ndarray:
    """A float64 array; ``None`` becomes NaN; strings or ragged input raise a one-line error.

    The cyclic GC is paused while a Python sequence is converted: numpy walks every row object, and a
    collection triggered meanwhile re-walks millions of live lists for nothing (1,000,000 rows of 8:
    1.4 s -> 0.7 s for the composite in bench/scitaste_metrics.py)."""
    paused = not isinstance(values, np.ndarray) and gc.isenabled()
    if paused:
        gc.disable()
    try:
        array = _rows_as_array(values)
        if array is None:
            array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise SciprobeError(f"{name} must be numbers (None/NaN marks a failed prediction)") from None
    finally:
        if paused:
            gc.enable()
    return array


def check_references(refs: np.ndarray, name: str = "references") -> None:
    """Gold values must be finite and inside [0, 100] (ATI scale)."""
    bad = ~np.isfinite(refs)
    if bad.any():
        raise SciprobeError(f"{name}[{int(np.flatnonzero(bad.reshape(len(refs), -1).any(axis=1))[0])}] is NaN "
                            "or infinite; gold values must be numbers")
    lo, hi = SCORE_RANGE
    outside = (refs < lo) | (refs > hi)
    if outside.any():
        i = int(np.flatnonzero(outside.reshape(len(refs), -1).any(axis=1))[0])
        raise SciprobeError(f"{name}[{i}] = {refs[i].tolist()} is outside [0, 100]")


def apply_prediction_policies(preds: np.ndarray, failure_policy: str, out_of_range: str
                              ) -> tuple[np.ndarray, np.ndarray, int]:
    """-> (predictions after policies, row mask of failed items, number of clipped values).

    A row (item) fails when any of its values is NaN; ``"zero"`` replaces the missing values by 0.
    """
    if failure_policy not in _FAILURE_POLICIES:
        raise SciprobeError(f"unknown failure_policy {failure_policy!r} (drop, zero)")
    if out_of_range not in _OUT_OF_RANGE:
        raise SciprobeError(f"unknown out_of_range {out_of_range!r} (error, clip)")
    rows = preds.reshape(len(preds), -1)
    failed = np.isnan(rows).any(axis=1)
    if np.isinf(rows).any():
        raise SciprobeError("predictions contain infinity; use None/NaN for a failed prediction")
    lo, hi = SCORE_RANGE
    with np.errstate(invalid="ignore"):
        outside = (rows < lo) | (rows > hi)
    n_clipped = int(np.count_nonzero(outside))
    if n_clipped and out_of_range == "error":
        i = int(np.flatnonzero(outside.any(axis=1))[0])
        raise SciprobeError(f"predictions[{i}] = {preds[i].tolist()} is outside [0, 100] "
                            "(pass out_of_range='clip' to clip and count)")
    if n_clipped:
        preds = np.clip(preds, lo, hi)
    if failed.any() and failure_policy == "zero":
        preds = np.where(np.isnan(preds), 0.0, preds)
    return preds, failed, n_clipped


def _pooled(abs_err_sum: float, gold_sum: float, n: int, x: np.ndarray, y: np.ndarray, where: str) -> dict[str, Any]:
    if n == 0:
        return {"wape": float("nan"), "wape_pct": float("nan"), "score": None, "grade": None}
    if gold_sum <= 0:
        raise SciprobeError(f"sum of gold values is 0{where}; WAPE is undefined")
    wape = abs_err_sum / gold_sum
    pct = 100.0 * wape
    return {"wape": wape, "wape_pct": pct, "score": float(np.interp(pct, x, y, right=y[-1])),
            "grade": GRADES[int(np.searchsorted(GRADE_BOUNDS_PCT, pct, side="right"))]}


def wape_grade(predictions: Sequence[Any], references: Sequence[Any], *, groups: Sequence[Any] | None = None,
               knots: Any = "scitaste-v1-reconstructed", failure_policy: str = "drop",
               out_of_range: str = "error") -> ScoreReport:
    """Scheme 2 over predicted vs gold ATI totals (0–100); see the module docstring for every rule.

    Returns a :class:`ScoreReport` whose values hold ``wape`` (fraction), ``wape_pct``, ``score``, ``grade``,
    ``mae``, ``bias`` (mean p − g; positive = over-rating), ``n_clipped`` and, with ``groups``, ``by_group``
    (per group: wape_pct, score, grade, n_items, n_scored, n_failed), ``macro_score`` and ``macro_wape_pct``.
    """
    preds = as_float_array(predictions, "predictions")
    refs = as_float_array(references, "references")
    if preds.ndim != 1 or refs.ndim != 1:
        raise SciprobeError("predictions and references must be flat lists of numbers")
    if len(preds) != len(refs):
        raise SciprobeError(f"{len(preds)} predictions but {len(refs)} references")
    check_references(refs)
    x, y = resolve_knots(knots)
    preds, failed, n_clipped = apply_prediction_policies(preds, failure_policy, out_of_range)
    mode = _FAILURE_POLICIES[failure_policy]
    scored = ~failed if failure_policy == "drop" else np.ones(len(preds), dtype=bool)
    abs_err = np.abs(np.where(scored, preds, 0.0) - refs)
    abs_err[~scored] = 0.0
    gold = np.where(scored, refs, 0.0)
    n_scored = int(np.count_nonzero(scored))
    values = _pooled(float(abs_err.sum()), float(gold.sum()), n_scored, x, y, "")
    if n_scored:
        diff = np.where(scored, preds - refs, 0.0)
        values |= {"mae": float(abs_err.sum() / n_scored), "bias": float(diff.sum() / n_scored)}
    else:
        values |= {"mae": float("nan"), "bias": float("nan")}
    values["n_clipped"] = n_clipped
    notes = []
    if groups is not None:
        values |= _by_group(groups, abs_err, gold, scored, failed, x, y)
    if n_scored == 0:
        notes.append("no item could be scored: WAPE is NaN, score and grade are None")
    knots_param = knots if isinstance(knots, str) else [list(map(float, k)) for k in knots]
    return ScoreReport(metric="wape_grade", mode=mode, values=values,
                       coverage=Coverage(len(preds), n_scored, int(np.count_nonzero(failed))),
                       params={"knots": knots_param, "failure_policy": failure_policy, "out_of_range": out_of_range,
                               "aggregate": "pooled (headline); macro over groups as secondary"},
                       notes=notes)


def _by_group(groups: Sequence[Any], abs_err: np.ndarray, gold: np.ndarray, scored: np.ndarray,
              failed: np.ndarray, x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    import pandas as pd  # hash-based factorisation: O(n), unlike sorting 10^6 strings

    if len(groups) != len(abs_err):
        raise SciprobeError(f"{len(groups)} group labels for {len(abs_err)} items")
    inverse, uniques = pd.factorize(np.asarray(groups, dtype=object), sort=True)
    if (inverse < 0).any():
        raise SciprobeError("group labels must not be None/NaN")
    names = np.asarray([str(u) for u in uniques])
    k = len(names)
    err_sum = np.bincount(inverse, weights=abs_err, minlength=k)
    gold_sum = np.bincount(inverse, weights=gold, minlength=k)
    n_items = np.bincount(inverse, minlength=k)
    n_scored = np.bincount(inverse, weights=scored, minlength=k).astype(int)
    n_failed = np.bincount(inverse, weights=failed, minlength=k).astype(int)
    by_group = {}
    for j, name in enumerate(names.tolist()):
        row = _pooled(float(err_sum[j]), float(gold_sum[j]), int(n_scored[j]), x, y, f" in group {name!r}")
        by_group[name] = {"wape_pct": row["wape_pct"], "score": row["score"], "grade": row["grade"],
                          "n_items": int(n_items[j]), "n_scored": int(n_scored[j]), "n_failed": int(n_failed[j])}
    live = [g for g in by_group.values() if g["n_scored"]]
    return {"by_group": by_group,
            "macro_score": float(np.mean([g["score"] for g in live])) if live else None,
            "macro_wape_pct": float(np.mean([g["wape_pct"] for g in live])) if live else float("nan"),
            "n_groups_scored": len(live)}
