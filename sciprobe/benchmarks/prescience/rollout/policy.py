"""The task models the rollout composes (Appendix C.7), each reading only the day's view H^{<day}:

- team: the first author is a new synthetic author at the train first-time-author rate, else a known author;
  authors are drawn until one has history (the seed), and the seed's predicted collaborators fill the team
  (upstream ``generate_author_team``);
- collaborators: one-shot Embedding Fusion (the seed's mean embedding over their 10 most recent papers against
  every author's, nearest first) or co-authorship frequency over the seed's recent papers; padded with random
  known authors;
- prior work: Embedding Fusion (per author with history, the mean embedding of the papers their recent papers
  cite, nearest papers to it, ranks summed over the team, lowest first) or citation frequency over the team's
  recent papers; padded with random papers before the day when the team has no history;
- contribution: the bundled ``random-reference`` baseline (the title and abstract of one selected reference) or
  a model (:class:`ModelGenerator`, the package's contribution-generation prompt and parser).

These follow upstream's baselines in what they compute; the code is the package's own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sciprobe.benchmarks.prescience.rollout.literature import LiteratureView

__all__ = ["AuthorIndex", "ModelGenerator", "RandomReference", "predict_collaborators", "predict_prior_work"]

SYNTHETIC_AUTHOR_PREFIX = "SYNTH_"


class AuthorIndex:
    """Every author with history before the day, embedded as the mean of their ``recent`` latest papers."""

    def __init__(self, view: LiteratureView, recent: int) -> None:
        self.view, self.recent = view, recent
        self.author_ids = view.authors()
        rows = [self.recent_rows(a) for a in self.author_ids]
        lit = view.literature
        self.matrix = np.stack([_unit(lit.vectors[r].mean(axis=0)) for r in rows]) if rows else \
            np.zeros((0, lit.vectors.shape[1]), dtype=np.float32)

    def recent_rows(self, author_id: str) -> list[int]:
        ids = self.view.author_papers(author_id)[-self.recent:]
        for cid in ids:
            self.view.paper(cid)  # a checked read: the guard and the observer see it
        return [self.view.literature.row[c] for c in ids]

    def embedding(self, author_id: str) -> np.ndarray | None:
        rows = self.recent_rows(author_id)
        return _unit(self.view.literature.vectors[rows].mean(axis=0)) if rows else None


def _unit(v: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(v))
    return (v / norm).astype(np.float32) if norm > 0 else v.astype(np.float32)


def _recent_papers(view: LiteratureView, author_id: str, recent: int) -> list[str]:
    return view.author_papers(author_id)[-recent:]


def _cited(view: LiteratureView, corpus_id: str) -> list[str]:
    """Key references of a history paper that are themselves history (in the literature, before the day)."""
    lit = view.literature
    refs = [str(r["corpus_id"]) for r in view.paper(corpus_id).get("key_references") or [] if r.get("corpus_id")]
    return [c for c in refs if c in lit.row and lit.row[c] < view.n]


def predict_collaborators(policy: str, view: LiteratureView, index: AuthorIndex | None, seed_author: str,
                          n: int, exclude: set[str], rng: np.random.Generator, recent: int) -> list[str]:
    """``n`` co-authors for ``seed_author`` (not in ``exclude``), padded with random known authors."""
    chosen: list[str] = []
    if policy == "embedding_fusion" and index is not None and len(index.author_ids):
        query = index.embedding(seed_author)
        if query is not None:
            sims = index.matrix @ query
            for i in np.lexsort((np.arange(len(sims)), -sims)).tolist():
                a = index.author_ids[i]
                if a != seed_author and a not in exclude and a not in chosen:
                    chosen.append(a)
                if len(chosen) >= n:
                    break
    elif policy == "frequency":
        counts: Counter[str] = Counter()
        for cid in _recent_papers(view, seed_author, recent):
            for author in view.paper(cid).get("authors") or []:
                a = str(author.get("author_id") or "")
                if a and a != seed_author and a not in exclude:
                    counts[a] += 1
        chosen = [a for a, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))][:n]
    if len(chosen) < n:
        pool = [a for a in view.authors() if a != seed_author and a not in exclude and a not in chosen]
        chosen += [pool[i] for i in rng.permutation(len(pool))[:n - len(chosen)].tolist()]
    return chosen[:n]


def predict_prior_work(policy: str, view: LiteratureView, team: Sequence[str], n: int, rng: np.random.Generator,
                       recent: int) -> tuple[list[str], int]:
    """``n`` influential references for the team, and how many of them are random padding."""
    chosen: list[str] = []
    if policy == "embedding_fusion":
        summed: dict[str, int] = {}
        for author in team:
            cited = [c for p in _recent_papers(view, author, recent) for c in _cited(view, p)]
            if not cited:
                continue
            query = _unit(np.mean([view.vector(c) for c in cited], axis=0))
            for rank, cid in enumerate(view.nearest_papers(query, n)):
                summed[cid] = summed.get(cid, 0) + rank
        chosen = [c for c, _ in sorted(summed.items(), key=lambda kv: kv[1])][:n]  # stable: first seen wins ties
    elif policy == "frequency":
        counts: Counter[str] = Counter(c for a in team for p in _recent_papers(view, a, recent)
                                       for c in _cited(view, p))
        chosen = [c for c, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))][:n]
    padded = 0
    if len(chosen) < n:
        extra = view.random_papers(rng, n - len(chosen), exclude=chosen)
        padded = len(extra)
        chosen += extra
    return chosen, padded


class RandomReference:
    """The bundled contribution baseline: one of the selected references' title and abstract, drawn per paper."""

    spec = "random-reference"

    def generate(self, view: LiteratureView, references: Sequence[Sequence[str]],
                 rngs: Sequence[np.random.Generator]) -> list[tuple[dict[str, str] | None, dict[str, Any]]]:
        out = []
        for refs, rng in zip(references, rngs):
            if not refs:
                out.append((None, {"failure": "no references"}))
                continue
            pick = refs[int(rng.integers(len(refs)))]
            paper = view.paper(pick)
            out.append(({"title": paper.get("title") or "", "abstract": paper.get("abstract") or ""},
                        {"copied_reference": pick}))
        return out


