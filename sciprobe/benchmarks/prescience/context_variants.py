"""Context variants of contribution generation (T1): the ablations of the paper's Table 2 (right), Table 11 and
Appendix D.1.3, as the per-task option ``context`` of ``prescience:contribution_generation``.

``context`` is a comma- (or ``+``-) separated list of variants:

- one **reference set** (default ``influential``): ``influential`` (the release's key references, R_p), ``all``
  (all of the paper's references) or ``impact`` (impact-revealing references). ``all`` and ``impact`` are not in
  the public release; they are read from ``{"key": target corpus_id, "value": [corpus_id, ...]}`` JSON-lines files
  named by the option ``reference_sets`` (``{"all": PATH, "impact": PATH}``; CLI ``--reference-set all=PATH``).
  The bundled sample carries invented ones (``sample/references_{all,impact}.jsonl``).
  ``SET:SIZE`` subsamples the set, per target, to the size of the ``SIZE`` set (``all:influential``,
  ``impact:influential``, ``all:impact``: Table 11's matched-size rows), with a draw seeded by ``context_seed``
  (default 0), the target id and the variant, recorded in provenance.
- any of the **extras**: ``author_history`` (the target's authors in listed order, each author's 3 most recent
  papers, 15 in all), ``related`` (10 papers retrieved by embedding with the shown references as queries, rank
  fusion as in upstream's expanded-context baseline; the bundled MiniLM, not upstream's GRIT; the paper's §4.1
  "papers in R_p as queries", not C.1's target-text query, which would leak the target) and ``citations`` (the
  target's oracle citation count 12 months on, or at its trajectory's last month when shorter, as upstream:
  deliberate leakage, as in the paper, marked ``oracle`` in provenance).

Every retrieved paper comes through :class:`~.history.HistoryView` at the target's date t_p, so nothing dated on
or after t_p is shown: a listed reference outside H^{<t_p} is dropped and counted (``dropped``), never shown.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sciprobe.benchmarks.prescience.history import CorpusIndex, HistoryView, read_key_value_table
from sciprobe.benchmarks.prescience.schema import CITATION_HORIZON_MONTHS
from sciprobe.core.errors import SciprobeError

REFERENCE_SETS = ("influential", "all", "impact")
EXTRAS = ("author_history", "related", "citations")
VARIANTS = REFERENCE_SETS + EXTRAS
PAPERS_PER_AUTHOR = 3       # Appendix C.1 / upstream default: up to 3 recent papers per author
MAX_AUTHOR_PAPERS = 15      # ... and 15 in all
RELATED_K = 10              # 10 nearest neighbours
SAMPLE_REFERENCE_FILES = {"all": "references_all.jsonl", "impact": "references_impact.jsonl"}


@dataclass(frozen=True)
class ContextSpec:
    """What the model is shown beyond the default (the influential references)."""

    references: str = "influential"
    match_size: str | None = None      # subsample ``references`` to the size of this set, per target
    extras: tuple[str, ...] = ()
    seed: int = 0

    @property
    def is_default(self) -> bool:
        return self.references == "influential" and not self.extras

    @property
    def label(self) -> str:
        head = self.references + (f":{self.match_size}" if self.match_size else "")
        return ",".join([head, *self.extras])

    def provenance(self) -> dict[str, Any]:
        return {"variants": self.label, "references": self.references, "match_size": self.match_size,
                "extras": list(self.extras), "subsample_seed": self.seed if self.match_size else None,
                "papers_per_author": PAPERS_PER_AUTHOR, "max_author_papers": MAX_AUTHOR_PAPERS,
                "related_k": RELATED_K, "oracle": "citations" in self.extras}


def parse_context(value: str | Sequence[str] | None, seed: int = 0) -> ContextSpec:
    """``"influential"``, ``"all:influential,author_history"``, ``["related", "citations"]`` -> a spec."""
    if value is None or value == "":
        return ContextSpec(seed=seed)
    parts = value if isinstance(value, (list, tuple)) else [value]
    names = [p.strip() for part in parts for p in str(part).replace("+", ",").split(",") if p.strip()]
    references, match, extras = None, None, []
    for name in names:
        base, _, size = name.partition(":")
        if base not in VARIANTS:
            raise SciprobeError(f"unknown context variant {base!r} (choose from {', '.join(VARIANTS)})")
        if base in EXTRAS:
            if size:
                raise SciprobeError(f"context {name!r}: only a reference set takes ':SIZE'")
            extras.append(base)
            continue
        if references is not None and (references, match) != (base, size or None):
            raise SciprobeError(f"context {value!r} names two reference sets ({references}, {base}): pick one")
        if size and base == "influential":
            raise SciprobeError(f"context {name!r}: the influential set is the size the others are matched to")
        if size and (size not in REFERENCE_SETS or size == base):
            raise SciprobeError(f"context {name!r}: ':SIZE' names another reference set "
                                f"({', '.join(s for s in REFERENCE_SETS if s != base)})")
        references, match = base, size or None
    return ContextSpec(references or "influential", match, tuple(e for e in EXTRAS if e in extras), seed)


# ---------------------------------------------------------------- alternative reference sets
def load_reference_sets(paths: Mapping[str, str | Path]) -> dict[str, dict[str, list[str]]]:
    """``{set name: {target id: [reference ids]}}`` from the ``reference_sets`` files."""
    out: dict[str, dict[str, list[str]]] = {}
    for name, path in paths.items():
        if name not in ("all", "impact"):
            raise SciprobeError(f"reference set {name!r}: only 'all' and 'impact' are read from files")
        table = read_key_value_table(path)
        out[name] = dict(zip(table["key"].to_pylist(), table["value"].to_pylist()))
    return out


def _set_ids(name: str, row: Mapping[str, Any], sets: Mapping[str, Mapping[str, list[str]]]) -> list[str]:
    if name == "influential":
        return [str(r["corpus_id"]) for r in row["references"]]
    if name not in sets:
        raise SciprobeError(f"context {name!r} needs its reference-set file: pass --reference-set {name}=PATH "
                            "(JSON lines {\"key\": target corpus_id, \"value\": [corpus_id, ...]})")
    ids = sets[name].get(str(row["corpus_id"]))
    if ids is None:
        raise SciprobeError(f"the {name!r} reference-set file has no line for target {row['corpus_id']}")
    return list(ids)


def _seed(*parts: Any) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()[:8], "big")


def subsample(ids: Sequence[str], size: int, seed: int, target: str, label: str) -> list[str]:
    """``size`` of ``ids`` drawn without replacement (seed: run seed, target, variant), in their listed order."""
    if len(ids) <= size:
        return list(ids)
    rng = np.random.default_rng(_seed("prescience-context", seed, target, label))
    keep = sorted(rng.choice(len(ids), size=size, replace=False).tolist())
    return [ids[k] for k in keep]


# ---------------------------------------------------------------- what one target is shown
@dataclass
class TargetContext:
    """One target's context: every paper a ``{"corpus_id", "date", "title", "abstract"}`` of H^{<t_p}."""

    corpus_id: str
    date: str
    references: list[dict[str, Any]]
    author_papers: list[dict[str, Any]] = field(default_factory=list)
    related: list[dict[str, Any]] = field(default_factory=list)
    citations: int | None = None
    citation_months: int | None = None
    counts: dict[str, Any] = field(default_factory=dict)

    def retrieved(self) -> list[dict[str, Any]]:
        return [*self.references, *self.author_papers, *self.related]


