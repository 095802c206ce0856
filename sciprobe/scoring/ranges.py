"""The valid range of every score a metric reports: each task declares its own (``TaskSpec.score_ranges``,
:mod:`sciprobe.core.score_ranges`), and the generic families shared by several benchmarks are declared here.

A number outside its metric's range cannot come from that metric: the leaderboard's importer refuses it (a
hand-edited or corrupted results file), the tables never show it. Keys are ``fnmatch`` patterns (``ndcg@*``);
``modes`` limits an entry to some modes (LACER's official mode does not clamp the judge's number, so it has no
bound there). A key with no entry is only required to be a finite number or null; every task's headline and
extra columns have an entry (tests/leaderboard/test_leaderboard_import.py checks it for every registered task).
Ranges are looked up by metric family (``TaskSpec.metric``): a task's declared ranges first (tasks of one family
share them), then this module's generic ones.

Each entry also declares how many decimals a score of that key is shown with (``decimals``; the leaderboard formats
every score cell and its interval with it, :func:`display_decimals`): 3 on a unit or correlation scale, 2 on a
0-100 scale, for errors, counts and judge scales, so one column never mixes ``0``, ``0.3846`` and ``72.3902``.
"""

from __future__ import annotations

import fnmatch
import functools
import math
from collections.abc import Mapping
from typing import Any

from sciprobe.core.numbers import finite_number
from sciprobe.core.score_ranges import INF, ScoreRange, unit

#: generic metric family -> ranges of its score keys (first matching entry wins)
METRIC_RANGES: dict[str, list[ScoreRange]] = {
    "ranking": unit("mrr", "ndcg@*", "hits@*", "recall@*", "r_precision", "map"),
}


@functools.lru_cache(maxsize=8)
def _declared(plugin_entries: tuple[str, ...]) -> dict[str, tuple[ScoreRange, ...]]:
    """Every registered task's ranges by metric family; cached per listing of the benchmark folder (a lookup is
    on the leaderboard's page and import paths: no package scan per call)."""
    from sciprobe.core.registry import benchmark_names, get_benchmark

    out: dict[str, tuple[ScoreRange, ...]] = {}
    for name in benchmark_names():
        for task in get_benchmark(name).tasks.values():
            known = out.get(task.metric, ())
            out[task.metric] = known + tuple(r for r in task.score_ranges if r not in known)
    return out


def ranges_of(metric: str) -> tuple[ScoreRange, ...]:
    """The ranges of a metric family: the tasks' declared ones, then the generic ones."""
    from sciprobe.core.registry import plugin_entries

    return (*_declared(plugin_entries()).get(metric, ()), *METRIC_RANGES.get(metric, ()))


def score_range(metric: str, key: str, mode: str) -> ScoreRange | None:
    """The declared range of ``key`` in ``mode`` of ``metric`` (None when nothing is declared)."""
    return next((r for r in ranges_of(metric) if r.applies(key, mode)), None)


def display_decimals(metric: str, key: str, mode: str = "") -> int:
    """The decimals a score ``key`` of ``metric`` is shown with (its declared range's; 3 when none is declared).
    ``mode`` "" takes the first entry of the key whatever its modes."""
    found = next((r for r in ranges_of(metric)
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


__all__ = ["INF", "METRIC_RANGES", "ScoreRange", "display_decimals", "out_of_range", "ranges_of", "score_range"]
