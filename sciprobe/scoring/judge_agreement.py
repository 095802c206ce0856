"""Agreement between two judges of the same responses, with bootstrap intervals (pure: scores in, numbers out).

What ``sciprobe judge-check`` reports (issue 26 item 4; PreScience Table 9 and Appendix B.3):

- :func:`score_agreement`: over the items both judges scored, Pearson r, Spearman rho and Kendall tau_b
  (``scipy.stats``), each with a seeded percentile bootstrap interval over items;
- :func:`label_agreement`: Cohen's kappa (unweighted) on the judges' labels, with the same interval, and the raw
  share of identical labels;
- :func:`ranking_change`: each model's mean under either judge, the two model rankings, whether they differ and
  tau_b between the model means (Table 9 compares models, not items);
- :func:`swap_consistency`: for a pairwise judge asked twice with the two answers' positions swapped, the share
  of (item, dimension) votes that name the same answer both times (position bias shows as inconsistency).

Decisions: a statistic that is undefined (fewer than two items, a constant side) is None, never 0; bootstrap
resamples where it is undefined are left out and counted (``n_defined``). Items one judge left unscored are
left out and counted in ``n_only_a`` / ``n_only_b``: a judge's silence is no verdict.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from sciprobe.scoring.bootstrap import BootstrapSettings, interval

__all__ = ["cohen_kappa", "label_agreement", "ranking_change", "score_agreement", "swap_consistency"]

Statistic = Callable[[np.ndarray, np.ndarray], float | None]


def _defined(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _varies(x: np.ndarray, y: np.ndarray) -> bool:
    return len(x) >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0


def pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    from scipy.stats import pearsonr

    return _defined(pearsonr(x, y).statistic) if _varies(x, y) else None


def spearman(x: np.ndarray, y: np.ndarray) -> float | None:
    from scipy.stats import spearmanr

    return _defined(spearmanr(x, y).statistic) if _varies(x, y) else None


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float | None:
    from scipy.stats import kendalltau

    return _defined(kendalltau(x, y, variant="b").statistic) if _varies(x, y) else None


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float | None:
    """Unweighted Cohen's kappa, (p_o - p_e) / (1 - p_e); None when undefined (no items, or both judges give one
    and the same label to everything, so chance agreement is already 1)."""
    n = len(a)
    if n == 0:
        return None
    labels = sorted({*a, *b}, key=str)
    observed = sum(x == y for x, y in zip(a, b)) / n
    expected = sum((list(a).count(label) / n) * (list(b).count(label) / n) for label in labels)
    return None if expected >= 1.0 else (observed - expected) / (1.0 - expected)


def _bootstrap(statistic: Callable[[np.ndarray], float | None], n: int, settings: BootstrapSettings
               ) -> dict[str, Any]:
    """Percentile interval of ``statistic(indices)`` over item resamples."""
    if n < 2:
        return {"ci95_low": None, "ci95_high": None, "n_defined": 0}
    rng = np.random.default_rng(settings.seed)
    samples = np.full(settings.n_resamples, np.nan)
    for k in range(settings.n_resamples):
        value = statistic(rng.integers(0, n, size=n))
        if value is not None:
            samples[k] = value
    low, high, n_defined = interval(samples, settings.confidence)
    return {"ci95_low": low, "ci95_high": high, "n_defined": n_defined}


def _common(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[list[str], dict[str, int]]:
    common = sorted(set(a) & set(b))
    return common, {"n": len(common), "n_only_a": len(set(a) - set(b)), "n_only_b": len(set(b) - set(a))}


def score_agreement(a: Mapping[str, float], b: Mapping[str, float],
                    settings: BootstrapSettings = BootstrapSettings()) -> dict[str, Any]:
    """Pearson, Spearman and Kendall tau_b between two judges' item scores (``{item id: score}``)."""
    common, counts = _common(a, b)
    x = np.array([a[i] for i in common], dtype=float)
    y = np.array([b[i] for i in common], dtype=float)
    out: dict[str, Any] = {**counts, "bootstrap": settings.as_dict()}
    for name, stat in (("pearson", pearson), ("spearman", spearman), ("kendall_tau_b", kendall_tau_b)):
        out[name] = {"value": stat(x, y), **_bootstrap(lambda idx, s=stat: s(x[idx], y[idx]), len(common), settings)}
    out["mean_a"] = float(x.mean()) if len(x) else None
    out["mean_b"] = float(y.mean()) if len(y) else None
    return out


def label_agreement(a: Mapping[str, Any], b: Mapping[str, Any],
                    settings: BootstrapSettings = BootstrapSettings()) -> dict[str, Any]:
    """Cohen's kappa and the share of identical labels between two judges' item labels (``{item id: label}``)."""
    common, counts = _common(a, b)
    x, y = [a[i] for i in common], [b[i] for i in common]
    kappa = {"value": cohen_kappa(x, y),
             **_bootstrap(lambda idx: cohen_kappa([x[i] for i in idx], [y[i] for i in idx]), len(common), settings)}
    same = sum(p == q for p, q in zip(x, y))
    return {**counts, "cohen_kappa": kappa, "identical": same / len(common) if common else None,
            "bootstrap": settings.as_dict()}


def _ranks(means: Mapping[str, float]) -> list[str]:
    return sorted(means, key=lambda model: (-means[model], model))  # best first; ties by name, stated


def ranking_change(per_model_a: Mapping[str, float], per_model_b: Mapping[str, float]) -> dict[str, Any]:
    """``per_model_*``: each model's mean score under judge A / B. The two orders (best first), whether they
    differ, and tau_b between the model means (None with fewer than two models both judges scored)."""
    models = sorted(set(per_model_a) & set(per_model_b))
    a = {m: per_model_a[m] for m in models}
    b = {m: per_model_b[m] for m in models}
    order_a, order_b = _ranks(a), _ranks(b)
    x = np.array([a[m] for m in models], dtype=float)
    y = np.array([b[m] for m in models], dtype=float)
    return {"n_models": len(models), "order_a": order_a, "order_b": order_b,
            "changes": order_a != order_b if len(models) >= 2 else None,
            "kendall_tau_b": kendall_tau_b(x, y), "pearson": pearson(x, y), "spearman": spearman(x, y)}


def swap_consistency(votes: Mapping[str, Mapping[str, str | None]]) -> dict[str, Any]:
    """``votes``: ``{item|dimension: {"original": winner, "swapped": winner}}`` where each winner names the answer
    (e.g. ``"generated"``/``"reference"``), not its position. Consistent = the same answer wins both times; a
    vote missing on either side is left out and counted."""
    both = {k: v for k, v in votes.items() if v.get("original") is not None and v.get("swapped") is not None}
    same = sum(v["original"] == v["swapped"] for v in both.values())
    return {"n_pairs": len(both), "n_incomplete": len(votes) - len(both),
            "consistency": same / len(both) if both else None}
