"""LACER: LLM-judge similarity of a generated title + abstract to the gold paper on a 1–10 scale
(spec ``prescience.md`` §3, pitfalls 15–18).

The judge prompt is a :class:`LacerTemplate`: the template text (upstream's E.5 file
``lacer_scoring_prompt_percentile50.110.txt``, never bundled, or another template) whose four placeholders
``{{reference_title}}``, ``{{reference_abstract}}``, ``{{generation_title}}``, ``{{generation_abstract}}`` are
filled with plain ``str.replace`` (Reference = gold, Generation = candidate), and the system message sent with it:
upstream's (``lacer_score.py``'s ``SYSTEM_PROMPT``, read at run time by
:func:`sciprobe.benchmarks.prescience.lacer_judge.official_template`) with the official template, sciprobe's own
wording
(:data:`SYSTEM_PROMPT`) with any other. The judge is any callable ``messages -> reply text`` (an
OpenAI-compatible client, a local server, or a mock in tests).

Modes:

``official`` (``lacer_score.py``): the **first** ``Score:`` match of
``Score\\s*:\\s*([-+]?[0-9]+(?:\\.\\d+)?)`` (case-insensitive) as a float, no clamping.
``corrected``: the **last** ``Score:`` of the reply (a judge that writes "Score:" inside its reasoning is not
mis-read) whose number is a whole token (``Score: 8a615714`` is no score), clamped to [1, 10].

In every mode a reply without a score (or a judge error) is a failure: never a score, left out of the mean and
counted in ``n_failed`` (upstream sets ``lacer_error`` and excludes the record). A judge that gave no verdict says
nothing about the generation, so no mode turns its silence into a number (issue 22.2: corrected mode once scored
it 1, the scale minimum, and its coverage said "failed 0").

Every report carries the judge id, the raw replies and a percentile bootstrap 95% CI over items; those of
:func:`lacer` (and of the PreScience runner) also the SHA-256 and source of the template and of the system message
(:meth:`LacerTemplate.provenance`) (1,000 resamples, seeded). Scores from different judges or
prompts are not comparable (pitfall 18).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.score_report import Coverage, ScoreReport

__all__ = [
    "PLACEHOLDERS",
    "SYSTEM_PROMPT",
    "LacerTemplate",
    "average_judges",
    "lacer",
    "lacer_from_replies",
    "parse_score",
]

PLACEHOLDERS = ("{{reference_title}}", "{{reference_abstract}}", "{{generation_title}}", "{{generation_abstract}}")
#: sciprobe's own system message, sent with a judge prompt that is not upstream's (a lattice, another template)
SYSTEM_PROMPT = ("You are an experienced scientific reviewer who rates how closely a generated research paper "
                 "title and abstract matches a reference paper.")
_OFFICIAL = re.compile(r"Score\s*:\s*([-+]?[0-9]+(?:\.\d+)?)", re.IGNORECASE)
# corrected: the score must be a whole number token ("Score: 8a615714" is no 8; upstream's regex reads 8)
_CORRECTED = re.compile(_OFFICIAL.pattern + r"(?![\w]|[.,]\d)", re.IGNORECASE)
MODES = ("official", "corrected")

Judge = Callable[[list[dict[str, str]]], str]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class LacerTemplate:
    """The judge prompt: the template, validated (each placeholder exactly once), and the system message sent
    with it, each with where it came from; ``warnings`` say what the run should report about them (e.g. a local
    upstream copy whose sha256 differs from the pin)."""

    text: str
    source: str = "<string>"
    system: str = SYSTEM_PROMPT
    system_source: str = "sciprobe"
    warnings: tuple[str, ...] = ()

    @classmethod
    def from_path(cls, path: Path | str) -> LacerTemplate:
        path = Path(path)
        if not path.is_file():
            raise SciprobeError(f"LACER template {path} not found (a template file with the four placeholders)")
        return cls(path.read_text(encoding="utf-8"), str(path))

    def __post_init__(self) -> None:
        for placeholder in PLACEHOLDERS:
            n = self.text.count(placeholder)
            if n != 1:
                raise SciprobeError(f"LACER template must contain {placeholder} exactly once, found {n}")

    @property
    def sha256(self) -> str:
        return _sha(self.text)

    @property
    def system_sha256(self) -> str:
        return _sha(self.system)

    def provenance(self) -> dict[str, str]:
        """What a score records about its judge prompt."""
        return {"template_sha256": self.sha256, "template_source": self.source,
                "system_prompt_sha256": self.system_sha256, "system_prompt_source": self.system_source}

    def messages(self, reference: Mapping[str, str], generation: Mapping[str, str] | None) -> list[dict[str, str]]:
        """The judge's messages for one pair: the system message, then the filled template."""
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": self.fill(reference, generation or {})}]

    def fill(self, reference: Mapping[str, str], generation: Mapping[str, str]) -> str:
        values = (reference.get("title") or "", reference.get("abstract") or "",
                  generation.get("title") or "", generation.get("abstract") or "")
        text = self.text
        for placeholder, value in zip(PLACEHOLDERS, values, strict=True):
            text = text.replace(placeholder, value)
        return text


def parse_score(reply: str | None, mode: str = "official") -> float | None:
    """The judge's score, or None when the reply has none (see the module docstring for the two rules)."""
    if mode not in MODES:
        raise SciprobeError(f"unknown LACER mode {mode!r} ({', '.join(MODES)})")
    if not reply:
        return None
    matches = list(_CORRECTED.finditer(reply)) if mode == "corrected" else [_OFFICIAL.search(reply)]
    matches = [m for m in matches if m is not None]
    if not matches:
        return None
    value = float((matches[-1] if mode == "corrected" else matches[0]).group(1))
    if not math.isfinite(value):
        return None
    return min(10.0, max(1.0, value)) if mode == "corrected" else value


