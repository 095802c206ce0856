"""Numbers a server reports, read defensively: token counts, the ``usage`` block, sizes and waits.

Whatever a provider, a proxy or a hostile endpoint sends (a string, ``1e400``, ``NaN``, a negative count, a
bool, a nested object, a 5,000-digit integer), reading it never raises and never yields a number that could
disarm ``--max-cost``: a usage report that is not two plausible token counts makes the answer's cost
*unknown* (``None``), and a run with a cost cap stops on unknown costs rather than spend blind
(:mod:`sciprobe.llm.ledger`). The answer text itself stays valid: a broken invoice is not a wrong answer.

Every backend reads its counts here (the litellm and direct HTTP transports, and the local model).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any

#: Far above any context window (the largest are ~10M tokens): a larger count is a broken report.
MAX_TOKENS_PER_CALL = 100_000_000
#: Digits an integer in a server's JSON may have before it is read as "absurd" (infinity) instead of being
#: converted: Python refuses > 4,300 digits with a ValueError, and converting long ones is quadratic.
MAX_INT_DIGITS = 30


def token_count(value: Any) -> int | None:
    """``value`` as a token count, or None when it is not one (negative, fractional, absurd, not a number).

    Accepts ints (and integer scalars such as numpy / torch ones), integral floats (``12.0``) and short
    digit strings (``"12"``: pydantic, hence litellm, accepts them too); refuses bools.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        if not value.is_integer():  # also NaN and +-inf
            return None
        count = int(value)
    elif isinstance(value, str):
        text = value.strip()
        if not (0 < len(text) <= 12 and text.isascii() and text.isdigit()):
            return None
        count = int(text)
    else:
        try:
            count = operator.index(value)
        except TypeError:
            return None
    return count if 0 <= count <= MAX_TOKENS_PER_CALL else None


def finite_number(value: Any) -> float | None:
    """A finite float from an int/float/numeric string (a header, a score), else None; never raises."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if len(text) > 40:
            return None
        try:
            number = float(text)
        except ValueError:
            return None
    elif isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an int beyond float range
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def known_cost(value: Any) -> float | None:
    """A cost in USD that can be added up: finite and >= 0; anything else is unknown (None), never a
    negative or NaN that would keep a running total below ``--max-cost`` for ever."""
    number = finite_number(value) if value is not None else None
    return number if number is not None and number >= 0 else None


def bounded_int(digits: str) -> int | float:
    """``json.loads(..., parse_int=bounded_int)``: an absurdly long integer becomes ``inf`` (then refused by
    :func:`token_count`) instead of a ValueError that would discard a whole, otherwise valid, answer."""
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        return -math.inf if digits.startswith("-") else math.inf
    return int(digits)


@dataclass(frozen=True)
class UsageReport:
    """The token counts of one answer; ``problem`` says why they are unusable (both are then 0 and the cost
    unknown)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    problem: str | None = None


def read_usage(usage: Any) -> UsageReport:
    """An OpenAI-style ``usage`` (a JSON dict, or litellm's ``Usage`` object) as a :class:`UsageReport`.

    No report, or one claiming a prompt of 0 tokens, is "not reported": every chat request has a prompt, and
    litellm turns a missing ``usage`` into zeros, so zero would otherwise price an answer at $0.
    """
    if usage is None:
        return UsageReport(problem="usage not reported")
    if isinstance(usage, dict):
        raw_prompt, raw_completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    elif hasattr(usage, "prompt_tokens"):
        raw_prompt, raw_completion = getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)
    else:
        return UsageReport(problem=f"usage is not an object: {short_repr(usage)}")
    prompt, completion = token_count(raw_prompt), token_count(raw_completion)
    if prompt is None or completion is None:
        return UsageReport(problem=f"invalid usage: prompt_tokens={short_repr(raw_prompt)}, "
                                   f"completion_tokens={short_repr(raw_completion)}")
    if prompt == 0:
        return UsageReport(problem="usage not reported (0 prompt tokens)")
    return UsageReport(prompt, completion)


def short_repr(value: Any, limit: int = 40) -> str:
    """A short, safe ``repr`` for messages (huge ints, long strings, deep nesting)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return "<integer too large>"
    if isinstance(value, (dict, list)):
        return f"<{type(value).__name__} of {len(value)}>"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
