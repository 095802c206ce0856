"""The historical record H^{<t}: what any PreScience input may use at time t (spec ``prescience.md`` §1.4).

:class:`CorpusIndex` holds one split's corpus (``train.parquet`` or ``test.parquet`` — always the split that
contains the target, pitfall 1) as an Arrow table sorted by ``(date, corpus_id)``; everything derived from it
(citation edges, author publication lists) is kept as integer row numbers into that order. Because rows are
date-sorted, "dated strictly before t" (ISO string comparison, same-day papers excluded, pitfall 2) is a row
prefix ``[0, n_t)`` with ``n_t = count(date < t)`` computed with ``pyarrow.compute``, and every query of a
:class:`HistoryView` is cut at that prefix:

- ``papers()`` — the papers dated ``< t``, without the fields that describe their future (``roles`` are
  recomputed from which *later* targets cite a paper; ``citation_trajectory`` runs past t; §1.4 / schema
  ``FUTURE_FIELDS``); fields frozen at a paper's own date (``key_references[].num_citations``, author
  statistics) precede t and stay;
- ``author_history(author_id)`` — the author's papers dated ``< t``, date order (upstream truncates the merged
  ``author_publications`` map with ``bisect_left`` on dates; later papers in that map are never returned);
- ``citation_count(corpus_id)`` — in-corpus influential citations from papers dated ``< t`` (decision: the
  corpus only records influential references, so counts at arbitrary t are in-corpus counts; the S2 counts
  frozen at a target's own t_p stay available on the target row);
- ``candidate_ids()`` — the candidate pool of every ranking task (§1.4: pre-t ids only).

Rows without a date can never be shown to precede t and are in no view (counted in ``n_undated``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sciprobe.benchmarks.prescience.schema import FUTURE_FIELDS, PAPER_SCHEMA, ROLE_TARGET
from sciprobe.data.cutoffs import parsed_date_column
from sciprobe.core.errors import SciprobeError
from sciprobe.data.release_files import iter_json_lines, shown, text, text_list

#: Columns the index needs; text columns are optional (``columns=`` of :meth:`CorpusIndex.from_parquet`).
INDEX_COLUMNS: tuple[str, ...] = ("corpus_id", "date", "roles", "key_references", "authors")


def _check_date(t: str) -> str:
    if not isinstance(t, str) or len(t) != 10 or t[4] != "-" or t[7] != "-" or not (t[:4] + t[5:7] + t[8:]).isdigit():
        raise SciprobeError(f"history date must be an ISO YYYY-MM-DD string, got {t!r}")
    return t


def role_mask(roles: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Per row: does its ``roles`` list hold ``target``? (a null list: no)."""
    if isinstance(roles, pa.ChunkedArray):
        roles = roles.combine_chunks()
    mask = np.zeros(len(roles), dtype=bool)
    if len(roles):
        parents = pc.list_parent_indices(roles).to_numpy()
        hit = pc.fill_null(pc.equal(pc.list_flatten(roles), ROLE_TARGET), False).to_numpy(zero_copy_only=False)
        mask[parents[hit]] = True
    return mask


def _same_kind(actual: pa.DataType, expected: pa.DataType) -> bool:
    """Can a released column type stand for the schema type without converting values to another kind?"""
    if pa.types.is_null(actual):
        return True
    if pa.types.is_string(expected):
        return pa.types.is_string(actual) or pa.types.is_large_string(actual)
    if pa.types.is_integer(expected):
        return pa.types.is_integer(actual)
    if pa.types.is_list(expected):
        return (pa.types.is_list(actual) or pa.types.is_large_list(actual)) and _same_kind(actual.value_type,
                                                                                          expected.value_type)
    if pa.types.is_struct(expected):
        if not pa.types.is_struct(actual):
            return False
        wanted = {f.name: f.type for f in expected}
        return all(f.name in wanted and _same_kind(f.type, wanted[f.name]) for f in actual)
    return actual == expected


