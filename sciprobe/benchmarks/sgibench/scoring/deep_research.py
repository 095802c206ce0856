"""SGI-Bench Scientific Deep Research: Exact Match and Step-Level Accuracy (shared/spec/sgibench.md §3.1, §4.2,
§4.3, §8 "Deep research").

Official (SGI-Bench@8268d43 ``get_answer`` + ``step_2_score.py``): a failed generation, an empty reply, ``none``
in any case, or a reply starting with ``[Error]`` becomes the answer ``"None"`` (and so does its parser
candidate); otherwise the answer is the text of the **last** ``<answer>`` block when that block is closed, else
the whole raw response (an unclosed last tag takes the whole response, not the rest). EM = raw Python string
equality with the reference, also accepting an optional LLM re-formatting of the answer as a second candidate
(so a failed generation matches a reference that is literally ``"None"``). Paper mode: a failed generation
scores 0; the answer is the last block (an unclosed last tag takes the rest of the text), then a deterministic
normaliser (strip, casefold, whitespace and comma spacing, numeric comparison with a relative tolerance per
comma-separated part) -- non-official, flagged as such in the report.

SLA (judge, not part of the SGI-Score): the judge segments the model's solution into steps and marks each one;
SLA = correct / judged steps. Judge or parse failures score 0 and are counted (upstream crashes on them).

``llm_judge`` (answer-level judge, not part of the SGI-Score; added upstream after the pinned commit, at
SGI-Bench@5d562f6 ``step_2_score.py``): 1 whenever the item's exact match is 1 (no judge call); otherwise a judge
decides whether the answer is semantically equivalent to the reference (numbers within 5% relative error after
obvious unit or formatting differences, texts of equal meaning; no partial credit) and replies
``{"judge": 0 or 1, "reason": ...}``. Official: upstream's reading (the span from the first ``{`` to the last
``}``, ``int(reply.get("judge", 0))``); an unreadable reply or a failed call scores 0, as upstream, and is counted.
Paper: the same with the paper-mode exact match, and only 0/1 verdicts count (anything else is a failure).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sciprobe.scoring.score_report import Coverage, ScoreReport
from sciprobe.benchmarks.sgibench.scoring._common import (
    Judge,
    Messages,
    bracketed_literal,
    call_judge,
    check_lengths,
    check_mode,
    extract_answer_block,
    has_answer_block,
    is_upstream_none_reply,
    mean,
    official_model_answer,
    pct,
)

METRIC = "sgi_deep_research"
#: the upstream commit whose ``step_2_score.py`` defines the answer-level ``llm_judge``
LLM_JUDGE_COMMIT = "5d562f64b7e811e7cc3da7b22c0a24fd6678dfca"
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$")


def extract_answer(text: str | None, mode: str = "official") -> str:
    """The answer string: official = upstream's ``model_answer`` (:func:`official_model_answer`); paper = the
    last ``<answer>`` block, the rest of the text after an unclosed last tag, else the raw response."""
    check_mode(mode)
    if mode == "official":
        return official_model_answer(text)
    return extract_answer_block(text or "")


def normalise_answer(text: str) -> str:
    """Paper-mode normal form: stripped, casefolded, unicode minus -> '-', no spaces around commas, inner
    whitespace collapsed, one trailing period and surrounding ``$`` removed."""
    out = text.strip().casefold().replace("\u2212", "-").replace("\u2013", "-")
    out = re.sub(r"\s+", " ", out)
    out = re.sub(r"\s*,\s*", ",", out)
    out = out.strip().strip("$").strip()
    if out.endswith(".") and not _NUMBER.match(out):
        out = out[:-1].rstrip()
    return out


def _as_number(part: str) -> float | None:
    part = part.replace(" ", "")
    if not _NUMBER.match(part):
        return None
    try:
        return float(part)
    except ValueError:
        return None


def answers_match_paper(reference: str, answer: str, rel_tol: float = 1e-6) -> bool:
    """Normalised, part-wise comparison: the comma-separated parts must agree one to one; a part that is a
    number on both sides compares with ``math.isclose(rel_tol, abs_tol=1e-9)`` ("46.0" == "46")."""
    ref, ans = normalise_answer(reference), normalise_answer(answer)
    if ref == ans:
        return True
    ref_parts, ans_parts = ref.split(","), ans.split(",")
    if len(ref_parts) != len(ans_parts):
        return False
    for r, a in zip(ref_parts, ans_parts):
        rn, an = _as_number(r), _as_number(a)
        if rn is not None and an is not None:
            if not math.isclose(rn, an, rel_tol=rel_tol, abs_tol=1e-9):
                return False
        elif r.strip() != a.strip():
            return False
    return True


def exact_match_item(reference: str, response: str | None, parsed: str | None = None, mode: str = "official",
                     rel_tol: float = 1e-6) -> int:
    """1/0 for one item. ``parsed`` is the optional LLM re-formatted answer (second candidate)."""
    check_mode(mode)
    if mode == "official":
        if is_upstream_none_reply(response):
            return int(reference == "None")  # upstream sets both candidates to "None"
        candidates = [extract_answer(response)] + ([parsed] if parsed is not None else [])
        return int(any(reference == c for c in candidates))
    if response is None:
        return 0
    candidates = [extract_answer(response, mode)] + ([parsed] if parsed is not None else [])
    return int(any(answers_match_paper(reference, c, rel_tol) for c in candidates))


def exact_match(predictions: Sequence[str | None], references: Sequence[str], *,
                parsed_answers: Sequence[str | None] | None = None, mode: str = "official",
                rel_tol: float = 1e-6) -> ScoreReport:
    """EM ×100 over all items. A failed generation (``None``) counts as failed; official mode scores it as
    upstream does (answer ``"None"``), paper mode scores it 0. ``exact_match_upstream`` is the mean over the
    items with a response: the pinned code keeps failed generations, but the published denominators suggest
    some runs dropped them (spec §6 "Denominator caveat")."""
    check_mode(mode)
    check_lengths("predictions", predictions, "references", references)
    if parsed_answers is not None:
        check_lengths("predictions", predictions, "parsed_answers", parsed_answers)
    parsed = list(parsed_answers) if parsed_answers is not None else [None] * len(predictions)
    per_item = [exact_match_item(r if mode == "official" else str(r), p, q, mode, rel_tol)
                for p, r, q in zip(predictions, references, parsed)]
    failed = [p is None for p in predictions]
    values: dict[str, Any] = {
        "exact_match": pct(mean(per_item)),
        "per_item": per_item,
        "n_no_answer_tag": sum(1 for p in predictions if p is not None and not has_answer_block(p)),
    }
    notes = []
    if mode == "official":
        kept = [s for s, f in zip(per_item, failed) if not f]
        values["exact_match_upstream"] = pct(mean(kept))
        values["n_upstream_dropped"] = sum(failed)
    else:
        notes.append("non-official: normalised answers with numeric tolerance")
    return ScoreReport(METRIC, mode, values, Coverage(len(per_item), len(per_item) - sum(failed), sum(failed)),
                       params={"rel_tol": rel_tol if mode == "paper" else None,
                               "parser_candidates": parsed_answers is not None}, notes=notes)


# ------------------------------------------------------------------ answer re-formatting judge (§4.2)

def reformat_messages(answer: str, reference: str) -> Messages:
    """Messages asking a parser model to restate ``answer`` in the format of an example (our own wording).
    The example follows upstream's rule: ``0.25`` when the reference parses as a float, else a short phrase."""
    try:
        float(reference)
        example = "0.25"
    except ValueError:
        example = "T cell and B cell"
    kind = "One letter" if len(example) == 1 else repr(type(example))
    system = ("You convert free text into a structured value. Look at the example, keep the output type given, "
              "rewrite the input so its format matches the example without changing its meaning, ignore any "
              "explanation around the final result, and reply with the converted value only.\n"
              f"<example>{example}</example>\n<type>{kind}</type>")
    return [{"role": "system", "content": system},
            {"role": "user", "content": f"<input_text>\n{answer}\n</input_text>"}]


