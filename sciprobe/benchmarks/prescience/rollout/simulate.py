"""The day-by-day rollout (PreScience §4.5, Appendix C.7; upstream ``multiturn/simulate.py`` at ``47384ed``).

Start: H^{<t0} = the release's train corpus (upstream's ``--calibration_split train``) restricted to dates before
t0. The test corpus is not used as history: its pre-t0 companions were chosen because test-period papers cite
them, which is knowledge of the future. Each simulated day draws the number of papers, then per paper a team
size, a team (new authors, drawn authors, predicted collaborators), a reference count and references, and then
generates every title and abstract of the day in one batch; the day's papers are embedded and folded in after
the day, so they are history from the next day on.

Every draw comes from a generator seeded by (seed + repeat, day index), so a day can be replayed without the
days before it, and every sampled quantity is written to the repeat's journal (one JSON line per day). A rerun
with the same inputs reads finished days from the journal (and model calls from the response cache) instead
of drawing again: it resumes where an interrupted run stopped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from sciprobe.benchmarks.prescience.rollout.calibration import Calibration
from sciprobe.benchmarks.prescience.rollout.embedders import EmbeddingCache
from sciprobe.benchmarks.prescience.rollout.literature import Literature, LiteratureView, ReadObserver, paper_text
from sciprobe.benchmarks.prescience.rollout.params import RolloutParams, fingerprint
from sciprobe.benchmarks.prescience.rollout.policy import (
    SYNTHETIC_AUTHOR_PREFIX,
    AuthorIndex,
    predict_collaborators,
    predict_prior_work,
)
from sciprobe.core.errors import SciprobeError

__all__ = ["Release", "RolloutRun", "load_release", "simulate_repeat"]

SYNTHETIC_PAPER_PREFIX = "S"
SYNTHETIC_ROLE = "synthetic"


@dataclass
class Release:
    """The release files the rollout reads: H^{<t0}, the train targets, the real test corpus (natural curves)."""

    folder: Path
    start: list[dict[str, Any]]  # train corpus papers dated < t0, in (date, id) order
    train_targets: list[dict[str, Any]]
    test_corpus: list[dict[str, Any]]  # in file order (upstream iterates its dict in file order)
    authorships: list[tuple[str, str]]  # (author, paper) from author_publications.jsonl, start papers only
    digest: str


def _read(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise SciprobeError(f"{path.name} not found in {path.parent}")
    return pq.read_table(path).to_pylist()


def load_release(folder: Path | str, t0: str) -> Release:
    from sciprobe.benchmarks.prescience.history import read_key_values

    folder = Path(folder)
    train = _read(folder / "train.parquet")
    start = sorted((p for p in train if str(p["date"]) < t0), key=lambda p: (str(p["date"]), str(p["corpus_id"])))
    if not start:
        raise SciprobeError(f"the train corpus in {folder} has no paper dated before {t0}")
    targets = [p for p in start if "target" in (p.get("roles") or [])]
    test = _read(folder / "test.parquet") if (folder / "test.parquet").is_file() else []
    ids = {str(p["corpus_id"]) for p in start}
    authorships = []
    if (folder / "author_publications.jsonl").is_file():
        for key, values, _ in read_key_values(folder / "author_publications.jsonl"):
            authorships += [(key, v) for v in values if v in ids]
    digest = hashlib.sha256()
    for name in ("train.parquet", "test.parquet", "author_publications.jsonl"):
        if (folder / name).is_file():
            digest.update(name.encode() + (folder / name).read_bytes())
    return Release(folder, start, targets, test, authorships, digest.hexdigest()[:16])


@dataclass
class RolloutRun:
    """One repeat: the literature after the rollout, the synthetic papers' ids, the journal's day records."""

    repeat: int
    literature: Literature
    synthetic_ids: list[str]
    days: list[dict[str, Any]] = field(default_factory=list)
    days_from_journal: int = 0
    n_dropped: int = 0


def simulation_fingerprint(release: Release, params: RolloutParams, generator_spec: str, embedder_spec: str) -> str:
    return fingerprint({"release": release.digest, "params": params.simulation_key(), "generator": generator_spec,
                        "embedder": embedder_spec})


def starting_literature(release: Release, embeddings: EmbeddingCache) -> Literature:
    literature = Literature(embeddings.embedder.dim)
    literature.add(release.start, embeddings.embed([paper_text(p) for p in release.start]))
    for author, corpus_id in release.authorships:
        literature.add_authorship(author, corpus_id)
    return literature


class _Counters:
    def __init__(self) -> None:
        self.papers = 0
        self.new_authors: list[str] = []

    def paper_id(self) -> str:
        self.papers += 1
        return f"{SYNTHETIC_PAPER_PREFIX}{self.papers:08d}"

    def author_id(self) -> str:
        new = f"{SYNTHETIC_AUTHOR_PREFIX}{len(self.new_authors) + 1:08d}"
        self.new_authors.append(new)
        return new


def _team(view: LiteratureView, index: AuthorIndex | None, size: int, calib: Calibration, params: RolloutParams,
          counters: _Counters, rng: np.random.Generator) -> tuple[list[str], dict[str, Any]]:
    """Upstream's team rule: draw authors (new at the first-time rate) until one has history, then predict the
    rest from that seed author."""
    known = view.authors()
    with_history = set(known)
    known += [a for a in counters.new_authors if a not in with_history]
    team: list[str] = []
    how: list[str] = []
    seed: str | None = None

    def draw() -> None:
        nonlocal seed
        if not known or rng.random() < calib.first_time_author_rate:
            author, kind = counters.author_id(), "new"
        else:
            author, kind = known[int(rng.integers(len(known)))], "drawn"
        if author in team:
            return
        team.append(author)
        how.append(kind)
        if seed is None and view.author_papers(author):
            seed = author

    draw()
    while seed is None and len(team) < size:
        before = len(team)
        draw()
        if len(team) == before and len(set(known)) <= len(team):
            break  # every known author is already in the team
    if seed is not None and len(team) < size:
        predicted = predict_collaborators(params.collaborators, view, index, seed, size - len(team), set(team), rng,
                                          params.num_recent_papers)
        team += predicted
        how += ["predicted"] * len(predicted)
    return team, {"authors": [{"id": a, "how": h} for a, h in zip(team, how)], "seed_author": seed}


def _draw_day(literature: Literature, day: str, index_of_day: int, repeat: int, calib: Calibration,
              params: RolloutParams, generator: Any, counters: _Counters,
              observer: ReadObserver | None) -> dict[str, Any]:
    rng = np.random.default_rng([params.repeat_seed(repeat), index_of_day])
    view = literature.asof(day, observer)
    n_papers = calib.papers_today(rng, params.daily_counts)
    author_index = AuthorIndex(view, params.num_recent_papers) \
        if n_papers and params.collaborators == "embedding_fusion" else None
    samples, references = [], []
    for _ in range(n_papers):
        size = calib.team_size(rng)
        team, team_record = _team(view, author_index, size, calib, params, counters, rng)
        n_refs = calib.reference_count(rng)
        refs, padded = predict_prior_work(params.prior_work, view, team, n_refs, rng, params.num_recent_papers)
        samples.append({"team_size": size, **team_record, "reference_count": n_refs, "references": refs,
                        "padded_references": padded})
        references.append(refs)
    paper_rngs = [np.random.default_rng([params.repeat_seed(repeat), index_of_day, j + 1]) for j in range(n_papers)]
    papers = []
    for sample, (text, extra) in zip(samples, generator.generate(view, references, paper_rngs)):
        sample["generation"] = extra
        if text is None:
            sample["corpus_id"] = None  # dropped, as upstream drops a generation without title and abstract
            continue
        sample["corpus_id"] = counters.paper_id()
        papers.append(_record(sample, text, day, view))
    return {"day": day, "index": index_of_day, "papers_drawn": n_papers, "papers": papers, "samples": samples,
            "new_authors": list(counters.new_authors)}


def _record(sample: Mapping[str, Any], text: Mapping[str, str], day: str, view: LiteratureView) -> dict[str, Any]:
    """A synthetic paper in the release schema (fields the rollout does not model are null)."""
    return {"corpus_id": sample["corpus_id"], "arxiv_id": None, "date": day, "title": text["title"],
            "abstract": text["abstract"], "categories": None, "roles": [SYNTHETIC_ROLE],
            "key_references": [{"corpus_id": c, "num_citations": None} for c in sample["references"]],
            "authors": [{"author_id": a["id"], "name": None, "publication_history": view.author_papers(a["id"]),
                         "h_index": None, "num_papers": None, "num_citations": None} for a in sample["authors"]],
            "citation_trajectory": None, "topics": None}


def _journal(path: Path | None) -> dict[int, dict[str, Any]]:
    if path is None or not path.is_file():
        return {}
    days = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                break  # a line cut by an interrupted run: that day is drawn again
            days[int(record["index"])] = record
    return days


def simulate_repeat(release: Release, calib: Calibration, params: RolloutParams, repeat: int, generator: Any,
                    embeddings: EmbeddingCache, journal: Path | None = None,
                    observer: ReadObserver | None = None) -> RolloutRun:
    literature = starting_literature(release, embeddings)
    done = _journal(journal)
    counters = _Counters()
    run = RolloutRun(repeat, literature, [])
    if journal is not None:
        journal.parent.mkdir(parents=True, exist_ok=True)
    for i in range(params.days):
        day = params.day(i)
        if i in done:
            record = done[i]
            counters.papers += len(record["papers"])
            counters.new_authors = list(record["new_authors"])
            run.days_from_journal += 1
        else:
            record = _draw_day(literature, day, i, repeat, calib, params, generator, counters, observer)
            if journal is not None:
                with journal.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
        papers = record["papers"]
        literature.add(papers, embeddings.embed([paper_text(p) for p in papers]))
        run.synthetic_ids += [p["corpus_id"] for p in papers]
        run.n_dropped += sum(1 for s in record["samples"] if s["corpus_id"] is None)
        run.days.append(record)
    embeddings.save()
    return run


def check_generated(runs: Sequence[RolloutRun]) -> None:
    if all(not r.synthetic_ids for r in runs):
        raise SciprobeError("the rollout generated no paper (every generation failed or no day drew a paper)")
