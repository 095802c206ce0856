"""Read a PreScience release folder into config rows as Arrow tables (spec ``prescience.md`` §1.2, §9).

Release layout: ``train.parquet`` and ``test.parquet`` (two overlapping corpora, pitfall 1),
``author_publications.jsonl`` and ``author_disambiguation.jsonl`` (``{"key", "value"}`` per line); the other
published variants are read through that layout (:mod:`.releases`).

Every reader yields ``(split, iterator of Arrow tables)`` whose columns are the config's declared features, so the
build writes them without a Python object per row: the corpus configs pass Parquet record batches through
(columns in schema order, ``is_target`` computed with Arrow), the instance configs come from one metadata-only
:class:`~.history.CorpusIndex` per split corpus, built **once per build**: every instance set of a split (T1-T7)
is derived from it in one pass and kept as small Arrow tables (:func:`split_instances`), then the index is
dropped. Contribution rows gather their texts with one column scan of the corpus.

Release checks (one-line errors naming the file): column types as released (a numeric title is refused, not
cast to text), no empty file, no duplicate ``corpus_id`` / author key, ISO ``YYYY-MM-DD`` dates only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import sciprobe.benchmarks.prescience.instances as inst
from sciprobe.benchmarks.prescience.history import (
    CorpusIndex,
    check_corpus_file,
    file_key,
    open_parquet,
    read_author_publications,
    read_key_value_table,
    role_mask,
    sorted_unique,
)
from sciprobe.benchmarks.prescience.schema import PAIR_FORECAST_END, PAPER_SCHEMA, TEST_WINDOW
from sciprobe.core.errors import SciprobeError
from sciprobe.data.release_files import parse_release_date

CORPUS_FILES = {"train": "train.parquet", "test": "test.parquet"}
AUTHOR_PUBLICATIONS = "author_publications.jsonl"
AUTHOR_DISAMBIGUATION = "author_disambiguation.jsonl"
BATCH_ROWS = 8192
#: Contribution rows are assembled this many targets at a time (their reference texts dominate the size).
CONTRIBUTION_CHUNK = 4096
#: Columns the instance sets need besides the index's own (T4 labels, T6/T7 topics).
INSTANCE_COLUMNS = ("citation_trajectory", "topics")
_STRINGS = pa.list_(pa.string())


def _file(source: Path, name: str) -> Path:
    path = Path(source) / name
    if not path.is_file():
        raise SciprobeError(f"PreScience release file {name} not found in {source}")
    return path


# ---------------------------------------------------------------- corpus configs

def _paper_table(batch: pa.RecordBatch) -> pa.Table:
    """Released columns in schema order (absent columns -> null) + ``is_target``."""
    columns = {}
    for field in PAPER_SCHEMA:
        if field.name in batch.schema.names:
            columns[field.name] = batch.column(field.name).cast(field.type)
        else:
            columns[field.name] = pa.nulls(batch.num_rows, field.type)
    columns["is_target"] = pa.array(role_mask(columns["roles"]), type=pa.bool_())
    return pa.table(columns)


def paper_tables(path: Path, batch_rows: int = BATCH_ROWS) -> Iterator[pa.Table]:
    """The corpus of one split file as Arrow tables (checked first: types, ids, dates, not empty)."""
    check_corpus_file(path)
    for batch in open_parquet(path).iter_batches(batch_size=batch_rows, use_threads=False):
        yield _paper_table(batch)


def iter_papers(path: Path, batch_rows: int = BATCH_ROWS) -> Iterator[dict]:
    """The corpus of one split file as row dicts."""
    for table in paper_tables(path, batch_rows):
        yield from table.to_pylist()


def key_value_tables(path: Path, value_name: str, batch_rows: int = 65536) -> Iterator[pa.Table]:
    """``{"key", "value"}`` lines as ``(author_id, value_name)`` Arrow tables (checked: text ids, unique keys)."""
    table = read_key_value_table(path).rename_columns(["author_id", value_name])
    for start in range(0, table.num_rows, batch_rows):
        yield table.slice(start, batch_rows)


def iter_jsonl(path: Path, value_name: str) -> Iterator[dict]:
    for table in key_value_tables(path, value_name):
        yield from table.to_pylist()


# ---------------------------------------------------------------- the index and the instance sets of a split

def load_index(source: Path, split: str, columns: tuple[str, ...] = (), lean: bool = True) -> CorpusIndex:
    """Metadata index of one split's corpus (+ the merged author map, restricted to this corpus); ``lean``
    keeps only the id leaves of references and authors (see :meth:`CorpusIndex.from_parquet`)."""
    pubs = Path(source) / AUTHOR_PUBLICATIONS
    return CorpusIndex.from_parquet(_file(source, CORPUS_FILES[split]), columns=list(columns), lean=lean,
                                    author_publications=pubs if pubs.is_file() else None)


@dataclass(frozen=True)
class SplitInstances:
    """Every instance set of one split corpus, as Arrow tables in the order upstream samples from."""

    #: corpus_id, date, references (ids in H^{<t_p}) + where each text is: ``text_at`` (target) and
    #: ``reference_text_at`` (its references), rows of the texts read at ``text_rows`` of the corpus file
    contribution_targets: pa.Table
    text_rows: np.ndarray
    collaborator_prediction: pa.Table
    prior_work_selection: pa.Table
    citation_prediction: pa.Table
    future_combination: pa.Table | None  # test only
    topic_sets: pa.Table  # date, topics of the split's targets with >= 1 topic (T6/T7)


def _rows_table(rows: list[dict], columns: dict[str, pa.DataType]) -> pa.Table:
    return pa.table({name: pa.array([r[name] for r in rows], type=kind) for name, kind in columns.items()})


_FUTURE_COLUMNS = {"corpus_id": pa.string(), "date": pa.string(), "gold_corpus_ids": _STRINGS,
                   "gold_counts": pa.list_(pa.int64())}


def _topic_sets(index: CorpusIndex, split: str) -> pa.Table:
    rows = inst.target_rows(index, split)
    dates = inst.column_values(index, "date", rows)
    topics = inst.column_values(index, "topics", rows)
    keep = [i for i, t in enumerate(topics) if t]
    return pa.table({"date": pa.array([dates[i] for i in keep], pa.string()),
                     "topics": pa.array([topics[i] for i in keep], _STRINGS)})


def split_instances(source: Path, split: str) -> SplitInstances:
    """The instance sets of one split, derived from one index of its corpus (memoised per release file)."""
    corpus = _file(source, CORPUS_FILES[split])
    pubs = Path(source) / AUTHOR_PUBLICATIONS
    return _split_instances(str(Path(source)), split, file_key(corpus), file_key(pubs) if pubs.is_file() else None)


def _with_text_rows(index: CorpusIndex, targets: pa.Table) -> tuple[pa.Table, np.ndarray]:
    """Where the texts of the targets and their references are in the corpus file: the sorted file rows to read,
    and for each target / reference the position of its text among them."""
    refs = targets["references"].combine_chunks()
    file_row = index.file_row.astype(np.int64)
    target_rows = file_row[pc.index_in(targets["corpus_id"], value_set=index.ids).to_numpy(zero_copy_only=False)]
    ref_rows = file_row[pc.index_in(refs.flatten(), value_set=index.ids).to_numpy(zero_copy_only=False)]
    text_rows = sorted_unique(np.concatenate([target_rows, ref_rows]))
    ref_at = pa.ListArray.from_arrays(pc.subtract(refs.offsets, refs.offsets[0]),
                                      pa.array(np.searchsorted(text_rows, ref_rows)))
    return (targets.append_column("text_at", pa.array(np.searchsorted(text_rows, target_rows)))
            .append_column("reference_text_at", ref_at)), text_rows


@functools.lru_cache(maxsize=2)  # the two splits of the release being built; instance sets are small
def _split_instances(source: str, split: str, corpus_key: tuple, pubs_key: tuple | None) -> SplitInstances:
    index = load_index(Path(source), split, INSTANCE_COLUMNS)
    future = (_rows_table(inst.future_combination_instances(index, split), _FUTURE_COLUMNS)
              if split == "test" else None)
    targets, text_rows = _with_text_rows(index, inst.contribution_target_table(index, split))
    instances = SplitInstances(targets, text_rows, inst.collaborator_table(index, split),
                               inst.prior_work_table(index, split), inst.citation_table(index, split), future,
                               _topic_sets(index, split))
    del index
    pa.default_memory_pool().release_unused()  # the index was the largest thing alive: give its pages back
    return instances


_RANKING_CONFIGS = ("collaborator_prediction", "prior_work_selection", "citation_prediction")


def _sample_positions(ids: pa.Array, n: int, options: Mapping[str, Any]) -> pa.Array:
    """Positions of ``random.Random(seed).sample(ids, n)`` in sample order (upstream's subsets)."""
    seed = int(options.get("sample_seed", inst.SAMPLE_SEED))
    id_list = ids.to_pylist()
    position = {cid: i for i, cid in enumerate(id_list)}
    return pa.array([position[c] for c in inst.sample_ids(id_list, n, seed)], pa.int64())


# ---------------------------------------------------------------- contribution rows (T1)

def _corpus_texts(source: Path, split: str, rows: np.ndarray) -> pa.Table:
    """``title, abstract`` of the given (sorted) rows of the split's corpus file, in that order (one scan of the two
    columns keeping only those rows; missing text -> ""). Each column is joined once, from per-batch pieces."""
    pieces: dict[str, list[pa.Array]] = {"title": [], "abstract": []}
    start = 0
    parquet = open_parquet(_file(source, CORPUS_FILES[split]))
    for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=list(pieces), use_threads=False):
        lo, hi = np.searchsorted(rows, [start, start + batch.num_rows])
        if hi > lo:
            at = pa.array(rows[lo:hi] - start)
            for name, parts in pieces.items():
                parts.append(pc.fill_null(batch.column(name).cast(pa.string()).take(at), ""))
        start += batch.num_rows
    columns = {}
    for name in list(pieces):
        parts = pieces.pop(name)
        columns[name] = pa.concat_arrays(parts) if parts else pa.array([], pa.string())
        del parts
    pa.default_memory_pool().release_unused()
    return pa.table(columns)


