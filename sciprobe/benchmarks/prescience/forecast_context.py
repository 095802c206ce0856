"""What a model is shown for the PreScience forecasting tasks T2-T7: facts drawn from the leak-free history
H^{<t} (spec ``prescience.md`` §1.4, §2 T2-T7). Pure data here; the wording is in :mod:`.forecast_prompts`.

Every fact comes from :class:`~.history.HistoryView` at the instance's own date (T6/T7: the test-period start,
so only the train window's papers), so nothing dated ``>= t`` can reach a prompt: the target itself, its
co-authors-to-be, its references (T3) and its citations are never shown. What a task may see of the target is
its declared input (spec §2): the seed author (T2), the author list C_p (T3), the title, abstract, authors'
statistics and references frozen at t_p (T4, T5).

Candidate pools are drawn from the history (§1.4: pre-t ids only) in *evidence* order (strongest first), so the
context budget keeps the best-supported candidates; the prompt then lists them in id order, so echoing the list
is no ranking. The ranked answer is padded to k = 1000 with a seeded random draw from the task's whole candidate
pool (upstream pads with random pre-cutoff candidates; pitfall 10: seeded here, so deterministic).

The built dataset (a folder or a hub id) holds the corpus as the ``papers`` config (splits ``train``/``test``)
and ``author_publications``; :func:`load_corpus` indexes it once per process.
"""

from __future__ import annotations

import functools
import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sciprobe.benchmarks.prescience.history import CorpusIndex, HistoryView
from sciprobe.benchmarks.prescience.schema import PAIR_SEPARATOR, RANKING_K, TEST_WINDOW, TRAIN_WINDOW
from sciprobe.core.errors import SciprobeError

#: Candidates gathered before the context budget picks what fits (evidence order).
POOL_LIMIT = 200
#: Most recent papers per author taken as evidence (the frequency baselines use 10, spec §2 T2/T3).
RECENT_PAPERS = 10


# ---------------------------------------------------------------- the corpus of a built dataset
@dataclass(eq=False)
class Corpus:
    """The two corpora of a built PreScience dataset, indexed (the train one only when a task needs it)."""

    source: str
    revision: str | None
    test: CorpusIndex
    _train: CorpusIndex | None = None

    def train(self) -> CorpusIndex:
        if self._train is None:
            self._train = _index(self.source, "train", self.revision)
        return self._train


def _load(source: str, config: str, split: str, revision: str | None) -> Any:
    import datasets

    try:
        return datasets.load_dataset(source, config, split=split, revision=revision)
    except (ValueError, FileNotFoundError) as exc:
        raise SciprobeError(f"cannot load the PreScience {config!r} config ({split}) from {source}: "
                            f"{str(exc).splitlines()[0]}") from None


def _index(source: str, split: str, revision: str | None) -> CorpusIndex:
    papers = _load(source, "papers", split, revision)
    pubs = _load(source, "author_publications", "full", revision)
    table = pubs.data.table
    pairs = zip(table["author_id"].to_pylist(), table["corpus_ids"].to_pylist())
    return CorpusIndex(papers.data.table, ((a, c or []) for a, c in pairs))


@functools.lru_cache(maxsize=2)
def load_corpus(source: str, revision: str | None = None) -> Corpus:
    """The corpus of the built dataset at ``source`` (folder or hub id), indexed once per process."""
    return Corpus(str(source), revision, _index(str(source), "test", revision))


# ---------------------------------------------------------------- shared helpers
def _stable_seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "big")


def padding_draw(pool: Any, item_id: str, k: int = RANKING_K, exclude: Sequence[str] = ()) -> list[str]:
    """Up to ``k`` distinct ids of ``pool`` (a list or an Arrow string array) in a seeded random order (seed: the
    item id), without ``exclude``."""
    skip = set(exclude)
    n = len(pool)
    if not n:
        return []
    rng = np.random.default_rng(_stable_seed("prescience-padding", item_id))
    take = min(n, k + len(skip))
    picks = rng.choice(n, size=take, replace=False) if take < n else rng.permutation(n)
    if isinstance(pool, list):
        ids = [pool[j] for j in picks.tolist()]
    else:
        import pyarrow as pa

        ids = pool.take(pa.array(picks, type=pa.int64())).to_pylist()
    return [cid for cid in ids if cid not in skip][:k]


