"""Read a PreScience release folder into config rows, streaming (spec ``prescience.md`` §1.2, §9).

Release layout: ``train.parquet`` and ``test.parquet`` (two overlapping corpora, pitfall 1),
``author_publications.jsonl`` and ``author_disambiguation.jsonl`` (``{"key", "value"}`` per line). Every reader
yields ``(split, iterator of rows)``: the corpus configs pass Parquet record batches through one batch at a
time (no whole-corpus Python or pandas objects), the instance configs are computed from a metadata-only
:class:`~.history.CorpusIndex` of the split's own corpus.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import sciprobe.benchmarks.prescience.instances as inst
from sciprobe.benchmarks.prescience.history import CorpusIndex, read_author_publications
from sciprobe.benchmarks.prescience.schema import (
    PAIR_FORECAST_END,
    PAPER_SCHEMA,
    ROLE_TARGET,
    TEST_WINDOW,
)
from sciprobe.errors import SciprobeError

CORPUS_FILES = {"train": "train.parquet", "test": "test.parquet"}
AUTHOR_PUBLICATIONS = "author_publications.jsonl"
AUTHOR_DISAMBIGUATION = "author_disambiguation.jsonl"
BATCH_ROWS = 2048


def _file(source: Path, name: str) -> Path:
    path = Path(source) / name
    if not path.is_file():
        raise SciprobeError(f"PreScience release file {name} not found in {source}")
    return path


def _normalise_batch(batch: pa.RecordBatch) -> list[dict]:
    """Released columns in schema order (absent columns -> null) + ``is_target``."""
    table = pa.Table.from_batches([batch])
    columns = {}
    for field in PAPER_SCHEMA:
        if field.name in table.column_names:
            columns[field.name] = table[field.name].cast(field.type)
        else:
            columns[field.name] = pa.nulls(table.num_rows, field.type)
    rows = pa.table(columns).to_pylist()
    for row in rows:
        row["is_target"] = ROLE_TARGET in (row["roles"] or [])
    return rows


def iter_papers(path: Path, batch_rows: int = BATCH_ROWS) -> Iterator[dict]:
    for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_rows):
        yield from _normalise_batch(batch)


def iter_jsonl(path: Path, value_name: str) -> Iterator[dict]:
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                yield {"author_id": str(record["key"]), value_name: [str(v) for v in record["value"]]}
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise SciprobeError(f"{path.name} line {number}: not a {{key, value}} record ({exc})") from None


def load_index(source: Path, split: str, columns: tuple[str, ...] = (), lean: bool = True) -> CorpusIndex:
    """Metadata index of one split's corpus (+ the merged author map, restricted to this corpus); ``lean``
    keeps only the id leaves of references and authors (see :meth:`CorpusIndex.from_parquet`)."""
    pubs = Path(source) / AUTHOR_PUBLICATIONS
    return CorpusIndex.from_parquet(_file(source, CORPUS_FILES[split]), columns=list(columns), lean=lean,
                                    author_publications=pubs if pubs.is_file() else None)


def _texts(source: Path, split: str, ids: set[str]) -> dict[str, tuple[str, str]]:
    """Title and abstract of the given ids, scanning the corpus batch by batch."""
    wanted = pa.array(sorted(ids), type=pa.string())
    out: dict[str, tuple[str, str]] = {}
    parquet = pq.ParquetFile(_file(source, CORPUS_FILES[split]))
    for batch in parquet.iter_batches(batch_size=8192, columns=["corpus_id", "title", "abstract"]):
        hit = batch.filter(pc.is_in(batch.column(0), value_set=wanted))
        for cid, title, abstract in zip(*(hit.column(i).to_pylist() for i in range(3))):
            out[cid] = (title or "", abstract or "")
    return out


def contribution_rows(source: Path, split: str, options: Mapping[str, Any], subset: str | None = None
                      ) -> Iterator[dict]:
    """T1 rows of one split (``subset``: ``test_sample_5000`` / ``test_sample_500`` of the test split)."""
    index = load_index(source, split)
    targets = inst.contribution_targets(index, split)
    del index
    if subset is not None:
        seed = int(options.get("sample_seed", inst.SAMPLE_SEED))
        sample = inst.sample_ids([t[0] for t in targets], 5000, seed)
        sample = sample[:500] if subset == "test_sample_500" else sample
        by_id = {t[0]: t for t in targets}
        targets = [by_id[c] for c in sample]
    need = {cid for cid, _, refs in targets for cid in [cid, *refs]}
    text = _texts(source, split, need)
    for cid, date, refs in targets:
        title, abstract = text.get(cid, ("", ""))
        yield {"corpus_id": cid, "date": date, "title": title, "abstract": abstract,
               "references": [{"corpus_id": r, "title": text.get(r, ("", ""))[0],
                               "abstract": text.get(r, ("", ""))[1]} for r in refs]}


def _with_dev(split: str, rows: list[dict], subset: str | None, options: Mapping[str, Any]) -> list[dict]:
    if subset is None:
        return rows
    by_id = {r["corpus_id"]: r for r in rows}
    seed = int(options.get("sample_seed", inst.SAMPLE_SEED))
    return [by_id[c] for c in inst.sample_ids(list(by_id), 1000, seed)]


def _lazy(make: Callable[[], Iterable[dict]]) -> Iterator[dict]:
    """Rows computed only when the builder writes this split, so one split's data is alive at a time."""
    yield from make()


