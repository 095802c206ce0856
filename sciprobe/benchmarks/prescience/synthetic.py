"""Synthetic PreScience corpora in the released layout (spec ``prescience.md`` §1.2, §1.4; invented data only).

``write_corpus(out_dir, n_papers=...)`` writes what the release ships — ``train.parquet`` and ``test.parquet``
(the two overlapping corpora, :data:`schema.PAPER_SCHEMA`), ``author_publications.jsonl`` and
``author_disambiguation.jsonl`` — for tests (a few thousand papers) and for the 500,000-paper bench. Titles,
abstracts, ids, names and numbers are invented; nothing is copied from the real data.

The generator obeys the release's invariants so that leakage tests can be adversarial:

- papers are generated day by day and cite only papers dated strictly earlier (same-day papers never cite
  each other); many days hold several papers, so ``date == t`` cases are common;
- target ``key_references[].num_citations`` = in-corpus citations from papers dated ``< t_p``; target author
  statistics (``publication_history``, ``num_papers``, ``num_citations``, ``h_index``) are taken at ``t_p``;
- ``citation_trajectory[m-1]`` = citations dated ``< t_p + 30·m`` days, ``m ≤ min(36, (build_date − t_p) // 30)``;
- corpus ids are a random permutation (id order says nothing about date order), rows are written in random order;
- each split corpus = its window's targets + their key references + their authors' earlier papers + those
  papers' key references (roles recomputed per split, so train-window targets appear in ``test.parquet`` as
  companions); companions carry no target-only fields;
- ``author_publications.jsonl`` lists every paper of an author, *including later ones* (as upstream's merged
  map does), so consumers must truncate by date;
- topics drift over time (a per-topic growth rate), so topic-trend baselines have something to find.
"""

from __future__ import annotations

import bisect
import datetime as dt
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sciprobe.benchmarks.prescience.schema import (
    PAPER_SCHEMA,
    TEST_WINDOW,
    TOPICS,
    TRAIN_WINDOW,
    TRAJECTORY_MONTH_DAYS,
)

TARGET_CATEGORIES = ("cs.CL", "cs.LG", "cs.AI", "cs.CV", "cs.IR", "cs.NE")
OTHER_CATEGORIES = ("stat.ML", "math.OC", "eess.IV", "q-bio.NC", "physics.comp-ph")
_EPOCH = dt.date(2000, 1, 1)
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "ta", "vo", "shi", "pre", "tra", "ben", "cor", "dal", "fen",
              "gri", "hol", "jun", "ler", "mor", "nix", "pol", "quin", "ser", "tol", "ump", "vex", "wor", "zen")
_CONNECTORS = ("for", "with", "via", "under", "beyond", "towards", "using", "in", "of", "and")


def day_number(date: str) -> int:
    return (dt.date.fromisoformat(date) - _EPOCH).days


def day_string(day: int) -> str:
    return (_EPOCH + dt.timedelta(days=int(day))).isoformat()


# Synthetic ids must never name a real paper or author: Semantic Scholar corpus and author ids are far below
# 9.9e9 / 9.8e9, and an arXiv number of 90000 or more was never issued in any month (``arxiv_id`` below).
SYNTHETIC_CORPUS_ID_BASE = 9_900_000_000
SYNTHETIC_AUTHOR_ID_BASE = 9_800_000_000


@dataclass(frozen=True)
class CorpusConfig:
    """Knobs of the generator; defaults give a small corpus with every task populated."""

    n_papers: int = 3000
    seed: int = 0
    history_start: str = "2021-01-01"
    history_share: float = 0.45  # share of papers dated before the train window
    target_share: float = 0.6  # share of window papers that are targets (if they have >= 1 reference)
    build_date: str = "2026-03-01"  # trajectory length depends on it (§1.2); test targets up to ~2025-03 get 12 months
    n_topics: int = 24  # the first n topics of the 202-topic list are used
    new_author_rate: float = 0.25
    companion_without_authors: float = 0.03  # best-effort author identity on companions (§1.1 Table 6)


@dataclass
class _Structure:
    days: np.ndarray  # int day numbers, sorted ascending
    refs: list[list[int]]
    authors: list[list[int]]
    author_papers: list[list[int]]
    is_target: np.ndarray
    topics: list[list[int]]
    corpus_ids: list[str]
    n_authors: int


def _pick_days(cfg: CorpusConfig, rng: np.random.Generator) -> np.ndarray:
    start, t0, t1 = day_number(cfg.history_start), day_number(TRAIN_WINDOW[0]), day_number(TEST_WINDOW[1])
    n_hist = int(round(cfg.n_papers * cfg.history_share))
    hist = rng.integers(start, t0, size=n_hist)
    # growth inside the windows: density rising linearly over the two years
    u = rng.random(cfg.n_papers - n_hist)
    window = t0 + np.floor((np.sqrt(0.25 + 2.0 * u) - 0.5) / (np.sqrt(2.25) - 0.5) * (t1 - t0)).astype(np.int64)
    window = np.clip(window, t0, t1 - 1)
    return np.sort(np.concatenate([hist, window]))


