"""Build new LACER lattices with any LLM (spec ``prescience.md`` §3 "Lattice construction", pitfall 19).

A lattice for a demonstration target T: score 1 = an *anchor* (by default the influential reference of T whose
abstract sits at the 50th percentile of n-gram overlap with T), scores 2-9 = eight intermediate title-abstracts
written by an LLM that move from the anchor towards T one facet at a time, score 10 = T verbatim (as in the
shipped prompt, pitfall 16).

Decisions where the paper is silent (pitfall 19):

- overlap = word-bigram *recall of the reference's* n-grams: ``|G2(ref) ∩ G2(T)| / |G2(ref)|`` over lower-cased,
  punctuation-stripped abstracts (n-gram *sets*, as upstream ``ngram_overlap.py`` works with sets);
- "50th percentile" = the lower median of the references sorted by overlap (ties by position), so a single
  reference is its own anchor;
- the interpolation prompt is sciprobe's own wording; replies are parsed from ``Title B:`` / ``Abstract B:`` …
  ``Title I:`` / ``Abstract I:`` (case-insensitive, markdown emphasis ignored). A reply missing a step is
  retried once with a reminder message; a target that still fails is skipped and reported.

CLI hook (wired as ``sciprobe lacer build-lattice`` by :mod:`sciprobe.cli.commands`): :func:`configure_parser`,
:func:`cmd`.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError

__all__ = [
    "STEP_LETTERS",
    "build_lattice",
    "build_lattices",
    "cmd",
    "configure_parser",
    "interpolation_messages",
    "ngram_overlap",
    "parse_interpolation",
    "select_anchor",
]

STEP_LETTERS = tuple("BCDEFGHI")  # scores 2..9
_WORD = re.compile(r"[a-z0-9]+")

_SYSTEM = ("You are a careful scientific writer. You produce realistic paper titles and abstracts that trace a "
           "gradual path between two research papers.")
_TASK = """Paper A and Paper J are given below. Write eight new papers, B through I, that form a smooth path from A \
to J: B is still close to A, I is already close to J, and each paper differs from the previous one in at least one \
important respect. Move one facet at a time, for example the kind of contribution (method, dataset, analysis, \
benchmark), the architecture or technique, the task or motivation, the data or evaluation setting. Every paper must \
read like a plausible real abstract of similar length.

Paper A
Title: {title_a}
Abstract: {abstract_a}

Paper J
Title: {title_j}
Abstract: {abstract_j}

Answer with exactly these sixteen lines, nothing else:
Title B: ...
Abstract B: ...
(and so on through)
Title I: ...
Abstract I: ..."""
_REMINDER = ("Your answer could not be read: every one of Title B ... Title I and Abstract B ... Abstract I must "
             "appear on its own line with that exact label. Please answer again in that format.")


# ---------------------------------------------------------------- anchor selection
def _ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    words = _WORD.findall((text or "").lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def ngram_overlap(reference: str, target: str, n: int = 2) -> float:
    """Share of the reference's distinct word n-grams that also occur in the target (0 if it has none)."""
    ref = _ngrams(reference, n)
    return len(ref & _ngrams(target, n)) / len(ref) if ref else 0.0


def select_anchor(target: Mapping[str, str], references: Sequence[Mapping[str, str]], *, percentile: float = 50.0,
                  n: int = 2) -> dict[str, str]:
    """The reference at the given percentile of abstract n-gram overlap with the target (lower value on ties)."""
    if not references:
        raise SciprobeError("select_anchor needs at least one reference")
    target_abstract = target.get("abstract") or ""
    ranked = sorted(range(len(references)),
                    key=lambda k: (ngram_overlap(references[k].get("abstract") or "", target_abstract, n), k))
    pos = int((len(ranked) - 1) * percentile / 100.0)
    ref = references[ranked[pos]]
    return {"title": ref.get("title") or "", "abstract": ref.get("abstract") or ""}