def _shown(view: HistoryView, corpus_id: str) -> dict[str, Any] | None:
    paper = view.paper(corpus_id)  # None when absent or dated >= t: the history rule, never bypassed
    if paper is None:
        return None
    return {"corpus_id": paper["corpus_id"], "date": paper["date"], "title": paper.get("title") or "",
            "abstract": paper.get("abstract") or ""}


def _references(view: HistoryView, row: Mapping[str, Any], spec: ContextSpec,
                sets: Mapping[str, Mapping[str, list[str]]]) -> tuple[list[dict], dict[str, Any]]:
    ids = list(dict.fromkeys(_set_ids(spec.references, row, sets)))
    listed = len(ids)
    if spec.match_size:
        size = len(set(_set_ids(spec.match_size, row, sets)))
        ids = subsample(ids, size, spec.seed, str(row["corpus_id"]), spec.label)
    papers = [p for p in (_shown(view, i) for i in ids) if p is not None]
    return papers, {"listed": listed, "drawn": len(ids), "shown": len(papers), "dropped": len(ids) - len(papers)}


def _author_papers(index: CorpusIndex, view: HistoryView, target: Mapping[str, Any]) -> list[dict]:
    """Authors in listed order, each one's newest papers of H^{<t_p} first (ties: higher id first), up to
    ``PAPERS_PER_AUTHOR`` new ones per author (a paper already taken for an earlier author does not use a slot)
    and ``MAX_AUTHOR_PAPERS`` in all."""
    papers: list[dict] = []
    seen: set[str] = set()
    for author in target.get("authors") or []:
        taken = 0
        for r in view.author_history_rows(str(author.get("author_id")))[::-1]:
            if taken >= PAPERS_PER_AUTHOR or len(papers) >= MAX_AUTHOR_PAPERS:
                break
            cid = index.ids[int(r)].as_py()
            paper = None if cid in seen else _shown(view, cid)
            if paper is not None:
                seen.add(cid)
                papers.append(paper)
                taken += 1
        if len(papers) >= MAX_AUTHOR_PAPERS:
            break
    return papers


