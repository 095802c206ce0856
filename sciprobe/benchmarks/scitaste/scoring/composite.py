"""SciTaste-Bench Scheme 1: correlation + dimension-accuracy composite (spec ``scitaste.md`` §4.1, §6.3, §6.4, §6.7).

Known from the paper: Part A (50 %) = Spearman 15 %, Pearson 10 %, MAE & MSE 15 %, |Bias| 10 % on the ATI total;
Part B (50 %) = weighted mean per-dimension Spearman 30 %, weighted mean per-dimension MAE 20 %; classes
≥ 80 excellent, ≥ 60 moderate, ≥ 40 poor, < 40 unusable. ``Final = Σ sub-weight · sub-score``.

**Reconstructed** (the paper does not say how a statistic becomes a 0–100 sub-score; preset
``"scitaste-v1-placeholder"``, every report is labelled ``mode="reconstructed"``):
    s_ρ = 100·max(0, ρ); s_r = 100·max(0, r); undefined correlation (constant input) → 0 and listed in
    ``undefined_correlations``; s_err = mae_share·(100 − MAE) + (1 − mae_share)·(100 − RMSE), clipped to
    [0, 100] (``mae_share`` = 0.5: the MAE/MSE split is not stated; RMSE puts MSE on the score scale);
    s_bias = max(0, 100 − |Bias|); s_dimρ = 100·max(0, Σ_d w_d ρ_d) (an undefined ρ_d contributes 0);
    s_dimMAE = max(0, 100 − Σ_d w_d MAE_d).

Dimension weights w_d are Table 3 of the paper (**missing**): pass ``weights`` (e.g. the least-squares solve of
``sciprobe.benchmarks.scitaste.ati.solve_weights``). Without them the known A = 0.294816 and G = 0.153112 are
used and B–F share 0.552072 equally — a **placeholder**, reported as ``weights_source="placeholder"``.

Input rows are ``[total, A, B, C, D, E, F, G]`` (``COLUMNS``). A prediction row with any NaN/None is a failed
item: excluded from both parts (the paper drops failures) and counted in ``n_failed``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.score_report import Coverage, ScoreReport
from sciprobe.benchmarks.scitaste.scoring.taste_dimensions import COLUMNS, DIMENSIONS, KNOWN_WEIGHTS
from sciprobe.benchmarks.scitaste.scoring.wape import apply_prediction_policies, as_float_array, check_references

__all__ = ["CLASSES", "COLUMNS", "DIMENSIONS", "KNOWN_WEIGHTS", "SUBWEIGHTS", "average_ranks", "classify",
           "pearson", "placeholder_weights", "resolve_weights", "scheme1_from_stats", "scitaste_composite",
           "spearman"]

#: Scheme-1 sub-weights (paper-stated).
SUBWEIGHTS: dict[str, float] = {"spearman": 0.15, "pearson": 0.10, "error": 0.15, "bias": 0.10,
                                "dim_spearman": 0.30, "dim_mae": 0.20}
CLASSES: tuple[tuple[float, str], ...] = ((80.0, "excellent"), (60.0, "moderate"), (40.0, "poor"),
                                          (float("-inf"), "unusable"))


def placeholder_weights() -> dict[str, float]:
    """Known A and G; B–F split the remaining 0.552072 equally. Not the paper's Table 3."""
    rest = (1.0 - sum(KNOWN_WEIGHTS.values())) / 5
    return {d: KNOWN_WEIGHTS.get(d, rest) for d in DIMENSIONS}


def resolve_weights(weights: Mapping[str, float] | Sequence[float] | None) -> tuple[np.ndarray, str]:
    """-> (7 weights in ``DIMENSIONS`` order, source label). Weights must be ≥ 0 and sum to 1 (± 1e-3)."""
    if weights is None:
        return np.array(list(placeholder_weights().values())), "placeholder"
    if isinstance(weights, Mapping):
        missing = [d for d in DIMENSIONS if d not in weights]
        extra = [k for k in weights if k not in DIMENSIONS]
        if missing or extra:
            raise SciprobeError(f"weights need exactly the seven dimension keys; missing {missing}, unknown {extra}")
        vector = [weights[d] for d in DIMENSIONS]
    else:
        vector = list(weights)
    w = as_float_array(vector, "weights")
    if w.shape != (7,) or not np.isfinite(w).all():
        raise SciprobeError("weights must be seven finite numbers (A..G)")
    if (w < 0).any() or abs(w.sum() - 1.0) > 1e-3:
        raise SciprobeError(f"weights must be >= 0 and sum to 1, got sum {w.sum():.6f}")
    return w, "given"


