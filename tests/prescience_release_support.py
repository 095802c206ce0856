"""PreScience release fixtures in the three published layouts, written from the bundled (synthetic) sample.

Each writer mirrors upstream's own writer code (no upstream code or data is copied; the records are the sample's):

- :func:`write_paper_parquet` -- ``dataset/huggingface/prepare_for_upload.py`` at allenai/prescience@47384ed
  (``convert_json_to_parquet``: the explicit nullable schema below, no ``topics``, ``row_group_size=50000``;
  ``convert_dict_to_jsonl``: ``{"key", "value"}`` per line) = HF ``allenai/prescience``.
- :func:`write_seven_task` -- the same files with the ``topics`` column of this paper version's release
  (HF ``PreSciencePreScience/PreScience``; the bundled sample is in that layout).
- :func:`write_two_domain` -- the archive of pscience674/pscience@6d8045d (``README.md`` "Dataset";
  ``utils.save_json`` with metadata = ``{"metadata": [...], "data": [...]}``, gzipped; ``add_topics.py`` puts
  ``topics`` right after ``categories`` on targets only; ``sd2publications.json`` = author id -> corpus ids),
  with a PreScience-Quantum domain that has no topics.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sciprobe.core.registry import get_benchmark

SPLITS = ("train", "test")
AUTHOR_FILES = ("author_publications.jsonl", "author_disambiguation.jsonl")

# the schema prepare_for_upload.py@47384ed declares (written out here, field by field, from its text)
V1_SCHEMA = pa.schema([
    ("corpus_id", pa.string()), ("arxiv_id", pa.string()), ("date", pa.string()), ("title", pa.string()),
    ("abstract", pa.string()), ("categories", pa.list_(pa.string())), ("roles", pa.list_(pa.string())),
    ("key_references", pa.list_(pa.struct([("corpus_id", pa.string()), ("num_citations", pa.int64())]))),
    ("authors", pa.list_(pa.struct([("author_id", pa.string()), ("name", pa.string()),
                                    ("publication_history", pa.list_(pa.string())), ("h_index", pa.int64()),
                                    ("num_papers", pa.int64()), ("num_citations", pa.int64())]))),
    ("citation_trajectory", pa.list_(pa.int64())),
])


def sample() -> Path:
    return get_benchmark("prescience").sample_source


def sample_papers(split: str) -> list[dict]:
    return pq.read_table(sample() / f"{split}.parquet").to_pylist()


def write_paper_parquet(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for split in SPLITS:
        table = pa.Table.from_pylist(sample_papers(split), schema=V1_SCHEMA)  # topics dropped, as v1 has none
        pq.write_table(table, folder / f"{split}.parquet", row_group_size=50000)
    for name in AUTHOR_FILES:
        shutil.copyfile(sample() / name, folder / name)
    return folder


def write_seven_task(folder: Path) -> Path:
    shutil.copytree(sample(), folder, ignore=shutil.ignore_patterns("README.md"))
    return folder


def _stripped(paper: dict, with_topics: bool) -> dict:
    """A record as upstream's JSON holds it: None values left out, topics after categories on targets."""
    out = {}
    for key, value in paper.items():
        if key == "topics":
            continue
        if value is not None:
            out[key] = value
        if key == "categories" and with_topics and "target" in (paper.get("roles") or []) and paper.get("topics"):
            out["topics"] = paper["topics"]
    return out


def _save_json_gz(data: object, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    wrapped = {"metadata": [{"script": "fixture", "args": {}}], "data": data}
    path.write_bytes(gzip.compress(json.dumps(wrapped, indent=1, ensure_ascii=False).encode("utf-8")))


def write_two_domain(folder: Path) -> Path:
    publications = {}
    for line in (sample() / "author_publications.jsonl").read_text().splitlines():
        entry = json.loads(line)
        publications[entry["key"]] = entry["value"]
    for domain, with_topics in (("prescience-ai", True), ("prescience-quantum", False)):
        for split in SPLITS:
            papers = [_stripped(p, with_topics) for p in sample_papers(split)]
            authors = {a["author_id"] for p in papers for a in p.get("authors", [])}
            _save_json_gz(papers, folder / domain / split / "all_papers.json.gz")
            _save_json_gz({k: v for k, v in publications.items() if k in authors},
                          folder / domain / split / "sd2publications.json.gz")
    return folder


WRITERS = {"allenai/prescience": write_paper_parquet, "PreSciencePreScience/PreScience": write_seven_task,
           "pscience674/ds-7f93": write_two_domain}
