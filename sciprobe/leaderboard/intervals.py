"""The 95% interval beside a leaderboard score, as text (pure; no pandas, no gradio).

A result keeps the intervals its results file carries (``scores[MODE]["ci"]``, and ``scores[MODE]["other_ci"]``
for the task's declared headline when the result reports another, see ``docs/results.md``): the table
shows ``[low, high]`` in its own column next to the score (the score column stays a number, so it sorts). The
interval is shown only when it is the interval *of that number*: the same metric, an estimate equal to the score
shown, finite bounds with low <= high. Anything else — no ``ci`` block (a result stored before intervals were
computed), a mode with no headline number, a ``reason`` instead of bounds, a hand-edited block — is ``n/a``, never
an interval made up here. Stored numbers came from outside once, so they go through :mod:`sciprobe.core.numbers`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sciprobe.core.numbers import finite_number

NA = "n/a"
CONFIDENCE = 0.95
CI_SUFFIX = "95% CI"


def _decimals(low: float, high: float) -> int:
    """3 decimals for scores on a unit scale, 1 for percentages and other large numbers."""
    return 3 if max(abs(low), abs(high)) < 10 else 1


def interval_text(low: Any, high: Any, confidence: Any = CONFIDENCE, decimals: int | None = None) -> str:
    """``[low, high]`` (``[low, high] (90%)`` for another confidence level), or ``n/a``; with ``decimals`` (the
    metric's declared display precision, :func:`sciprobe.scoring.ranges.display_decimals`) as many places."""
    lo, hi = finite_number(low), finite_number(high)
    if lo is None or hi is None or lo > hi:
        return NA
    places = _decimals(lo, hi) if decimals is None else decimals
    text = f"[{lo:.{places}f}, {hi:.{places}f}]"
    level = finite_number(confidence)
    if level is not None and abs(level - CONFIDENCE) > 1e-9 and 0 < level < 1:
        text += f" ({level:.0%})"
    return text


def _same(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def headline_interval(report: Mapping[str, Any] | None, metric: str, decimals: int | None = None) -> str:
    """The interval of ``report[metric]`` from the report's ``ci`` (or ``other_ci[metric]``) block, or ``n/a``
    (``decimals``: see :func:`interval_text`)."""
    if not isinstance(report, Mapping):
        return NA
    ci = report.get("ci")
    if not isinstance(ci, Mapping) or ci.get("metric") != metric:
        # the task's declared headline when the result reports another (a judged run's LACER): its own block
        others = report.get("other_ci")
        ci = others.get(metric) if isinstance(others, Mapping) else None
        if not isinstance(ci, Mapping) or ci.get("metric") != metric:
            return NA
    estimate, shown = finite_number(ci.get("estimate")), finite_number(report.get(metric))
    if not _same(estimate, shown):  # an interval of some other number than the one in the cell
        return NA
    return interval_text(ci.get("low"), ci.get("high"), ci.get("confidence", CONFIDENCE), decimals)


__all__ = ["CI_SUFFIX", "NA", "headline_interval", "interval_text"]