Embed = Callable[[Sequence[str]], np.ndarray]


class PaperEmbeddings:
    """Unit-norm float32 embeddings of corpus papers (title + abstract). Rows are date-sorted, so H^{<t} is a row
    prefix: the matrix grows to the longest prefix asked for, each paper encoded once per process."""

    def __init__(self, index: CorpusIndex, encode: Embed, batch: int = 2048) -> None:
        self.index, self.encode, self.batch = index, encode, batch
        self._matrix = np.zeros((0, 0), dtype=np.float32)

    def prefix(self, n: int) -> np.ndarray:
        """The embeddings of rows ``0 .. n-1`` (a view, no copy)."""
        while len(self._matrix) < n:
            lo = len(self._matrix)
            hi = min(n, lo + self.batch)
            titles = self.index.table["title"].slice(lo, hi - lo).to_pylist()
            abstracts = self.index.table["abstract"].slice(lo, hi - lo).to_pylist()
            vectors = np.asarray(self.encode([f"{t or ''} {a or ''}".strip() for t, a in zip(titles, abstracts)]),
                                 dtype=np.float32)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.where(norms == 0, 1, norms)
            self._matrix = vectors if not lo else np.concatenate([self._matrix, vectors])
        return self._matrix[:n]


def _related(view: HistoryView, references: Sequence[Mapping[str, Any]], embeddings: PaperEmbeddings,
             exclude: set[str]) -> list[dict]:
    """Rank fusion over the shown references, as upstream's expanded-context baseline retrieves them: each
    reference's nearest papers of H^{<t_p} (cosine, the ``max(4K, K + |excluded| + 10)`` nearest), every paper's
    ranks summed over the lists it appears in (rank 0 = nearest; a list it is absent from adds nothing), the K
    lowest sums kept (ties: first seen). The references, the target's shown author papers and ``exclude`` are
    left out."""
    index = view.index
    query_rows = [r for r in (index.row_of(p["corpus_id"]) for p in references) if r is not None]
    if not query_rows or not view.n:
        return []
    history = embeddings.prefix(view.n)  # rows < n: exactly H^{<t_p}
    skip = exclude | {p["corpus_id"] for p in references}
    depth = min(view.n, max(4 * RELATED_K, RELATED_K + len(skip) + 10))
    sums: dict[int, int] = {}
    for q in query_rows:
        sims = history @ history[q]
        nearest = np.lexsort((np.arange(view.n), -sims))[:depth]  # ties: the earlier row
        for rank, row in enumerate(nearest.tolist()):
            if index.ids[row].as_py() not in skip:
                sums[row] = sums.get(row, 0) + rank
    chosen = sorted(sums, key=lambda row: sums[row])[:RELATED_K]  # stable: first seen wins a tie
    return [p for p in (_shown(view, index.ids[row].as_py()) for row in chosen) if p is not None]