def _generate_structure(cfg: CorpusConfig) -> _Structure:
    rng = np.random.default_rng(cfg.seed)
    days = _pick_days(cfg, rng)
    n = days.size
    t0, t1 = day_number(TRAIN_WINDOW[0]), day_number(TEST_WINDOW[1])
    topic_growth = rng.normal(0.0, 0.6, size=cfg.n_topics)
    topic_base = rng.gamma(1.5, 1.0, size=cfg.n_topics)
    refs: list[list[int]] = []
    authors: list[list[int]] = []
    author_papers: list[list[int]] = []
    topics: list[list[int]] = []
    is_target = np.zeros(n, dtype=bool)
    cited_pool: list[int] = []  # one entry per citation (preferential attachment)
    day_start = 0  # index of the first paper of the current day: only papers before it can be cited
    author_occurrences: list[int] = []
    for i in range(n):
        if i and days[i] != days[i - 1]:
            day_start = i
        # team
        size = int(min(1 + rng.geometric(0.4), 12))
        team: list[int] = []
        if author_occurrences and rng.random() > cfg.new_author_rate:
            lead = author_occurrences[int(rng.integers(len(author_occurrences)))]
            team.append(lead)
            past = author_papers[lead]
            while len(team) < size:
                r = rng.random()
                if past and r < 0.55:
                    mate_paper = past[int(rng.integers(len(past)))]
                    cand = authors[mate_paper][int(rng.integers(len(authors[mate_paper])))]
                elif r < 0.8 and author_occurrences:
                    cand = author_occurrences[int(rng.integers(len(author_occurrences)))]
                else:
                    cand = len(author_papers)
                    author_papers.append([])
                if cand not in team:
                    team.append(cand)
                elif rng.random() < 0.3:
                    break
        while len(team) < max(size, 1) and (not team or rng.random() < 0.9):
            team.append(len(author_papers))
            author_papers.append([])
        # topics, drifting with time
        years = (days[i] - t0) / 365.0
        if rng.random() < 0.06:
            labels: list[int] = []
        else:
            w = topic_base * np.exp(topic_growth * years)
            k = int(min(1 + rng.poisson(0.7), 3, cfg.n_topics))
            labels = sorted(rng.choice(cfg.n_topics, size=k, replace=False, p=w / w.sum()).tolist())
        # references: only papers of earlier days
        in_window = t0 <= days[i] < t1
        n_refs = int(min(rng.poisson(2.5) + (1 if in_window else 0), 10)) if day_start else 0
        chosen: list[int] = []
        team_refs = [r for p in (author_papers[team[0]][-10:] if team else []) for r in refs[p]]
        for _ in range(n_refs * 3):
            if len(chosen) >= n_refs:
                break
            r = rng.random()
            if team_refs and r < 0.35:
                cand = team_refs[int(rng.integers(len(team_refs)))]
            elif r < 0.6:  # recent papers: citation trajectories grow in the first months
                cand = day_start - int(rng.geometric(1.0 / max(20.0, 0.02 * day_start)))
            elif cited_pool and r < 0.8:
                cand = cited_pool[int(rng.integers(len(cited_pool)))]
            else:
                cand = int(rng.integers(day_start))
            if 0 <= cand < day_start and cand not in chosen:
                chosen.append(cand)
        refs.append(chosen)
        authors.append(team)
        topics.append(labels)
        for a in team:
            author_papers[a].append(i)
            author_occurrences.append(a)
        if in_window and 1 <= len(chosen) <= 10 and rng.random() < cfg.target_share:
            is_target[i] = True
        # citations count from the next day on (they are "committed" per day by the consumers)
        cited_pool.extend(chosen)
    ids = rng.permutation(n) + SYNTHETIC_CORPUS_ID_BASE
    return _Structure(days, refs, authors, author_papers, is_target, topics, [str(x) for x in ids],
                      len(author_papers))


def _split_members(st: _Structure, window: tuple[str, str]) -> tuple[np.ndarray, dict[int, set[str]]]:
    """Targets of the window and the companions reachable from them, with their roles (§1.1, stage 3)."""
    lo, hi = day_number(window[0]), day_number(window[1])
    roles: dict[int, set[str]] = {}
    targets = np.flatnonzero(st.is_target & (st.days >= lo) & (st.days < hi))
    for t in targets.tolist():
        roles.setdefault(t, set()).add("target")
        for r in st.refs[t]:
            roles.setdefault(r, set()).add("target.key_reference")
        for a in st.authors[t]:
            papers = st.author_papers[a]
            # author histories: papers of earlier days (strictly before t_p)
            end = bisect.bisect_left(papers, t)
            for p in papers[:end]:
                if st.days[p] >= st.days[t]:
                    continue
                roles.setdefault(p, set()).add("target.author.publication_history")
                for r in st.refs[p]:
                    roles.setdefault(r, set()).add("target.author.publication_history.key_reference")
    return targets, roles