def check_corpus_columns(schema: pa.Schema, name: str) -> None:
    """Refuse a corpus file whose columns are not of the released kinds (a numeric title is not cast to text)."""
    for field in PAPER_SCHEMA:
        if field.name in schema.names and not _same_kind(schema.field(field.name).type, field.type):
            raise SciprobeError(f"{name}: column {field.name!r} holds {schema.field(field.name).type} values, "
                                f"expected {field.type}")
    missing = [c for c in ("corpus_id", "date") if c not in schema.names]
    if missing:
        raise SciprobeError(f"{name}: corpus lacks column(s) {', '.join(missing)}")


def check_corpus_ids(ids: pa.ChunkedArray | pa.Array, name: str) -> None:
    """Every paper has a corpus_id, and none is repeated."""
    if ids.null_count:
        raise SciprobeError(f"{name}: a paper has no corpus_id")
    counts = pc.value_counts(ids)
    repeated = counts.filter(pc.greater(counts.field("counts"), 1))
    if len(repeated):
        raise SciprobeError(f"duplicate corpus_id {shown(repeated[0]['values'].as_py())} in {name}")


def open_parquet(path: Path | str) -> pq.ParquetFile:
    """A release Parquet file read column chunk by column chunk through a small buffer (not a whole row group
    pre-buffered: half the peak memory of a scan, and no more CPU)."""
    return pq.ParquetFile(path, buffer_size=1 << 20, pre_buffer=False)


