"""The valid range of every score a metric reports, declared once per metric family (``TaskSpec.metric``).

A number outside its metric's range cannot come from that metric: the leaderboard's importer refuses it (a
hand-edited or corrupted results file), the tables never show it. Keys are ``fnmatch`` patterns (``ndcg@*``);
``modes`` limits an entry to some modes (LACER's official mode does not clamp the judge's number, so it has no
bound there). A key with no entry is only required to be a finite number or null; every task's headline and
extra columns have an entry (tests/leaderboard/test_leaderboard_import.py checks it for every registered task).

Each entry also declares how many decimals a score of that key is shown with (``decimals``; the leaderboard formats
every score cell and its interval with it, :func:`display_decimals`): 3 on a unit or correlation scale, 2 on a
0-100 scale, for errors, counts and judge scales, so one column never mixes ``0``, ``0.3846`` and ``72.3902``.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sciprobe.core.numbers import finite_number

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


def _unit(*keys: str) -> list[ScoreRange]:
    return [ScoreRange(k, 0.0, 1.0) for k in keys]


def _percent(*keys: str) -> list[ScoreRange]:
    return [ScoreRange(k, 0.0, 100.0, decimals=2) for k in keys]


def _correlation(*keys: str) -> list[ScoreRange]:
    return [ScoreRange(k, -1.0, 1.0) for k in keys]


def _non_negative(*keys: str) -> list[ScoreRange]:
    return [ScoreRange(k, 0.0, decimals=2) for k in keys]


_REGRESSION = [*_non_negative("*mae", "*mse", "*rmse"), *_correlation("*pearson", "*spearman"),
               ScoreRange("*r2", high=1.0)]

#: metric family -> ranges of its score keys (first matching entry wins)
METRIC_RANGES: dict[str, list[ScoreRange]] = {
    "idr_classification": _unit("*f1*", "tpr", "tnr", "fpr", "fnr", "accuracy", "precision*", "recall*",
                                "parse_failure_rate"),
    "ranking": _unit("mrr", "ndcg@*", "hits@*", "recall@*", "r_precision", "map"),
    "contribution_generation": [
        *_unit("rougeL"), *_correlation("bertscore_f1"),
        # LACER is a 1-10 judge scale; official mode takes the judge's first number unclamped
        ScoreRange("lacer*", modes=("official",), decimals=2), ScoreRange("lacer_failed*", 0.0, decimals=0),
        ScoreRange("lacer*", 1.0, 10.0, decimals=2),
    ],
    "citation_forecast": [*_non_negative("log1p_mae"), *_correlation("log1p_pearson"), *_REGRESSION],
    "topic_trend": _REGRESSION,
    "wape_grade": [*_percent("scheme2_score", "macro_scheme2_score", "scheme1_final", "part_a", "part_b"),
                   *_non_negative("wape_pct", "abs_bias", "weighted_dim_mae", "composite_consistency_mae"),
                   *_unit("failure_rate"), *_correlation("weighted_dim_spearman"),
                   ScoreRange("bias"),  # the signed mean error of the total (over-rating > 0): any finite number
                   *_REGRESSION],
    "sgi_score": [*_non_negative("aet", "n_*"),
                  *_percent("exact_match*", "step_level_accuracy*", "llm_judge*", "final*", "passall_at_*", "mca*",
                            "rv*", "ss", "pa", "soft_*", "ser", "objective_*", "win_rate_*", "effectiveness",
                            "novelty", "detailedness", "feasibility", "sgi_score")],
}


def score_range(metric: str, key: str, mode: str) -> ScoreRange | None:
    """The declared range of ``key`` in ``mode`` of ``metric`` (None when nothing is declared)."""
    return next((r for r in METRIC_RANGES.get(metric, ()) if r.applies(key, mode)), None)


def display_decimals(metric: str, key: str, mode: str = "") -> int:
    """The decimals a score ``key`` of ``metric`` is shown with (its declared range's; 3 when none is declared).
    ``mode`` "" takes the first entry of the key whatever its modes."""
    found = next((r for r in METRIC_RANGES.get(metric, ())
                  if fnmatch.fnmatchcase(key, r.key) and (not mode or not r.modes or mode in r.modes)), None)
    return 3 if found is None else found.decimals


def out_of_range(metric: str, mode: str, values: Mapping[str, Any]) -> str | None:
    """The first problem with a report's top-level numbers, as one line, or None.

    Declared keys must be null/NaN (no value) or a finite number in range (a string, a bool or an int too large
    for a float is a problem), or a mapping of such numbers (one per dimension: SciTaste ``dim_spearman``); any other
    number must be finite."""
    for key, value in values.items():
        declared = score_range(metric, str(key), mode)
        if declared is not None and isinstance(value, Mapping):
            problem = next((p for p in (_problem(f"{key}.{k}", mode, v, metric, declared) for k, v in value.items())
                            if p), None)
        elif declared is None and (isinstance(value, (str, list, dict)) or isinstance(value, bool)):
            continue  # labels, per-item lists, breakdowns, flags
        else:
            problem = _problem(str(key), mode, value, metric, declared)
        if problem:
            return problem
    return None


def _problem(key: str, mode: str, value: Any, metric: str, declared: ScoreRange | None) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None  # no value (an undefined correlation, no item scored): shown as n/a
    number = finite_number(value)
    if number is None:
        return f"{key} ({mode}) is not a finite number"
    if declared is not None and not declared.contains(number):
        return f"{key} ({mode}) = {number:g} is outside {metric}'s range {declared.describe()}"
    return None


__all__ = ["METRIC_RANGES", "ScoreRange", "display_decimals", "out_of_range", "score_range"]