def _row_value(index: CorpusIndex, row: int, column: str) -> Any:
    if column not in index.table.column_names:
        return None
    return index.table[column][int(row)].as_py()


def _paper(index: CorpusIndex, row: int) -> dict[str, Any]:
    return {"corpus_id": index.ids[int(row)].as_py(), "date": index.dates[int(row)].as_py(),
            "title": _row_value(index, row, "title") or ""}


def _target_row(index: CorpusIndex, corpus_id: str) -> int:
    row = index.row_of(str(corpus_id))
    if row is None:
        raise SciprobeError(f"instance {corpus_id!r} is not in the corpus of this dataset")
    return row


def _authors(index: CorpusIndex, row: int) -> list[dict[str, Any]]:
    return [a for a in _row_value(index, row, "authors") or [] if a.get("author_id")]


def _ref_rows(index: CorpusIndex, view: HistoryView, row: int) -> list[int]:
    out = []
    for ref in _row_value(index, row, "key_references") or []:
        q = index.row_of(ref.get("corpus_id") or "")
        if q is not None and q < view.n:
            out.append(q)
    return out


# ---------------------------------------------------------------- T2 collaborator prediction
@dataclass
class CollaboratorFacts:
    seed: dict[str, str]
    cutoff: str
    papers: list[dict[str, Any]]          # the seed's papers before the cutoff, newest first
    candidates: list[dict[str, Any]]      # evidence order
    pool: list[str] = field(repr=False, default_factory=list)  # every author with a paper before the cutoff


def collaborator_facts(index: CorpusIndex, row: dict[str, Any]) -> CollaboratorFacts:
    """Seed author, their publication record before t_p and a candidate pool of co-authors (1 hop) and
    co-authors of their most frequent co-authors (2 hops), from H^{<t_p} only."""
    view = index.view(row["date"])
    seed = str(row["seed_author_id"])
    names: dict[str, str] = {}
    papers = []
    joint: Counter[str] = Counter()
    last: dict[str, str] = {}
    history = view.author_history_rows(seed).tolist()
    for r in reversed(history):  # newest first
        authors = _authors(index, r)
        for a in authors:
            names.setdefault(a["author_id"], a.get("name") or "")
        coauthors = [a["author_id"] for a in authors if a["author_id"] != seed]
        paper = _paper(index, r)
        paper["coauthors"] = [{"author_id": a, "name": names.get(a, "")} for a in coauthors]
        papers.append(paper)
        for a in coauthors:
            joint[a] += 1
            last.setdefault(a, paper["date"])
    first_hop = sorted(sorted(sorted(joint), key=lambda a: last[a], reverse=True), key=lambda a: -joint[a])
    second: Counter[str] = Counter()
    for a in first_hop[:RECENT_PAPERS]:
        for r in view.author_history_rows(a)[-RECENT_PAPERS:].tolist():
            for b in _authors(index, r):
                names.setdefault(b["author_id"], b.get("name") or "")
                if b["author_id"] != seed and b["author_id"] not in joint:
                    second[b["author_id"]] += 1
    second_hop = sorted(second, key=lambda b: (-second[b], b))
    candidates = []
    for hop, ids in ((1, first_hop), (2, second_hop)):
        for a in ids:
            if len(candidates) >= POOL_LIMIT:
                break
            candidates.append({"author_id": a, "name": names.get(a, ""), "hop": hop,
                               "joint_papers": joint.get(a, 0), "last_joint": last.get(a),
                               "via_coauthors": second.get(a, 0) if hop == 2 else 0,
                               "papers_before": int(view.author_history_rows(a).size)})
    seed_name = names.get(seed) or _seed_name(index, row, seed)
    return CollaboratorFacts({"author_id": seed, "name": seed_name}, row["date"], papers, candidates,
                             [a for a in view.candidate_authors() if a != seed])


def _seed_name(index: CorpusIndex, row: dict[str, Any], seed: str) -> str:
    target = index.row_of(str(row["corpus_id"]))
    for a in _authors(index, target) if target is not None else []:
        if a["author_id"] == seed:
            return a.get("name") or ""
    return ""


