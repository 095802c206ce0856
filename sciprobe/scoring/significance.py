"""Paired significance tests between two systems (spec ``idrbench.md`` §5.3, §9.15).

IDRBench marks with ``*`` the I2R models "not significantly different from the best" by a Wilcoxon
signed-rank test whose details the paper leaves unstated. The spec's recorded default decision is used here:
**two-sided, paired per-query reciprocal rank, α = 0.05**, via :func:`scipy.stats.wilcoxon` with its default
``zero_method="wilcox"`` (zero differences are discarded) and ``method="auto"``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats

from sciprobe.core.errors import SciprobeError

__all__ = ["compare_to_best", "paired_wilcoxon"]

_ALTERNATIVES = ("two-sided", "greater", "less")
_ZERO_METHODS = ("wilcox", "pratt", "zsplit")


def _as_vector(x: Sequence[float], name: str) -> np.ndarray:
    try:
        arr = np.asarray(list(x), dtype=float)
    except (TypeError, ValueError):
        raise SciprobeError(f"{name} must be a sequence of numbers") from None
    if arr.ndim != 1:
        raise SciprobeError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise SciprobeError(f"{name} contains NaN or infinite values")
    return arr


def paired_wilcoxon(a: Sequence[float], b: Sequence[float], *, alpha: float = 0.05,
                    alternative: str = "two-sided", zero_method: str = "wilcox") -> dict[str, Any]:
    """Wilcoxon signed-rank test of paired per-query scores ``a`` vs ``b`` (spec §5.3 default decision).

    ``alternative="greater"`` tests whether ``a`` tends to exceed ``b``. When every difference is zero the
    systems are indistinguishable: ``p_value`` is 1.0 and ``statistic`` 0.0 (no exception).

    Returns a dict with ``statistic``, ``p_value``, ``significant`` (``p_value < alpha``), ``n`` (pairs),
    ``n_nonzero_differences``, ``mean_difference`` (mean of ``a - b``), and the settings used: ``alpha``,
    ``alternative``, ``zero_method``, ``test``.

    Raises:
        SciprobeError: length mismatch, empty or non-finite input, bad ``alpha`` / ``alternative`` /
            ``zero_method``.
    """
    if alternative not in _ALTERNATIVES:
        raise SciprobeError(f"alternative must be one of {list(_ALTERNATIVES)}, got {alternative!r}")
    if zero_method not in _ZERO_METHODS:
        raise SciprobeError(f"zero_method must be one of {list(_ZERO_METHODS)}, got {zero_method!r}")
    if not 0.0 < alpha < 1.0:
        raise SciprobeError(f"alpha must be in (0, 1), got {alpha!r}")
    x = _as_vector(a, "a")
    y = _as_vector(b, "b")
    if x.size != y.size:
        raise SciprobeError(f"paired samples differ in length: {x.size} vs {y.size}")
    if x.size == 0:
        raise SciprobeError("paired_wilcoxon needs at least one pair, got empty samples")
    diff = x - y
    n_nonzero = int(np.count_nonzero(diff))
    if n_nonzero == 0:
        statistic, p_value = 0.0, 1.0
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # tiny samples: scipy warns about its z value
            res = stats.wilcoxon(x, y, zero_method=zero_method, alternative=alternative)
        statistic = float(res.statistic)
        p_value = float(res.pvalue)
        if np.isnan(p_value):  # degenerate approximations on tiny samples: no evidence of a difference
            p_value = 1.0
    return {
        "statistic": statistic,
        "p_value": p_value,
        "significant": bool(p_value < alpha),
        "n": int(x.size),
        "n_nonzero_differences": n_nonzero,
        "mean_difference": float(diff.mean()),
        "alpha": alpha,
        "alternative": alternative,
        "zero_method": zero_method,
        "test": "scipy.stats.wilcoxon (paired signed-rank)",
    }


def compare_to_best(per_query: Mapping[str, Sequence[float]], *, alpha: float = 0.05,
                    alternative: str = "two-sided") -> dict[str, dict[str, Any]]:
    """Table-2 style marks: which systems are not significantly different from the best (spec §5.3).

    ``per_query`` maps a system name to its per-query scores (e.g. ``per_query_rr`` of :func:`ranking_metrics`,
    all aligned on the same queries). The best system is the one with the highest mean (first in mapping order
    on an exact tie). Every entry gets ``mean``, ``is_best`` and ``tied_with_best`` (``True`` when the paired
    Wilcoxon test against the best is not significant — the paper's ``*``; ``False`` for the best itself) plus
    the test result under ``test`` (``None`` for the best).
    """
    if not per_query:
        raise SciprobeError("compare_to_best needs at least one system")
    means: dict[str, float] = {}
    for name, v in per_query.items():
        arr = _as_vector(v, f"per_query[{name!r}]")
        if arr.size == 0:
            raise SciprobeError(f"per_query[{name!r}] is empty")
        means[name] = float(arr.mean())
    best = max(means, key=lambda k: means[k])
    out: dict[str, dict[str, Any]] = {}
    for name, scores in per_query.items():
        if name == best:
            out[name] = {"mean": means[name], "is_best": True, "tied_with_best": False, "test": None}
            continue
        test = paired_wilcoxon(per_query[best], scores, alpha=alpha, alternative=alternative)
        out[name] = {"mean": means[name], "is_best": False, "tied_with_best": not test["significant"],
                     "test": test}
    return out
