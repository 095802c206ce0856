"""Shared helpers of the SGI-Bench scorers (shared/spec/sgibench.md §3, §8 "failure accounting").

Conventions every component follows:
- ``mode`` is ``"official"`` (behaviour of SGI-Bench@8268d43, quirks included) or ``"paper"`` (the paper's
  definitions, deterministic corrections).
- A model response of ``None`` means the generation failed and is counted in ``n_failed``. Paper mode scores it
  0; official mode scores it as the pinned code does (its ``get_answer`` turns a failed call into the answer
  ``"None"``, which scores 0 except against a reference that is literally ``"None"``; MCA: no box). The pinned
  code drops no such item, but the published denominators show some were dropped for some models (spec §6
  "Denominator caveat"), so official mode also reports the headline over the items with a response
  (``<metric>_upstream``) and how many that leaves out (``n_upstream_dropped``).
- Judges are injected callables ``messages -> text`` (:data:`Judge`); an exception or ``None`` is a judge
  failure, scored as documented by each component, never a crash.
"""

from __future__ import annotations

import ast
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.summation import compensated_sum

MODES = ("official", "paper")
Messages = list[dict[str, Any]]
Judge = Callable[[Messages], "str | None"]

log = logging.getLogger("sciprobe.benchmarks.sgibench.scoring")


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise SciprobeError(f"unknown mode {mode!r}; use 'official' or 'paper'")
    return mode


def check_lengths(name_a: str, a: Sequence, name_b: str, b: Sequence) -> None:
    if len(a) != len(b):
        raise SciprobeError(f"{name_a} and {name_b} differ in length ({len(a)} vs {len(b)})")


def upstream_final_answer(text: Any) -> str | None:
    """``utils.extract_final_answer`` of SGI-Bench@8268d43: the text between the **last** ``<answer>`` and the
    first ``</answer>`` after it, stripped; ``None`` when there is no opening tag or that last tag is unclosed."""
    text = str(text)
    start = text.rfind("<answer>")
    if start < 0:
        return None
    end = text.find("</answer>", start)
    return None if end < 0 else text[start + len("<answer>"):end].strip()


def is_upstream_none_reply(response: str | None) -> bool:
    """Replies the official ``get_answer`` turns into the answer ``"None"``: a failed generation (upstream
    writes ``[Error][...]``), a reply that starts with ``[Error]``, is empty, or is ``none`` in any case."""
    if response is None:
        return True
    text = str(response)
    return text.lower() == "none" or not text or text.startswith("[Error]")


def official_model_answer(response: str | None) -> str:
    """``model_answer`` as the official ``get_answer`` (SGI-Bench@8268d43, deep research, wet and dry experiment)
    stores it: ``"None"`` for the replies of :func:`is_upstream_none_reply`; else the last complete
    ``<answer>`` block (:func:`upstream_final_answer`); else the whole response, unstripped (also when the last
    ``<answer>`` tag is unclosed)."""
    if is_upstream_none_reply(response):
        return "None"
    text = str(response)
    answer = upstream_final_answer(text)
    return text if answer is None else answer


def extract_answer_block(text: str) -> str:
    """Paper-mode ``<answer>`` extraction: the text between the **last** ``<answer>`` and the ``</answer>``
    after it, stripped; without an opening tag, the whole raw response unchanged. Decision: an opening tag
    without a closing one yields the rest of the text, stripped (the official rule,
    :func:`official_model_answer`, falls back to the whole response instead)."""
    start = text.rfind("<answer>")
    if start < 0:
        return text
    body = text[start + len("<answer>"):]
    end = body.find("</answer>")
    return (body if end < 0 else body[:end]).strip()


def has_answer_block(text: str) -> bool:
    return "<answer>" in text


def call_judge(judge: Judge | None, messages: Messages) -> tuple[str | None, str | None]:
    """Run one judge call: (text, None) or (None, error). Never raises."""
    if judge is None:
        return None, "no judge"
    try:
        text = judge(messages)
    except Exception as exc:  # a judge is user code / network: any failure is counted, not raised
        return None, f"{type(exc).__name__}: {exc}"
    if text is None:
        return None, "judge returned no text"
    return str(text), None


def judge_from_client(client: Any, params: dict[str, Any] | None = None) -> Judge:
    """Adapt ``sciprobe.llm`` (``client.complete_many(list[Request]) -> list[Completion]``) to a :data:`Judge`.

    Record the judge model id with the results: judge-based scores are not comparable across judges (§8).
    """
    from sciprobe.llm.types import Request

    def judge(messages: Messages) -> str | None:
        completion = client.complete_many([Request.of(messages, params)])[0]
        if not completion.ok:
            raise RuntimeError(completion.error or "judge call failed")
        return completion.text

    return judge


def bracketed_literal(text: str | None, open_char: str, close_char: str) -> Any | None:
    """The span from the first ``open_char`` to the last ``close_char`` of a judge reply, read as JSON, then as
    a Python literal (upstream repairs JSON and calls ``eval``; we never ``eval``). None when there is none or it
    does not parse."""
    if not text:
        return None
    start, end = text.find(open_char), text.rfind(close_char)
    if start < 0 or end <= start:
        return None
    chunk = text[start:end + 1]
    try:
        return json.loads(chunk)
    except ValueError:
        try:
            return ast.literal_eval(chunk)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None


def mean(values: Sequence[float]) -> float:
    """``sum(values) / len(values)`` with the ``sum()`` of Python >= 3.12 (SGI-Bench runs on Python 3.13),
    whatever Python runs sciprobe; 0.0 for no values."""
    return float(compensated_sum(values) / len(values)) if values else 0.0


def pct(value: float) -> float:
    return 100.0 * value