def _bootstrap(values: np.ndarray, seed: int, n: int = 1000) -> tuple[float | None, float | None]:
    if values.size < 2:
        return None, None
    rng = np.random.default_rng(seed)
    means = values[rng.integers(values.size, size=(n, values.size))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def lacer(generations: Sequence[Mapping[str, str] | None], references: Sequence[Mapping[str, str]], *,
          judge: Judge, template: LacerTemplate, judge_id: str, mode: str = "official", seed: int = 0,
          replies: Sequence[str | None] | None = None) -> ScoreReport:
    """Mean LACER over (generation, gold) pairs. ``replies`` re-scores stored judge replies without calling
    the judge (e.g. to switch mode). A ``None``/empty generation is still judged (as empty text), as upstream."""
    if mode not in MODES:
        raise SciprobeError(f"unknown LACER mode {mode!r} ({', '.join(MODES)})")
    if len(generations) != len(references):
        raise SciprobeError(f"generations and references differ in length: {len(generations)} vs {len(references)}")
    if not references:
        raise SciprobeError("LACER needs at least one pair")
    if not judge_id:
        raise SciprobeError("LACER needs the judge id (model + version) for provenance")
    raw: list[str | None] = []
    errors: list[str | None] = []
    if replies is not None:
        if len(replies) != len(references):
            raise SciprobeError("replies must give one stored judge reply per pair")
        raw, errors = list(replies), [None] * len(replies)
    else:
        for gen, ref in zip(generations, references, strict=True):
            messages = template.messages(ref, gen)
            try:
                raw.append(judge(messages))
                errors.append(None)
            except Exception as exc:  # a judge error is a recorded failure, never a crash of the whole run
                raw.append(None)
                errors.append(f"{type(exc).__name__}: {exc}")
    report = lacer_from_replies(raw, judge_id=judge_id, mode=mode, seed=seed, errors=errors)
    report.params.update(template.provenance())
    return report


def lacer_from_replies(replies: Sequence[str | None], *, judge_id: str, mode: str = "official", seed: int = 0,
                       errors: Sequence[str | None] | None = None, ids: Sequence[str] | None = None) -> ScoreReport:
    """Parse stored judge replies (None = the call failed) and aggregate them: the mean over the scored items
    with a percentile bootstrap 95% CI; a reply without a score is left out and counted, in every mode. ``ids``
    are kept as ``values["ids"]`` for multi-judge averaging."""
    if mode not in MODES:
        raise SciprobeError(f"unknown LACER mode {mode!r} ({', '.join(MODES)})")
    raw = list(replies)
    errors = list(errors) if errors is not None else [None] * len(raw)
    scores = [parse_score(r, mode) for r in raw]
    failed = [s is None for s in scores]
    n_failed = sum(failed)
    used = np.array([s for s in scores if s is not None], dtype=float)
    mean = float(used.mean()) if used.size else None
    low, high = _bootstrap(used, seed) if used.size else (None, None)
    notes = []
    if n_failed:
        notes.append(f"{n_failed} judge repl(ies) without a score: failures, left out of the mean")
    values = {"lacer": mean, "ci95_low": low, "ci95_high": high, "per_item": scores, "raw_replies": raw,
              "judge_errors": errors}
    if ids is not None:
        values["ids"] = [str(i) for i in ids]
    return ScoreReport(
        metric="lacer", mode=mode, values=values,
        coverage=Coverage(len(scores), int(used.size), n_failed),
        params={"judge_id": judge_id,
                "bootstrap": {"resamples": 1000, "percentile": 95, "seed": seed}},
        notes=notes)


def average_judges(per_judge: Mapping[str, Mapping[str, float | None]], *, seed: int = 0,
                   mode: str = "official") -> ScoreReport:
    """"LACER (Avg)" as upstream ``average_lacer_scores.py``: for every id scored by *all* judges, the mean of
    the judges' scores; then the mean over those ids (bootstrap 95% CI over ids). ``per_judge`` maps a judge
    id to ``{item id: score or None}`` (None = that judge failed on the item)."""
    if not per_judge:
        raise SciprobeError("average_judges needs at least one judge")
    judges = list(per_judge)
    union = sorted({i for scores in per_judge.values() for i in scores})
    common = [i for i in union if all(per_judge[j].get(i) is not None for j in judges)]
    per_item = [float(np.mean([per_judge[j][i] for j in judges])) for i in common]
    used = np.array(per_item, dtype=float)
    low, high = _bootstrap(used, seed) if used.size else (None, None)
    values: dict[str, object] = {"lacer": float(used.mean()) if used.size else None, "ci95_low": low,
                                 "ci95_high": high, "ids": common, "per_item": per_item}
    for j in judges:
        mine = [per_judge[j][i] for i in common]
        values[f"lacer[{j}]"] = float(np.mean(mine)) if mine else None
    n_failed = len(union) - len(common)
    notes = [f"{n_failed} item(s) not scored by every judge are left out of the average"] if n_failed else []
    return ScoreReport(metric="lacer", mode=mode, values=values,
                       coverage=Coverage(len(union), len(common), n_failed),
                       params={"judges": judges, "aggregation": "mean over judges per id, ids scored by all judges",
                               "bootstrap": {"resamples": 1000, "percentile": 95, "seed": seed}},
                       notes=notes)