def _h_index(counts: list[int]) -> int:
    counts = sorted(counts, reverse=True)
    return sum(1 for i, c in enumerate(counts) if c >= i + 1)


class _Counts:
    """Per-paper citation dates, queried as 'citations dated < day'."""

    def __init__(self, st: _Structure) -> None:
        cited: list[int] = []
        citing_day: list[int] = []
        for i, rs in enumerate(st.refs):
            for r in rs:
                cited.append(r)
                citing_day.append(int(st.days[i]))
        order = np.lexsort((np.asarray(citing_day, dtype=np.int64), np.asarray(cited, dtype=np.int64)))
        self.cited = np.asarray(cited, dtype=np.int64)[order]
        self.day = np.asarray(citing_day, dtype=np.int64)[order]
        n = len(st.refs)
        self.start = np.searchsorted(self.cited, np.arange(n), side="left")
        self.end = np.searchsorted(self.cited, np.arange(n), side="right")

    def before(self, paper: int, day: int) -> int:
        s, e = self.start[paper], self.end[paper]
        return int(np.searchsorted(self.day[s:e], day, side="left"))


def _word(rng: random.Random) -> str:
    return "".join(rng.choices(_SYLLABLES, k=rng.randint(2, 3)))


def _text(i: int, st: _Structure, seed: int) -> tuple[str, str]:
    rng = random.Random(seed * 1_000_003 + i)  # per-paper stream: text does not depend on write order
    topic_words = [TOPICS[z].split(" ")[0].strip("/,()").lower() for z in st.topics[i]] or ["general"]
    title_words = [_word(rng).capitalize(), topic_words[0], rng.choice(_CONNECTORS), _word(rng), _word(rng)]
    n_words = rng.randint(40, 109)
    body = []
    for j in range(n_words):
        r = rng.random()
        if r < 0.12:
            body.append(rng.choice(topic_words))
        elif r < 0.3:
            body.append(rng.choice(_CONNECTORS))
        else:
            s = rng.random()
            body.append(_word(rng) + ("ing" if s < 0.1 else "s" if s < 0.19 else ""))
        if j % 17 == 16:
            body[-1] += "."
    return " ".join(title_words), " ".join(body).capitalize() + "."


