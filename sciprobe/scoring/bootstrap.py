"""Seeded percentile bootstrap over items (or clusters of items) and the paired tests of ``sciprobe compare``.

A resample draws ``n_units`` units with replacement (``numpy.random.default_rng(seed).integers``, counted per unit);
a unit is an item, or a cluster of items that share a source (e.g. every I2R instance of one seed paper), whose
items then all carry the cluster's count. Statistics take these counts as item weights
(:mod:`sciprobe.scoring.item_scores`). The interval is the percentile interval of the resampled values; resamples
where the statistic is undefined (e.g. nothing scored) are left out and counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError

__all__ = ["BootstrapSettings", "bootstrap", "interval", "mcnemar", "paired_bootstrap_p", "units_of"]

#: bound on one chunk of weights (resamples x items), so a 50,000-item task does not need gigabytes
_CHUNK_CELLS = 2_000_000


@dataclass(frozen=True)
class BootstrapSettings:
    n_resamples: int = 1000
    seed: int = 0
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.n_resamples < 1:
            raise SciprobeError(f"the bootstrap needs at least one resample, got {self.n_resamples}")
        if not 0.0 < self.confidence < 1.0:
            raise SciprobeError(f"confidence must be in (0, 1), got {self.confidence}")

    def as_dict(self) -> dict[str, Any]:
        return {"method": "percentile bootstrap", "n_resamples": self.n_resamples, "seed": self.seed,
                "confidence": self.confidence}


def units_of(clusters: Sequence[Any] | None, n_items: int) -> tuple[np.ndarray, int]:
    """(unit index of every item, number of units): items with the same non-empty cluster label share a unit;
    an item without a label is its own unit."""
    if clusters is None:
        return np.arange(n_items), n_items
    if len(clusters) != n_items:
        raise SciprobeError(f"{len(clusters)} cluster labels for {n_items} items")
    index: dict[Any, int] = {}
    out = np.empty(n_items, dtype=int)
    for i, label in enumerate(clusters):
        key = ("item", i) if label is None or label == "" else ("cluster", label)
        out[i] = index.setdefault(key, len(index))
    return out, len(index)


def bootstrap(fn: Callable[[np.ndarray], np.ndarray], unit_of_item: np.ndarray, n_units: int,
              settings: BootstrapSettings) -> np.ndarray:
    """``fn(item_weights)`` over ``settings.n_resamples`` resamples: ``fn`` maps a ``(B, n_items)`` weight array
    to ``(B,)`` or ``(B, k)`` values; returns ``(n_resamples, k)``."""
    if n_units < 1:
        raise SciprobeError("the bootstrap needs at least one item")
    rng = np.random.default_rng(settings.seed)
    chunk = max(1, min(settings.n_resamples, _CHUNK_CELLS // max(len(unit_of_item), n_units, 1)))
    out = []
    done = 0
    while done < settings.n_resamples:
        size = min(chunk, settings.n_resamples - done)
        # n_units draws with replacement per resample, counted per unit (multinomial counts, but fast)
        draws = rng.integers(0, n_units, size=(size, n_units)) + n_units * np.arange(size)[:, None]
        counts = np.bincount(draws.ravel(), minlength=size * n_units).reshape(size, n_units).astype(float)
        values = np.asarray(fn(counts[:, unit_of_item]), dtype=float)
        out.append(values.reshape(size, -1))
        done += size
    return np.concatenate(out, axis=0)


def interval(samples: np.ndarray, confidence: float) -> tuple[float | None, float | None, int]:
    """Percentile interval of the finite samples, and how many there were."""
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return None, None, 0
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high), int(finite.size)


def paired_bootstrap_p(differences: np.ndarray) -> float | None:
    """Two-sided bootstrap p-value of a paired difference: twice the smaller share of resampled differences on
    either side of 0 (capped at 1)."""
    finite = differences[np.isfinite(differences)]
    if finite.size == 0:
        return None
    return float(min(1.0, 2 * min(np.mean(finite <= 0), np.mean(finite >= 0))))


def mcnemar(a: Sequence[float], b: Sequence[float], *, alpha: float = 0.05) -> dict[str, Any]:
    """Exact McNemar test on paired 0/1 outcomes: a binomial test of the discordant pairs (``a`` right and ``b``
    wrong vs the reverse)."""
    from scipy.stats import binomtest

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise SciprobeError(f"paired samples differ in length: {x.size} vs {y.size}")
    only_a = int(np.sum((x == 1) & (y == 0)))
    only_b = int(np.sum((x == 0) & (y == 1)))
    p_value = 1.0 if only_a + only_b == 0 else float(binomtest(only_a, only_a + only_b, 0.5).pvalue)
    return {"test": "McNemar (exact binomial on discordant pairs)", "n": int(x.size), "only_a_correct": only_a,
            "only_b_correct": only_b, "p_value": p_value, "significant": bool(p_value < alpha), "alpha": alpha}
