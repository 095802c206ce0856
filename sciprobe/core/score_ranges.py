"""The valid range of a score key, as a task declares it (``TaskSpec.score_ranges``), with the constructors the
declarations use. Looking a range up and checking a report against it is :mod:`sciprobe.scoring.ranges`."""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass

INF = math.inf


@dataclass(frozen=True)
class ScoreRange:
    key: str                       # fnmatch pattern of the score key
    low: float = -INF
    high: float = INF
    modes: tuple[str, ...] = ()    # empty: every mode
    decimals: int = 3              # how a score of this key is shown

    def applies(self, key: str, mode: str) -> bool:
        return fnmatch.fnmatchcase(key, self.key) and (not self.modes or mode in self.modes)

    def contains(self, value: float) -> bool:
        slack = 1e-9  # float rounding at the bounds (a correlation of 1.0000000000000002)
        return self.low - slack <= value <= self.high + slack

    def describe(self) -> str:
        low = "-inf" if self.low == -INF else f"{self.low:g}"
        high = "inf" if self.high == INF else f"{self.high:g}"
        return f"[{low}, {high}]"


def unit(*keys: str) -> list[ScoreRange]:
    return [ScoreRange(k, 0.0, 1.0) for k in keys]


def percent(*keys: str) -> list[ScoreRange]:
    return [ScoreRange(k, 0.0, 100.0, decimals=2) for k in keys]


def correlation(*keys: str) -> list[ScoreRange]:
    return [ScoreRange(k, -1.0, 1.0) for k in keys]


def non_negative(*keys: str) -> list[ScoreRange]:
    return [ScoreRange(k, 0.0, decimals=2) for k in keys]


def regression() -> list[ScoreRange]:
    """Errors (MAE, MSE, RMSE), correlations and R² of a regression task."""
    return [*non_negative("*mae", "*mse", "*rmse"), *correlation("*pearson", "*spearman"), ScoreRange("*r2", high=1.0)]


__all__ = ["INF", "ScoreRange", "correlation", "non_negative", "percent", "regression", "unit"]