def contribution_tables(targets: pa.Table, texts: pa.Table, chunk: int = CONTRIBUTION_CHUNK) -> Iterator[pa.Table]:
    """T1 rows (corpus_id, date, references with texts, gold title and abstract), ``chunk`` targets at a time."""
    title, abstract = texts["title"].combine_chunks(), texts["abstract"].combine_chunks()
    for start in range(0, targets.num_rows, chunk):
        part = targets.slice(start, chunk).combine_chunks()
        refs = part["references"].chunk(0)
        ref_at = part["reference_text_at"].chunk(0).flatten()
        references = pa.ListArray.from_arrays(pc.subtract(refs.offsets, refs.offsets[0]), pa.StructArray.from_arrays(
            [refs.flatten(), title.take(ref_at), abstract.take(ref_at)], names=["corpus_id", "title", "abstract"]))
        at = part["text_at"].chunk(0)
        yield pa.table({"corpus_id": part["corpus_id"], "date": part["date"], "references": references,
                        "title": title.take(at), "abstract": abstract.take(at)})


def _contribution_splits(source: Path, options: Mapping[str, Any]) -> Iterator[tuple[str, Iterator[pa.Table]]]:
    """train and test rows, then the ``test_sample_5000`` / ``test_sample_500`` subsets of test (texts gathered
    once per split)."""
    texts: dict[str, pa.Table] = {}

    def rows(split: str, subset: int | None) -> Iterator[pa.Table]:
        if split not in texts:
            texts.clear()  # one split's texts alive at a time, and not while the next split's index is built
            pa.default_memory_pool().release_unused()
        instances = split_instances(source, split)
        targets = instances.contribution_targets
        if split not in texts:
            texts[split] = _corpus_texts(source, split, instances.text_rows)
        if subset is not None:
            targets = targets.take(_sample_positions(targets["corpus_id"].combine_chunks(), 5000, options)[:subset])
        yield from contribution_tables(targets, texts[split])

    for name, split, subset in (("train", "train", None), ("test", "test", None),
                                ("test_sample_5000", "test", 5000), ("test_sample_500", "test", 500)):
        yield name, _lazy(lambda split=split, subset=subset: rows(split, subset))


