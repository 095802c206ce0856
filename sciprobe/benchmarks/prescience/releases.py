"""Which PreScience release a source folder holds, and the folder the readers read for it (issue 25).

Three published layouts (spec ``prescience.md`` "Three generations"):

- ``paper_parquet`` -- HF ``allenai/prescience`` (arXiv v1, 4 tasks): ``train.parquet``, ``test.parquet`` in the
  schema of upstream ``dataset/huggingface/prepare_for_upload.py`` (no ``topics`` column) and
  ``author_publications.jsonl`` / ``author_disambiguation.jsonl``.
- ``seven_task`` -- this paper version's release (anonymised HF ``PreSciencePreScience/PreScience``): the same
  files, the Parquet with a ``topics`` column (T6/T7 labels).
- ``two_domain`` -- the later two-domain archive (HF ``pscience674/ds-7f93``): ``<domain>/{train,test}/
  all_papers.json[.gz]`` (upstream ``utils.save_json``: a JSON list, or ``{"metadata", "data"}``) and
  ``sd2publications.json[.gz]`` per split; topics on the targets of PreScience-AI; no author disambiguation file.
  It is converted once into the Parquet layout (a cache folder keyed by the files' checksums) and read from there.

Topic labels may also be supplied beside a Parquet release as upstream's ``dataset/corpus/assign_topics.py`` output
(``topic_labels*.jsonl``, one ``{"corpus_id", "topics"}`` per line); they fill the ``topics`` of the targets.
Without any labels, T6/T7 are reported unavailable (:func:`release_check`) instead of being written empty.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sciprobe.benchmarks.prescience.schema import PAPER_SCHEMA, TEST_WINDOW, TRAIN_WINDOW
from sciprobe.core.declaration import ReleaseCheck
from sciprobe.core.errors import SciprobeError

SPLITS = ("train", "test")
TOPIC_CONFIGS = ("topic_trends", "topic_pair_trends")
TOPIC_LABEL_GLOB = "topic_labels*.jsonl"
DEFAULT_DOMAIN = "prescience-ai"
SEVEN_TASK_REPO = "PreSciencePreScience/PreScience"
HOW_TO_SUPPLY_TOPICS = (f"see the 7-task release {SEVEN_TASK_REPO}, or put upstream's topic labels "
                        f"({TOPIC_LABEL_GLOB}, one {{\"corpus_id\", \"topics\"}} per line, written by "
                        "dataset/corpus/assign_topics.py) beside the Parquet files and build from that folder")
VARIANT_NAMES = {
    "paper_parquet": "allenai/prescience paper Parquet (arXiv v1, 4 tasks; no topic labels)",
    "seven_task": f"7-task release ({SEVEN_TASK_REPO}: Parquet with a topics column)",
    "two_domain": "two-domain archive (<domain>/<split>/all_papers.json.gz; PreScience-AI / -Quantum)",
}


@dataclass(frozen=True)
class Release:
    """A source folder as the readers see it: the variant, the Parquet-layout folder to read, what it lacks."""

    variant: str
    folder: Path
    has_topics: bool
    notes: tuple[str, ...] = ()
    unavailable: Mapping[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------- detection

def _json_file(folder: Path, stem: str) -> Path | None:
    for name in (f"{stem}.json", f"{stem}.json.gz"):
        if (folder / name).is_file():
            return folder / name
    return None


def domains(source: Path) -> list[str]:
    """The domain folders of a two-domain archive (each with train/ and test/ corpora)."""
    return sorted(p.name for p in Path(source).iterdir()
                  if p.is_dir() and all(_json_file(p / s, "all_papers") for s in SPLITS)) \
        if Path(source).is_dir() else []


def is_release(source: Path) -> bool:
    """``source`` holds the split corpora of some published layout."""
    source = Path(source)
    return all((source / f"{s}.parquet").is_file() for s in SPLITS) or bool(domains(source))


def variant_of(source: Path) -> str:
    source = Path(source)
    if all((source / f"{s}.parquet").is_file() for s in SPLITS):
        return "seven_task" if all("topics" in pq.read_schema(source / f"{s}.parquet").names for s in SPLITS) \
            else "paper_parquet"
    if domains(source):
        return "two_domain"
    raise SciprobeError(f"{source} holds no PreScience release: expected train.parquet + test.parquet "
                        "(allenai/prescience, the 7-task release) or <domain>/{train,test}/all_papers.json.gz "
                        "(the two-domain archive)")


# ---------------------------------------------------------------- the two-domain archive -> Parquet layout

def read_upstream_json(path: Path) -> Any:
    """A file written by upstream ``utils.save_json`` (plain or gzipped): its ``data`` when wrapped."""
    try:
        raw = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
        contents = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SciprobeError(f"{path.name}: not readable JSON ({str(exc).splitlines()[0]})") from None
    if isinstance(contents, dict) and "data" in contents:
        return contents["data"]
    return contents


def _checksum(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode())
        with open(path, "rb") as fh:
            digest.update(hashlib.file_digest(fh, "sha256").digest())
    return digest.hexdigest()[:20]


def _papers_table(papers: Any, where: str) -> pa.Table:
    if not isinstance(papers, list) or not all(isinstance(p, dict) for p in papers):
        raise SciprobeError(f"{where} must hold a list of paper records")
    try:
        return pa.Table.from_pylist(papers, schema=PAPER_SCHEMA)  # fields the schema lacks are left out
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise SciprobeError(f"{where}: a paper field has another type than the release schema "
                            f"({str(exc).splitlines()[0]})") from None


def _convert_domain(domain_dir: Path, out: Path) -> None:
    """``all_papers`` of each split -> ``<split>.parquet``; the split author maps merged (test over train, as
    upstream ``prepare_for_upload.py`` merges them) -> ``author_publications.jsonl``."""
    out.mkdir(parents=True, exist_ok=True)
    publications: dict[str, Any] = {}
    for split in SPLITS:
        papers_file = _json_file(domain_dir / split, "all_papers")
        assert papers_file is not None  # domains() checked it
        pq.write_table(_papers_table(read_upstream_json(papers_file), f"{domain_dir.name}/{split}/{papers_file.name}"),
                       out / f"{split}.parquet")
        pubs_file = _json_file(domain_dir / split, "sd2publications")
        if pubs_file is not None:
            pubs = read_upstream_json(pubs_file)
            if not isinstance(pubs, dict):
                raise SciprobeError(f"{domain_dir.name}/{split}/{pubs_file.name} must map author ids to corpus ids")
            publications.update(pubs)
    if publications:
        with open(out / "author_publications.jsonl", "w", encoding="utf-8") as fh:
            for key, value in publications.items():
                fh.write(json.dumps({"key": key, "value": value}) + "\n")


def _domain_of(source: Path, options: Mapping[str, Any]) -> str:
    found = domains(source)
    wanted = options.get("domain") or (DEFAULT_DOMAIN if DEFAULT_DOMAIN in found or len(found) != 1 else found[0])
    if wanted not in found:
        raise SciprobeError(f"domain {wanted!r} is not in {source} (it has {', '.join(found)}); "
                            "set the reader option domain")
    return wanted


def converted_folder(source: Path, domain: str) -> Path:
    """The Parquet-layout copy of one domain of a two-domain archive (made once per set of file checksums)."""
    from sciprobe.core.paths import sciprobe_home

    files = sorted(p for p in (Path(source) / domain).rglob("*") if p.is_file())
    out = sciprobe_home() / "cache" / "prescience-releases" / f"{domain}-{_checksum(files)}"
    if not (out / "test.parquet").is_file():
        staging = out.with_name(out.name + ".partial")
        _convert_domain(Path(source) / domain, staging)
        if not out.exists():
            staging.replace(out)
    return out


# ---------------------------------------------------------------- supplied topic labels

def _label_files(source: Path) -> list[Path]:
    return sorted(Path(source).glob(TOPIC_LABEL_GLOB))


def read_topic_labels(paths: list[Path]) -> dict[str, list[str]]:
    """``{corpus_id: topics}`` from ``assign_topics.py`` output (later files override earlier ones)."""
    labels: dict[str, list[str]] = {}
    for path in paths:
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                corpus_id, topics = record["corpus_id"], record["topics"]
            except (ValueError, KeyError, TypeError):
                raise SciprobeError(f"{path.name} line {number}: expected {{\"corpus_id\", \"topics\"}}") from None
            if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
                raise SciprobeError(f"{path.name} line {number}: topics must be a list of strings")
            labels[str(corpus_id)] = topics
    return labels


def _with_labels(table: pa.Table, labels: Mapping[str, list[str]]) -> pa.Table:
    """The targets' ``topics`` from the labels (as upstream ``add_topics.py`` attaches them: targets only)."""
    is_target = [bool(roles) and "target" in roles for roles in table["roles"].to_pylist()]
    topics = [labels.get(cid) if target else None
              for cid, target in zip(table["corpus_id"].to_pylist(), is_target)]
    column = pa.array(topics, pa.list_(pa.string()))
    if "topics" in table.schema.names:
        return table.set_column(table.schema.get_field_index("topics"), "topics", column)
    return table.append_column("topics", column)


