"""The bundled samples are invented, so no id in them may name a real paper, author or benchmark item (issue
23.12: the IDRBench sample gave invented text 8 real arXiv ids, the others reused real-looking ids too)."""

from __future__ import annotations

import json
import re

import pyarrow.parquet as pq

from sciprobe.core.registry import get_benchmark

#: arXiv never issued a number of 90000 or more in a month (no month reached 90,000 papers)
ARXIV_NUMBER_NEVER_ISSUED = 90000
_ARXIV = re.compile(r"(?<![\d.])\d{4}\.\d{1,5}(?!\d)")


def _arxiv_numbers(ids: list[str]) -> list[int]:
    from sciprobe.benchmarks.idrbench.source import normalize_id

    return [int(normalize_id(i).split(".")[1]) for i in ids]


def test_idrbench_sample_arxiv_ids_were_never_issued():
    source = get_benchmark("idrbench").sample_source
    tokens = [t for f in source.glob("*.json") for t in _ARXIV.findall(f.read_text(encoding="utf-8"))]
    assert len(tokens) > 40 and min(_arxiv_numbers(tokens)) >= ARXIV_NUMBER_NEVER_ISSUED


def test_prescience_sample_ids_are_out_of_every_real_range():
    source = get_benchmark("prescience").sample_source
    for split in ("train", "test"):
        table = pq.read_table(source / f"{split}.parquet", columns=["corpus_id", "arxiv_id"]).to_pydict()
        assert min(int(i) for i in table["corpus_id"]) >= 9_900_000_000  # Semantic Scholar corpus ids: < 1e9
        assert min(_arxiv_numbers(table["arxiv_id"])) >= ARXIV_NUMBER_NEVER_ISSUED
    for line in (source / "author_publications.jsonl").read_text(encoding="utf-8").splitlines():
        assert min(int(i) for i in json.loads(line)["value"]) >= 9_900_000_000
    for line in (source / "author_disambiguation.jsonl").read_text(encoding="utf-8").splitlines():
        assert min(int(i) for i in json.loads(line)["value"]) >= 9_800_000_000  # S2 author ids: far below


def test_sgibench_sample_items_cannot_be_released_items():
    source = get_benchmark("sgibench").sample_source
    files = source.glob("SGI-*/data/*.parquet")
    ids = [i for f in files for i in pq.read_table(f, columns=["idx"])["idx"].to_pylist()]
    assert len(ids) == 12 and all(re.fullmatch(r"SGI_[A-Za-z]+_sample_\d{4}", i) for i in ids), ids


def test_scitaste_sample_dois_have_no_registrant():
    source = get_benchmark("scitaste").sample_source
    rows = [json.loads(line) for f in source.glob("*.jsonl") for line in f.read_text(encoding="utf-8").splitlines()]
    assert rows and all(r["doi"].startswith("10.0000/synthetic.") for r in rows if r.get("doi"))
