"""Sums whose last bit does not depend on the Python running sciprobe.

Upstream scorers average with the builtin ``sum()``, whose float algorithm changed in CPython 3.12 (Neumaier
compensated summation instead of left-to-right addition). Official modes must reproduce the interpreter the
upstream project documents, whatever interpreter runs sciprobe:

- :func:`plain_sum`: left-to-right addition (``sum()`` up to Python 3.11; PreScience documents Python 3.10+).
- :func:`compensated_sum`: CPython >= 3.12 ``sum()`` over ints and floats (SGI-Bench documents Python 3.13):
  ints are added as they come while the running total is an int; once it is a float, each float is added with
  Neumaier's compensation, each int is added plainly, and the compensation is added at the end when finite.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def plain_sum(values: Iterable[float]) -> float:
    total: float = 0
    for value in values:
        total = total + value
    return total


def compensated_sum(values: Iterable[float]) -> float:
    items = iter(values)
    total: float = 0
    for value in items:  # integer prefix: exact integer arithmetic, as CPython's int fast path
        if isinstance(value, bool) or isinstance(value, int):
            total = total + value
            continue
        total = total + float(value)
        break
    else:
        return total
    compensation = 0.0
    for value in items:
        if isinstance(value, float):
            t = total + value
            if abs(total) >= abs(value):
                compensation += (total - t) + value
            else:
                compensation += (value - t) + total
            total = t
        else:
            total = total + float(value)
    if compensation and math.isfinite(compensation):
        total += compensation
    return total