def run_answer_parser(judge: Judge | None, predictions: Sequence[str | None],
                      references: Sequence[str]) -> list[str | None]:
    """Second EM candidates from a parser judge; ``None`` where the judge failed or there was no response."""
    out: list[str | None] = []
    for pred, ref in zip(predictions, references):
        if is_upstream_none_reply(pred):  # upstream does not ask the parser for these
            out.append(None)
            continue
        text, _ = call_judge(judge, reformat_messages(extract_answer(pred), str(ref)))
        out.append(text.strip() if text is not None else None)
    return out


# ------------------------------------------------------------------ step-level accuracy judge (§3.1, §4.3)

def step_judge_messages(question: str, steps: Sequence[str], answer: str, response: str) -> Messages:
    """Our own wording of the step-verification request; output format as upstream (a JSON list of
    ``{"solution_step", "reason", "judge": "correct"|"incorrect"}``)."""
    example = json.dumps([{"solution_step": "step content", "reason": "why it is right or wrong",
                           "judge": "correct or incorrect"}] * 2)
    system = ("You check solutions written by language models, step by step, and reply only with a "
              "verification list. Split the model's solution into its steps; for every step give the step, a "
              "strict reason, and a verdict 'correct' or 'incorrect'. If the model's final answer is wrong, at "
              "least one step must be 'incorrect'. Do not solve the question yourself.")
    user = "\n\n".join([
        f"## Question\n{question}",
        "## Reference Solution Steps\n" + "\n".join(steps),
        f"## Reference Answer\n{answer}",
        f"## LLM Solution Steps\n{response}",
        f"## LLM Answer\n{extract_answer(response)}",
        f"## Output Example\n{example}",
    ])
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_step_verdicts(text: str | None, mode: str = "official") -> list[bool] | None:
    """The judge's list -> per-step correctness, or None when unparsable / empty.

    Both modes cut from the first ``[`` to the last ``]`` and read it as JSON, then as a Python literal
    (upstream repairs the JSON and calls ``eval``; we never ``eval``). official: ``judge == "correct"`` exactly;
    paper: case- and whitespace-insensitive.
    """
    check_mode(mode)
    data = bracketed_literal(text, "[", "]")
    if not isinstance(data, list) or not data:
        return None
    verdicts = []
    for entry in data:
        value = entry.get("judge") if isinstance(entry, Mapping) else None
        if mode == "official":
            verdicts.append(value == "correct")
        else:
            verdicts.append(isinstance(value, str) and value.strip().lower() == "correct")
    return verdicts


