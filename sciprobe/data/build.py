"""Declaration -> Hugging Face hub layout (Parquet shards + README with ``configs:``/``dataset_info:``).

datasets 5 cannot run loading scripts (shared/spec/ecosystem.md §2), so a ``datasets.ArrowBasedBuilder``
derived from the benchmark declaration is used only to *produce* the data; users read the result with plain
``load_dataset(DIR_OR_HUB_ID, CONFIG)``. The output folder appears whole or not at all: everything is written
to a temporary sibling and renamed into place.

Rows reach the builder as Arrow tables: a reader yields row dicts (encoded once, in batches, as ``datasets``
encodes examples) or Arrow tables / record batches of the declared schema (written as they are, no Python
objects per row). Dates are checked and the temporal cutoff applied with Arrow compute on parsed dates.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciprobe import __version__
from sciprobe.data.cutoffs import CutoffReport, after_cutoff_mask, parsed_date_column
from sciprobe.core.declaration import Benchmark
from sciprobe.core.errors import SciprobeError
from sciprobe.data.release_files import shown

BUILD_INFO_FILE = "sciprobe_build.json"
#: rows per Arrow record batch, as ``datasets`` writes examples (``config.DEFAULT_MAX_BATCH_SIZE``): tables are
#: handed over in multiples of it so the Arrow files, hence the Parquet shards, are the same however rows came
BATCH_ROWS = 1000


class EmptyAfterCutoff(Exception):
    """Raised inside the builder when the cutoff leaves a config's test split empty."""


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.replace("-", "_").split("_"))


def _encode_rows(rows: list[dict], features: Any) -> Any:
    """Row dicts -> one Arrow table, exactly as ``datasets``' ArrowWriter encodes examples."""
    import pyarrow as pa
    from datasets.arrow_writer import OptimizedTypedSequence

    encoded = [features.encode_example(row) for row in rows]
    arrays = [pa.array(OptimizedTypedSequence([row[col] for row in encoded], type=features[col], col=col))
              for col in features]
    return pa.Table.from_arrays(arrays, schema=features.arrow_schema)


def _as_table(chunk: Any, features: Any) -> Any:
    import pyarrow as pa

    table = pa.Table.from_batches([chunk]) if isinstance(chunk, pa.RecordBatch) else chunk
    schema = features.arrow_schema
    if table.schema.names != schema.names or table.schema.types != schema.types:
        raise TypeError(f"reader yielded Arrow columns {table.schema} instead of the declared {schema}")
    return table.replace_schema_metadata(schema.metadata)


def arrow_tables(rows: Any, features: Any) -> Iterator[Any]:
    """A reader's rows (row dicts, or Arrow tables / record batches) as Arrow tables of the declared schema."""
    import pyarrow as pa

    pending: list[dict] = []
    for item in rows:
        if isinstance(item, (pa.Table, pa.RecordBatch)):
            if pending:
                yield _encode_rows(pending, features)
                pending = []
            yield _as_table(item, features)
            continue
        pending.append(item)
        if len(pending) == BATCH_ROWS:
            yield _encode_rows(pending, features)
            pending = []
    if pending:
        yield _encode_rows(pending, features)


