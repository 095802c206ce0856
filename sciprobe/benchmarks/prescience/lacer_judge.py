"""LACER judging through the LLM client (spec ``prescience.md`` §3, pitfalls 15-18).

Where the judge prompt comes from (:func:`load_template`), first match wins:

1. an explicit ``path`` (``sciprobe prescience score --lacer-template``, the runner option ``lacer_template``):
   another judge prompt, see 3;
2. an explicit ``upstream_dir`` (``--upstream-dir DIR``): upstream's judge prompt read from that local copy of
   the pinned commit, see 4;
3. ``$SCIPROBE_LACER_TEMPLATE``: either a *template* text file with the four ``{{...}}`` placeholders or a
   *lattice file* (``*.json``, the format of :func:`read_lattices`, e.g. written by ``sciprobe lacer
   build-lattice``), rendered into a judge prompt with sciprobe's own instruction wording
   (:func:`render_lattices`); sent with sciprobe's own system message
   (:data:`sciprobe.benchmarks.prescience.scoring.lacer.SYSTEM_PROMPT`);
4. upstream's judge prompt (:func:`official_template`): the E.5 template (``.strip()``-ed, as ``lacer_score.py``
   reads it) and the system message ``lacer_score.py`` sends (its ``SYSTEM_PROMPT`` literal, read with :mod:`ast`,
   never executed), both pinned by sha256 (``Upstream.judge_files``) and read like every upstream file
   (:class:`sciprobe.run.upstream.UpstreamTexts`): ``$SCIPROBE_PRESCIENCE_UPSTREAM``, else the cache under
   ``$SCIPROBE_HOME/upstream``, else downloaded from the pinned commit. Offline (``SCIPROBE_OFFLINE=1`` or
   ``HF_HUB_OFFLINE=1``) and not cached: a one-line error naming the ways to supply it that the calling command
   has.

No upstream text (template or system message) is stored in this repository.

Judging (:func:`judge_pairs`): one request per (gold, generation) pair per judge, sent as one batch through
:class:`sciprobe.llm.client.LLMClient` (cached, concurrent); the replies are scored by
:mod:`sciprobe.benchmarks.prescience.scoring.lacer` (official first-match regex, no clamp, failures excluded and
counted; or the
corrected mode), and several judges are averaged over the ids every judge scored
(:func:`sciprobe.benchmarks.prescience.scoring.lacer.average_judges`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciprobe.benchmarks.prescience.upstream import (
    LACER_SCORE_PATH,
    LACER_TEMPLATE_PATH,
    LACER_TEMPLATE_SHA256,
    UPSTREAM,
)
from sciprobe.core.errors import SciprobeError
from sciprobe.benchmarks.prescience.scoring.lacer import LacerTemplate, average_judges, lacer_from_replies
from sciprobe.scoring.score_report import ScoreReport

if TYPE_CHECKING:
    from sciprobe.core.declaration import Upstream

__all__ = [
    "LATTICE_FORMAT",
    "OFFICIAL_TEMPLATE_SHA256",
    "TEMPLATE_ENV",
    "LacerRun",
    "judge_messages",
    "judge_pairs",
    "load_template",
    "official_template",
    "read_lattices",
    "render_lattices",
    "write_lattices",
]

UPSTREAM_COMMIT = UPSTREAM.commit
OFFICIAL_TEMPLATE_SHA256 = LACER_TEMPLATE_SHA256
TEMPLATE_ENV = "SCIPROBE_LACER_TEMPLATE"
LATTICE_FORMAT = "sciprobe.lacer-lattice.v1"
SCORES = tuple(range(1, 11))


# ---------------------------------------------------------------- where the template comes from
#: how the commands with an ``--upstream-dir`` option supply upstream's files (the offline error names it)
UPSTREAM_DIR_OPTION = "--upstream-dir DIR"


def official_template(*, upstream_dir: Path | str | None = None, upstream: Upstream = UPSTREAM,
                      offline: bool | None = None, timeout_s: float = 30.0,
                      option: str | None = UPSTREAM_DIR_OPTION) -> LacerTemplate:
    """Upstream's judge prompt at the pinned commit: the E.5 template and ``lacer_score.py``'s system message
    (module docstring, item 4). ``option`` is how the calling command takes a local folder (None: it has no such
    option, the offline error names the environment variables only)."""
    from sciprobe.run.upstream import UpstreamTexts

    texts = UpstreamTexts("prescience", upstream, upstream_dir, offline_mode=offline, timeout_s=timeout_s,
                          option=option)
    try:
        text = texts.text(LACER_TEMPLATE_PATH).strip()  # lacer_score.py: f.read().strip()
        system = texts.constant(LACER_SCORE_PATH, "SYSTEM_PROMPT")
    except SciprobeError as exc:
        raise SciprobeError(f"{exc}; or set {TEMPLATE_ENV}=PATH for another judge prompt (a template, or a lattice "
                            "file from `sciprobe lacer build-lattice`)") from None
    files = texts.provenance()["files"]
    return LacerTemplate(text, files[LACER_TEMPLATE_PATH]["source"], system=system,
                         system_source=f"{upstream.label}:{LACER_SCORE_PATH} SYSTEM_PROMPT",
                         warnings=tuple(texts.warnings()))


def _own_template(path: Path | str) -> LacerTemplate:
    chosen = Path(path)
    if not chosen.is_file():
        raise SciprobeError(f"LACER template/lattice file {chosen} not found")
    if chosen.suffix.lower() == ".json":
        return render_lattices(read_lattices(chosen), source=str(chosen))
    return LacerTemplate.from_path(chosen)


def load_template(path: Path | str | None = None, *, upstream_dir: Path | str | None = None,
                  **official: Any) -> LacerTemplate:
    """The judge prompt (module docstring for the order): ``path``, else upstream's from ``upstream_dir``, else
    ``$SCIPROBE_LACER_TEMPLATE``, else upstream's (:func:`official_template`, which takes ``official``)."""
    if path:
        return _own_template(path)
    if upstream_dir:
        return official_template(upstream_dir=upstream_dir, **official)
    if os.environ.get(TEMPLATE_ENV):
        return _own_template(os.environ[TEMPLATE_ENV])
    return official_template(**official)