# ---------------------------------------------------------------- interpolation
def interpolation_messages(anchor: Mapping[str, str], target: Mapping[str, str]) -> list[dict[str, str]]:
    return [{"role": "system", "content": _SYSTEM},
            {"role": "user", "content": _TASK.format(title_a=anchor["title"], abstract_a=anchor["abstract"],
                                                     title_j=target["title"], abstract_j=target["abstract"])}]


_LABEL = re.compile(r"^[\s>*_#-]*(title|abstract)\s+([B-I])\s*[*_]*\s*:\s*[*_]*\s*(.*)$", re.IGNORECASE)


def parse_interpolation(text: str | None) -> list[dict[str, str]] | None:
    """Eight ``{"title", "abstract"}`` (B..I) from a reply, or None when any is missing or empty. A field may
    continue on following lines until the next label."""
    if not text:
        return None
    fields: dict[tuple[str, str], list[str]] = {}
    current: tuple[str, str] | None = None
    for line in text.splitlines():
        m = _LABEL.match(line)
        if m:
            current = (m.group(1).lower(), m.group(2).upper())
            fields.setdefault(current, []).append(m.group(3))
        elif current is not None and line.strip():
            fields[current].append(line.strip())
    out = []
    for letter in STEP_LETTERS:
        title = " ".join(fields.get(("title", letter), [])).strip().strip("*_ ")
        abstract = " ".join(fields.get(("abstract", letter), [])).strip().strip("*_ ")
        if not title or not abstract or "{{" in title + abstract:
            return None
        out.append({"title": title, "abstract": abstract})
    return out


def _lattice(anchor: Mapping[str, str], target: Mapping[str, str], steps: list[dict[str, str]],
             provenance: Mapping[str, Any]) -> dict[str, Any]:
    ref = {"title": target["title"], "abstract": target["abstract"]}
    gens = [{"score": 1, "title": anchor["title"], "abstract": anchor["abstract"]}]
    gens += [{"score": s, **step} for s, step in zip(range(2, 10), steps)]
    gens.append({"score": 10, **ref})
    return {"reference": ref, "generations": gens, "provenance": dict(provenance)}


def build_lattices(items: Sequence[Mapping[str, Any]], client: Any, *, params: Mapping[str, Any] | None = None,
                   percentile: float = 50.0, n: int = 2, retries: int = 1) -> tuple[list[dict], list[str]]:
    """Lattices for many targets, batched through the client. ``items``: ``{"title", "abstract"}`` of the target
    plus either ``anchor`` (a paper) or ``references`` (papers; the anchor is selected). Returns (lattices,
    one message per skipped target)."""
    from sciprobe.llm.types import Request

    anchors, targets = [], []
    for k, item in enumerate(items):
        target = {"title": (item.get("title") or "").strip(), "abstract": (item.get("abstract") or "").strip()}
        if not target["title"] or not target["abstract"]:
            raise SciprobeError(f"item {k}: the target needs a title and an abstract")
        anchor = item.get("anchor") or select_anchor(target, item.get("references") or [], percentile=percentile, n=n)
        targets.append(target)
        anchors.append({"title": anchor["title"], "abstract": anchor["abstract"]})
    conversations = [interpolation_messages(a, t) for a, t in zip(anchors, targets)]
    results: list[list[dict] | None] = [None] * len(items)
    pending = list(range(len(items)))
    replies: dict[int, str | None] = {}
    for attempt in range(retries + 1):
        if not pending:
            break
        requests = [Request.of(conversations[k], dict(params or {}), item_id=str(k)) for k in pending]
        completions = client.complete_many(requests, desc="lacer lattice" if attempt == 0 else "lacer lattice retry")
        still = []
        for k, c in zip(pending, completions):
            replies[k] = c.text if c.ok else None
            results[k] = parse_interpolation(replies[k])
            if results[k] is None:
                still.append(k)
                if c.ok:
                    conversations[k] = [*conversations[k], {"role": "assistant", "content": c.text},
                                        {"role": "user", "content": _REMINDER}]
        pending = still
    lattices, skipped = [], []
    model_id = getattr(client, "model_id", str(client))
    for k, steps in enumerate(results):
        if steps is None:
            skipped.append(f"item {k} ({targets[k]['title'][:60]!r}): no parsable interpolation")
            continue
        lattices.append(_lattice(anchors[k], targets[k], steps, {
            "model_id": model_id, "anchor_rule": "given" if items[k].get("anchor") else
            f"reference at percentile {percentile:g} of word-{n}-gram recall overlap"}))
    return lattices, skipped


