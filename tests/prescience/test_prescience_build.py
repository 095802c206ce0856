"""Building a synthetic PreScience release into the hub layout and reading it back (spec prescience.md §9)."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.prescience import source as src
from sciprobe.benchmarks.prescience.schema import (
    PAPER_SCHEMA,
    TEST_WINDOW,
    TRAIN_WINDOW,
)
from sciprobe.benchmarks.prescience.synthetic import CorpusConfig, write_corpus
from sciprobe.data.build import build_benchmark
from sciprobe.data.cutoffs import parse_cutoff
from sciprobe.core.errors import SciprobeError

PS = get_benchmark("prescience")


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ps-release")
    write_corpus(out, CorpusConfig(n_papers=2500, seed=3))
    return out


@pytest.fixture(scope="module")
def built(release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ps-built") / "prescience"
    build_benchmark(PS, release, out)
    return out


def test_release_fixture_has_the_released_schema(release):
    for split in ("train", "test"):
        assert pq.read_schema(release / f"{split}.parquet").remove_metadata().equals(PAPER_SCHEMA)
    line = json.loads((release / "author_publications.jsonl").read_text().splitlines()[0])
    assert set(line) == {"key", "value"} and isinstance(line["value"], list)


def test_every_config_and_split_loads(built):
    assert sorted(datasets.get_dataset_config_names(str(built))) == sorted(PS.configs)
    for name, spec in PS.configs.items():
        dd = datasets.load_dataset(str(built), name)
        assert set(dd) == set(spec.splits), name
        for split in dd:
            assert dd[split].features == spec.features(), (name, split)
    default = datasets.load_dataset(str(built), split="test")
    assert "abstract" in default.column_names  # `papers` is the default config


def test_corpora_overlap_and_roles_are_per_split(release, built):
    train = datasets.load_dataset(str(built), "papers", split="train")
    test = datasets.load_dataset(str(built), "papers", split="test")
    shared = set(train["corpus_id"]) & set(test["corpus_id"])
    assert shared  # the two corpora overlap (pitfall 1)
    train_targets = {r["corpus_id"] for r in train if r["is_target"]}
    test_roles = {r["corpus_id"]: r["roles"] for r in test}
    moved = [c for c in train_targets if c in test_roles]
    assert moved and all("target" not in test_roles[c] for c in moved)
    assert all(TRAIN_WINDOW[0] <= r["date"] < TRAIN_WINDOW[1] for r in train if r["is_target"])


@pytest.mark.parametrize("config", ["collaborator_prediction", "prior_work_selection", "citation_prediction",
                                    "contribution_generation"])
def test_instance_splits_follow_the_date_windows(built, config):
    for split, (lo, hi) in (("train", TRAIN_WINDOW), ("test", TEST_WINDOW)):
        ds = datasets.load_dataset(str(built), config, split=split)
        assert ds.num_rows > 0
        assert all(lo <= d < hi for d in ds["date"])


def test_instance_rows_store_ids_and_respect_history(built):
    papers = datasets.load_dataset(str(built), "papers", split="test")
    date_of = dict(zip(papers["corpus_id"], papers["date"]))
    prior = datasets.load_dataset(str(built), "prior_work_selection", split="test")
    assert set(prior.column_names) == {"corpus_id", "date", "author_ids", "gold_corpus_ids"}
    for r in prior:
        assert all(date_of[g] < r["date"] for g in r["gold_corpus_ids"])
    combo = datasets.load_dataset(str(built), "future_combination", split="test")
    assert combo.num_rows > 0
    for r in combo:
        assert r["gold_counts"] == sorted(r["gold_counts"], reverse=True) and min(r["gold_counts"]) >= 1
        assert all(date_of[g] < r["date"] for g in r["gold_corpus_ids"])
    gen = datasets.load_dataset(str(built), "contribution_generation")
    assert gen["test_sample_500"].num_rows == min(500, gen["test"].num_rows)
    assert set(gen["test_sample_500"]["corpus_id"]) <= set(gen["test_sample_5000"]["corpus_id"])
    for r in gen["test"].select(range(20)):
        assert r["references"] and all(date_of[x["corpus_id"]] < r["date"] for x in r["references"])
        assert r["title"] and r["abstract"]


def test_dev_subsets_are_deterministic_samples(built, release):
    dev = datasets.load_dataset(str(built), "collaborator_prediction", split="dev_1000")
    train = datasets.load_dataset(str(built), "collaborator_prediction", split="train")
    assert set(dev["corpus_id"]) <= set(train["corpus_id"])
    again = dict(src.read_source(release, "collaborator_prediction", {"sample_seed": 42}))
    assert [cid for table in again["dev_1000"] for cid in table["corpus_id"].to_pylist()] == dev["corpus_id"]


def test_topic_configs(built):
    topics = datasets.load_dataset(str(built), "topic_trends", split="test")
    assert topics.num_rows == 202
    assert abs(sum(topics["history_share"]) - 1) < 1e-9 and abs(sum(topics["forecast_share"]) - 1) < 1e-9
    pairs = datasets.load_dataset(str(built), "topic_pair_trends", split="test")
    for r in pairs:
        a, b = r["topic"].split("||")
        assert a < b and max(r["history_count"], r["forecast_count"]) >= 10
        assert r["forecast_end"] == "2025-07-01"


def test_cutoff_filters_instances_not_the_corpus(release, tmp_path):
    report = build_benchmark(PS, release, tmp_path / "cut", configs=["papers", "citation_prediction"],
                             cutoff=parse_cutoff("2024-12-31"), cutoff_source="explicit")
    papers = datasets.load_dataset(str(tmp_path / "cut"), "papers", split="test")
    assert min(papers["date"]) < "2024-12-31"  # history kept
    cites = datasets.load_dataset(str(tmp_path / "cut"), "citation_prediction", split="test")
    assert all(d > "2024-12-31" for d in cites["date"])
    counts = report.cutoff["counts"]["citation_prediction"]
    assert counts["n_items_after"] == cites.num_rows < counts["n_items_before"]
    corpus = report.cutoff["counts"]["papers"]
    assert corpus["n_items_after"] == corpus["n_items_before"] == papers.num_rows  # exempt from the cutoff


def test_build_report_counts_every_config(built):
    info = json.loads((built / "sciprobe_build.json").read_text())
    assert set(info["cutoff"]["counts"]) == set(PS.configs)  # the CLI prints a count line per config
    assert info["rows"]["author_publications"]["full"] > 0


def test_reader_streams_arrow_tables(release):
    pairs = list(src.read_source(release, "papers", {}))
    assert [s for s, _ in pairs] == ["train", "test"]
    assert all(not isinstance(rows, list) for _, rows in pairs)
    first = next(pairs[0][1])
    assert isinstance(first, pa.Table)
    assert first.column_names == [f.name for f in PAPER_SCHEMA] + ["is_target"]


def test_missing_release_files_are_clear_errors(tmp_path):
    with pytest.raises(SciprobeError, match="test.parquet"):
        list(src.read_source(tmp_path, "future_combination", {}))
    with pytest.raises(SciprobeError, match="unknown PreScience config"):
        list(src.read_source(tmp_path, "nope", {}))
    (tmp_path / "author_publications.jsonl").write_text('{"key": "a"}\n')
    with pytest.raises(SciprobeError, match="line 1"):
        list(next(src.read_source(tmp_path, "author_publications", {}))[1])
