"""SGI-Bench Experimental Reasoning: multiple-choice accuracy (MCA) and the reasoning-validity judge (RV)
(shared/spec/sgibench.md §3.5, §4.6, §8 "Experimental reasoning").

MCA official: the **first** ``\\boxed{X}`` holding one capital letter (``re.search(r"\\\\boxed\\{([A-Z])\\}")``),
compared case-insensitively with ``chr(65 + answer)``; no box, ``\\boxed{\\text{A}}`` or ``\\boxed{A.}`` -> wrong.
MCA paper (lenient, non-official): the **last** box whose content reduces to one letter after removing
``\\text{}``/``\\textbf{}``/``\\mathrm{}`` wrappers, parentheses, periods and spaces (either case).

RV: a multimodal judge scores the reasoning 0-10. official: first integer in the reply / 10, unbounded
("85" -> 8.5); paper: the first integer in 0..10, else a judge failure. Failures score 0 and are counted.
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sciprobe.scoring.score_report import Coverage, ScoreReport
from sciprobe.benchmarks.sgibench.scoring._common import (
    Judge,
    Messages,
    call_judge,
    check_lengths,
    check_mode,
    mean,
    pct,
)

METRIC = "sgi_experimental_reasoning"
_OFFICIAL_BOX = re.compile(r"\\boxed\{([A-Z])\}")
_ANY_BOX = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_WRAPPER = re.compile(r"\\(?:text|textbf|mathrm|mathbf|mbox)\s*\{([^{}]*)\}")


def letter_of(index: int) -> str:
    return chr(65 + int(index))


def extract_choice(text: str | None, mode: str = "official") -> str | None:
    """The chosen option letter (upper case) or None."""
    check_mode(mode)
    if not text:
        return None
    if mode == "official":
        match = _OFFICIAL_BOX.search(text)
        return match.group(1) if match else None
    for content in reversed(_ANY_BOX.findall(text)):
        inner = _WRAPPER.sub(r"\1", content)
        inner = re.sub(r"[\s().:\\]", "", inner)
        if re.fullmatch(r"[A-Za-z]", inner):
            return inner.upper()
    return None


def multiple_choice_accuracy(predictions: Sequence[str | None], references: Sequence[int | str], *,
                             mode: str = "official") -> ScoreReport:
    """MCA ×100. ``references`` are 0-based option indices (ints or digit strings, read with ``int`` as
    upstream does) or letters. A failed generation (``None``) scores 0 and counts as failed (upstream's
    ``[Error]`` reply has no box either); a response without a usable box scores 0 and counts in
    ``n_no_box``. ``mca_upstream`` leaves out failed generations (published denominators; the pinned code
    keeps them)."""
    check_mode(mode)
    check_lengths("predictions", predictions, "references", references)
    golds = [letter_of(r) if not isinstance(r, str) or r.strip().lstrip("+-").isdigit() else r.upper()
             for r in references]
    choices = [extract_choice(p, mode) for p in predictions]
    # upstream compares ans.lower() == gold.lower() (also for option indices past "Z": chr(65 + n))
    per_item = [int(c is not None and c.strip().lower() == g.lower()) for c, g in zip(choices, golds)]
    failed = [p is None for p in predictions]
    values: dict[str, Any] = {"mca": pct(mean(per_item)), "per_item": per_item, "choices": choices,
                              "n_no_box": sum(1 for c, p in zip(choices, predictions) if p is not None and c is None)}
    if mode == "official":
        values["mca_upstream"] = pct(mean([s for s, f in zip(per_item, failed) if not f]))
        values["n_upstream_dropped"] = sum(failed)
    n = len(per_item)
    return ScoreReport(METRIC, mode, values, Coverage(n, n - sum(failed), sum(failed)))


# ------------------------------------------------------------------ RV judge (§3.5, §4.6)

def parse_rv_score(text: str | None, mode: str = "official") -> float | None:
    """Judge reply -> RV item score (0-1 in paper mode; unbounded in official mode) or None."""
    check_mode(mode)
    if not text:
        return None
    if mode == "official":
        match = re.search(r"(\d+)", text)
        return int(match.group(1)) / 10 if match else None
    for match in re.finditer(r"(?<![\d.])(\d+)(?![\d.])", text):
        value = int(match.group(1))
        if 0 <= value <= 10:
            return value / 10
    return None


def reasoning_validity(judge_outputs: Sequence[str | None], mode: str = "official") -> ScoreReport:
    """RV ×100 from raw judge replies; failures (None / unparsable) score 0 and are counted."""
    check_mode(mode)
    scores = [parse_rv_score(t, mode) for t in judge_outputs]
    per_item = [s if s is not None else 0.0 for s in scores]
    failed = [s is None for s in scores]
    values: dict[str, Any] = {"rv": pct(mean(per_item)), "per_item": per_item}
    if mode == "official":
        # Upstream scores an unparsable reply 0 (it does not drop it); only a crashed judge call is lost.
        values["rv_upstream"] = values["rv"]
        values["n_upstream_dropped"] = sum(1 for t in judge_outputs if t is None)
    n = len(per_item)
    return ScoreReport(METRIC + "_rv", mode, values, Coverage(n, n - sum(failed), sum(failed)))


def image_part(image: Any) -> dict[str, Any]:
    """An OpenAI-style ``image_url`` content part (PNG data URL, as upstream sends) from a PIL image, a
    ``datasets.Image`` dict (``{"bytes", "path"}``) or encoded bytes; non-PNG bytes are re-encoded as PNG so
    the declared media type is true. Raises on unreadable bytes (callers count that as a failure)."""
    if isinstance(image, Mapping) and image.get("bytes") is not None:
        data = bytes(image["bytes"])
    elif isinstance(image, (bytes, bytearray)):
        data = bytes(image)
    else:
        data = None
    if data is not None and not data.startswith(b"\x89PNG\r\n\x1a\n"):
        from PIL import Image

        image = Image.open(io.BytesIO(data))
        data = None
    if data is None:
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        data = buffer.getvalue()
    return {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(data).decode()}}


def rv_judge_messages(question_prompt: str, steps: Sequence[str], response: str,
                      images: Sequence[Any] = ()) -> Messages:
    """Our own wording of the reasoning-validity request; images first, as upstream sends them."""
    reference = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
    text = ("Rate how valid the reasoning of a model's answer to a multiple-choice question about scientific "
            "images is, from 0 to 10. Judge logical coherence and agreement with the reference reasoning (give "
            "partial credit), subtract for irrelevant content, missing key steps and faulty logic, and do not "
            "simply reward a correct final letter. 10 = rigorous and aligned; 7-9 = small gaps; 4-6 = clear "
            "flaws; 1-3 = barely valid; 0 = invalid or irrelevant.\n\n"
            f"# Question\n{question_prompt}\n\n# Reference Reasoning\n{reference}\n\n# Model Prediction\n{response}"
            "\n\nReply with the integer score only, for example:\n6")
    content: list[dict[str, Any]] = [image_part(im) for im in images if im is not None]
    content.append({"type": "text", "text": text})
    return [{"role": "user", "content": content}]


def run_rv_judge(judge: Judge | None, question_prompts: Sequence[str], rows: Sequence[Mapping[str, Any]],
                 predictions: Sequence[str | None]) -> list[str | None]:
    """Judge replies for every item (rows carry ``steps`` and ``images``); None where no response/judge failed."""
    check_lengths("rows", rows, "predictions", predictions)
    out: list[str | None] = []
    for prompt, row, pred in zip(question_prompts, rows, predictions):
        if pred is None:
            out.append(None)
            continue
        try:
            messages = rv_judge_messages(prompt, list(row.get("steps") or []), pred, list(row.get("images") or []))
        except Exception:  # an unreadable image is a judge failure for this item, not a crashed batch
            out.append(None)
            continue
        out.append(call_judge(judge, messages)[0])
    return out