def check_corpus_file(path: Path) -> None:
    """A release corpus file: readable Parquet, released column kinds, >= 1 paper, unique ids, ISO dates."""
    try:
        schema = pq.read_schema(path)
        check_corpus_columns(schema, path.name)
        table = open_parquet(path).read(columns=["corpus_id", "date"], use_threads=False)
    except (pa.ArrowException, OSError) as exc:
        raise SciprobeError(f"cannot read {path.name}: {exc}".replace("\n", " ")) from None
    if not table.num_rows:
        raise SciprobeError(f"{path.name}: the file has no items")
    check_corpus_ids(table["corpus_id"], path.name)
    parsed_date_column(table["date"], path.name)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique`` of integers by one sort (numpy 2's hash-based unique is several times slower here)."""
    values = np.sort(values)
    if values.size:
        values = values[np.concatenate(([True], values[1:] != values[:-1]))]
    return values


def _offsets(keys: np.ndarray, n_keys: int) -> np.ndarray:
    """Start offsets (length n_keys + 1) of each key in a sorted key array."""
    return np.searchsorted(keys, np.arange(n_keys + 1), side="left")


@dataclass(frozen=True)
class _Edges:
    """Sorted (key, row) pairs with per-key offsets; ``rows_of(k)`` is date-ordered (rows are date-sorted)."""

    rows: np.ndarray
    offsets: np.ndarray

    @classmethod
    def build(cls, keys: np.ndarray, rows: np.ndarray, n_keys: int, dedupe: bool = False) -> _Edges:
        # one in-place int64 sort of key * span + row orders by key, then row (a lexsort of the pair, without the
        # argsort and its copies: these arrays hold millions of edges)
        span = int(rows.max()) + 1 if rows.size else 1
        combined = keys.astype(np.int64)
        combined *= span
        combined += rows
        combined.sort()
        if dedupe and combined.size:
            combined = combined[np.concatenate(([True], combined[1:] != combined[:-1]))]
        keys = combined // span
        combined -= keys * span  # now the rows
        return cls(combined, _offsets(keys, n_keys))

    def rows_of(self, key: int) -> np.ndarray:
        return self.rows[self.offsets[key]:self.offsets[key + 1]]

    def count_before(self, key: int, prefix: int) -> int:
        return int(np.searchsorted(self.rows_of(key), prefix, side="left"))


class CorpusIndex:
    """One split's corpus, date-sorted, with citation and authorship edges as row numbers."""

    def __init__(self, table: pa.Table, author_publications: pa.Table | Iterable[tuple[str, Sequence[str]]] = (),
                 name: str = "corpus") -> None:
        missing = [c for c in ("corpus_id", "date") if c not in table.column_names]
        if missing:
            raise SciprobeError(f"{name}: corpus lacks column(s) {', '.join(missing)}")
        check_corpus_ids(table["corpus_id"], name)
        parsed_date_column(table["date"], name)
        dated = pc.is_valid(table["date"])
        self.n_undated = int(table.num_rows - pc.sum(dated).as_py()) if table.num_rows else 0
        table = table.filter(dated) if self.n_undated else table
        order = pc.sort_indices(table, [("date", "ascending"), ("corpus_id", "ascending")])
        table = table.take(order).combine_chunks()
        #: row -> position in the source file (upstream samples instances "in parquet order", pitfall 5)
        self.file_row = order.to_numpy()
        self.table = table
        self.dates = table["date"].combine_chunks()
        self._prefix_cache: dict[str, int] = {}
        self.ids = table["corpus_id"].combine_chunks()
        n = table.num_rows
        self.is_target = self._target_mask()
        self.citations = self._citation_edges()
        if not isinstance(author_publications, pa.Table):
            pairs = list(author_publications)
            author_publications = pa.table({"key": pa.array([k for k, _ in pairs], pa.string()),
                                            "value": pa.array([list(v) for _, v in pairs], pa.list_(pa.string()))})
        self.authorship = self._author_edges(author_publications)
        assert self.citations.offsets.size == n + 1

    # lookups by id, built on first use (the build's vectorised instance sets need none of them)
    @functools.cached_property
    def _row(self) -> dict[str, int]:
        return {cid: i for i, cid in enumerate(self.ids.to_pylist())}

    @functools.cached_property
    def author_ids(self) -> dict[str, int]:
        """Author id -> code."""
        return {a: i for i, a in enumerate(self.author_dictionary.to_pylist())}

    @functools.cached_property
    def author_names(self) -> np.ndarray:
        return np.array(self.author_dictionary.to_pylist(), dtype=object)

    @functools.cached_property
    def author_first_row(self) -> np.ndarray:
        """Per author code: row of the first publication (n when none is in the corpus)."""
        return self.author_first_rows()

    # ------------------------------------------------------------ construction
    @classmethod
    def from_parquet(cls, path: Path | str, *, author_publications: Path | str | None = None,
                     columns: Sequence[str] | None = None, lean: bool = False) -> CorpusIndex:
        """Load one split's Parquet (all columns, or ``INDEX_COLUMNS`` + ``columns``) and optionally the
        ``author_publications.jsonl`` map (merged over splits; ids outside this corpus are ignored).

        ``lean=True`` reads only the id leaves of ``key_references`` and ``authors`` (not publication histories
        or statistics) unless those columns are named in ``columns`` — the build's memory-bounded mode.
        """
        path = Path(path)
        if not path.is_file():
            raise SciprobeError(f"corpus file {path} not found")
        schema = pq.read_schema(path)
        check_corpus_columns(schema, path.name)
        names = schema.names
        if columns is None and not lean:
            table = pq.read_table(path)
        else:
            extra = list(columns or ())
            wanted = [c for c in dict.fromkeys([*INDEX_COLUMNS, *extra]) if c in names]
            if lean:
                leaves = {"key_references": "key_references.list.element.corpus_id",
                          "authors": "authors.list.element.author_id"}
                wanted = [leaves[c] if c in leaves and c not in extra else c for c in wanted]
            table = open_parquet(path).read(columns=wanted, use_threads=not lean)  # lean: the build's, one thread
        pubs = read_key_value_table(author_publications) if author_publications else ()
        return cls(table, pubs, path.name)

    def _target_mask(self) -> np.ndarray:
        if "roles" not in self.table.column_names:
            return np.zeros(self.table.num_rows, dtype=bool)
        return role_mask(self.table["roles"])

    def _citation_edges(self) -> _Edges:
        n = self.table.num_rows
        if "key_references" not in self.table.column_names or not n:
            return _Edges(np.zeros(0, dtype=np.int64), np.zeros(n + 1, dtype=np.int64))
        refs = self.table["key_references"].combine_chunks()
        citing = pc.list_parent_indices(refs).to_numpy()
        cited_ids = pc.struct_field(pc.list_flatten(refs), "corpus_id")
        cited = pc.index_in(cited_ids, value_set=self.ids)
        known = pc.is_valid(cited).to_numpy(zero_copy_only=False)
        cited_rows = pc.fill_null(cited, -1).to_numpy(zero_copy_only=False)[known].astype(np.int64)
        return _Edges.build(cited_rows, citing[known].astype(np.int64), n, dedupe=True)

    def _author_edges(self, extra: pa.Table) -> _Edges:
        """Author -> rows edges from the corpus's own author lists and the author map (``key``, ``value``), with
        Arrow compute: codes in order of first appearance (corpus authors, then the map's keys), map entries
        outside this corpus counted in ``n_unknown_publications``."""
        keys = extra["key"].combine_chunks() if extra.num_rows else pa.array([], pa.string())
        corpus_rows = np.zeros(0, dtype=np.int64)
        if "authors" in self.table.column_names and self.table.num_rows:
            authors = self.table["authors"].combine_chunks()
            flat_ids = pc.struct_field(pc.list_flatten(authors), "author_id")
            valid = pc.is_valid(flat_ids)
            corpus_rows = pc.list_parent_indices(authors).filter(valid).to_numpy().astype(np.int64)
            keys = pa.concat_arrays([flat_ids.filter(valid), keys])
            del flat_ids, valid
        enc = pc.dictionary_encode(keys)
        del keys
        #: author code -> author id (Arrow), for vectorised lookups
        self.author_dictionary = enc.dictionary
        codes = enc.indices.to_numpy(zero_copy_only=False)
        n_corpus = len(corpus_rows)
        values = extra["value"].combine_chunks() if extra.num_rows else pa.array([], pa.list_(pa.string()))
        rows = pc.index_in(pc.list_flatten(values), value_set=self.ids)
        known = pc.is_valid(rows).to_numpy(zero_copy_only=False)
        self.n_unknown_publications = int(len(known) - known.sum())
        extra_keys = codes[n_corpus:][pc.list_parent_indices(values).to_numpy()[known]]
        extra_rows = rows.filter(pc.is_valid(rows)).to_numpy()
        del rows, known
        return _Edges.build(np.concatenate([codes[:n_corpus], extra_keys]), np.concatenate([corpus_rows, extra_rows]),
                            len(enc.dictionary), dedupe=True)

    # ------------------------------------------------------------ queries
    @property
    def n_papers(self) -> int:
        return self.table.num_rows

    @functools.cached_property
    def row_prefix(self) -> np.ndarray:
        """Per row: the number of papers dated strictly before it (= ``prefix(its date)``, the size of its H^{<t})."""
        n = self.table.num_rows
        if not n:
            return np.zeros(0, dtype=np.int64)
        new = np.ones(n, dtype=bool)
        new[1:] = pc.not_equal(self.dates.slice(1), self.dates.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(new)
        return starts[np.cumsum(new) - 1]

    def author_codes(self, author_ids: pa.Array) -> np.ndarray:
        """Codes of author ids (-1 for an id this index does not know, or a null)."""
        codes = pc.index_in(author_ids, value_set=self.author_dictionary)
        return pc.fill_null(codes, -1).to_numpy(zero_copy_only=False).astype(np.int64)

    def author_first_rows(self, mask: np.ndarray | None = None) -> np.ndarray:
        """Per author code: the first row of the author's papers (those where ``mask`` is true, if given); n when
        there is none."""
        n, offsets, rows = self.table.num_rows, self.authorship.offsets, self.authorship.rows
        keys = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
        if mask is not None:
            keys, rows = keys[mask[rows]], rows[mask[rows]]
        first = np.full(len(offsets) - 1, n, dtype=np.int64)
        if keys.size:  # keys are sorted and rows sorted within a key: a key's first entry is its earliest row
            at = np.concatenate(([True], keys[1:] != keys[:-1]))
            first[keys[at]] = rows[at]
        return first

    def prefix(self, t: str) -> int:
        """Number of papers dated strictly before ``t`` (= the rows of H^{<t}); memoised per date."""
        cached = self._prefix_cache.get(t)
        if cached is None:
            cached = int(pc.sum(pc.less(self.dates, _check_date(t))).as_py() or 0)
            self._prefix_cache[t] = cached
        return cached

    def row_of(self, corpus_id: str) -> int | None:
        return self._row.get(corpus_id)

    def date_of(self, corpus_id: str) -> str | None:
        row = self._row.get(corpus_id)
        return None if row is None else self.dates[row].as_py()

    def window(self, start: str, end: str, *, targets_only: bool = False,
               columns: Sequence[str] | None = None) -> pa.Table:
        """Papers with ``start <= date < end``, in date order. Rows are date-sorted, so the window is the
        zero-copy slice between two prefixes (filtering every column of the whole corpus copied it)."""
        lo, hi = self.prefix(start), self.prefix(end)
        table = self.table if columns is None else self.table.select(list(columns))
        window = table.slice(lo, max(hi - lo, 0))
        if targets_only:
            window = window.filter(pa.array(self.is_target[lo:max(hi, lo)]))
        return window

    def row(self, row: int) -> dict:
        return self.table.slice(row, 1).to_pylist()[0]

    def view(self, t: str) -> HistoryView:
        """H^{<t}: everything dated strictly before ``t``."""
        return HistoryView(self, _check_date(t))


class HistoryView:
    """H^{<t} of one corpus. Every method answers from papers dated strictly before ``t`` only."""

    def __init__(self, index: CorpusIndex, t: str) -> None:
        self.index = index
        self.t = t
        self.n = index.prefix(t)

    def __len__(self) -> int:
        return self.n

    def __contains__(self, corpus_id: object) -> bool:
        row = self.index.row_of(corpus_id) if isinstance(corpus_id, str) else None
        return row is not None and row < self.n

    def papers(self, columns: Sequence[str] | None = None) -> pa.Table:
        """The papers of H^{<t} (zero-copy slice) without future-describing fields."""
        table = self.index.table.slice(0, self.n)
        keep = [c for c in (columns or table.column_names) if c not in FUTURE_FIELDS]
        unknown = [c for c in keep if c not in table.column_names]
        if unknown:
            raise SciprobeError(f"unknown corpus column(s) {unknown}")
        return table.select(keep)

    def paper(self, corpus_id: str) -> dict | None:
        """One paper of H^{<t} as a dict (future fields removed); None if absent or dated >= t."""
        row = self.index.row_of(corpus_id)
        if row is None or row >= self.n:
            return None
        record = self.index.row(row)
        for name in FUTURE_FIELDS:
            record.pop(name, None)
        return record

    def candidate_ids(self) -> pa.Array:
        return self.index.ids.slice(0, self.n)

    def _rows_to_ids(self, rows: np.ndarray) -> list[str]:
        return pc.take(self.index.ids, pa.array(rows, type=pa.int64())).to_pylist() if rows.size else []

    def author_history(self, author_id: str) -> list[str]:
        """The author's papers dated < t, oldest first (ties by corpus id)."""
        code = self.index.author_ids.get(author_id)
        if code is None:
            return []
        rows = self.index.authorship.rows_of(code)
        return self._rows_to_ids(rows[:int(np.searchsorted(rows, self.n, side="left"))])

    def author_history_rows(self, author_id: str) -> np.ndarray:
        code = self.index.author_ids.get(author_id)
        if code is None:
            return np.zeros(0, dtype=np.int64)
        rows = self.index.authorship.rows_of(code)
        return rows[:int(np.searchsorted(rows, self.n, side="left"))]

    def candidate_authors(self) -> list[str]:
        """Authors with at least one paper dated < t (the T2 candidate pool)."""
        return self.index.author_names[self.index.author_first_row < self.n].tolist()

    def citation_count(self, corpus_id: str) -> int:
        """In-corpus influential citations of ``corpus_id`` from papers dated < t (0 if unknown)."""
        row = self.index.row_of(corpus_id)
        if row is None:
            return 0
        return self.index.citations.count_before(row, self.n)

    def citing_papers(self, corpus_id: str) -> list[str]:
        row = self.index.row_of(corpus_id)
        if row is None:
            return []
        rows = self.index.citations.rows_of(row)
        return self._rows_to_ids(rows[:int(np.searchsorted(rows, self.n, side="left"))])

    def references_of(self, corpus_id: str) -> list[str]:
        """Key references of a paper of H^{<t} (all precede it, hence t); [] if the paper is not in the view."""
        paper = self.paper(corpus_id)
        return [r["corpus_id"] for r in (paper or {}).get("key_references") or []]


def read_key_values(path: Path | str) -> Iterator[tuple[str, list[str], str]]:
    """Stream a ``{"key": text, "value": [text, ...]}`` JSON-lines file (``author_publications.jsonl``,
    ``author_disambiguation.jsonl``) as ``(key, values, where)``; anything else is a one-line error (a number is
    not coerced to an id, a 200,000-deep line is refused, a file with no lines has no items)."""
    path = Path(path)
    if not path.is_file():
        raise SciprobeError(f"{path.name} not found in {path.parent}")
    empty = True
    for number, record in iter_json_lines(path):
        where = f"{path.name} line {number}"
        if not isinstance(record, dict) or "key" not in record or "value" not in record:
            raise SciprobeError(f"{where}: not a {{key, value}} record")
        key = text(record["key"], where, "key", required=True)
        empty = False
        yield key, text_list(record["value"], where, "value"), where  # type: ignore[misc]
    if empty:
        raise SciprobeError(f"{path.name}: the file has no items")


KEY_VALUE_SCHEMA = pa.schema([("key", pa.string()), ("value", pa.list_(pa.string()))])


def _arrow_key_values(path: Path) -> pa.Table | None:
    """The file read by Arrow's JSON reader with the exact schema (types are checked, nothing converted; a line
    with another field, a null or a repeated key is left to the strict reader); None when anything is off."""
    import pyarrow.json as pj

    options = pj.ParseOptions(explicit_schema=KEY_VALUE_SCHEMA, unexpected_field_behavior="error")
    try:  # one thread: as fast here, and no per-thread memory left behind
        table = pj.read_json(path, read_options=pj.ReadOptions(use_threads=False),
                             parse_options=options).combine_chunks()
    except (pa.ArrowException, UnicodeDecodeError, OSError):
        return None
    values = table["value"].chunk(0) if table.num_rows else None
    if (not table.num_rows or table["key"].null_count or values.null_count
            or pc.list_flatten(values).null_count or len(pc.unique(table["key"])) != table.num_rows):
        return None
    return table


def file_key(path: Path) -> tuple:
    """A file's identity while unchanged (resolved path, mtime, size): the key of the per-build memos."""
    stat = path.stat()
    return str(path.resolve()), stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=2)  # the two author files of the release being built
def _key_value_table(path: str, file_key: tuple) -> pa.Table:
    table = _arrow_key_values(Path(path))
    pa.default_memory_pool().release_unused()  # the JSON reader's working memory
    if table is not None:
        return table
    keys: list[str] = []
    values: list[list[str]] = []
    seen: set[str] = set()
    for key, vals, where in read_key_values(path):  # the strict reader says what is wrong
        if key in seen:
            raise SciprobeError(f"duplicate author_id {key!r}: {where} repeats an earlier line of {Path(path).name}")
        seen.add(key)
        keys.append(key)
        values.append(vals)
    return pa.table({"key": pa.array(keys, pa.string()), "value": pa.array(values, KEY_VALUE_SCHEMA.field(1).type)})


def read_key_value_table(path: Path | str) -> pa.Table:
    """A ``{"key", "value"}`` JSON-lines file as an Arrow table ``key: string, value: list<string>`` (checked like
    :func:`read_key_values`: one-line errors, unique keys; memoised per file while it is unchanged)."""
    path = Path(path)
    if not path.is_file():
        raise SciprobeError(f"{path.name} not found in {path.parent}")
    return _key_value_table(str(path), file_key(path))


def read_author_publications(path: Path | str) -> Iterable[tuple[str, list[str]]]:
    """Stream ``author_publications.jsonl`` (``{"key": author_id, "value": [corpus_id, ...]}`` per line)."""
    table = read_key_value_table(path)
    yield from zip(table["key"].to_pylist(), table["value"].to_pylist())