def build_lattice(target: Mapping[str, str], client: Any, *, anchor: Mapping[str, str] | None = None,
                  references: Sequence[Mapping[str, str]] | None = None, params: Mapping[str, Any] | None = None,
                  percentile: float = 50.0, n: int = 2, retries: int = 1) -> dict[str, Any]:
    """One lattice (reference = ``target``, ten exemplars scored 1..10) built with ``client`` (an
    ``LLMClient``); give the score-1 ``anchor`` or the target's ``references`` to select it from."""
    if anchor is None and not references:
        raise SciprobeError("build_lattice needs an anchor paper or the target's references")
    item = {**target, "anchor": anchor, "references": list(references or [])}
    lattices, skipped = build_lattices([item], client, params=params, percentile=percentile, n=n, retries=retries)
    if not lattices:
        raise SciprobeError(f"the model gave no parsable interpolation: {skipped[0]}")
    return lattices[0]


# ---------------------------------------------------------------- CLI hook
def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Arguments of ``sciprobe lacer build-lattice``."""
    parser.description = ("Build LACER lattices: for each target, the anchor (score 1), eight LLM-interpolated "
                          "steps (2-9) and the target itself (10); writes a lattice file usable as "
                          "SCIPROBE_LACER_TEMPLATE.")
    parser.add_argument("--input", required=True,
                        help="JSONL, one target per line: {title, abstract, anchor: {title, abstract}} or "
                             "{title, abstract, references: [{title, abstract}, ...]} (a built "
                             "contribution_generation row works as is)")
    parser.add_argument("--model", required=True, metavar="SPEC", help="the LLM writing the interpolations")
    parser.add_argument("--out", required=True, help="lattice file to write (.json)")
    parser.add_argument("--count", type=int, default=5, help="lattices to build (first N targets; default 5)")
    parser.add_argument("--percentile", type=float, default=50.0, help="anchor percentile of n-gram overlap")
    parser.add_argument("--ngram", type=int, default=2, help="n of the overlap n-grams (default 2)")
    parser.add_argument("--render", help="also write the rendered judge prompt (text) here")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    return parser


def cmd(args: argparse.Namespace) -> int:
    from sciprobe.run.task_runner import make_client
    from sciprobe.benchmarks.prescience.lacer_judge import render_lattices, write_lattices

    if args.count < 1:
        raise SciprobeError("--count must be at least 1")
    items = []
    try:
        with open(args.input, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if line.strip():
                    items.append(json.loads(line))
    except (OSError, json.JSONDecodeError) as exc:
        raise SciprobeError(f"cannot read {args.input}: {exc}") from None
    items = items[: args.count]
    if not items:
        raise SciprobeError(f"{args.input} holds no target")
    client = make_client(args.model, use_cache=not args.no_cache)
    lattices, skipped = build_lattices(items, client, percentile=args.percentile, n=args.ngram)
    for line in skipped:
        print(f"skipped {line}")
    if not lattices:
        raise SciprobeError("no lattice could be built")
    out = write_lattices(args.out, lattices, {"model_id": client.model_id, "input": str(args.input)})
    print(f"wrote {len(lattices)} lattice(s) to {out}")
    if args.render:
        template = render_lattices(lattices, source=str(out))
        Path(args.render).write_text(template.text, encoding="utf-8")
        print(f"wrote the judge prompt to {args.render} (sha256 {template.sha256[:12]})")
    return 0