# ---------------------------------------------------------------- T3 prior work selection
@dataclass
class PriorWorkFacts:
    authors: list[dict[str, str]]
    cutoff: str
    papers: dict[str, list[dict[str, Any]]]   # author id -> recent papers (newest first) with their references
    candidates: list[dict[str, Any]]
    pool: Any = field(repr=False, default=None)  # every paper before the cutoff (an Arrow array)


def prior_work_facts(index: CorpusIndex, row: dict[str, Any]) -> PriorWorkFacts:
    """The team C_p (names from the target's author list, the task's input), each author's recent papers with
    their key references, and candidates: papers those recent papers cite (by count), then the team's own
    earlier papers."""
    view = index.view(row["date"])
    names = {a["author_id"]: a.get("name") or "" for a in _authors(index, _target_row(index, row["corpus_id"]))}
    team = [{"author_id": str(a), "name": names.get(str(a), "")} for a in row["author_ids"]]
    cited: Counter[int] = Counter()
    own: dict[int, int] = {}
    papers: dict[str, list[dict[str, Any]]] = {}
    for member in team:
        recent = view.author_history_rows(member["author_id"])[-RECENT_PAPERS:].tolist()
        listed = []
        for r in reversed(recent):
            refs = _ref_rows(index, view, r)
            paper = _paper(index, r)
            paper["references"] = [index.ids[q].as_py() for q in refs]
            listed.append(paper)
            own[r] = own.get(r, 0) + 1
            cited.update(refs)
        papers[member["author_id"]] = listed
    order = sorted(cited, key=lambda q: (-cited[q], -q))
    order += sorted((r for r in own if r not in cited), key=lambda r: -r)
    candidates = []
    for q in order[:POOL_LIMIT]:
        paper = _paper(index, q)
        paper.update({"team_citations": cited.get(q, 0), "team_paper": q in own,
                      "citations_before": view.citation_count(paper["corpus_id"])})
        candidates.append(paper)
    return PriorWorkFacts(team, row["date"], papers, candidates, view.candidate_ids())


# ---------------------------------------------------------------- T4 citation (impact) prediction
@dataclass
class CitationFacts:
    target: dict[str, Any]
    authors: list[dict[str, Any]]
    references: list[dict[str, Any]]


def citation_facts(index: CorpusIndex, row: dict[str, Any]) -> CitationFacts:
    """The target's own inputs (C_p, R_p, A_p; spec §2 T4) with the statistics frozen at t_p; never its
    citation trajectory."""
    target = _target_row(index, row["corpus_id"])
    view = index.view(row["date"])
    paper = _paper(index, target)
    paper.update({"abstract": _row_value(index, target, "abstract") or "",
                  "categories": _row_value(index, target, "categories") or []})
    authors = [{"name": a.get("name") or "", "h_index": a.get("h_index"), "num_papers": a.get("num_papers"),
                "num_citations": a.get("num_citations")} for a in _authors(index, target)]
    refs = []
    for ref in _row_value(index, target, "key_references") or []:
        known = view.paper(ref.get("corpus_id") or "")
        refs.append({"corpus_id": ref.get("corpus_id"), "title": (known or {}).get("title") or "",
                     "num_citations": ref.get("num_citations"),
                     "in_corpus_citations": view.citation_count(ref.get("corpus_id") or "")})
    return CitationFacts(paper, authors, refs)


# ---------------------------------------------------------------- T5 future combination
@dataclass
class CombinationFacts:
    target: dict[str, Any]
    references: list[dict[str, Any]]
    candidates: list[dict[str, Any]]
    pool: Any = field(repr=False, default=None)


