"""The rollout's literature state H^{<t}: the starting corpus H^{<t0} plus every synthetic paper folded in so far.

All reads by the task models go through :meth:`Literature.asof`, a view for one simulated day that holds only
papers dated strictly before that day (spec §1.4: same-day papers are not history). A view refuses a paper
from its own day or later with an error instead of returning it, and reports every paper it hands out to an
optional observer, so a test can prove that the rollout never reads the future of its current day.

Papers of a simulated day are folded in after the whole day is generated, so they become visible from the next
day on (upstream ``simulate.py``'s ``fold_in_papers`` after each day).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError

__all__ = ["Literature", "LiteratureView", "ReadObserver"]

#: ``observer(day, corpus_id, date)``: called for every paper a view hands out.
ReadObserver = Callable[[str, str, str], None]


def paper_text(paper: Mapping[str, Any]) -> str:
    """The text that is embedded (upstream ``utils.get_title_abstract_string``)."""
    return f"Title: {paper.get('title') or ''}\nAbstract: {paper.get('abstract') or ''}"


class Literature:
    """Papers (release-schema dicts) in date order, their embeddings (rows of one matrix, L2-normalised) and each
    author's papers in date order. Append-only: a folded-in paper may not be dated before the last one."""

    def __init__(self, dim: int) -> None:
        self.ids: list[str] = []
        self.dates: list[str] = []
        self.papers: dict[str, dict[str, Any]] = {}
        self.row: dict[str, int] = {}
        self._vectors = np.zeros((0, dim), dtype=np.float32)
        self._n_vectors = 0
        self.author_rows: dict[str, list[int]] = {}

    # ------------------------------------------------------------ building
    def add(self, papers: Sequence[Mapping[str, Any]], vectors: np.ndarray) -> None:
        """Fold ``papers`` (sorted by date, none earlier than what is here) in with their embeddings."""
        if len(papers) != len(vectors):
            raise SciprobeError("papers and embeddings differ in number")
        for paper, vector in zip(papers, np.asarray(vectors, dtype=np.float32)):
            cid, date = str(paper["corpus_id"]), str(paper["date"])
            if cid in self.row:
                raise SciprobeError(f"paper {cid} is already in the literature")
            if self.dates and date < self.dates[-1]:
                raise SciprobeError(f"paper {cid} dated {date} folded in after {self.dates[-1]}")
            row = len(self.ids)
            self.ids.append(cid)
            self.dates.append(date)
            self.papers[cid] = dict(paper)
            self.row[cid] = row
            self._append_vector(vector)
            for author in paper.get("authors") or []:
                if author.get("author_id"):
                    self.author_rows.setdefault(str(author["author_id"]), []).append(row)

    def add_authorship(self, author_id: str, corpus_id: str) -> None:
        """Credit a paper already here to an author (``author_publications.jsonl`` lists authorships that a
        companion's own ``authors`` field may lack); rows stay in date order."""
        row = self.row.get(corpus_id)
        if row is None:
            return
        rows = self.author_rows.setdefault(author_id, [])
        if row not in rows:
            bisect.insort(rows, row)

    def _append_vector(self, vector: np.ndarray) -> None:
        if self._n_vectors == len(self._vectors):  # grow geometrically: folding in is one paper at a time
            grown = np.zeros((max(16, 2 * len(self._vectors)), self._vectors.shape[1]), dtype=np.float32)
            grown[:self._n_vectors] = self._vectors[:self._n_vectors]
            self._vectors = grown
        norm = float(np.linalg.norm(vector))
        self._vectors[self._n_vectors] = vector / norm if norm > 0 else vector
        self._n_vectors += 1

    @property
    def vectors(self) -> np.ndarray:
        return self._vectors[:self._n_vectors]

    def __len__(self) -> int:
        return len(self.ids)

    def asof(self, day: str, observer: ReadObserver | None = None) -> LiteratureView:
        return LiteratureView(self, day, observer)

    def records(self) -> Iterable[dict[str, Any]]:
        return (self.papers[cid] for cid in self.ids)


class LiteratureView:
    """H^{<day}: the prefix of the literature dated strictly before ``day``."""

    def __init__(self, literature: Literature, day: str, observer: ReadObserver | None = None) -> None:
        self.literature, self.day, self.observer = literature, day, observer
        self.n = bisect.bisect_left(literature.dates, day)
        self._authors: list[str] | None = None

    def _seen(self, row: int) -> None:
        if row >= self.n:
            lit = self.literature
            raise SciprobeError(f"paper {lit.ids[row]} dated {lit.dates[row]} is not history on {self.day}")
        if self.observer is not None:
            self.observer(self.day, self.literature.ids[row], self.literature.dates[row])

    def paper(self, corpus_id: str) -> dict[str, Any]:
        row = self.literature.row.get(corpus_id)
        if row is None:
            raise SciprobeError(f"unknown paper {corpus_id}")
        self._seen(row)
        return self.literature.papers[corpus_id]

    def vector(self, corpus_id: str) -> np.ndarray:
        self.paper(corpus_id)
        return self.literature.vectors[self.literature.row[corpus_id]]

    def author_papers(self, author_id: str) -> list[str]:
        """The author's papers dated before the day, oldest first (never a later one)."""
        rows = self.literature.author_rows.get(author_id, [])
        return [self.literature.ids[r] for r in rows[:bisect.bisect_left(rows, self.n)]]

    def authors(self) -> list[str]:
        """Authors with at least one paper before the day, in first-appearance order (computed once per view:
        the literature does not change while a day is drawn)."""
        if self._authors is None:
            self._authors = [a for a, rows in self.literature.author_rows.items() if rows and rows[0] < self.n]
        return list(self._authors)

    def nearest_papers(self, query: np.ndarray, k: int, exclude: Iterable[str] = ()) -> list[str]:
        """The ``k`` papers before the day closest to ``query`` by cosine (ties: the earlier row)."""
        if self.n == 0 or k <= 0:
            return []
        sims = self.literature.vectors[:self.n] @ _unit(query)
        skip = {self.literature.row[c] for c in exclude if c in self.literature.row}
        order = np.lexsort((np.arange(self.n), -sims))
        rows = [int(r) for r in order if int(r) not in skip][:k]
        for r in rows:
            self._seen(r)
        return [self.literature.ids[r] for r in rows]

    def random_papers(self, rng: np.random.Generator, k: int, exclude: Iterable[str] = ()) -> list[str]:
        skip = set(exclude)
        rows = [r for r in range(self.n) if self.literature.ids[r] not in skip]
        picked = [int(r) for r in rng.permutation(rows)[:k]] if rows else []
        for r in picked:
            self._seen(r)
        return [self.literature.ids[r] for r in picked]


def _unit(vector: np.ndarray) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v