def _rows(st: _Structure, cfg: CorpusConfig, targets: np.ndarray, roles: dict[int, set[str]],
          counts: _Counts, order: np.ndarray) -> Iterator[dict]:
    target_set = set(targets.tolist())
    build_day = day_number(cfg.build_date)
    rng = np.random.default_rng(cfg.seed + 17)
    no_authors = rng.random(len(st.refs)) < cfg.companion_without_authors
    for i in order.tolist():
        day = int(st.days[i])
        date = day_string(day)
        is_t = i in target_set
        title, abstract = _text(i, st, cfg.seed)
        cats = ([TARGET_CATEGORIES[i % len(TARGET_CATEGORIES)]] if (is_t or i % 3) else
                [OTHER_CATEGORIES[i % len(OTHER_CATEGORIES)]])
        if i % 4 == 0:
            cats.append(OTHER_CATEGORIES[(i // 4) % len(OTHER_CATEGORIES)])
        row = {"corpus_id": st.corpus_ids[i], "arxiv_id": f"{date[2:4]}{date[5:7]}.{90000 + i % 10000:05d}",
               "date": date, "title": title, "abstract": abstract, "categories": cats,
               "roles": sorted(roles[i]), "topics": [TOPICS[z] for z in st.topics[i]]}
        if is_t:
            row["key_references"] = [{"corpus_id": st.corpus_ids[r], "num_citations": counts.before(r, day)}
                                     for r in st.refs[i]]
            team = []
            for a in st.authors[i]:
                papers = st.author_papers[a]
                hist = [p for p in papers[:bisect.bisect_left(papers, i)] if st.days[p] < day]
                cites = [counts.before(p, day) for p in hist]
                team.append({"author_id": f"blk{a % 97}_{a}", "name": f"Author {a}",
                             "publication_history": [st.corpus_ids[p] for p in hist], "h_index": _h_index(cites),
                             "num_papers": len(hist), "num_citations": int(sum(cites))})
            row["authors"] = team
            months = min(36, (build_day - day) // TRAJECTORY_MONTH_DAYS)
            row["citation_trajectory"] = ([counts.before(i, day + TRAJECTORY_MONTH_DAYS * m)
                                           for m in range(1, months + 1)] or [0])
        else:
            row["key_references"] = [{"corpus_id": st.corpus_ids[r], "num_citations": None} for r in st.refs[i]]
            row["authors"] = ([] if no_authors[i] else
                              [{"author_id": f"blk{a % 97}_{a}", "name": f"Author {a}", "publication_history": None,
                                "h_index": None, "num_papers": None, "num_citations": None} for a in st.authors[i]])
            row["citation_trajectory"] = None
        yield row


def _write_parquet(path: Path, rows: Iterator[dict], batch_rows: int = 4096) -> int:
    n = 0
    with pq.ParquetWriter(path, PAPER_SCHEMA) as writer:
        batch: list[dict] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= batch_rows:
                writer.write_table(pa.Table.from_pylist(batch, schema=PAPER_SCHEMA))
                n += len(batch)
                batch = []
        if batch:
            writer.write_table(pa.Table.from_pylist(batch, schema=PAPER_SCHEMA))
            n += len(batch)
    return n


def write_corpus(out_dir: Path | str, config: CorpusConfig | None = None, **overrides) -> dict[str, int]:
    """Write a synthetic release into ``out_dir``; returns row counts per file."""
    cfg = config or CorpusConfig(**overrides)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    st = _generate_structure(cfg)
    counts = _Counts(st)
    rng = np.random.default_rng(cfg.seed + 1)
    result: dict[str, int] = {}
    for split, window in (("train", TRAIN_WINDOW), ("test", TEST_WINDOW)):
        targets, roles = _split_members(st, window)
        members = np.fromiter(roles.keys(), dtype=np.int64, count=len(roles))
        order = members[rng.permutation(members.size)]
        result[split] = _write_parquet(out / f"{split}.parquet", _rows(st, cfg, targets, roles, counts, order))
        result[f"{split}_targets"] = int(targets.size)
        del roles
    with open(out / "author_publications.jsonl", "w", encoding="utf-8") as fh:
        for a, papers in enumerate(st.author_papers):
            if papers:
                fh.write(json.dumps({"key": f"blk{a % 97}_{a}", "value": [st.corpus_ids[p] for p in papers]}) + "\n")
    with open(out / "author_disambiguation.jsonl", "w", encoding="utf-8") as fh:
        for a, papers in enumerate(st.author_papers):
            if papers:
                fh.write(json.dumps({"key": f"blk{a % 97}_{a}", "value": [str(SYNTHETIC_AUTHOR_ID_BASE + 2 * a)]})
                         + "\n")
    result["authors"] = sum(1 for p in st.author_papers if p)
    return result


def write_reference_sets(folder: Path | str, seed: int = 5) -> dict[str, int]:
    """Invented alternative prior-work sets for the targets of ``folder``'s corpora (the context variants ``all``
    and ``impact``; the public release has neither): ``references_all.jsonl`` = the key references plus up to 3
    other papers dated before the target, ``references_impact.jsonl`` = a seeded part of that set (at least one
    paper). Both ``{"key": target id, "value": [corpus ids]}`` per line; returns lines written per file."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    rng = np.random.default_rng(seed)
    all_sets: dict[str, list[str]] = {}
    impact_sets: dict[str, list[str]] = {}
    for split in ("train", "test"):  # extras from the target's own corpus (test last: its prompts' history)
        papers = pq.read_table(folder / f"{split}.parquet", columns=["corpus_id", "date", "roles",
                                                                    "key_references"]).to_pylist()
        ordered = sorted(papers, key=lambda p: (p["date"], p["corpus_id"]))
        for paper in ordered:
            if "target" not in (paper["roles"] or []) or not paper["key_references"]:
                continue
            key = [r["corpus_id"] for r in paper["key_references"]]
            earlier = [p["corpus_id"] for p in ordered if p["date"] < paper["date"] and p["corpus_id"] not in key]
            extra = rng.choice(len(earlier), size=min(3, len(earlier)), replace=False).tolist() if earlier else []
            full = key + [earlier[k] for k in sorted(extra)]
            size = int(rng.integers(1, len(full) + 1))
            all_sets[paper["corpus_id"]] = full
            impact_sets[paper["corpus_id"]] = [full[k] for k in sorted(rng.choice(len(full), size=size,
                                                                                   replace=False).tolist())]
    counts = {}
    for name, sets in (("references_all.jsonl", all_sets), ("references_impact.jsonl", impact_sets)):
        with open(folder / name, "w", encoding="utf-8") as fh:
            for target, ids in sets.items():
                fh.write(json.dumps({"key": target, "value": ids}) + "\n")
        counts[name] = len(sets)
    return counts