# ---------------------------------------------------------------- lattice files
def _paper(x: Any, where: str) -> dict[str, str]:
    if not isinstance(x, Mapping) or not isinstance(x.get("title"), str) or not isinstance(x.get("abstract"), str):
        raise SciprobeError(f"{where}: expected {{'title': str, 'abstract': str}}")
    title, abstract = x["title"].strip(), x["abstract"].strip()
    if not title or "{{" in title + abstract:
        raise SciprobeError(f"{where}: empty title or a '{{{{' placeholder in the text")
    return {"title": title, "abstract": abstract}


def validate_lattice(lattice: Mapping[str, Any], where: str = "lattice") -> dict[str, Any]:
    """One lattice: a reference paper and ten exemplars scored 1..10 (each score once)."""
    reference = _paper(lattice.get("reference"), f"{where}.reference")
    items = lattice.get("generations")
    if not isinstance(items, list):
        raise SciprobeError(f"{where}.generations must be a list of 10 scored papers")
    gens = []
    for k, item in enumerate(items):
        paper = _paper(item, f"{where}.generations[{k}]")
        score = item.get("score")
        if not isinstance(score, int) or isinstance(score, bool):
            raise SciprobeError(f"{where}.generations[{k}].score must be an integer 1-10")
        gens.append({"score": score, **paper})
    if sorted(g["score"] for g in gens) != list(SCORES):
        raise SciprobeError(f"{where}: needs exactly one exemplar for each score 1..10")
    out = {"reference": reference, "generations": sorted(gens, key=lambda g: g["score"])}
    if "provenance" in lattice:
        out["provenance"] = lattice["provenance"]
    return out


def read_lattices(path: Path | str) -> list[dict[str, Any]]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SciprobeError(f"cannot read lattice file {path}: {exc}") from None
    if not isinstance(data, Mapping) or data.get("format") != LATTICE_FORMAT:
        raise SciprobeError(f"{path} is not a lattice file (format {LATTICE_FORMAT!r})")
    lattices = data.get("lattices") or []
    if not lattices:
        raise SciprobeError(f"{path} holds no lattice")
    return [validate_lattice(x, f"{Path(path).name}: lattices[{i}]") for i, x in enumerate(lattices)]


def write_lattices(path: Path | str, lattices: Sequence[Mapping[str, Any]], provenance: Mapping | None = None) -> Path:
    checked = [validate_lattice(x, f"lattices[{i}]") for i, x in enumerate(lattices)]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"format": LATTICE_FORMAT, "provenance": dict(provenance or {}), "lattices": checked}
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def toy_lattice(topic: str) -> dict[str, Any]:
    """An invented ten-step lattice about ``topic`` (a survey at 1 ... the reference itself at 10): a LACER judge
    prompt for offline tests and demos, never for real scoring (real lattices come from ``sciprobe lacer
    build-lattice``)."""
    ref = {"title": f"Gradient {topic} for sparse graphs",
           "abstract": f"We study {topic} on sparse graphs and show a faster gradient method with guarantees."}
    gens = [{"score": 1, "title": f"A survey of {topic}", "abstract": f"An overview of classical {topic} results."}]
    gens += [{"score": s, "title": f"Step {s} towards gradient {topic}",
              "abstract": f"Intermediate idea number {s} about {topic} on graphs."} for s in range(2, 10)]
    gens.append({"score": 10, **ref})
    return {"reference": ref, "generations": gens}


