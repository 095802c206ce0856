"""``sciprobe doctor SOURCE``: check a release (a local folder, a git checkout or a hub id) against what the
benchmark declares, without building anything (issue 25).

What is checked comes from the declaration only (:class:`sciprobe.core.declaration.ReleaseLayout` for files, columns
and
types; :attr:`sciprobe.core.declaration.ConfigSpec.paper_count` for counts), so every benchmark gets the same command.
Every difference is one line naming the file or config and what differs: a missing or extra file, a missing or
undeclared column, a value of another type, a count other than the declared one. Counts are the rows the
benchmark's own source reader yields (what a build would write before any cutoff), so a count that differs is the
count a build would get.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from sciprobe.core.declaration import Benchmark, ReleaseCheck, ReleaseFile, ReleaseLayout
from sciprobe.core.errors import SciprobeError
from sciprobe.data.release_files import json_records, parse_json, shown

# Python types of loaded values -> the names a ReleaseFile's columns declare
_TYPE_NAMES = {type(None): "null", bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}


@dataclass(frozen=True)
class Difference:
    """One thing that differs from the declaration, shown as one line ``where: what``."""

    kind: str  # missing file | extra file | missing column | extra column | type | count | unreadable | revision
    where: str
    what: str

    def line(self) -> str:
        return f"{self.where}: {self.what}"


@dataclass(frozen=True)
class CountCheck:
    """The declared count of one config's split beside the rows the source reader yields (None: not readable)."""

    config: str
    split: str
    declared: int
    source: str
    found: int | None

    @property
    def matches(self) -> bool:
        return self.found == self.declared

    def as_dict(self) -> dict[str, Any]:
        return {"split": self.split, "declared": self.declared, "found": self.found, "source": self.source,
                "matches": self.matches}


@dataclass
class DoctorReport:
    benchmark: str
    source: str
    layout: str | None
    folder: Path
    differences: list[Difference] = field(default_factory=list)
    counts: list[CountCheck] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    # the benchmark's own account of the release (its release_check hook): variant, notes, configs it cannot give
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences


# ---------------------------------------------------------------- reading files of any released format

