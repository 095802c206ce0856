"""Topic-trend forecast metrics: PreScience T6 (topics) and T7 (topic pairs) (spec ``prescience.md`` §2 T6/T7,
pitfall 11).

Target: the change in a unit's share between the history and the forecast period, Δs = s_forecast − s_history.

``official`` (upstream ``evaluate.py``; matches Table 5): predictions are forecast-period *counts*, clipped at
0; shares are label-mass shares normalised across units — ``share_pred = pred/Σpred``, ``share_gt = gt/Σgt``,
``history_share = history/Σhistory`` — with a uniform fallback when a sum is 0. The headline ``delta_share``
block is R² (sklearn definition, gold first), Pearson, Spearman and MAE of ``share_pred − history_share`` vs
``share_gt − history_share``; ``share`` and ``absolute`` (counts) blocks are reported too.

``paper`` (the paper's wording): s(z) = fraction of the period's evaluated papers labelled z, so shares are
``count / n_papers`` of the period (``history_papers``, ``forecast_papers``); predicted counts are divided by
``forecast_papers``. Units can sum to more than 1 (multilabel papers).

A missing prediction (``None``) is a recorded failure scored as 0 (the evaluator's clipping would do the same
to a negative count); negative gold or history counts are errors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError
from sciprobe.benchmarks.prescience.scoring.forecast import regression_block
from sciprobe.scoring.score_report import Coverage, ScoreReport

__all__ = ["MODES", "topic_trend"]

MODES = ("official", "paper")


def _counts(values: Sequence[Any], name: str, allow_none: bool = False) -> tuple[np.ndarray, int]:
    out = np.zeros(len(values))
    n_none = 0
    for i, v in enumerate(values):
        if v is None and allow_none:
            n_none += 1
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
            raise SciprobeError(f"{name}[{i}] must be a finite number, got {v!r}")
        if not allow_none and v < 0:
            raise SciprobeError(f"{name}[{i}] is a negative count ({v!r})")
        out[i] = float(v)
    return out, n_none


def _shares(counts: np.ndarray) -> np.ndarray:
    total = counts.sum()
    return counts / total if total > 0 else np.full(counts.size, 1.0 / counts.size)


def topic_trend(predictions: Sequence[float | None], references: Sequence[float], history: Sequence[float], *,
                mode: str = "official", history_papers: int | None = None,
                forecast_papers: int | None = None) -> ScoreReport:
    """Δ-share metrics over units. ``references`` = gold forecast counts, ``history`` = history counts."""
    if mode not in MODES:
        raise SciprobeError(f"unknown topic_trend mode {mode!r} ({', '.join(MODES)})")
    if not (len(predictions) == len(references) == len(history)):
        raise SciprobeError(f"predictions, references and history differ in length: "
                            f"{len(predictions)}, {len(references)}, {len(history)}")
    if not len(references):
        raise SciprobeError("topic_trend needs at least one unit")
    gold, _ = _counts(references, "references")
    hist, _ = _counts(history, "history")
    pred, n_missing = _counts(predictions, "predictions", allow_none=True)
    n_negative = int(np.sum(pred < 0))
    pred = np.clip(pred, 0, None)
    notes = []
    if n_missing:
        notes.append(f"{n_missing} missing prediction(s) scored as count 0")
    if n_negative:
        notes.append(f"{n_negative} negative predicted count(s) clipped at 0")
    if mode == "official":
        share_pred, share_gt, share_hist = _shares(pred), _shares(gold), _shares(hist)
        params: dict[str, Any] = {"shares": "label-mass"}
    else:
        if not history_papers or not forecast_papers or history_papers < 0 or forecast_papers < 0:
            raise SciprobeError("mode='paper' needs positive history_papers and forecast_papers")
        share_pred, share_gt, share_hist = pred / forecast_papers, gold / forecast_papers, hist / history_papers
        params = {"shares": "per-paper", "history_papers": history_papers, "forecast_papers": forecast_papers}
    delta_gt, delta_pred = share_gt - share_hist, share_pred - share_hist
    values: dict[str, Any] = {"n_units": int(gold.size)}
    values.update(regression_block(delta_gt, delta_pred, "delta_share_"))
    values.update(regression_block(share_gt, share_pred, "share_"))
    values.update(regression_block(gold, pred, "absolute_"))
    return ScoreReport(metric="topic_trend", mode=mode, values=values,
                       coverage=Coverage(n_items=int(gold.size), n_scored=int(gold.size), n_failed=n_missing),
                       params=params, notes=notes)