class ModelGenerator:
    """A model through the package's cached client, with the contribution-generation prompt and parser; a reply
    that does not parse drops the paper (upstream keeps only generations with a title and an abstract)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.spec = str(client.model_id)
        self.n_new_calls = 0

    def generate(self, view: LiteratureView, references: Sequence[Sequence[str]],
                 rngs: Sequence[np.random.Generator]) -> list[tuple[dict[str, str] | None, dict[str, Any]]]:
        from sciprobe.benchmarks.prescience.contribution import contribution_messages, parse_contribution
        from sciprobe.llm.types import Request

        requests = []
        for i, refs in enumerate(references):
            rows = {"references": [_title_abstract(view.paper(c)) for c in refs]}
            requests.append(Request.of(contribution_messages(rows), {}, item_id=f"{view.day}#{i}"))
        completions = self.client.complete_many(requests, desc=None) if requests else []
        out = []
        for completion in completions:
            self.n_new_calls += 0 if completion.cached else 1
            if not completion.ok:
                out.append((None, {"failure": f"call failed: {completion.error}"}))
                continue
            parsed = parse_contribution(completion.text)
            value = parsed.value if isinstance(parsed.value, Mapping) else None
            out.append((dict(value) if value else None,
                        {"parse_path": parsed.path, "request_hash": completion.request_hash}))
        return out


def _title_abstract(paper: Mapping[str, Any]) -> dict[str, str]:
    return {"title": paper.get("title") or "", "abstract": paper.get("abstract") or ""}