def _fresh_batches(table: Any) -> Iterator[Any]:
    """``table`` as tables of ``BATCH_ROWS`` rows with freshly laid-out buffers (an Arrow IPC round trip drops
    the validity bitmaps and buffer ranges a slice of a larger array keeps), so their sizes are those of
    batches encoded from rows."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        for start in range(0, table.num_rows, BATCH_ROWS):
            piece = table.slice(start, BATCH_ROWS)
            # one record batch per piece: only a piece that spans two chunks is copied to join them
            writer.write_table(piece.combine_chunks() if piece.column(0).num_chunks > 1 else piece)
    for batch in pa.ipc.open_stream(sink.getvalue()):
        yield pa.Table.from_batches([batch])


def record_batches(tables: Iterable[Any], min_rows: int = BATCH_ROWS) -> Iterator[Any]:
    """Re-cut a stream of tables into tables of exactly ``BATCH_ROWS`` rows (the last one: the rest), as
    ``datasets`` writes examples: the Arrow files, the Parquet shards and the sizes in the card come out the same
    whether a reader yields rows or Arrow tables."""
    import pyarrow as pa

    pending: list[Any] = []
    size = 0
    for table in tables:
        pending.append(table)
        size += table.num_rows
        if size >= min_rows:
            whole = pa.concat_tables(pending)
            cut = size - size % BATCH_ROWS
            yield from _fresh_batches(whole.slice(0, cut))
            pending, size = ([whole.slice(cut)], size - cut) if size > cut else ([], 0)
    if size:
        yield from _fresh_batches(pa.concat_tables(pending))


@dataclass
class SplitCounter:
    """Rows of one split before the cutoff (the builder reports them)."""

    rows: int = 0


def split_tables(rows: Any, features: Any, cutoff: dt.date | None, where: str, counter: SplitCounter
                 ) -> Iterator[Any]:
    """Arrow tables of one split: dates checked (ISO days or null), ``date > cutoff`` kept when a cutoff is
    given, re-cut into record batches."""
    import pyarrow as pa

    def filtered() -> Iterator[Any]:
        for table in arrow_tables(rows, features):
            counter.rows += table.num_rows
            if "date" in table.column_names:
                if cutoff is not None:
                    table = table.filter(after_cutoff_mask(table["date"], cutoff, where))
                else:
                    parsed_date_column(table["date"], where)
            if table.num_rows:
                yield table

    yield from record_batches(filtered())
    pa.default_memory_pool().release_unused()  # a finished split's working memory goes back to the system


def builder_class(benchmark: Benchmark) -> type:
    """A ``datasets.ArrowBasedBuilder`` subclass for one benchmark declaration.

    Config kwargs: ``source`` (folder of release files), ``cutoff`` (``datetime.date`` or None) and
    ``options`` (the benchmark's reader options, e.g. ``normalize_whitespace``).
    """
    import datasets

    class Config(datasets.BuilderConfig):
        def __init__(self, *, source: str | None = None, cutoff: dt.date | None = None,
                     options: dict[str, Any] | None = None, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.source = source
            self.cutoff = cutoff
            self.options = {**benchmark.source_options, **(options or {})}

    class Builder(datasets.ArrowBasedBuilder):
        BUILDER_CONFIG_CLASS = Config
        BUILDER_CONFIGS = [Config(name=c.name, version=datasets.Version(benchmark.version), description=c.description)
                           for c in benchmark.configs.values()]
        DEFAULT_CONFIG_NAME = next(iter(benchmark.configs))

        def _info(self) -> datasets.DatasetInfo:
            spec = benchmark.config(self.config.name)
            return datasets.DatasetInfo(description=spec.description, features=spec.features(),
                                        citation=benchmark.citation, homepage=benchmark.homepage,
                                        license=benchmark.license)

        def _split_generators(self, dl_manager: Any) -> list:
            if not self.config.source:
                raise SciprobeError(f"{benchmark.name} builder needs source=<folder of release files>")
            self.rows_before_cutoff: dict[str, int] = {}
            spec = benchmark.config(self.config.name)
            # every split of items obeys the cutoff (test, its samples, train, dev); context splits stay whole
            return [datasets.SplitGenerator(name=split, gen_kwargs={
                        "rows": rows, "split": split,
                        "cutoff": self.config.cutoff if spec.cutoff_applies(split) else None})
                    for split, rows in benchmark.read_source(Path(self.config.source), self.config.name,
                                                             self.config.options)]

        def _generate_tables(self, rows: Any, split: str, cutoff: dt.date | None):
            counter = SplitCounter()
            kept = 0
            where = f"{benchmark.name}:{self.config.name} {split}"
            for index, table in enumerate(split_tables(rows, self.info.features, cutoff, where, counter)):
                kept += table.num_rows
                yield index, table
            self.rows_before_cutoff[split] = counter.rows
            # the evaluated split left empty leaves nothing to evaluate: the config is skipped; any other split
            # of items may end up empty (a train window before the cutoff) and is written with no rows
            if cutoff is not None and split == "test" and counter.rows and not kept:
                raise EmptyAfterCutoff(self.config.name)

    Builder.__name__ = Builder.__qualname__ = f"{_camel(benchmark.name)}Builder"
    Config.__name__ = Config.__qualname__ = f"{_camel(benchmark.name)}Config"
    return Builder


def file_fingerprint(paths: list[Path], root: Path) -> str:
    """sha256 over (relative path, content hash) of every file, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(str(path.relative_to(root)).encode())
        with open(path, "rb") as fh:  # streamed: a release file is never read into memory whole
            digest.update(hashlib.file_digest(fh, "sha256").digest())
    return digest.hexdigest()


def source_fingerprint(source: Path) -> str:
    files = [p for p in source.rglob("*") if p.is_file() and not p.name.startswith(".")]
    if not files:
        raise SciprobeError(f"source folder {source} is empty or missing")
    return file_fingerprint(files, source)


def dataset_fingerprint(root: Path) -> str:
    """The fingerprint results record: all Parquet shards of a built dataset folder. Hashed once per state of the
    shards in a process (a leaderboard checks the same pinned folder several times for every submission)."""
    files = list(Path(root).rglob("*.parquet"))
    if not files:
        raise SciprobeError(f"{root} holds no Parquet shards; build it with `sciprobe build`")
    state = _shards_state(Path(root), files)
    found = _FINGERPRINTS.get(state)
    if found is None:
        found = file_fingerprint(files, Path(root))
        if len(_FINGERPRINTS) >= _MAX_FINGERPRINTS:
            _FINGERPRINTS.clear()
        _FINGERPRINTS[state] = found
    return found


# (folder, every shard's path, size, mtime and inode) -> its fingerprint; a rewritten shard is a new state
_FINGERPRINTS: dict[tuple, str] = {}
_MAX_FINGERPRINTS = 256


def _shards_state(root: Path, files: list[Path]) -> tuple:
    stats = []
    for path in sorted(files):
        info = path.stat()
        stats.append((str(path.relative_to(root)), info.st_size, info.st_mtime_ns, info.st_ino))
    return (str(root.resolve()), tuple(stats))


@dataclass
class BuildReport:
    benchmark: str
    version: str
    out_dir: str
    source: str
    source_fingerprint: str
    options: dict[str, Any]
    cutoff: dict[str, Any] | None
    rows: dict[str, dict[str, int]] = field(default_factory=dict)
    source_revision: str | None = None  # hub commit sha when built from a hub dataset
    skipped: list[str] = field(default_factory=list)  # configs the cutoff left empty
    # splits with no rows (a train window before the cutoff), not written: datasets cannot load an empty split
    empty_splits: dict[str, list[str]] = field(default_factory=dict)
    sciprobe_version: str = __version__
    sample: bool = False  # built from the benchmark's bundled synthetic sample (never published as the benchmark)
    # configs not built because the source lacks their declared release files ({config: [file, ...]})
    missing_files: dict[str, list[str]] = field(default_factory=dict)
    # each built config's declared paper count beside the rows read ({config: {split, declared, found, source,
    # matches}}, sciprobe.data.doctor.CountCheck)
    paper_counts: dict[str, dict[str, Any]] = field(default_factory=dict)
    # the release variant the source holds, notes on it and the configs it cannot give ({config: reason}), from the
    # benchmark's release_check hook (empty without one)
    release: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """What ``sciprobe_build.json`` holds: everything but the output folder (a local path never goes into a
        file that may be published)."""
        return {k: v for k, v in self.__dict__.items() if k != "out_dir"}


def is_sample_source(benchmark: Benchmark, source: Path) -> bool:
    """True when ``source`` is the benchmark's bundled sample: that folder, or a copy of its files (same checksums)."""
    if benchmark.sample_source is None:
        return False
    try:
        if Path(source).resolve() == Path(benchmark.sample_source).resolve():
            return True
        return Path(source).is_dir() and \
            source_fingerprint(Path(source)) == source_fingerprint(Path(benchmark.sample_source))
    except (OSError, SciprobeError):
        return False


def source_label_of(benchmark: Benchmark, source: Path) -> str:
    """How a build names its source without a local path: ``sample:<bench>`` or ``folder:<name>``."""
    return f"sample:{benchmark.name}" if is_sample_source(benchmark, source) else f"folder:{Path(source).name}"


def read_build_info(root: Path) -> dict[str, Any]:
    """A built folder's ``sciprobe_build.json`` ({} when there is none or it is unreadable)."""
    try:
        info = json.loads((Path(root) / BUILD_INFO_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def _write_card(benchmark: Benchmark, root: Path, infos: dict, report: BuildReport) -> None:
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard, DatasetCardData

    sample = ["synthetic-sample"] if report.sample else []
    card = DatasetCardData(license=benchmark.license, language=["en"],
                           pretty_name=benchmark.title + (" (synthetic sample)" if report.sample else ""),
                           tags=["science-of-science", "sciprobe", benchmark.name, *sample])
    configs = {
        name: {"data_files": [{"split": split, "path": f"{name}/{split}-*"} for split in infos[name].splits],
               **({"default": True} if i == 0 else {})}
        for i, name in enumerate(infos)
    }
    MetadataConfigs(configs).to_dataset_card_data(card)
    DatasetInfosDict(infos).to_dataset_card_data(card)
    from sciprobe.data.cards import dataset_card_body

    DatasetCard("---\n" + card.to_yaml() + "\n---\n\n" + dataset_card_body(benchmark, report)).save(root / "README.md")


def build_benchmark(benchmark: Benchmark, source: Path, out_dir: Path, *, configs: list[str] | None = None,
                    cutoff: dt.date | None = None, cutoff_source: str = "none",
                    options: dict[str, Any] | None = None, overwrite: bool = False,
                    source_label: str | None = None, source_revision: str | None = None) -> BuildReport:
    """Write the hub layout of ``benchmark`` built from ``source`` into ``out_dir`` (atomically)."""
    import datasets

    from sciprobe.data.doctor import missing_files, paper_count_comparison, release_check_of

    source, out_dir = Path(source), Path(out_dir)
    names = configs or list(benchmark.configs)
    absent: dict[str, list[str]] = {}
    for name in names:
        benchmark.config(name)
        lacking = missing_files(benchmark, source, name)
        if lacking and configs:  # asked for by name: the build cannot give it
            raise SciprobeError(f"{benchmark.name}:{name} needs {', '.join(lacking)}, which {source} does not hold")
        if lacking:
            absent[name] = lacking
    names = [n for n in names if n not in absent]
    release = release_check_of(benchmark, source, {**benchmark.source_options, **(options or {})})
    for name in names:
        reason = release.unavailable.get(name) if release else None
        if reason and configs:
            raise SciprobeError(f"{benchmark.name}:{name}: {reason}")
    unavailable = {n: release.unavailable[n] for n in names if release and n in release.unavailable}
    names = [n for n in names if n not in unavailable]
    if out_dir.exists() and not overwrite:
        raise SciprobeError(f"output folder {out_dir} exists; pass --overwrite to replace it")
    report = BuildReport(benchmark.name, benchmark.version, str(out_dir),
                         source_label or source_label_of(benchmark, source), source_fingerprint(source),
                         {**benchmark.source_options, **(options or {})},
                         {"cutoff": cutoff.isoformat() if cutoff else None, "source": cutoff_source})
    report.source_revision = source_revision
    report.sample = is_sample_source(benchmark, source)
    report.missing_files = absent
    if release is not None:
        report.release = {"variant": release.variant, "notes": list(release.notes), "unavailable": unavailable}
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    staging.chmod(0o755)  # mkdtemp makes it private; the result is an ordinary folder
    try:
        infos, before, split_counts = {}, {}, {}
        builder_cls = builder_class(benchmark)
        datasets.disable_progress_bars()
        for name in names:
            builder = builder_cls(config_name=name, dataset_name=benchmark.name, cache_dir=str(staging / ".cache"),
                                  source=str(source), cutoff=cutoff, options=options)
            try:
                builder.download_and_prepare()
            except EmptyAfterCutoff:
                report.skipped.append(name)
                continue
            except datasets.exceptions.DatasetGenerationError as exc:  # raised while streaming rows
                if isinstance(exc.__cause__, SciprobeError):
                    raise exc.__cause__ from None
                if not isinstance(exc.__cause__, EmptyAfterCutoff):
                    raise
                report.skipped.append(name)
                continue
            split_infos = {}
            id_field = benchmark.config(name).id_field
            for split in list(builder.info.splits):
                if builder.info.splits[split].num_examples == 0:  # e.g. a train window before the cutoff: not
                    del builder.info.splits[split]                # written (datasets cannot load an empty split)
                    report.empty_splits.setdefault(name, []).append(split)
                    split_infos[split] = 0
                    continue
                ds = builder.as_dataset(split=split)
                check_unique_column(ds, id_field, f"{benchmark.name}:{name} {split} (built from {report.source})")
                (staging / name).mkdir(exist_ok=True)
                ds.to_parquet(str(staging / name / f"{split}-00000-of-00001.parquet"))
                split_infos[split] = len(ds)
            if not any(split_infos.values()):  # every split empty: nothing to write, nothing to load
                report.skipped.append(name)
                continue
            split_counts[name] = _split_counts(benchmark.config(name), builder.rows_before_cutoff, split_infos)
            report.rows[name] = {split: n for split, n in split_infos.items() if n}
            # configs without a `test` split (or exempt from the cutoff) report their rows as kept
            before[name] = builder.rows_before_cutoff.get("test", split_infos.get("test", sum(split_infos.values())))
            info = builder.info
            info.config_name = name
            infos[name] = info
        if not infos:
            where = ", ".join(f"{benchmark.name}:{n}" for n in names)
            raise SciprobeError(f"cutoff {report.cutoff['cutoff']} leaves no items in {where}" if cutoff else
                                f"the release in {report.source} has no items for {where}")
        if not report.sample:  # the invented sample is small by design: nothing to compare
            report.paper_counts = paper_count_comparison(
                benchmark, {n: {s: c["n_items_before"] for s, c in split_counts[n].items()} for n in infos})
        report.cutoff["counts"] = {n: {**CutoffReport(report.cutoff["cutoff"], cutoff_source, before[n],
                                                      report.rows[n].get("test", before[n])).as_dict(),
                                       "splits": split_counts[n]}
                                    for n in infos}
        shutil.rmtree(staging / ".cache", ignore_errors=True)
        _write_card(benchmark, staging, infos, report)
        (staging / BUILD_INFO_FILE).write_text(json.dumps(report.as_dict(), indent=2) + "\n", "utf-8")
        _replace_dir(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return report


def _split_counts(spec: Any, before: dict[str, int], after: dict[str, int]) -> dict[str, dict[str, Any]]:
    """Per split: rows read, rows written, and whether the cutoff filtered it (a context split it keeps whole)."""
    return {split: {"n_items_before": before.get(split, kept), "n_items_after": kept,
                    "cutoff_applies": spec.cutoff_applies(split)}
            for split, kept in after.items()}


def check_unique_column(ds: Any, column: str, where: str) -> None:
    """Refuse a built split whose id column repeats a value (the safety net behind every reader's own check)."""
    if column not in ds.column_names or ds.num_rows == 0:
        return
    if ds.num_rows <= _PYTHON_UNIQUE_CHECK_ROWS:
        _check_unique_values(ds.data.column(column).to_pylist(), column, where)
        return
    import pyarrow.compute as pc

    counts = pc.value_counts(ds.data.column(column))
    repeated = counts.filter(pc.greater(counts.field("counts"), 1))
    if len(repeated):
        raise SciprobeError(f"duplicate {column} {shown(repeated[0]['values'].as_py())} in {where}")


#: Up to this many rows the id check is a Python set: ``pyarrow.compute`` loads pandas on first use (~0.3 s of
#: CPU), more than a set over this many ids costs, and a task's load (a dry run above all) should pay neither.
_PYTHON_UNIQUE_CHECK_ROWS = 100_000


def _check_unique_values(values: list[Any], column: str, where: str) -> None:
    seen: set[Any] = set()
    for value in values:
        if value in seen:
            raise SciprobeError(f"duplicate {column} {shown(value)} in {where}")
        seen.add(value)


def _replace_dir(staging: Path, out_dir: Path) -> None:
    if out_dir.exists():
        backup = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
        out_dir.rename(backup)
        staging.rename(out_dir)
        shutil.rmtree(backup, ignore_errors=True)
    else:
        staging.rename(out_dir)
