"""A rollout's synthetic corpus as a release folder (spec §1.2 layout): ``train.parquet`` = H^{<t0} as the rollout
started from it, ``test.parquet`` = H^{<t0} plus every synthetic paper (role ``synthetic``, as upstream marks
them), ``author_publications.jsonl`` (every author's papers in date order, synthetic authors included) and
``author_disambiguation.jsonl`` (each author as its own cluster). ``datasets.load_dataset("parquet", ...)``
reads the Parquet files with the release schema (:data:`..schema.PAPER_SCHEMA`)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sciprobe.benchmarks.prescience.rollout.simulate import Release, RolloutRun
from sciprobe.benchmarks.prescience.schema import PAPER_SCHEMA

__all__ = ["write_corpus"]


def _table(records: list[dict]) -> pa.Table:
    names = PAPER_SCHEMA.names
    return pa.Table.from_pylist([{n: r.get(n) for n in names} for r in records], schema=PAPER_SCHEMA)


def write_corpus(folder: Path, release: Release, run: RolloutRun) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lit = run.literature
    pq.write_table(_table(release.start), folder / "train.parquet")
    pq.write_table(_table(list(lit.records())), folder / "test.parquet")
    with (folder / "author_publications.jsonl").open("w", encoding="utf-8") as pubs, \
            (folder / "author_disambiguation.jsonl").open("w", encoding="utf-8") as clusters:
        for author, rows in sorted(lit.author_rows.items()):
            pubs.write(json.dumps({"key": author, "value": [lit.ids[r] for r in rows]}) + "\n")
            clusters.write(json.dumps({"key": author, "value": [author]}) + "\n")
    return folder