def _oracle_citations(target: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """(citations, months): the cumulative count 12 months on, or at the trajectory's last month when it is
    shorter (upstream's oracle line does the same and says the horizon); (None, None) without a trajectory."""
    trajectory = target.get("citation_trajectory") or []
    if not trajectory:
        return None, None
    months = min(len(trajectory), CITATION_HORIZON_MONTHS)
    return int(trajectory[months - 1]), months


def target_context(index: CorpusIndex, row: Mapping[str, Any], spec: ContextSpec,
                   sets: Mapping[str, Mapping[str, list[str]]] | None = None,
                   embeddings: PaperEmbeddings | None = None
                   ) -> TargetContext:
    """What the target of ``row`` (a contribution-generation instance) is shown under ``spec``."""
    view = index.view(str(row["date"]))
    target_row = index.row_of(str(row["corpus_id"]))
    if target_row is None:
        raise SciprobeError(f"target {row['corpus_id']} is not in the corpus the context is drawn from")
    target = index.row(target_row)  # the target's own record: its author list (an input) and oracle count
    references, counts = _references(view, row, spec, sets or {})
    out = TargetContext(str(row["corpus_id"]), str(row["date"]), references, counts={"references": counts})
    if "author_history" in spec.extras:
        out.author_papers = _author_papers(index, view, target)
        out.counts["author_papers"] = len(out.author_papers)
    if "related" in spec.extras:
        if embeddings is None:
            raise SciprobeError("context 'related' needs an embedder")
        shown_ids = {p["corpus_id"] for p in out.author_papers} | {out.corpus_id}
        out.related = _related(view, references, embeddings, shown_ids)
        out.counts["related"] = len(out.related)
    if "citations" in spec.extras:
        out.citations, out.citation_months = _oracle_citations(target)
        out.counts["citation_months"] = out.citation_months
    return out


def default_embeddings(index: CorpusIndex) -> PaperEmbeddings:
    """The bundled MiniLM (offline), the same embedder as SGI's idea scoring."""
    from sciprobe.benchmarks.sgibench.scoring.idea import default_embedder

    model = default_embedder()
    return PaperEmbeddings(index, lambda texts: model.encode(list(texts), batch_size=32, show_progress_bar=False))


# ---------------------------------------------------------------- the prompt (sciprobe's own wording)
_SECTION_NOTES = {
    "author_history": "You are also shown recent earlier papers by the authors of the follow-up paper (Author "
                      "Paper blocks): they show what the team has been working on.",
    "related": "You are also shown earlier papers related to the background papers (Related Paper blocks); the "
               "follow-up paper does not necessarily cite them.",
    "citations": "You are also told how many citations the follow-up paper will receive in its first months.",
}


def _blocks(label: str, papers: Sequence[Mapping[str, Any]]) -> str:
    return "".join(f"{label} {i}:\nTitle: {p.get('title') or ''}\nAbstract: {p.get('abstract') or ''}\n\n"
                   for i, p in enumerate(papers, 1))


def context_messages(context: TargetContext, spec: ContextSpec) -> list[dict[str, str]]:
    """The default prompt's system message with a note per extra section, and the sections in a fixed order."""
    from sciprobe.benchmarks.prescience.contribution_prompt import SYSTEM

    notes = [_SECTION_NOTES[e] for e in spec.extras]
    system = SYSTEM if not notes else SYSTEM + "\n\n" + " ".join(notes)
    user = _blocks("Background Paper", context.references)
    user += _blocks("Author Paper", context.author_papers) + _blocks("Related Paper", context.related)
    if "citations" in spec.extras:
        months = context.citation_months or CITATION_HORIZON_MONTHS
        count = "unknown" if context.citations is None else str(context.citations)
        user += f"Citations of the follow-up paper in its first {months} months: {count}\n"
    return [{"role": "system", "content": system}, {"role": "user", "content": user.rstrip("\n")}]


def verbatim_leak(messages: Sequence[Mapping[str, str]], row: Mapping[str, Any]) -> str | None:
    """Which of the target's own id, title, abstract or a 60-character stretch of the abstract's middle appears
    verbatim in the user message (a retrieved duplicate of the target would show it), or None. The same kind of
    check as upstream's expanded-context baselines, which skip such targets; here the item stays and is counted."""
    user = messages[-1]["content"]
    abstract = str(row.get("abstract") or "")
    probes = {"corpus_id": str(row["corpus_id"]), "title": str(row.get("title") or ""), "abstract": abstract,
              "mid-abstract": abstract[200:260] if len(abstract) >= 260 else ""}
    return next((name for name, text in probes.items() if text and text in user), None)


def summary(contexts: Sequence[TargetContext]) -> dict[str, Any]:
    """Totals over the targets, for provenance."""
    refs = [c.counts["references"] for c in contexts]
    out: dict[str, Any] = {k: sum(r[k] for r in refs) for k in ("listed", "drawn", "shown", "dropped")}
    out["n_targets"] = len(contexts)
    for key in ("author_papers", "related"):
        if contexts and key in contexts[0].counts:
            out[key] = sum(c.counts[key] for c in contexts)
    if contexts and "citation_months" in contexts[0].counts:
        months = [c.counts["citation_months"] for c in contexts]
        out["n_citations_unknown"] = sum(1 for m in months if m is None)
        out["n_citations_before_12_months"] = sum(1 for m in months if m is not None and m < CITATION_HORIZON_MONTHS)
    return out


def check_context_options(options: Mapping[str, Any], prompt_set: str) -> None:
    """``TaskSpec.check_options`` of contribution generation: a bad variant, or a non-default context with
    upstream's prompts (their expanded-context templates are not pinned), is a one-line error before anything
    runs."""
    spec = parse_context(options.get("context"), seed=int(options.get("context_seed") or 0))
    if not spec.is_default and prompt_set != "sciprobe":
        raise SciprobeError(f"--context {options.get('context')} runs with sciprobe's prompts only: upstream's "
                            "expanded-context templates are not pinned (see the PreScience README)")