def step_level_accuracy(judge_outputs: Sequence[str | None], mode: str = "official") -> ScoreReport:
    """SLA ×100 from raw judge replies (``None`` = judge failure). Failures score 0 and are counted; the
    official mode also reports the mean over the items upstream would not have crashed on."""
    check_mode(mode)
    parsed = [parse_step_verdicts(t, mode) for t in judge_outputs]
    per_item = [sum(v) / len(v) if v else 0.0 for v in parsed]
    failed = [v is None for v in parsed]
    values: dict[str, Any] = {"step_level_accuracy": pct(mean(per_item)), "per_item": per_item}
    if mode == "official":
        values["step_level_accuracy_upstream"] = pct(mean([s for s, f in zip(per_item, failed) if not f]))
        values["n_upstream_dropped"] = sum(failed)
    n = len(per_item)
    return ScoreReport(METRIC + "_sla", mode, values, Coverage(n, n - sum(failed), sum(failed)))


def run_step_judge(judge: Judge | None, rows: Sequence[Mapping[str, Any]],
                   predictions: Sequence[str | None]) -> list[str | None]:
    """Ask the step judge about every item (rows carry ``question``, ``steps``, ``answer``)."""
    check_lengths("rows", rows, "predictions", predictions)
    out: list[str | None] = []
    for row, pred in zip(rows, predictions):
        if pred is None:
            out.append(None)
            continue
        text, _ = call_judge(judge, step_judge_messages(row["question"], list(row["steps"]), row["answer"], pred))
        out.append(text)
    return out


# ------------------------------------------------------------------ answer-level judge, llm_judge (SGI-Bench@5d562f6)

def answer_judge_messages(question: str, reference: str, answer: str, parsed: str | None) -> Messages:
    """Our own wording of the answer-equivalence request; reply format as upstream (``{"judge": 0 or 1,
    "reason": ...}``). ``answer`` is the extracted answer, ``parsed`` the answer parser's candidate (or None)."""
    system = ("You grade answers to scientific questions against a reference answer. Decide whether the model's "
              "answer is essentially correct: a number counts as correct when it is within 5% relative error of "
              "the reference once obvious differences of units, percent signs or formatting are accounted for and "
              "the question supports the same meaning; a text answer counts when it means the same thing. There is "
              "no partial credit. Reply only with a JSON object {\"judge\": 0 or 1, \"reason\": \"...\"}.")
    user = "\n\n".join([f"Question: {question}", f"Reference answer: {reference}", f"Model's answer: {answer}",
                         f"Model's answer as normalised by the answer parser: {parsed or ''}"])
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_answer_verdict(text: str | None, mode: str = "official") -> int | None:
    """A judge reply -> its verdict, or None when it cannot be read (a failure). official: upstream's
    ``int(result.get("judge", 0))`` on the first-``{``-to-last-``}`` span (a missing key reads 0, any integer is
    kept); paper: only 0/1 (or true/false)."""
    check_mode(mode)
    data = bracketed_literal(text, "{", "}")
    if not isinstance(data, Mapping):
        return None
    value = data.get("judge", 0)
    if mode == "official":
        try:
            return int(value)
        except (TypeError, ValueError):
            return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    return None


def answer_judge_accuracy(judge_outputs: Sequence[str | None], exact_matches: Sequence[int],
                          mode: str = "official") -> ScoreReport:
    """``llm_judge`` ×100: 1 where ``exact_matches`` is 1 (whatever the reply), else the judge's verdict; a
    missing or unreadable reply scores 0 and is counted as failed."""
    check_mode(mode)
    check_lengths("judge_outputs", judge_outputs, "exact_matches", exact_matches)
    per_item: list[float] = []
    failed: list[bool] = []
    for text, em in zip(judge_outputs, exact_matches):
        if em:
            per_item.append(1.0)
            failed.append(False)
            continue
        verdict = parse_answer_verdict(text, mode)
        per_item.append(float(verdict or 0))
        failed.append(verdict is None)
    values: dict[str, Any] = {"llm_judge": pct(mean(per_item)), "per_item": per_item,
                              "n_judged": sum(1 for em in exact_matches if not em)}
    if mode == "official":
        values["llm_judge_upstream"] = values["llm_judge"]  # upstream scores failures 0 too
    n = len(per_item)
    return ScoreReport(METRIC + "_llm_judge", mode, values, Coverage(n, n - sum(failed), sum(failed)),
                       params={"upstream_commit": LLM_JUDGE_COMMIT})
