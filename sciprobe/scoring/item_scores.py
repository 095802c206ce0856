"""A headline metric as a statistic over items: what confidence intervals, breakdowns, score-vs-cutoff curves and
paired comparisons need.

A task's declaration turns its per-item records (and the score report of one mode) into :class:`ItemScores`:
per-item columns plus the name of a statistic in :data:`STATISTICS` that recomputes the headline from them. Every
statistic takes item *weights*, a ``(B, n)`` array of multiplicities (B bootstrap resamples: multinomial counts),
and group *masks*, a ``(k, n)`` 0/1 array, and gives the ``(B, k)`` values of every resample within every group in
one call. Items whose column holds NaN are not scored in that mode
(e.g. the official IDRBench mode drops unparsable answers) and never enter the statistic.

``sciprobe.results.analysis`` checks that the statistic over all items gives the scorer's own headline before it
reports
an interval, so a statistic that drifts from its scorer shows up as a note, never as a wrong interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError

__all__ = ["ItemScores", "STATISTICS", "evaluate_statistic", "mean_items", "binary_f1_items", "wape_items",
           "delta_share_r2_items"]

Statistic = Callable[[Mapping[str, np.ndarray], np.ndarray, Mapping[str, Any], np.ndarray], np.ndarray]

#: paired tests a task may ask for (``ItemScores.test``); the paired bootstrap is always reported too
TESTS = ("mcnemar", "wilcoxon", "paired_bootstrap")


@dataclass
class ItemScores:
    """The headline of one mode as ``STATISTICS[statistic](columns, weights, params)``.

    ``columns`` hold one number per record (None/NaN: the item is not scored in this mode); ``failed`` flags the
    items the score report counts as failed (coverage per group); ``test`` is the paired test that fits the metric
    (None: McNemar when every value is 0/1 under the ``mean`` statistic, else the paired bootstrap)."""

    statistic: str
    columns: dict[str, Sequence[float | None]]
    failed: Sequence[bool]
    params: dict[str, Any] = field(default_factory=dict)
    test: str | None = None

    def __post_init__(self) -> None:
        if self.statistic not in STATISTICS:
            raise SciprobeError(f"unknown item statistic {self.statistic!r}; known: {', '.join(STATISTICS)}")
        if self.test is not None and self.test not in TESTS:
            raise SciprobeError(f"unknown paired test {self.test!r}; known: {', '.join(TESTS)}")
        lengths = {len(c) for c in self.columns.values()} | {len(self.failed)}
        if len(lengths) != 1:
            raise SciprobeError(f"item columns differ in length: {sorted(lengths)}")

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: _floats(values) for name, values in self.columns.items()}

    def scored(self) -> np.ndarray:
        """Items that enter the statistic (a number in every column it reads)."""
        arrays = self.arrays()
        needed = _NEEDED[self.statistic]
        ok = np.ones(len(self.failed), dtype=bool)
        for name in needed:
            ok &= ~np.isnan(arrays[name])
        return ok

    def value(self) -> float:
        """The statistic over every item (weight 1 each)."""
        return float(evaluate_statistic(self.statistic, self.arrays(), np.ones((1, len(self.failed))),
                                        self.params)[0])

    def paired_test(self) -> str:
        if self.test:
            return self.test
        if self.statistic == "mean":
            values = self.arrays()["value"]
            finite = values[~np.isnan(values)]
            if finite.size and np.isin(finite, (0.0, 1.0)).all():
                return "mcnemar"
        return "paired_bootstrap"

    def as_json(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "params": self.params, "test": self.paired_test(),
                "columns": {k: [None if math.isnan(v) else v for v in a.tolist()] for k, a in self.arrays().items()},
                "failed": [bool(f) for f in self.failed]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ItemScores:
        return cls(data["statistic"], dict(data["columns"]), list(data["failed"]), dict(data.get("params") or {}),
                   data.get("test"))


def _floats(values: Sequence[Any]) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


# ---------------------------------------------------------------- statistics
# Each statistic maps weights (B, n) and group masks (k, n) to (B, k): the statistic of every resample restricted to
# every group, through matrix products (a 50,000-item task with ten groups stays a handful of BLAS calls).

def _present(*columns: np.ndarray) -> np.ndarray:
    ok = np.ones(columns[0].shape, dtype=bool)
    for column in columns:
        ok &= ~np.isnan(column)
    return ok


def _sums(w: np.ndarray, masks: np.ndarray, *values: np.ndarray) -> list[np.ndarray]:
    """``w @ (value * mask).T`` for each value: (B, k) weighted sums of ``value`` within every group."""
    return [w @ (masks * v).T for v in values]


def _mean(cols: Mapping[str, np.ndarray], w: np.ndarray, params: Mapping[str, Any], masks: np.ndarray) -> np.ndarray:
    v = cols["value"]
    ok = _present(v)
    num, den = _sums(w, masks, np.where(ok, v, 0.0), ok.astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan) * float(params.get("scale", 1.0))


def _binary_f1(cols: Mapping[str, np.ndarray], w: np.ndarray, params: Mapping[str, Any],
               masks: np.ndarray) -> np.ndarray:
    """Macro-F1 over {no, yes} from weighted confusion counts. ``labels="both"``: both classes always (a class
    absent from gold and predictions scores 0); ``"official"``: no number (NaN) unless both classes occur in gold
    or predictions (upstream's 2x2 confusion matrix)."""
    gold, pred = cols["gold"], cols["pred"]
    ok = _present(gold, pred)
    g, p = ok & (gold > 0.5), ok & (pred > 0.5)
    tp, fp, fn, tn = _sums(w, masks, (g & p).astype(float), (~g & p).astype(float), (g & ~p & ok).astype(float),
                           (~g & ~p & ok).astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        f1_yes = np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
        f1_no = np.where(2 * tn + fp + fn > 0, 2 * tn / (2 * tn + fp + fn), 0.0)
    macro = (f1_yes + f1_no) / 2
    if params.get("labels", "both") == "official":
        macro = np.where((tp + fn + fp > 0) & (tn + fn + fp > 0), macro, np.nan)
    else:
        macro = np.where(tp + fp + fn + tn > 0, macro, np.nan)
    return macro * float(params.get("scale", 1.0))


def _wape_score(cols: Mapping[str, np.ndarray], w: np.ndarray, params: Mapping[str, Any],
                masks: np.ndarray) -> np.ndarray:
    """Pooled WAPE % (sum |p - g| / sum g) mapped to a score through ``params["knots"]`` ([[x...], [y...]];
    without knots: the WAPE % itself)."""
    pred, gold = cols["pred"], cols["gold"]
    ok = _present(pred, gold)
    err, den = _sums(w, masks, np.where(ok, np.abs(pred - gold), 0.0), np.where(ok, gold, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        pct = np.where(den > 0, 100.0 * err / den, np.nan)
    knots = params.get("knots")
    if not knots:
        return pct
    x, y = np.asarray(knots[0], dtype=float), np.asarray(knots[1], dtype=float)
    return np.where(np.isnan(pct), np.nan, np.interp(np.nan_to_num(pct), x, y, right=y[-1]))


def _weighted_r2(gold: np.ndarray, pred: np.ndarray, w: np.ndarray) -> np.ndarray:
    """R² (gold first, as sklearn) per weight row; sklearn's convention for constant gold: 1 if perfect, else 0."""
    den = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (w * gold).sum(axis=1) / den
        ss_tot = (w * (gold - mean[:, None]) ** 2).sum(axis=1)
        ss_res = (w * (gold - pred) ** 2).sum(axis=1)
        r2 = np.where(ss_tot > 0, 1 - ss_res / ss_tot, np.where(ss_res == 0, 1.0, 0.0))
    return np.where(den > 0, r2, np.nan)


def _delta_share_r2(cols: Mapping[str, np.ndarray], w: np.ndarray, params: Mapping[str, Any],
                    masks: np.ndarray) -> np.ndarray:
    """R² of predicted vs gold share changes over units (PreScience-style topic trends). ``shares``:
    ``"label-mass"`` (each count over the resample's total, uniform when the total is 0) or ``"per-paper"``
    (counts over the fixed ``history_papers`` / ``forecast_papers``). Shares depend on every unit of the group,
    so groups are computed one by one."""
    pred, gold, hist = np.nan_to_num(cols["pred"]), cols["gold"], cols["history"]
    ok = _present(gold, hist)
    out = []
    for mask in masks:
        keep = ok & (mask > 0)
        p, g, h, ww = pred[keep], gold[keep], hist[keep], w[:, keep]
        if params.get("shares", "label-mass") == "per-paper":
            fp, hp = float(params["forecast_papers"]), float(params["history_papers"])
            d_pred = np.broadcast_to(p / fp - h / hp, ww.shape)
            d_gold = np.broadcast_to(g / fp - h / hp, ww.shape)
        else:
            n = ww.sum(axis=1, keepdims=True)

            def shares(counts: np.ndarray) -> np.ndarray:
                total = ww @ counts
                with np.errstate(invalid="ignore", divide="ignore"):
                    return np.where(total[:, None] > 0, counts[None, :] / total[:, None], 1.0 / n)

            d_hist = shares(h)
            d_pred, d_gold = shares(p) - d_hist, shares(g) - d_hist
        out.append(_weighted_r2(d_gold, d_pred, ww))
    return np.stack(out, axis=1)


STATISTICS: dict[str, Statistic] = {"mean": _mean, "binary_macro_f1": _binary_f1, "wape_score": _wape_score,
                                    "delta_share_r2": _delta_share_r2}
_NEEDED = {"mean": ("value",), "binary_macro_f1": ("gold", "pred"), "wape_score": ("gold", "pred"),
           "delta_share_r2": ("gold", "history")}


def evaluate_statistic(statistic: str, columns: Mapping[str, np.ndarray], weights: np.ndarray,
                       params: Mapping[str, Any] | None = None, masks: np.ndarray | None = None) -> np.ndarray:
    """``STATISTICS[statistic]`` for every weight row: ``(B,)``, or ``(B, k)`` with ``masks`` (k groups of
    items); NaN where the statistic is undefined (nothing scored)."""
    if statistic not in STATISTICS:
        raise SciprobeError(f"unknown item statistic {statistic!r}; known: {', '.join(STATISTICS)}")
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    grouped = masks is not None
    m = np.atleast_2d(np.asarray(masks, dtype=float)) if grouped else np.ones((1, w.shape[1]))
    out = np.asarray(STATISTICS[statistic](columns, w, params or {}, m), dtype=float)
    return out if grouped else out[:, 0]


# ---------------------------------------------------------------- constructors used by declarations

def mean_items(values: Sequence[float | None], failed: Sequence[bool], *, scale: float = 1.0,
               test: str | None = None) -> ItemScores:
    """A headline that is ``scale`` × the mean of per-item values (None: not scored in this mode)."""
    params = {"scale": scale} if scale != 1.0 else {}
    return ItemScores("mean", {"value": list(values)}, list(failed), params, test)


def binary_f1_items(gold: Sequence[bool], pred: Sequence[bool | None], failed: Sequence[bool], *,
                    official: bool) -> ItemScores:
    """Macro-F1 over yes/no; ``pred`` None = dropped (not scored). ``official``: no number with one class left."""
    return ItemScores("binary_macro_f1", {"gold": [float(bool(g)) for g in gold],
                                          "pred": [None if p is None else float(bool(p)) for p in pred]},
                      list(failed), {"labels": "official" if official else "both"})


def wape_items(pred: Sequence[float | None], gold: Sequence[float], failed: Sequence[bool],
               knots: tuple[Sequence[float], Sequence[float]] | None) -> ItemScores:
    params = {"knots": [list(map(float, knots[0])), list(map(float, knots[1]))]} if knots is not None else {}
    return ItemScores("wape_score", {"pred": list(pred), "gold": list(gold)}, list(failed), params)


def delta_share_r2_items(pred: Sequence[float | None], gold: Sequence[float], history: Sequence[float],
                         failed: Sequence[bool], **params: Any) -> ItemScores:
    return ItemScores("delta_share_r2", {"pred": list(pred), "gold": list(gold), "history": list(history)},
                      list(failed), dict(params))