_RANKING_MAKERS = {"collaborator_prediction": inst.collaborator_instances,
                   "prior_work_selection": inst.prior_work_instances,
                   "citation_prediction": inst.citation_instances}


def _instances(source: Path, config: str, split: str, subset: str | None, options: Mapping[str, Any]) -> list[dict]:
    columns = ("citation_trajectory",) if config == "citation_prediction" else ()
    rows = _RANKING_MAKERS[config](load_index(source, split, columns), split)
    return _with_dev(split, rows, subset, options)


def _topic_rows(source: Path, config: str, options: Mapping[str, Any]) -> list[dict]:
    history = inst.topic_label_sets(load_index(source, "train", ("topics",)), "train")
    test_index = load_index(source, "test", ("topics",))
    if config == "topic_trends":
        return inst.topic_trend_instances(history, inst.topic_label_sets(test_index, "test"))
    end = str(options.get("pair_forecast_end", PAIR_FORECAST_END))
    if not TEST_WINDOW[0] < end <= TEST_WINDOW[1]:
        raise SciprobeError(f"pair_forecast_end {end!r} must lie in ({TEST_WINDOW[0]}, {TEST_WINDOW[1]}]")
    return inst.topic_pair_instances(history, inst.topic_label_sets(test_index, "test", end), end)


def _task_rows(source: Path, config: str, options: Mapping[str, Any]) -> Iterator[tuple[str, Iterator[dict]]]:
    if config not in (*_RANKING_MAKERS, "contribution_generation", "future_combination", "topic_trends",
                      "topic_pair_trends"):
        raise SciprobeError(f"unknown PreScience config {config!r}")
    _file(source, CORPUS_FILES["test"])  # fail early, before the builder starts writing
    if config == "contribution_generation":
        for name, split, subset in (("train", "train", None), ("test", "test", None),
                                    ("test_sample_5000", "test", "test_sample_5000"),
                                    ("test_sample_500", "test", "test_sample_500")):
            yield name, _lazy(lambda split=split, subset=subset: contribution_rows(source, split, options, subset))
        return
    if config in _RANKING_MAKERS:
        splits = [("train", "train", None), ("test", "test", None)]
        if config != "citation_prediction":
            splits.insert(1, ("dev_1000", "train", "dev_1000"))
        for name, split, subset in splits:
            yield name, _lazy(lambda split=split, subset=subset: _instances(source, config, split, subset, options))
        return
    if config == "future_combination":
        yield "test", _lazy(lambda: inst.future_combination_instances(load_index(source, "test"), "test"))
        return
    if config in ("topic_trends", "topic_pair_trends"):
        yield "test", _lazy(lambda: _topic_rows(source, config, options))
        return
    raise SciprobeError(f"unknown PreScience config {config!r}")


def read_source(source: Path, config: str, options: Mapping[str, Any]) -> Iterator[tuple[str, Iterator[dict]]]:
    """``(split, row iterator)`` pairs for one config (the builder streams them, see ``sciprobe.build``)."""
    source = Path(source)
    if config == "papers":
        for split, name in CORPUS_FILES.items():
            yield split, iter_papers(_file(source, name))
    elif config == "author_publications":
        yield "full", iter_jsonl(_file(source, AUTHOR_PUBLICATIONS), "corpus_ids")
    elif config == "author_disambiguation":
        yield "full", iter_jsonl(_file(source, AUTHOR_DISAMBIGUATION), "s2_author_ids")
    else:
        yield from _task_rows(source, config, options)


__all__ = ["iter_papers", "load_index", "read_author_publications", "read_source"]