def contribution_rows(source: Path, split: str, options: Mapping[str, Any], subset: str | None = None
                      ) -> Iterator[dict]:
    """T1 rows of one split as dicts (``subset``: ``test_sample_5000`` / ``test_sample_500`` of the test split)."""
    names = {None: split, "test_sample_5000": "test_sample_5000", "test_sample_500": "test_sample_500"}
    wanted = names[subset] if split == "test" or subset is None else None
    for name, tables in _contribution_splits(Path(source), options):
        if name == wanted:
            for table in tables:
                yield from table.to_pylist()
            return


# ---------------------------------------------------------------- the other instance configs

def _lazy(make: Callable[[], Any]) -> Iterator[pa.Table]:
    """Rows computed only when the builder writes this split, so one split's data is alive at a time."""
    yield from make()


def _ranking_tables(source: Path, config: str, split: str, subset: str | None,
                    options: Mapping[str, Any]) -> Iterator[pa.Table]:
    table = getattr(split_instances(source, split), config)
    if subset is not None:
        table = table.take(_sample_positions(table["corpus_id"].combine_chunks(), 1000, options))
    yield table


def _label_sets(table: pa.Table, end: str | None = None) -> list[list[str]]:
    if end is not None:
        table = table.filter(pc.less(table["date"], end))
    return table["topics"].to_pylist()