def combination_facts(index: CorpusIndex, row: dict[str, Any]) -> CombinationFacts:
    """The target paper P (title, abstract, topics, categories, key references: the task's input, spec §2 T5)
    and candidates from H^{<t_P}: papers co-cited with P's references by earlier papers (by count), then the
    most cited papers of the history."""
    target = _target_row(index, row["corpus_id"])
    view = index.view(row["date"])
    paper = _paper(index, target)
    paper.update({"abstract": _row_value(index, target, "abstract") or "",
                  "topics": _row_value(index, target, "topics") or [],
                  "categories": _row_value(index, target, "categories") or []})
    refs = _ref_rows(index, view, target)
    references = []
    for q in refs:
        ref = _paper(index, q)
        ref["abstract"] = _row_value(index, q, "abstract") or ""
        references.append(ref)
    ref_set = set(refs)
    cocited: Counter[int] = Counter()
    for r in refs:
        citers = index.citations.rows_of(r)
        for x in citers[:int(np.searchsorted(citers, view.n))].tolist():
            for q in _ref_rows(index, view, x):
                if q not in ref_set and q != target:
                    cocited[q] += 1
    order = sorted(cocited, key=lambda q: (-cocited[q], -q))
    if len(order) < POOL_LIMIT:
        edges = index.citations
        counts = np.diff(edges.offsets)[:view.n]
        taken = set(order) | ref_set
        for q in np.lexsort((-np.arange(view.n), -counts)).tolist():
            if len(order) >= POOL_LIMIT or counts[q] == 0:
                break
            if q not in taken:
                order.append(q)
    candidates = []
    for q in order[:POOL_LIMIT]:
        cand = _paper(index, q)
        cand.update({"cocitations": cocited.get(q, 0), "citations_before": view.citation_count(cand["corpus_id"])})
        candidates.append(cand)
    return CombinationFacts(paper, references, candidates, view.candidate_ids())


# ---------------------------------------------------------------- T6 / T7 topic trends
@dataclass
class TrendFacts:
    unit: str
    topics: list[str]                     # the topic, or the two topics of a pair
    history: tuple[str, str]              # the history window [start, end)
    forecast: tuple[str, str]             # the forecast window [start, end)
    forecast_months: int
    monthly: list[int]                    # the unit's papers per history month
    monthly_topics: list[list[int]]       # pairs: each topic's papers per history month
    monthly_total: list[int]              # topic-labelled papers per history month


def _months(start: str, end: str) -> int:
    import datetime as dt

    return max(1, round((dt.date.fromisoformat(end) - dt.date.fromisoformat(start)).days / 30.4))


@functools.lru_cache(maxsize=4)
def _train_months(corpus: Corpus) -> tuple[list[tuple[int, list[str]]], tuple[int, ...]]:
    """(month index, topic labels) of the train-window targets with labels, and the labelled papers per month."""
    import datetime as dt

    import pyarrow as pa

    from sciprobe.benchmarks.prescience.instances import target_rows

    index = corpus.train()
    if "topics" not in index.table.column_names:
        raise SciprobeError("the corpus has no topic labels (a `topics` column): topic tasks need them")
    rows = pa.array(target_rows(index, "train"), type=pa.int64())
    start = dt.date.fromisoformat(TRAIN_WINDOW[0])
    out = []
    totals = [0] * 12
    for date, topics in zip(index.table["date"].take(rows).to_pylist(), index.table["topics"].take(rows).to_pylist()):
        if topics:
            month = min((dt.date.fromisoformat(date) - start).days // 30, 11)
            out.append((month, list(topics)))
            totals[month] += 1
    return out, tuple(totals)


def trend_facts(corpus: Corpus, row: dict[str, Any]) -> TrendFacts:
    """Monthly counts of the unit (topic, or both topics of a pair together) over the train window, from the
    train corpus's targets (papers with no topic, 'Other', excluded as in the instances)."""
    labelled, totals = _train_months(corpus)
    unit = str(row["topic"])
    topics = unit.split(PAIR_SEPARATOR) if PAIR_SEPARATOR in unit else [unit]
    monthly = [0] * 12
    per_topic = [[0] * 12 for _ in topics]
    for month, labels in labelled:
        present = [t in labels for t in topics]
        if all(present):
            monthly[month] += 1
        if len(topics) > 1:
            for k, hit in enumerate(present):
                per_topic[k][month] += int(hit)
    end = row.get("forecast_end") or TEST_WINDOW[1]
    return TrendFacts(unit, topics, TRAIN_WINDOW, (TEST_WINDOW[0], end), _months(TEST_WINDOW[0], end), monthly,
                      per_topic if len(topics) > 1 else [], list(totals))
