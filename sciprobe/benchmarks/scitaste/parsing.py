"""Strict-JSON and lenient parsing of SciTaste answers (spec ``scitaste.md`` §2.2, §6.5, §6.18).

``parse_answer(text)`` returns :class:`Parsed` with ``value = {"total", "dims", "confidence", "reasoning"}`` or
``None``. ``path`` is ``strict`` (the whole reply is the canonical JSON object), ``tolerant:<rules>``
(``fenced`` code block, ``embedded`` object in prose, ``repaired`` trailing commas, ``aliases`` for alternative
key names such as ``composite_score`` / ``total_score`` / ``innovation_score`` or ``"Citation Dynamics"``)
or ``failed:<reason>``. Failures are never scored as zero: the paper drops them (and reports success counts);
the reasons are ``empty``, ``no_json``, ``invalid_json``, ``missing_score``, ``missing_dimensions``,
``not_numeric`` and ``out_of_range`` (any score outside 0–100).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

from sciprobe.benchmarks.scitaste.source import dimension_key
from sciprobe.core.declaration import Parsed
from sciprobe.benchmarks.scitaste.scoring.taste_dimensions import DIMENSIONS

CANONICAL_TOTAL = "score"
TOTAL_ALIASES: tuple[str, ...] = ("composite_score", "composite", "total_score", "innovation_score", "overall_score",
                                  "ati_score", "ati", "total", "overall")
DIMS_ALIASES: tuple[str, ...] = ("dimension_scores", "dimensions_scores", "scores", "dims")
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*100|%)?\s*$")


def _objects(text: str) -> list[tuple[str, str]]:
    """Candidate JSON object strings with the rule that found them, most specific first."""
    candidates = [("strict", text.strip())]
    candidates += [("fenced", m.group(1).strip()) for m in _FENCE.finditer(text)]
    start = text.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_string:
                escaped = (ch == "\\") and not escaped
                if ch == '"' and not escaped:
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    candidates.append(("embedded", text[start:i + 1]))
                    break
        start = text.find("{", start + 1) if depth else text.find("{", i + 1)
    return candidates


def _load(candidate: str) -> tuple[Any, bool]:
    try:
        return json.loads(candidate), False
    except json.JSONDecodeError:
        pass
    try:
        return json.loads(_TRAILING_COMMA.sub(r"\1", candidate)), True
    except json.JSONDecodeError:
        return None, False


def _number(value: Any) -> float | None:
    if isinstance(value, Mapping):  # {"score": 72, "reason": "..."}
        value = next((value[k] for k in ("score", "value") if k in value), None)
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        match = _NUMBER.match(value)
        return float(match[1]) if match else None
    return None


def _fail(reason: str, **extra: Any) -> Parsed:
    return Parsed(None, f"failed:{reason}", {"reason": reason, "official": None, **extra})


def interpret(obj: Mapping[str, Any]) -> tuple[dict[str, Any] | None, list[str], str | None]:
    """JSON object -> (value, rules used, failure reason)."""
    rules: list[str] = []
    lowered = {str(k).strip().lower().replace(" ", "_"): v for k, v in obj.items()}
    total_key = next((k for k in (CANONICAL_TOTAL, *TOTAL_ALIASES) if k in lowered), None)
    if total_key is None:
        return None, rules, "missing_score"
    if total_key != CANONICAL_TOTAL or any(k != str(k).strip().lower() for k in obj):
        rules.append("aliases")
    dims_raw = lowered.get("dimensions")
    if not isinstance(dims_raw, Mapping):
        dims_raw = next((lowered[k] for k in DIMS_ALIASES if isinstance(lowered.get(k), Mapping)), None)
        rules.append("aliases")
    if dims_raw is None:  # dimension keys at the top level
        dims_raw = {k: v for k, v in obj.items() if dimension_key(k) is not None and k != total_key}
    dims: dict[str, Any] = {}
    for name, value in dims_raw.items():
        key = dimension_key(name)
        if key is not None:
            if key != name:
                rules.append("aliases")
            dims[key] = value
    missing = [d for d in DIMENSIONS if d not in dims]
    if missing:
        return {"missing": missing}, rules, "missing_dimensions"
    numbers = {"total": _number(lowered[total_key]), **{d: _number(dims[d]) for d in DIMENSIONS}}
    bad = [k for k, v in numbers.items() if v is None]
    if bad:
        return {"not_numeric": bad}, rules, "not_numeric"
    outside = [k for k, v in numbers.items() if not 0.0 <= v <= 100.0]
    if outside:
        return {"out_of_range": outside}, rules, "out_of_range"
    confidence = _number(lowered.get("confidence")) if lowered.get("confidence") is not None else None
    reasoning = lowered.get("reasoning", lowered.get("reason", lowered.get("rationale")))
    value = {"total": numbers["total"], "dims": {d: numbers[d] for d in DIMENSIONS}, "confidence": confidence,
             "reasoning": None if reasoning is None else str(reasoning)}
    return value, sorted(set(rules)), None


def parse_answer(text: str | None) -> Parsed:
    """Parse one model reply; see the module docstring for paths and failure reasons."""
    if text is None or not text.strip():
        return _fail("empty")
    first_failure: tuple[str, dict] | None = None
    saw_json = False
    for rule, candidate in _objects(text):
        obj, repaired = _load(candidate)
        if not isinstance(obj, Mapping):
            continue
        saw_json = True
        value, rules, reason = interpret(obj)
        if reason is None:
            used = ([] if rule == "strict" else [rule]) + (["repaired"] if repaired else []) + rules
            path = "strict" if not used else "tolerant:" + "+".join(used)
            return Parsed(value, path, {"official": None, "confidence": value["confidence"]})
        if first_failure is None:
            first_failure = (reason, value or {})
    if first_failure:
        return _fail(first_failure[0], **first_failure[1])
    return _fail("invalid_json" if "{" in text and not saw_json else "no_json")
