"""Declaration -> Hugging Face hub layout (Parquet shards + README with ``configs:``/``dataset_info:``).

datasets 5 cannot run loading scripts (shared/spec/ecosystem.md §2), so a ``GeneratorBasedBuilder`` derived
from the benchmark declaration is used only to *produce* the data; users read the result with plain
``load_dataset(DIR_OR_HUB_ID, CONFIG)``. The output folder appears whole or not at all: everything is written
to a temporary sibling and renamed into place.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciprobe import __version__
from sciprobe.cutoffs import CutoffReport, dated_after, filter_rows
from sciprobe.declaration import Benchmark
from sciprobe.errors import SciprobeError

BUILD_INFO_FILE = "sciprobe_build.json"


class EmptyAfterCutoff(Exception):
    """Raised inside the builder when the cutoff leaves a config's test split empty."""


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.replace("-", "_").split("_"))


def builder_class(benchmark: Benchmark) -> type:
    """A ``datasets.GeneratorBasedBuilder`` subclass for one benchmark declaration.

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

    class Builder(datasets.GeneratorBasedBuilder):
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
            generators = []
            self.rows_before_cutoff: dict[str, int] = {}
            filter_test = getattr(benchmark.config(self.config.name), "cutoff_filter", True)
            for split, rows in benchmark.read_source(Path(self.config.source), self.config.name, self.config.options):
                if not isinstance(rows, list):
                    # A streaming reader yields a row iterator: rows are counted and cutoff-filtered while they
                    # are written, so a large corpus never sits in memory.
                    cutoff = self.config.cutoff if split == "test" and filter_test else None
                    generators.append(datasets.SplitGenerator(
                        name=split, gen_kwargs={"rows": rows, "split": split, "cutoff": cutoff}))
                    continue
                self.rows_before_cutoff[split] = len(rows)
                if split == "test" and filter_test:
                    rows = filter_rows(rows, self.config.cutoff)
                    if not rows:
                        raise EmptyAfterCutoff(self.config.name)
                generators.append(datasets.SplitGenerator(name=split, gen_kwargs={"rows": rows}))
            return generators

        def _generate_examples(self, rows: Any, split: str | None = None, cutoff: dt.date | None = None):
            if split is None:
                for index, row in enumerate(rows):
                    yield index, row
                return
            bound = cutoff.isoformat() if cutoff else None
            seen = kept = 0
            for row in rows:
                seen += 1
                if bound is not None and not dated_after(row.get("date"), bound):
                    continue
                yield kept, row
                kept += 1
            self.rows_before_cutoff[split] = seen
            if bound is not None and not kept:
                raise EmptyAfterCutoff(self.config.name)

    Builder.__name__ = Builder.__qualname__ = f"{_camel(benchmark.name)}Builder"
    Config.__name__ = Config.__qualname__ = f"{_camel(benchmark.name)}Config"
    return Builder


def file_fingerprint(paths: list[Path], root: Path) -> str:
    """sha256 over (relative path, content hash) of every file, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def source_fingerprint(source: Path) -> str:
    files = [p for p in source.rglob("*") if p.is_file() and not p.name.startswith(".")]
    if not files:
        raise SciprobeError(f"source folder {source} is empty or missing")
    return file_fingerprint(files, source)


def dataset_fingerprint(root: Path) -> str:
    """The fingerprint results record: all Parquet shards of a built dataset folder."""
    files = list(Path(root).rglob("*.parquet"))
    if not files:
        raise SciprobeError(f"{root} holds no Parquet shards; build it with `sciprobe build`")
    return file_fingerprint(files, Path(root))


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
    sciprobe_version: str = __version__
    sample: bool = False  # built from the benchmark's bundled synthetic sample (never published as the benchmark)

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
    from sciprobe.cards import dataset_card_body

    DatasetCard("---\n" + card.to_yaml() + "\n---\n\n" + dataset_card_body(benchmark, report)).save(root / "README.md")


def build_benchmark(benchmark: Benchmark, source: Path, out_dir: Path, *, configs: list[str] | None = None,
                    cutoff: dt.date | None = None, cutoff_source: str = "none",
                    options: dict[str, Any] | None = None, overwrite: bool = False,
                    source_label: str | None = None, source_revision: str | None = None) -> BuildReport:
    """Write the hub layout of ``benchmark`` built from ``source`` into ``out_dir`` (atomically)."""
    import datasets

    source, out_dir = Path(source), Path(out_dir)
    names = configs or list(benchmark.configs)
    for name in names:
        benchmark.config(name)
    if out_dir.exists() and not overwrite:
        raise SciprobeError(f"output folder {out_dir} exists; pass --overwrite to replace it")
    report = BuildReport(benchmark.name, benchmark.version, str(out_dir),
                         source_label or source_label_of(benchmark, source), source_fingerprint(source),
                         {**benchmark.source_options, **(options or {})},
                         {"cutoff": cutoff.isoformat() if cutoff else None, "source": cutoff_source})
    report.source_revision = source_revision
    report.sample = is_sample_source(benchmark, source)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    staging.chmod(0o755)  # mkdtemp makes it private; the result is an ordinary folder
    try:
        infos, before = {}, {}
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
                if not isinstance(exc.__cause__, EmptyAfterCutoff):
                    raise
                report.skipped.append(name)
                continue
            split_infos = {}
            for split in builder.info.splits:
                ds = builder.as_dataset(split=split)
                (staging / name).mkdir(exist_ok=True)
                ds.to_parquet(str(staging / name / f"{split}-00000-of-00001.parquet"))
                split_infos[split] = len(ds)
            report.rows[name] = split_infos
            # configs without a `test` split (or exempt from the cutoff) report their rows as kept
            before[name] = builder.rows_before_cutoff.get("test", split_infos.get("test", sum(split_infos.values())))
            info = builder.info
            info.config_name = name
            infos[name] = info
        if not infos:
            raise SciprobeError(f"cutoff {report.cutoff['cutoff']} leaves no items in "
                                + ", ".join(f"{benchmark.name}:{n}" for n in names))
        report.cutoff["counts"] = {n: CutoffReport(report.cutoff["cutoff"], cutoff_source, before[n],
                                                   report.rows[n].get("test", before[n])).as_dict()
                                    for n in infos}
        shutil.rmtree(staging / ".cache", ignore_errors=True)
        _write_card(benchmark, staging, infos, report)
        (staging / BUILD_INFO_FILE).write_text(json.dumps(report.as_dict(), indent=2) + "\n", "utf-8")
        _replace_dir(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return report


def _replace_dir(staging: Path, out_dir: Path) -> None:
    if out_dir.exists():
        backup = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
        out_dir.rename(backup)
        staging.rename(out_dir)
        shutil.rmtree(backup, ignore_errors=True)
    else:
        staging.rename(out_dir)