def _label_file(source: Path, out: Path, labels: Mapping[str, list[str]], batch_rows: int = 8192) -> None:
    """One corpus file with the labels attached, a batch at a time (a release corpus is ~465K papers)."""
    writer = None
    try:
        for batch in pq.ParquetFile(source).iter_batches(batch_size=batch_rows, use_threads=False):
            table = _with_labels(pa.Table.from_batches([batch]), labels)
            writer = writer or pq.ParquetWriter(out, table.schema)
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()


def labelled_folder(folder: Path, label_files: list[Path]) -> Path:
    """A copy of a Parquet release with the supplied topic labels attached (made once per set of checksums)."""
    from sciprobe.core.paths import sciprobe_home

    inputs = [folder / f"{s}.parquet" for s in SPLITS] + label_files
    out = sciprobe_home() / "cache" / "prescience-releases" / f"labelled-{_checksum(inputs)}"
    if not (out / "test.parquet").is_file():
        labels = read_topic_labels(label_files)
        staging = out.with_name(out.name + ".partial")
        staging.mkdir(parents=True, exist_ok=True)
        for split in SPLITS:
            _label_file(folder / f"{split}.parquet", staging / f"{split}.parquet", labels)
        for name in ("author_publications.jsonl", "author_disambiguation.jsonl"):
            if (folder / name).is_file():
                (staging / name).write_bytes((folder / name).read_bytes())
        if not out.exists():
            staging.replace(out)
    return out


