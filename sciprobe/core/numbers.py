"""Numbers that arrive from outside (uploads, results files, repo files): parsed defensively, never trusted.

JSON gives Python ints of any size (``10**400`` overflows ``float()`` and ``math.isfinite``; ``str()`` of a
5,000-digit int raises), ``1e400`` as ``inf``, and ``true``/``false`` as ints. These helpers turn such values into
``None`` (or a caller's one-line error) instead of an exception in the middle of a batch.
"""

from __future__ import annotations

import math
from typing import Any

#: Beyond this an int is not a count or a score anyone means (and float() of it may overflow).
MAX_ABS_NUMBER = 1e15


def finite_number(value: Any, *, limit: float = float("inf")) -> float | None:
    """``value`` as a finite float with ``|value| <= limit``, else None. Bools, strings, containers, NaN, ±inf and
    ints too large for a float are None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int):
        if value.bit_length() > 1023:  # float(value) would raise OverflowError
            return None
        value = float(value)
    if not math.isfinite(value) or abs(value) > limit:
        return None
    return value


def count(value: Any, *, limit: int = int(MAX_ABS_NUMBER)) -> int | None:
    """A non-negative int (``3`` or ``3.0``) no larger than ``limit``, else None."""
    number = finite_number(value, limit=limit)
    if number is None or number < 0 or number != int(number):
        return None
    return int(number)


__all__ = ["MAX_ABS_NUMBER", "count", "finite_number"]