# sciprobe's own judge wording; the structure (lattices, Reference/Generation blocks, Reasoning/Score output)
# follows spec §3 "Judge prompt".
_INTRO = ("Your job is to rate how closely a Generated research paper (title and abstract) matches a Reference "
          "paper, on an integer scale from 1 to 10. A 1 means the generated paper is merely related prior work on "
          "a neighbouring topic; a 10 means it describes the same contribution as the reference. The worked "
          "examples below show, for several reference papers, generations at every level of the scale.")
_OUTRO = ("Now rate the pair below. First explain briefly what the two papers share and where they differ "
          "(problem, method, type of contribution, evaluation), then give the score.")


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else f"#{i + 1}"


def render_lattices(lattices: Sequence[Mapping[str, Any]], source: str = "<lattices>") -> LacerTemplate:
    """A judge prompt from lattices: intro, every lattice (``Reference X:`` + ten ``Score: n`` exemplars),
    the pair to score (the four placeholders) and the ``Reasoning:``/``Score:`` output format."""
    parts = [_INTRO, "", "Examples:", ""]
    for i, lattice in enumerate(lattices):
        lattice = validate_lattice(lattice, f"lattices[{i}]")
        ref = lattice["reference"]
        parts += [f"Reference {_letter(i)}:", ref["title"], ref["abstract"], "", "Generations:"]
        for g in lattice["generations"]:
            parts += [g["title"], g["abstract"], f"Score: {g['score']}", ""]
    parts += [_OUTRO, "", "Reference:", "{{reference_title}}", "{{reference_abstract}}", "", "Generation:",
              "{{generation_title}}", "{{generation_abstract}}", "", "Use the following output format:",
              "Reasoning: ...", "Score: ..."]
    return LacerTemplate("\n".join(parts) + "\n", source)


# ---------------------------------------------------------------- judging through the client
def judge_messages(template: LacerTemplate, reference: Mapping[str, str], generation: Mapping[str, str] | None
                   ) -> list[dict[str, str]]:
    """The template's system message + the filled template (Reference = gold, Generation = candidate), as
    upstream."""
    return template.messages(reference, generation)


@dataclass
class LacerRun:
    """Per-judge reports (each mode), the multi-judge average (each mode) and the raw replies per judge."""

    ids: list[str]
    per_judge: dict[str, dict[str, ScoreReport]]
    average: dict[str, ScoreReport]
    replies: dict[str, list[str | None]]
    errors: dict[str, list[str | None]]
    template_sha256: str
    template_source: str
    n_calls: int = 0
    prompt: dict[str, str] = field(default_factory=dict)  # the judge prompt's provenance (template, system)
    usage: dict[str, Any] = field(default_factory=dict)


def judge_pairs(ids: Sequence[str], generations: Sequence[Mapping[str, str] | None],
                references: Sequence[Mapping[str, str]], judges: Sequence[Any], template: LacerTemplate, *,
                modes: Sequence[str] = ("official",), params: Mapping[str, Any] | None = None, seed: int = 0,
                desc: str | None = "lacer") -> LacerRun:
    """Judge every (reference, generation) pair with every judge client (``LLMClient``-like: ``model_id`` and
    ``complete_many``). A ``None`` generation is judged as empty text, as upstream."""
    ids = [str(i) for i in ids]
    if not (len(ids) == len(generations) == len(references)):
        raise SciprobeError("ids, generations and references must have the same length")
    if not ids:
        raise SciprobeError("LACER needs at least one pair")
    if not judges:
        raise SciprobeError("LACER needs at least one judge")
    from sciprobe.llm.types import Request

    judge_ids = [j.model_id for j in judges]
    if len(set(judge_ids)) != len(judge_ids):
        raise SciprobeError(f"the same judge is given twice: {judge_ids}")
    messages = [judge_messages(template, ref, gen) for gen, ref in zip(generations, references)]
    replies: dict[str, list[str | None]] = {}
    errors: dict[str, list[str | None]] = {}
    per_judge: dict[str, dict[str, ScoreReport]] = {}
    n_calls = 0
    for judge, jid in zip(judges, judge_ids):
        requests = [Request.of(m, dict(params or {}), item_id=i) for m, i in zip(messages, ids)]
        completions = judge.complete_many(requests, desc=f"{desc} {jid}" if desc else None)
        n_calls += sum(1 for c in completions if not c.cached)
        replies[jid] = [c.text if c.ok else None for c in completions]
        errors[jid] = [c.error for c in completions]
        per_judge[jid] = {}
        for mode in modes:
            report = lacer_from_replies(replies[jid], judge_id=jid, mode=mode, seed=seed, errors=errors[jid], ids=ids)
            report.params.update(template.provenance())
            per_judge[jid][mode] = report
    average = {}
    for mode in modes:
        table = {jid: dict(zip(ids, per_judge[jid][mode].values["per_item"])) for jid in judge_ids}
        report = average_judges(table, seed=seed, mode=mode)
        report.params.update(template.provenance())
        average[mode] = report
    return LacerRun(ids, per_judge, average, replies, errors, template.sha256, template.source, n_calls,
                    prompt=template.provenance())