def average_ranks(x: np.ndarray, in_range: bool = False) -> np.ndarray:
    """1-based ranks of each column, ties averaged (scipy ``rankdata(method="average")``).

    Fast path: values on a 0.01 grid in [0, 100] (integer or two-decimal scores) are ranked by counting, O(n);
    ``in_range=True`` skips the [0, 100] check when the caller has validated the values.
    """
    if x.ndim == 2:
        return np.column_stack([average_ranks(x[:, j], in_range) for j in range(x.shape[1])])
    n = len(x)
    q = np.multiply(x, 100.0)
    np.rint(q, out=q)
    if n and (in_range or (x.min() >= 0 and x.max() <= 100)):
        back = np.divide(q, 100.0)
        if np.array_equal(back, x):
            idx = q.astype(np.int32)
            counts = np.bincount(idx, minlength=10001)
            avg = np.cumsum(counts) - (counts - 1) / 2.0
            return avg[idx]
    order = np.argsort(x)
    xs = x[order]
    new = np.empty(n, dtype=bool)
    new[:1] = True
    np.not_equal(xs[1:], xs[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], n)
    ranks = np.empty(n)
    ranks[order] = ((starts + ends + 1) / 2.0)[np.cumsum(new) - 1]
    return ranks


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Inner product without BLAS: ``np.dot`` hands 10^6-element vectors to a threaded BLAS whose threads
    spin on a busy machine (measured 16 ms vs 0.3 ms for ``einsum`` at n = 10^6)."""
    return float(np.einsum("i,i->", a, b))


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson r; NaN when either input is constant or there are fewer than two items (undefined)."""
    if len(a) < 2:
        return float("nan")
    da, db = a - a.mean(), b - b.mean()
    sa, sb = float(_dot(da, da)), float(_dot(db, db))
    if sa == 0 or sb == 0:
        return float("nan")
    return float(np.clip(_dot(da, db) / np.sqrt(sa * sb), -1.0, 1.0))


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman ρ = Pearson r of average ranks; NaN when undefined."""
    if len(a) < 2:
        return float("nan")
    return pearson(average_ranks(a), average_ranks(b))


def classify(final: float | None) -> str | None:
    if final is None or np.isnan(final):
        return None
    return next(label for bound, label in CLASSES if final >= bound)


def scheme1_from_stats(stats: Mapping[str, float], mae_share: float = 0.5) -> dict[str, Any]:
    """Sub-scores, parts and final from the statistics (keys ``spearman, pearson, mae, rmse, bias,
    weighted_dim_spearman, weighted_dim_mae``); NaN correlations count 0. Pure arithmetic, no data."""
    if not 0.0 <= mae_share <= 1.0:
        raise SciprobeError(f"mae_share must be in [0, 1], got {mae_share}")

    def corr(v: float) -> float:
        return 0.0 if v is None or np.isnan(v) else 100.0 * max(0.0, float(v))

    err = mae_share * (100.0 - stats["mae"]) + (1.0 - mae_share) * (100.0 - stats["rmse"])
    sub = {"spearman": corr(stats["spearman"]), "pearson": corr(stats["pearson"]),
           "error": float(np.clip(err, 0.0, 100.0)), "bias": max(0.0, 100.0 - abs(stats["bias"])),
           "dim_spearman": corr(stats["weighted_dim_spearman"]),
           "dim_mae": max(0.0, 100.0 - stats["weighted_dim_mae"])}
    part_a = sum(SUBWEIGHTS[k] * sub[k] for k in ("spearman", "pearson", "error", "bias"))
    part_b = sum(SUBWEIGHTS[k] * sub[k] for k in ("dim_spearman", "dim_mae"))
    final = part_a + part_b
    return {"final": final, "class": classify(final), "part_a": 2.0 * part_a, "part_b": 2.0 * part_b,
            "subscores": sub}


def scitaste_composite(predictions: Sequence[Sequence[Any]], references: Sequence[Sequence[float]], *,
                       weights: Mapping[str, float] | Sequence[float] | None = None, mae_share: float = 0.5,
                       failure_policy: str = "drop", out_of_range: str = "error") -> ScoreReport:
    """Scheme 1 (reconstructed sub-score mapping) over rows ``[total, A..G]``; see the module docstring.

    Values: ``final``, ``class``, ``part_a``/``part_b`` (each on its own 0–100 scale), ``subscores``,
    ``spearman``, ``pearson``, ``mae``, ``mse``, ``rmse``, ``bias``, ``dim_spearman``/``dim_mae`` (per key),
    ``weighted_dim_spearman``, ``weighted_dim_mae``, ``undefined_correlations``, ``weights``,
    ``weights_source`` and ``composite_consistency_mae`` = mean |reported total − Σ w·reported dims|
    (spec §6.4: the model's own composite is scored; this logs how far it is from its dimensions).
    """
    preds = as_float_array(predictions, "predictions")
    refs = as_float_array(references, "references")
    if preds.ndim != 2 or preds.shape[1:] != (8,) or refs.shape[1:] != (8,) or refs.ndim != 2:
        if len(preds) == len(refs) == 0:
            preds, refs = preds.reshape(0, 8), refs.reshape(0, 8)
        else:
            raise SciprobeError("predictions and references must be rows of 8 numbers [total, A..G]")
    if len(preds) != len(refs):
        raise SciprobeError(f"{len(preds)} predictions but {len(refs)} references")
    check_references(refs)
    w, source = resolve_weights(weights)
    preds, failed, n_clipped = apply_prediction_policies(preds, failure_policy, out_of_range)
    keep = ~failed if failure_policy == "drop" else np.ones(len(preds), dtype=bool)
    # one contiguous row per column (dimension-major): every per-column pass below reads contiguous memory
    pt, gt = np.ascontiguousarray(preds.T), np.ascontiguousarray(refs.T)
    if not keep.all():
        pt, gt = pt[:, keep], gt[:, keep]
    n_kept = pt.shape[1]
    coverage = Coverage(len(preds), n_kept, int(np.count_nonzero(failed)))
    params = {"subscores": "scitaste-v1-placeholder", "mae_share": mae_share, "failure_policy": failure_policy,
              "out_of_range": out_of_range}
    mode = "reconstructed" if failure_policy == "drop" else "reconstructed-strict"
    notes = ["sub-score mappings are a reconstruction (the paper does not give them)"]
    if source == "placeholder":
        notes.append("dimension weights B-F are a placeholder (equal split of 0.552072); pass weights=")
    base = {"weights": dict(zip(DIMENSIONS, w.tolist())), "weights_source": source, "n_clipped": n_clipped}
    if n_kept == 0:
        notes.append("no item could be scored")
        return ScoreReport("scitaste_composite", mode, {**base, "final": None, "class": None}, coverage, params, notes)
    rho = [pearson(average_ranks(pt[j], True), average_ranks(gt[j], True)) if n_kept > 1 else float("nan")
           for j in range(8)]  # values were validated to [0, 100] above
    diff = pt - gt
    mae_cols = np.abs(diff).mean(axis=1)
    stats = {"spearman": rho[0], "pearson": pearson(pt[0], gt[0]), "mae": float(mae_cols[0]),
             "mse": _dot(diff[0], diff[0]) / n_kept, "bias": float(diff[0].mean())}
    stats["rmse"] = float(np.sqrt(stats["mse"]))
    dim_rho = np.array(rho[1:])
    stats["weighted_dim_spearman"] = _dot(w, np.nan_to_num(dim_rho, nan=0.0))
    stats["weighted_dim_mae"] = _dot(w, mae_cols[1:])
    undefined = [name for name, r in zip(("spearman", "pearson"), (stats["spearman"], stats["pearson"]))
                 if np.isnan(r)]
    undefined += [f"dim_spearman:{d}" for d, r in zip(DIMENSIONS, dim_rho) if np.isnan(r)]
    if undefined:
        notes.append(f"undefined correlations scored as 0: {', '.join(undefined)}")
    values = {**scheme1_from_stats(stats, mae_share), **stats,
              "dim_spearman": {d: (None if np.isnan(r) else float(r)) for d, r in zip(DIMENSIONS, dim_rho)},
              "dim_mae": dict(zip(DIMENSIONS, mae_cols[1:].tolist())),
              "undefined_correlations": undefined,
              "composite_consistency_mae": float(np.abs(pt[0] - np.einsum("i,ij->j", w, pt[1:])).mean()), **base}
    for key in ("spearman", "pearson"):
        if np.isnan(values[key]):
            values[key] = None
    return ScoreReport("scitaste_composite", mode, values, coverage, params, notes)
