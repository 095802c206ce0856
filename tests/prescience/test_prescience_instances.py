"""The instance sets T1-T4, computed for all targets at once with Arrow/numpy, equal their per-target definitions
through :class:`HistoryView` (spec prescience.md §2): what is "in H^{<t_p}" and "has history" is asked of the
view at the target's own date, one target at a time, as the definitions read."""

from __future__ import annotations

from pathlib import Path

import pytest

import sciprobe.benchmarks.prescience.instances as inst
from sciprobe.benchmarks.prescience.history import CorpusIndex
from sciprobe.benchmarks.prescience.schema import CITATION_HORIZON_MONTHS
from sciprobe.benchmarks.prescience.synthetic import CorpusConfig, write_corpus


@pytest.fixture(scope="module")
def indexes(tmp_path_factory) -> dict[str, CorpusIndex]:
    out: Path = tmp_path_factory.mktemp("prescience-instances")
    write_corpus(out, CorpusConfig(n_papers=3000, seed=11))
    return {split: CorpusIndex.from_parquet(out / f"{split}.parquet", columns=["citation_trajectory", "topics"],
                                            lean=True, author_publications=out / "author_publications.jsonl")
            for split in ("train", "test")}


def _targets(index: CorpusIndex, split: str) -> list[dict]:
    return [index.row(int(r)) for r in inst.target_rows(index, split)]


def contribution_by_definition(index: CorpusIndex, split: str) -> list[tuple]:
    out = []
    for row in _targets(index, split):
        view = index.view(row["date"])
        refs = [r["corpus_id"] for r in row["key_references"] or [] if r["corpus_id"] in view]
        if refs:
            out.append((row["corpus_id"], row["date"], refs))
    return out


def collaborators_by_definition(index: CorpusIndex, split: str) -> list[dict]:
    out = []
    for row in _targets(index, split):
        view = index.view(row["date"])
        with_history = list(dict.fromkeys(a["author_id"] for a in row["authors"] or []
                                          if a.get("author_id") and view.author_history(a["author_id"])))
        if len(with_history) >= 2:
            out.append({"corpus_id": row["corpus_id"], "date": row["date"], "seed_author_id": with_history[0],
                        "gold_author_ids": with_history[1:]})
    return out


def prior_work_by_definition(index: CorpusIndex, split: str) -> list[dict]:
    out = []
    for row in _targets(index, split):
        view = index.view(row["date"])
        authors = list(dict.fromkeys(a["author_id"] for a in row["authors"] or [] if a.get("author_id")))
        eligible = any(index.row(index.row_of(p))["key_references"] for a in authors for p in view.author_history(a))
        gold = [r["corpus_id"] for r in row["key_references"] or []]
        if eligible and gold:
            out.append({"corpus_id": row["corpus_id"], "date": row["date"], "author_ids": authors,
                        "gold_corpus_ids": gold})
    return out


def citations_by_definition(index: CorpusIndex, split: str) -> list[dict]:
    return [{"corpus_id": row["corpus_id"], "date": row["date"],
             "label_12m": row["citation_trajectory"][CITATION_HORIZON_MONTHS - 1]}
            for row in _targets(index, split)
            if row["citation_trajectory"] is not None and len(row["citation_trajectory"]) >= CITATION_HORIZON_MONTHS]


@pytest.mark.parametrize("split", ["train", "test"])
def test_instance_sets_equal_their_per_target_definitions(indexes, split):
    index = indexes[split]
    expected = {
        "contribution": contribution_by_definition(index, split),
        "collaborators": collaborators_by_definition(index, split),
        "prior_work": prior_work_by_definition(index, split),
        "citations": citations_by_definition(index, split),
    }
    assert all(len(rows) > 20 for rows in expected.values()), {k: len(v) for k, v in expected.items()}
    assert inst.contribution_targets(index, split) == expected["contribution"]
    assert inst.collaborator_instances(index, split) == expected["collaborators"]
    assert inst.prior_work_instances(index, split) == expected["prior_work"]
    assert inst.citation_instances(index, split) == expected["citations"]


def test_row_prefix_is_the_size_of_each_rows_history(indexes):
    index = indexes["test"]
    for row in range(0, index.n_papers, 97):
        assert index.row_prefix[row] == index.prefix(index.dates[row].as_py())