def value_type(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def load_records(path: Path) -> list[dict[str, Any]]:
    """The records of one release file: JSON list, JSON lines, either gzipped, or Parquet."""
    name = path.name
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        try:
            return pq.read_table(path).to_pylist()
        except Exception as exc:  # pyarrow raises several types for a damaged file
            raise SciprobeError(f"{name}: not a readable Parquet file ({str(exc).splitlines()[0]})") from None
    if name.endswith(".gz"):
        try:
            text = gzip.decompress(path.read_bytes()).decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SciprobeError(f"{name}: not gzipped UTF-8 text ({exc})") from None
        inner = name[:-3]
        if inner.endswith(".jsonl"):
            return [parse_json(line, f"{name} line {n}") for n, line in enumerate(text.splitlines(), 1)
                    if line.strip()]
        data = parse_json(text, name)
        if isinstance(data, dict) and isinstance(data.get("data"), list):  # upstream save_json(..., metadata)
            data = data["data"]
        if not isinstance(data, list):
            raise SciprobeError(f"{name} must hold a JSON list of records, not a {type(data).__name__}")
        return data
    return [record for _, record in json_records(path)]


def part_number(path: Path) -> int:
    numbers = re.findall(r"\d+", path.name.split(".")[0])
    return int(numbers[-1]) if numbers else 0


def files_of(folder: Path, spec: ReleaseFile) -> list[Path]:
    """The file(s) holding ``spec``'s records in ``folder``: the single file, else its parts in part order."""
    single = folder / spec.name
    if single.is_file():
        return [single]
    if spec.parts:
        return sorted(folder.glob(spec.parts), key=part_number)
    return []


# ---------------------------------------------------------------- columns and types

def column_differences(records: Sequence[Mapping[str, Any]], columns: Mapping[str, str],
                       where: str) -> list[Difference]:
    """One line per missing column, undeclared column and column holding values of an undeclared type."""
    out: list[Difference] = []
    n = len(records)
    seen: dict[str, int] = {}
    for record in records:
        for key in record:
            seen[key] = seen.get(key, 0) + 1
    for column, declared in columns.items():
        allowed = set(declared.split("|"))
        present = seen.get(column, 0)
        if present < n and "absent" not in allowed:
            out.append(Difference("missing column", where,
                                  f"column {column!r} ({declared}) missing in {n - present} of {n} records"))
        wrong: dict[str, list[int]] = {}
        for i, record in enumerate(records):
            if column in record and value_type(record[column]) not in allowed:
                wrong.setdefault(value_type(record[column]), []).append(i)
        for found, rows in wrong.items():
            out.append(Difference("type", where, f"column {column!r} is {found} in {len(rows)} of {n} records "
                                                 f"(declared {declared}; first: record {rows[0]}, "
                                                 f"{shown(records[rows[0]][column], 40)})"))
    for column in seen:
        if column not in columns:
            out.append(Difference("extra column", where,
                                  f"column {column!r} is not declared ({seen[column]} of {n} records have it)"))
    return out


# ---------------------------------------------------------------- layouts

def _declared_globs(layout: ReleaseLayout) -> list[str]:
    return [g for f in layout.files for g in (f.name, f.parts) if g] + list(layout.extra_files)


def _visible_files(folder: Path) -> list[str]:
    """Files under ``folder`` relative to it, hidden ones (``.git``, ``.DS_Store``, ``.cache``) left out."""
    out = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not any(part.startswith(".") for part in rel.parts):
            out.append(rel.as_posix())
    return out


def _matched(name: str, globs: Iterable[str]) -> bool:
    return any(Path(name).match(g) and name.count("/") == g.count("/") for g in globs)


def best_layout(benchmark: Benchmark, folder: Path) -> ReleaseLayout | None:
    """The declared layout most of whose files ``folder`` holds (the first declared on a tie); None: none declared."""
    if not benchmark.release_layouts:
        return None
    return max(benchmark.release_layouts,
               key=lambda layout: sum(bool(files_of(folder, f)) for f in layout.files))


def missing_files(benchmark: Benchmark, folder: Path, config: str) -> list[str]:
    """The declared files of ``config`` (best-matching layout) that ``folder`` lacks; [] when none are declared."""
    layout = best_layout(benchmark, folder)
    if layout is None:
        return []
    return [f.name for f in layout.files if config in f.configs and not files_of(folder, f)]


def file_differences(layout: ReleaseLayout, folder: Path, report: DoctorReport) -> None:
    for spec in layout.files:
        paths = files_of(folder, spec)
        if not paths:
            if not spec.optional:
                report.differences.append(Difference(
                    "missing file", spec.name,
                    f"missing (read for {', '.join(spec.configs)}" + (f"; or parts {spec.parts}" if spec.parts
                                                                       else "") + ")"))
            continue
        records: list[dict[str, Any]] = []
        try:
            for path in paths:
                records += load_records(path)
        except SciprobeError as exc:
            report.differences.append(Difference("unreadable", spec.name, str(exc)))
            continue
        report.files_read += [p.relative_to(folder).as_posix() for p in paths]
        where = spec.name if len(paths) == 1 else f"{spec.parts} ({len(paths)} parts)"
        report.differences += column_differences(records, spec.columns, where)
    globs = _declared_globs(layout)
    for name in _visible_files(folder):
        if not _matched(name, globs):
            report.differences.append(Difference("extra file", name, f"not a file of layout {layout.name}"))


# ---------------------------------------------------------------- counts

def count_rows(benchmark: Benchmark, folder: Path, config: str, split: str,
               options: Mapping[str, Any] | None = None) -> int:
    """The rows the source reader yields for ``config``'s ``split`` (no cutoff, nothing written)."""
    merged = {**benchmark.source_options, **(options or {})}
    total = 0
    for name, rows in benchmark.read_source(folder, config, merged):
        if name == split:
            # readers yield row dicts or Arrow tables (PreScience): a table counts its rows
            total += sum(getattr(item, "num_rows", 1) for item in rows)
    return total


def count_checks(benchmark: Benchmark, folder: Path, report: DoctorReport,
                 skip: Iterable[str] = ()) -> None:
    skipped = set(skip)
    for name, spec in benchmark.configs.items():
        if spec.paper_count is None or name in skipped:
            continue
        declared = spec.paper_count
        try:
            found: int | None = count_rows(benchmark, folder, name, declared.split)
        except SciprobeError as exc:
            found = None
            report.differences.append(Difference("unreadable", f"{benchmark.name}:{name}",
                                                 f"cannot count rows: {exc}"))
        check = CountCheck(name, declared.split, declared.rows, declared.source, found)
        report.counts.append(check)
        if found is not None and not check.matches:
            report.differences.append(Difference(
                "count", f"{benchmark.name}:{name}",
                f"{declared.split} has {found} rows, declared {declared.rows} ({declared.source})"))


def release_folder(layout: ReleaseLayout | None, folder: Path, root: str) -> Path:
    """A git checkout of the upstream repository holds the files under ``root`` (e.g. ``data``)."""
    if layout is not None and root and (folder / root).is_dir():
        inside = sum(bool(files_of(folder / root, f)) for f in layout.files)
        if inside > sum(bool(files_of(folder, f)) for f in layout.files):
            return folder / root
    return folder


def _git(folder: Path, *args: str) -> str | None:
    import subprocess

    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def checkout_commit(folder: Path, repo: str) -> str | None:
    """The commit a git checkout of GitHub ``repo`` (``folder`` or its parent) is at; None when ``folder`` is not
    in such a checkout (another repository, no git)."""
    for candidate in (folder, folder.parent):
        if (candidate / ".git").exists():
            origin = _git(candidate, "config", "--get", "remote.origin.url") or ""
            return _git(candidate, "rev-parse", "HEAD") if repo.lower() in origin.lower() else None
    return None


def revision_differences(benchmark: Benchmark, folder: Path) -> list[Difference]:
    """A git checkout of the upstream repository at another commit than the pinned one is a difference."""
    if benchmark.upstream is None:
        return []
    pinned, commit = benchmark.upstream.commit, checkout_commit(folder, benchmark.upstream.repo)
    if not pinned or not commit or commit == pinned:
        return []
    return [Difference("revision", "git checkout", f"at {commit[:12]}, the declared release is at {pinned[:12]} "
                                                   f"({benchmark.upstream.repo})")]


def doctor(benchmark: Benchmark, folder: Path, source_label: str = "") -> DoctorReport:
    """Check ``folder`` against ``benchmark``'s declared layouts and counts; nothing is built or written."""
    layout = best_layout(benchmark, folder)
    if layout is not None:  # a git checkout: the files are under the layout's root
        folder = release_folder(layout, folder, layout.root)
        layout = best_layout(benchmark, folder)
    report = DoctorReport(benchmark.name, source_label or str(folder), layout.name if layout else None, folder)
    if layout is not None and layout.root:  # only a checkout of the repository that holds the layout
        report.differences += revision_differences(benchmark, folder)
    if layout is not None:
        file_differences(layout, folder, report)
    # a config whose files are missing is already named; counting it would only repeat that
    lacking = {name for name in benchmark.configs if missing_files(benchmark, folder, name)}
    unavailable = release_notes(benchmark, folder, report)
    count_checks(benchmark, folder, report, skip=lacking | unavailable)
    return report


def release_check_of(benchmark: Benchmark, source: Path, options: dict[str, Any]) -> ReleaseCheck | None:
    """The benchmark's own account of the release in ``source`` (None when it declares no ``release_check``)."""
    if benchmark.release_check is None:
        return None
    from sciprobe.core.lazy import resolve

    return resolve(benchmark.release_check)(Path(source), options)


def release_notes(benchmark: Benchmark, folder: Path, report: DoctorReport) -> set[str]:
    """The release variant and the configs it cannot give (noted, not counted: a release without topic labels is
    a published variant, not a damaged one); the names of those configs."""
    try:
        release = release_check_of(benchmark, folder, dict(benchmark.source_options))
    except SciprobeError as exc:
        report.differences.append(Difference("unreadable", benchmark.name, str(exc)))
        return set()
    if release is None:
        return set()
    report.notes += list(release.notes)
    report.notes += [f"{benchmark.name}:{config}: {reason}" for config, reason in release.unavailable.items()]
    return set(release.unavailable)


def paper_count_comparison(benchmark: Benchmark, rows_read: Mapping[str, Mapping[str, int]]
                           ) -> dict[str, dict[str, Any]]:
    """For a build: each built config's declared count beside the rows read before any cutoff."""
    out = {}
    for name, splits in rows_read.items():
        declared = benchmark.config(name).paper_count
        if declared is None:
            continue
        found = splits.get(declared.split)
        out[name] = CountCheck(name, declared.split, declared.rows, declared.source, found).as_dict()
    return out


def comparison_warnings(benchmark: Benchmark, comparison: Mapping[str, Mapping[str, Any]]) -> list[str]:
    return [f"warning: {benchmark.name}:{name} {c['split']} has {c['found']} rows, declared {c['declared']} "
            f"({c['source']})" for name, c in comparison.items() if not c["matches"]]


# ---------------------------------------------------------------- command line

def configure_doctor_parser(parser: Any) -> None:
    parser.description = ("Check release files (a folder, a git checkout or a hub dataset id) against a benchmark's "
                          "declared layout, columns, types and paper counts, without building. One line per "
                          "difference; exit 1 when there is any.")
    parser.add_argument("source", help="folder of release files, a git checkout of the upstream repository, or a "
                                       "hub dataset id owner/name")
    parser.add_argument("--benchmark", help="the benchmark (default: the one whose declared layout the source "
                                            "matches best)")
    parser.add_argument("--revision", help="hub revision of SOURCE")


def _guess_benchmark(folder: Path) -> Benchmark:
    from sciprobe.core.registry import benchmark_names, get_benchmark

    scored = []
    for bench in map(get_benchmark, benchmark_names()):
        layout = best_layout(bench, folder)
        if layout is None:
            continue
        found = release_folder(layout, folder, layout.root)
        scored.append((sum(bool(files_of(found, f)) for f in layout.files), bench))
    best = max(scored, key=lambda s: s[0], default=(0, None))
    if best[1] is None or best[0] == 0:
        raise SciprobeError(f"{folder}: no benchmark's declared release files are here; pass --benchmark NAME")
    return best[1]


def cmd_doctor(args: Any) -> int:
    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.sources import resolve_source

    resolved = resolve_source(args.source, args.revision)
    benchmark = get_benchmark(args.benchmark) if args.benchmark else _guess_benchmark(resolved.path)
    report = doctor(benchmark, resolved.path, resolved.describe())
    print(f"{benchmark.name}: {report.source}" + (f" (layout {report.layout})" if report.layout else "")
          + f", {len(report.files_read)} files read")
    for note in report.notes:
        print(f"  {note}")
    for check in report.counts:
        state = "ok" if check.matches else "differs"
        print(f"  {benchmark.name}:{check.config} {check.split}: {check.found} rows, declared {check.declared} "
              f"({check.source}): {state}")
    for difference in report.differences:
        print(difference.line())
    print(f"{len(report.differences)} difference(s)" if report.differences else "no differences")
    return 1 if report.differences else 0