# ---------------------------------------------------------------- what the release holds

def _has_topic_labels(folder: Path) -> bool:
    """Some target of the test corpus has a non-empty ``topics`` list."""
    path = folder / "test.parquet"
    if "topics" not in pq.read_schema(path).names:
        return False
    topics = pq.read_table(path, columns=["topics"])["topics"]
    return bool(pc.max(pc.fill_null(pc.list_value_length(topics), 0)).as_py() or 0)


def _outside_windows(folder: Path) -> tuple[int, int]:
    """Targets of the two corpora whose date lies outside this benchmark's train/test windows, and all targets."""
    outside = total = 0
    for split in SPLITS:
        table = pq.read_table(folder / f"{split}.parquet", columns=["date", "roles"]).to_pylist()
        for row in table:
            if row["roles"] and "target" in row["roles"]:
                total += 1
                outside += not (TRAIN_WINDOW[0] <= (row["date"] or "") < TEST_WINDOW[1])
    return outside, total


def resolve(source: Path, options: Mapping[str, Any] | None = None) -> Release:
    """The release in ``source`` and the Parquet-layout folder its configs are read from."""
    source, options = Path(source), options or {}
    return _resolve(str(source.resolve()), options.get("domain") or "", _stamp(source))


def _stamp(source: Path) -> tuple:
    """Changes when any file of the folder does (so a memoised resolution is never stale)."""
    return tuple(sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns)
                        for p in Path(source).rglob("*") if p.is_file()))


@functools.lru_cache(maxsize=4)
def _resolve(source_text: str, domain: str, stamp: tuple) -> Release:
    source = Path(source_text)
    variant = variant_of(source)
    notes: list[str] = []
    unavailable: dict[str, str] = {}
    folder = source
    if variant == "two_domain":
        chosen = _domain_of(source, {"domain": domain})
        folder = converted_folder(source, chosen)
        outside, total = _outside_windows(folder)
        notes.append(f"two-domain archive, domain {chosen} (of {', '.join(domains(source))}); task configs use this "
                     f"benchmark's windows (train targets from {TRAIN_WINDOW[0]}, test to {TEST_WINDOW[1]}): "
                     f"{outside} of {total} targets fall outside them")
        unavailable["author_disambiguation"] = "the two-domain archive has no author disambiguation file (sd2og)"
    labels = _label_files(source)
    if labels and variant != "two_domain":
        folder = labelled_folder(source, labels)
        notes.append(f"topic labels supplied by {', '.join(p.name for p in labels)}")
    has_topics = _has_topic_labels(folder)
    if not has_topics:
        for config in TOPIC_CONFIGS:
            unavailable[config] = f"no topic labels in this release; {HOW_TO_SUPPLY_TOPICS}"
    return Release(variant, folder, has_topics, (f"release: {VARIANT_NAMES[variant]}", *notes), unavailable)


def release_check(source: Path, options: Mapping[str, Any]) -> ReleaseCheck:
    release = resolve(source, options)
    return ReleaseCheck(release.variant, release.notes, dict(release.unavailable))
