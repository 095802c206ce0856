"""Minimum detectable effect (MDE) and the items needed to detect an effect, for ``sciprobe compare``.

Every test ``sciprobe compare`` runs (paired bootstrap, exact McNemar, Wilcoxon signed-rank) is read through the
normal approximation of a two-sided test at level ``alpha`` with power ``power`` (default 0.8)::

    MDE = (z_{1 - alpha/2} + z_{power}) * SE

``SE`` is the standard error of the compared quantity at the data's size: for two runs, the standard deviation of
the paired bootstrap differences (so it already follows the metric's own statistic — macro-F1, MRR, WAPE — and
resamples clusters together); against a published number, our value's standard error read off its 95% interval,
``(high - low) / (2 * 1.96)``. A standard error shrinks as ``1 / sqrt(n)``, so detecting an effect ``delta``
needs about::

    n_required = n * (MDE / delta)^2

items (clusters, where items are resampled in clusters). The Wilcoxon signed-rank test is less efficient than the
mean test it approximates (Pitman efficiency 3/pi on normal data), so its MDE is the normal one divided by
``sqrt(3/pi)``. For McNemar the bootstrap SE of an accuracy difference is ``sqrt((p_discordant - d^2) / n)``, the
standard approximation of the exact test's power. These are planning numbers, not exact powers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from sciprobe.core.errors import SciprobeError

__all__ = ["DEFAULT_POWER", "WILCOXON_EFFICIENCY", "Detectable", "detectable", "minimum_detectable_effect",
           "required_n", "se_from_interval"]

DEFAULT_POWER = 0.8
#: Pitman asymptotic relative efficiency of the Wilcoxon signed-rank test to the t-test on normal data
WILCOXON_EFFICIENCY = 3 / math.pi


@dataclass(frozen=True)
class Detectable:
    """The MDE of one comparison and what it takes to detect ``target``."""

    mde: float
    n: int                        # the data's size (items, or clusters)
    alpha: float
    power: float
    target: float | None = None   # the effect the hint is for (None: no hint)
    n_required: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"mde": self.mde, "n": self.n, "alpha": self.alpha, "power": self.power, "target": self.target,
                "n_required": self.n_required}

    def hint(self) -> str:
        if self.target is None or self.n_required is None:
            return ""
        return f"~{self.n_required} items to detect {self.target:.3g}"


def _check(alpha: float, power: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise SciprobeError(f"alpha must be in (0, 1), got {alpha}")
    if not 0.0 < power < 1.0:
        raise SciprobeError(f"power must be in (0, 1), got {power}")


def minimum_detectable_effect(se: float, *, alpha: float = 0.05, power: float = DEFAULT_POWER,
                              test: str = "bootstrap") -> float:
    """The smallest true effect a two-sided test at ``alpha`` detects with probability ``power`` when the estimate
    has standard error ``se`` (``test`` "wilcoxon": less efficient, see the module docstring)."""
    _check(alpha, power)
    if not math.isfinite(se) or se < 0:
        raise SciprobeError(f"a standard error must be a finite number >= 0, got {se}")
    normal = NormalDist()
    mde = (normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)) * se
    return mde / math.sqrt(WILCOXON_EFFICIENCY) if test == "wilcoxon" else mde


def required_n(n: int, mde: float, target: float) -> int | None:
    """Items needed to detect ``target`` when ``n`` items give ``mde`` (None: no finite answer)."""
    if n < 1 or not math.isfinite(mde) or mde <= 0 or not math.isfinite(target) or target == 0:
        return None
    return max(1, math.ceil(n * (mde / abs(target)) ** 2))


def detectable(se: float, n: int, *, alpha: float = 0.05, power: float = DEFAULT_POWER, test: str = "bootstrap",
               target: float | None = None) -> Detectable:
    """:func:`minimum_detectable_effect` at size ``n``, with the items needed to detect ``target``."""
    mde = minimum_detectable_effect(se, alpha=alpha, power=power, test=test)
    needed = required_n(n, mde, target) if target is not None else None
    return Detectable(mde, n, alpha, power, target if needed is not None else None, needed)


def se_from_interval(low: float, high: float, confidence: float = 0.95) -> float:
    """The standard error a symmetric normal ``confidence`` interval ``[low, high]`` implies."""
    if not (math.isfinite(low) and math.isfinite(high)) or high < low:
        raise SciprobeError(f"not an interval: [{low}, {high}]")
    return (high - low) / (2 * NormalDist().inv_cdf(0.5 + confidence / 2))
