"""Regression metrics for count forecasts: PreScience T4 citation prediction (spec ``prescience.md`` §2 T4,
pitfall 12).

Raw space: MAE, R² (``sklearn.metrics.r2_score`` definition: 1 − SS_res/SS_tot; a constant gold vector gives
1.0 for a perfect forecast and 0.0 otherwise, sklearn's ``force_finite``), Pearson and Spearman (scipy).
Log space: predictions are clipped at 0, then MAE and Pearson of ``log1p(prediction)`` vs ``log1p(gold)``.
Gold counts must be non-negative finite numbers; a missing prediction (``None``) is a recorded failure:
excluded from the numbers (``missing="exclude"``, default) or scored as 0 (``missing="zero"``), never
silently dropped. A correlation over constant inputs is undefined and reported as ``None`` with a note.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.score_report import Coverage, ScoreReport

__all__ = ["citation_forecast", "r2_score", "regression_block"]


def r2_score(gold: np.ndarray, pred: np.ndarray) -> float:
    ss_res = float(np.sum((gold - pred) ** 2))
    ss_tot = float(np.sum((gold - gold.mean()) ** 2))
    if ss_tot == 0.0:
        return 1.0 if ss_res == 0.0 else 0.0
    return 1.0 - ss_res / ss_tot


def _corr(kind: str, a: np.ndarray, b: np.ndarray) -> float | None:
    from scipy import stats

    if a.size < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return None
    value = (stats.pearsonr if kind == "pearson" else stats.spearmanr)(a, b)[0]
    return None if math.isnan(value) else float(value)


def regression_block(gold: np.ndarray, pred: np.ndarray, prefix: str = "") -> dict[str, Any]:
    """MAE, R², Pearson, Spearman of ``pred`` against ``gold`` (keys prefixed)."""
    return {f"{prefix}mae": float(np.mean(np.abs(gold - pred))), f"{prefix}r2": r2_score(gold, pred),
            f"{prefix}pearson": _corr("pearson", gold, pred), f"{prefix}spearman": _corr("spearman", gold, pred)}


def _as_numbers(values: Sequence[Any], name: str, allow_none: bool) -> tuple[np.ndarray, np.ndarray]:
    out = np.zeros(len(values))
    missing = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        if v is None and allow_none:
            missing[i] = True
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise SciprobeError(f"{name}[{i}] must be a number, got {v!r}")
        if not math.isfinite(float(v)):
            raise SciprobeError(f"{name}[{i}] must be finite, got {v!r}")
        out[i] = float(v)
    return out, missing


def citation_forecast(predictions: Sequence[float | None], references: Sequence[float], *,
                      missing: str = "exclude") -> ScoreReport:
    """Citation-count forecast metrics (T4). ``references`` = gold 12-month counts (``label_12m``)."""
    if missing not in ("exclude", "zero"):
        raise SciprobeError(f"missing must be 'exclude' or 'zero', got {missing!r}")
    if len(predictions) != len(references):
        raise SciprobeError(f"predictions and references differ in length: {len(predictions)} vs {len(references)}")
    if not len(references):
        raise SciprobeError("citation_forecast needs at least one item")
    gold, _ = _as_numbers(references, "references", allow_none=False)
    if np.any(gold < 0):
        i = int(np.flatnonzero(gold < 0)[0])
        raise SciprobeError(f"references[{i}] is a negative citation count ({references[i]!r})")
    pred, failed = _as_numbers(predictions, "predictions", allow_none=True)
    n_failed = int(failed.sum())
    notes = []
    if n_failed:
        notes.append(f"{n_failed} missing prediction(s) " + ("excluded" if missing == "exclude" else "scored as 0"))
    keep = ~failed if missing == "exclude" else np.ones(len(gold), dtype=bool)
    n_negative = int(np.sum(pred[keep] < 0))
    if n_negative:
        notes.append(f"{n_negative} negative prediction(s) clipped at 0 for the log1p metrics")
    g, p = gold[keep], pred[keep]
    values: dict[str, Any] = {"n": int(keep.sum())}
    if g.size:
        values.update(regression_block(g, p))
        lg, lp = np.log1p(g), np.log1p(np.clip(p, 0, None))
        values.update({"log1p_mae": float(np.mean(np.abs(lg - lp))), "log1p_pearson": _corr("pearson", lg, lp)})
    else:
        values.update({k: None for k in ("mae", "r2", "pearson", "spearman", "log1p_mae", "log1p_pearson")})
    if any(values.get(k) is None for k in ("pearson", "spearman")) and g.size:
        notes.append("a correlation is undefined (constant or single-item input) and reported as None")
    return ScoreReport(metric="citation_forecast", mode="official", values=values,
                       coverage=Coverage(n_items=len(gold), n_scored=int(keep.sum()), n_failed=n_failed),
                       params={"missing": missing}, notes=notes)
