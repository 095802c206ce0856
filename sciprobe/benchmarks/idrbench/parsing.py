"""Answer parsing for IDRBench (shared/spec/idrbench.md §4, pitfalls 2-3).

Each parser tries the official regex first (exact, ``re.IGNORECASE`` as upstream), then tolerant rules
(markdown stripped, ``Choice:`` accepted, multi-line reasons, ``Subject:`` optional, an ``Answer: Yes/No``
line, a bare leading Yes/No). ``Parsed.value`` is the tolerant result; ``Parsed.extra["official"]`` is what
the official code would have read (None when its regex misses, i.e. upstream drops the item), so one generation
serves both scoring modes. The parse path is recorded per sample.
"""

from __future__ import annotations

import ast
import re

from sciprobe.core.declaration import Parsed

OFFICIAL_IPI = re.compile(
    r"Your verdict:\s*(?P<verdict>Yes|No).?\s*Confidence score:\s*(?P<score>\d+).?\s*"
    r"Subject:\s*(?P<subject>\[.*?\]).?",
    re.IGNORECASE)
OFFICIAL_I3 = re.compile(
    r"Your verdict:\s*(?P<verdict>Yes|No).?\s*Your reason:\s*(?P<reason>.+).?\s*Confidence score:\s*(?P<score>\d+).?",
    re.IGNORECASE)
OFFICIAL_I2R = re.compile(
    r"Your choice:\s*(?P<verdict>Paper 1|Paper 2).?\s*Confidence score:\s*(?P<score>\d+).?", re.IGNORECASE)

_MARKDOWN = re.compile(r"[*#`_]+")
_VERDICT = re.compile(r"(?:your\s+)?verdict\s*:\s*(yes|no)\b", re.IGNORECASE)
_CONFIDENCE = re.compile(r"confidence(?:\s+score)?\s*:\s*(\d+)", re.IGNORECASE)
_CHOICE = re.compile(r"(?:your\s+)?choice\s*:\s*paper\s*([12])\b", re.IGNORECASE)
# "Answer: Yes" / "Final answer: no." (any case): an answer, but only when Yes/No ends the clause, so
# "Answer: No idea" or "Answer: yes and no" stay unparsed
_ANSWER = re.compile(r"\banswer\s*:\s*(yes|no)\b(?=[ \t]*(?:[.,;:!)]|$))", re.IGNORECASE | re.MULTILINE)
_LEADING = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)
_LEADING_PAPER = re.compile(r"^\W*paper\s*([12])\b", re.IGNORECASE)
_REASON = re.compile(r"your\s+reason\s*:\s*(.+?)\s*(?:confidence(?:\s+score)?\s*:|$)", re.IGNORECASE | re.DOTALL)


def _subjects(text: str) -> list[str]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else []


def _confidence(text: str) -> int | None:
    match = _CONFIDENCE.search(text)
    return int(match[1]) if match else None


def _tolerant_verdict(text: str) -> tuple[str | None, str]:
    plain = _MARKDOWN.sub("", text)
    match = _VERDICT.search(plain)
    if match:
        return match[1].lower(), "tolerant:verdict_line"
    match = _ANSWER.search(plain)
    if match:
        return match[1].lower(), "tolerant:answer_line"
    match = _LEADING.match(plain)
    if match:
        return match[1].lower(), "tolerant:leading_word"
    return None, "failed"


def parse_ipi(text: str) -> Parsed:
    text = text or ""
    official = OFFICIAL_IPI.search(text)
    if official:
        verdict = official["verdict"].lower()
        return Parsed(verdict, "official", {"official": verdict, "confidence": int(official["score"]),
                                            "subjects": _subjects(official["subject"])})
    verdict, path = _tolerant_verdict(text)
    subject = re.search(r"subject\s*:\s*(\[.*?\])", _MARKDOWN.sub("", text), re.IGNORECASE | re.DOTALL)
    return Parsed(verdict, path, {"official": None, "confidence": _confidence(text),
                                  "subjects": _subjects(subject[1]) if subject else []})


def parse_i3(text: str) -> Parsed:
    text = text or ""
    official = OFFICIAL_I3.search(text)
    if official:
        verdict = official["verdict"].lower()
        return Parsed(verdict, "official", {"official": verdict, "confidence": int(official["score"]),
                                            "reason": official["reason"].strip()})
    verdict, path = _tolerant_verdict(text)
    reason = _REASON.search(_MARKDOWN.sub("", text))
    return Parsed(verdict, path, {"official": None, "confidence": _confidence(text),
                                  "reason": reason[1].strip() if reason else ""})


def parse_i2r(text: str) -> Parsed:
    """Value 1 or 2 (the preferred paper). ``extra["official_winner"]`` applies upstream's case-sensitive
    winner check: a match on ``paper 1`` (lower case) gives the point to Paper 2."""
    text = text or ""
    official = OFFICIAL_I2R.search(text)
    if official:
        written = official["verdict"]
        value = 1 if written.lower() == "paper 1" else 2
        return Parsed(value, "official", {"official": value, "official_winner": 1 if written == "Paper 1" else 2,
                                          "confidence": int(official["score"])})
    plain = _MARKDOWN.sub("", text)
    for pattern, path in ((_CHOICE, "tolerant:choice_line"), (_LEADING_PAPER, "tolerant:leading_word")):
        match = pattern.search(plain) if pattern is _CHOICE else pattern.match(plain)
        if match:
            return Parsed(int(match[1]), path, {"official": None, "official_winner": None,
                                                "confidence": _confidence(text)})
    return Parsed(None, "failed", {"official": None, "official_winner": None, "confidence": _confidence(text)})