def _topic_rows(source: Path, config: str, options: Mapping[str, Any]) -> Iterator[pa.Table]:
    history = _label_sets(split_instances(source, "train").topic_sets)
    test_sets = split_instances(source, "test").topic_sets
    if config == "topic_trends":
        rows = inst.topic_trend_instances(history, _label_sets(test_sets))
    else:
        end = options.get("pair_forecast_end", PAIR_FORECAST_END)
        parsed = parse_release_date(end, "option pair_forecast_end", ("day",))
        if parsed is None or not TEST_WINDOW[0] < parsed.iso <= TEST_WINDOW[1]:
            raise SciprobeError(f"pair_forecast_end {end!r} must lie in ({TEST_WINDOW[0]}, {TEST_WINDOW[1]}]")
        rows = inst.topic_pair_instances(history, _label_sets(test_sets, parsed.iso), parsed.iso)
    for row in rows:  # a unit's gold counts the forecast window: it dates from the window's first day (cutoffs)
        row["date"] = TEST_WINDOW[0]
    if rows:
        yield pa.Table.from_pylist(rows)


def _task_rows(source: Path, config: str, options: Mapping[str, Any]) -> Iterator[tuple[str, Iterator[pa.Table]]]:
    if config not in (*_RANKING_CONFIGS, "contribution_generation", "future_combination", "topic_trends",
                      "topic_pair_trends"):
        raise SciprobeError(f"unknown PreScience config {config!r}")
    _file(source, CORPUS_FILES["test"])  # fail early, before the builder starts writing
    if config == "contribution_generation":
        yield from _contribution_splits(source, options)
    elif config in _RANKING_CONFIGS:
        splits = [("train", "train", None), ("test", "test", None)]
        if config != "citation_prediction":
            splits.insert(1, ("dev_1000", "train", "dev_1000"))
        for name, split, subset in splits:
            yield name, _lazy(lambda split=split, subset=subset: _ranking_tables(source, config, split, subset,
                                                                                 options))
    elif config == "future_combination":
        yield "test", _lazy(lambda: [split_instances(source, "test").future_combination])
    else:
        yield "test", _lazy(lambda: _topic_rows(source, config, options))


_CONFIGS = ("papers", "author_publications", "author_disambiguation", *_RANKING_CONFIGS, "contribution_generation",
            "future_combination", "topic_trends", "topic_pair_trends")


def _release_folder(source: Path, config: str, options: Mapping[str, Any]) -> Path:
    """The Parquet-layout folder of whichever release ``source`` holds; an author file is read where it is, so a
    folder holding only the author files still gives those configs."""
    from sciprobe.benchmarks.prescience.releases import is_release, resolve

    if config not in _CONFIGS:
        raise SciprobeError(f"unknown PreScience config {config!r}")
    if config.startswith("author_") and not is_release(source):
        return source
    return resolve(source, options).folder


def read_source(source: Path, config: str, options: Mapping[str, Any]) -> Iterator[tuple[str, Iterator[pa.Table]]]:
    """``(split, Arrow tables)`` pairs for one config (the builder writes them as they come, ``sciprobe.data.build``).
    ``source`` may hold any published release variant: it is read through its Parquet-layout folder
    (:func:`.releases.resolve`)."""
    source = _release_folder(Path(source), config, options)
    if config == "papers":
        for split, name in CORPUS_FILES.items():
            yield split, paper_tables(_file(source, name))
    elif config == "author_publications":
        yield "full", key_value_tables(_file(source, AUTHOR_PUBLICATIONS), "corpus_ids")
    elif config == "author_disambiguation":
        yield "full", key_value_tables(_file(source, AUTHOR_DISAMBIGUATION), "s2_author_ids")
    else:
        yield from _task_rows(source, config, options)


__all__ = ["iter_papers", "load_index", "read_author_publications", "read_source", "split_instances"]
