"""The papers' published numbers as data, and ``sciprobe paper BENCH``.

Each benchmark folder may hold ``published.yaml``: every number its paper reports for a model (or a reference
baseline), transcribed as printed, with the sciprobe task and metric it corresponds to, the setting it was
obtained in and where it is printed. ``published.md`` beside it lists what had to be resolved while transcribing.
:func:`published_results` loads a benchmark's file and validates it once, here; readers (``sciprobe paper``, and
later the comparison with a run) get typed :class:`PublishedResult` records.

File format (YAML, ``format: 1``)::

    format: 1
    paper: {title: ..., version: arXiv:2507.15736v3, url: https://arxiv.org/abs/2507.15736v3}
    setting: {mode: official, prompts: upstream, data: ...}     # defaults for every number below
    tables:
      - source: Table 5                  # the table (or figure) as the paper numbers it
        scale: percent                   # the printed scale (SCALES); it must be the metric's
        rows_are: models                 # each row's first cell is the model as printed (else rows set `model`)
        columns:                         # one per value column, in printed order: what each column measures
          - {label: DeepResearch, task: deep_research, metric: exact_match}
        markers: {"∗": {note: ..., comparable: false, reason: ...}}   # glyphs printed after a value
        rows:
          - [DeepSeek-V3.2, "12.70", "-"]                  # values quoted, as printed; "-" = not reported
          - {label: GPT-4.1, values: ["34.32"], comparable: false, reason: ...}
          - {label: o3, values: ["0.80"], cells: {DeepResearch: {comparable: false, reason: ...}}}
    stated:                              # single numbers the text states (a table body the paper text lacks)
      - {model: ..., task: ..., metric: ..., value: "0.176", scale: unit, source: {table: ..., row: ...}}

A cell's record merges, in this order, the file's ``setting``, the table's fields, its column's, its row's, its
markers' and the row's ``cells`` entry for it. A column and its row may not both set the same field; the last
layer that sets ``comparable`` decides, so a row can be the exception to its table.

Fields: ``model``; ``task`` and ``metric`` in sciprobe's names (a task of the declaration or one of its
``aggregates``; a score key with a declared range in :mod:`sciprobe.scoring.ranges`); ``scale``; ``setting``
(``mode``, ``shots``, ``prompts``, ``judge``, ``data``, ``subset``, ``group`` as ``{breakdown: group}``,
``n_items``); ``comparable`` with ``reason``; ``note``. A number that can never correspond to a sciprobe run (no
such task or metric, another model's result printed in this model's row, an approximate value, a copy error) is
``comparable: false`` with the reason: it is listed, never compared. An unstated setting is null (``subset`` null:
the whole test set); the comparison decides what an unknown setting means.

The file is read like any untrusted file: a regular file, at most MAX_FILE_BYTES, no YAML anchors or aliases,
every key known, every string printable; a problem is one line naming the table, row and column.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError

__all__ = ["FILE_NAME", "REPORTED", "SCALES", "Paper", "PublishedFile", "PublishedResult", "Setting", "Source",
           "TableShape", "cmd_paper", "configure_paper_parser", "published_file", "published_path",
           "published_results", "read_published", "reported_label", "reported_numbers", "source_url"]

FILE_NAME = "published.yaml"
FORMAT = 1
MAX_FILE_BYTES = 4 << 20
MAX_STRING = 400
#: printed scales and the values they allow (a value outside its scale is a transcription error)
SCALES: dict[str, tuple[float, float]] = {
    "unit": (0.0, 1.0), "percent": (0.0, 100.0), "judge_1_10": (1.0, 10.0), "rating_1_5": (1.0, 5.0),
    "correlation": (-1.0, 1.0), "r2": (-math.inf, 1.0), "seconds": (0.0, math.inf), "count": (0.0, math.inf),
    "non_negative": (0.0, math.inf),
    "signed": (-math.inf, math.inf),
}
#: cells that report nothing (a model without that task)
NOT_REPORTED = frozenset({"-", "–", "—", ""})
_NUMBER = re.compile(r"[-−]?\d+(?:\.\d+)?")
_FIELDS = ("model", "task", "metric", "scale", "setting", "comparable", "reason", "note")
_SETTING_KEYS = ("mode", "shots", "prompts", "judge", "data", "subset", "group", "n_items")


@dataclass(frozen=True)
class Setting:
    """How the paper obtained a number; None: the paper does not say (or it does not apply)."""

    mode: str | None = None          # the sciprobe scoring mode the number corresponds to
    shots: int | None = None
    prompts: str | None = None       # a sciprobe prompt set (upstream, sciprobe) or the paper's own harness
    judge: str | None = None
    data: str | None = None          # data version or release
    subset: str | None = None        # which items, when not the whole test set
    group: tuple[str, str] | None = None   # (breakdown, group) for a per-group number
    n_items: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "shots": self.shots, "prompts": self.prompts, "judge": self.judge,
                "data": self.data, "subset": self.subset,
                "group": {self.group[0]: self.group[1]} if self.group else None, "n_items": self.n_items}

    def describe(self) -> str:
        parts = [self.mode or "", f"{self.shots}-shot" if self.shots is not None else "",
                 f"{self.group[0]}={self.group[1]}" if self.group else ""]
        return ", ".join(p for p in parts if p)


@dataclass(frozen=True)
class Source:
    paper: str                       # the paper version, e.g. arXiv:2512.16969v1
    table: str                       # table, figure or section, as the paper numbers it
    row: str                         # the row label as printed (or what a stated number describes)
    column: str | None = None        # the column label as printed
    url: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"paper": self.paper, "table": self.table, "row": self.row, "column": self.column, "url": self.url}

    def describe(self) -> str:
        return f"{self.table}: {self.row}" + (f" / {self.column}" if self.column else "")


@dataclass(frozen=True)
class PublishedResult:
    """One number a paper reports."""

    benchmark: str
    model: str                       # as the paper names it
    task: str | None                 # sciprobe task (or aggregate) name; None: no sciprobe task
    metric: str                      # sciprobe score key (a descriptive label when not comparable)
    value: float                     # on ``scale``, which is the metric's own
    printed: str                     # the cell as printed (markers included)
    scale: str
    setting: Setting
    source: Source
    comparable: bool = True
    reason: str | None = None        # why it is not comparable
    notes: tuple[str, ...] = ()
    plus_minus: float | None = None  # the printed ± (its kind is in the notes)

    @property
    def key(self) -> tuple[Any, ...]:
        """What identifies the number a run could reproduce (the same number may be printed in two tables)."""
        return (self.model, self.task, self.metric, self.setting)

    def as_dict(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "model": self.model, "task": self.task, "metric": self.metric,
                "value": self.value, "printed": self.printed, "scale": self.scale, "plus_minus": self.plus_minus,
                "setting": self.setting.as_dict(), "source": self.source.as_dict(), "comparable": self.comparable,
                "reason": self.reason, "notes": list(self.notes)}


@dataclass(frozen=True)
class TableShape:
    """A transcribed table's shape, to check against the printed one."""

    source: str
    rows: int
    columns: int
    values: int                      # numbers transcribed
    not_reported: int                # cells printed as "-"


@dataclass(frozen=True)
class Paper:
    title: str
    version: str                     # e.g. arXiv:2507.15736v3
    url: str | None = None


@dataclass(frozen=True)
class PublishedFile:
    benchmark: str
    paper: Paper
    results: tuple[PublishedResult, ...]
    tables: tuple[TableShape, ...] = field(default_factory=tuple)


# ---------------------------------------------------------------- reading

def published_path(benchmark: str) -> Path:
    """Where ``benchmark``'s published numbers live (its declaration's folder)."""
    import importlib

    from sciprobe.core.registry import get_benchmark

    get_benchmark(benchmark)  # a registered benchmark, or its own error
    module = importlib.import_module(f"sciprobe.benchmarks.{benchmark}")
    return Path(module.__file__).resolve().parent / FILE_NAME


@functools.lru_cache(maxsize=None)
def published_file(benchmark: str) -> PublishedFile:
    path = published_path(benchmark)
    if not path.exists():
        raise SciprobeError(f"{benchmark} has no published numbers (no {FILE_NAME} in its folder)")
    return read_published(path, benchmark)


def published_results(benchmark: str) -> tuple[PublishedResult, ...]:
    """Every number ``benchmark``'s paper reports, validated against its declaration."""
    return published_file(benchmark).results


def read_published(path: Path, benchmark: str) -> PublishedFile:
    """Read and validate one published-numbers file for ``benchmark`` (a registered benchmark)."""
    from sciprobe.core.registry import get_benchmark

    data = _load_yaml(path)
    return _File(get_benchmark(benchmark), path.name).read(data)


def _load_yaml(path: Path) -> Any:
    import yaml

    try:  # no symlink followed; non-blocking so that a FIFO is refused instead of waited on
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise SciprobeError(f"{path.name}: cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise SciprobeError(f"{path.name}: not a regular file")
    with os.fdopen(fd, "rb") as handle:
        raw = handle.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise SciprobeError(f"{path.name}: larger than {MAX_FILE_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        # anchors and aliases let a small file expand into a huge structure; transcriptions need neither
        if any(isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None)
               for event in yaml.parse(text, Loader=loader)):
            raise SciprobeError(f"{path.name}: YAML anchors and aliases are not allowed")
        return yaml.load(text, Loader=loader)  # a safe loader: plain data only
    except UnicodeDecodeError:
        raise SciprobeError(f"{path.name}: not UTF-8 text") from None
    except RecursionError:
        raise SciprobeError(f"{path.name}: nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise SciprobeError(f"{path.name}: not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None


# ---------------------------------------------------------------- validation

def _text(value: Any, where: str, what: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise SciprobeError(f"{where}: {what} must be a non-empty string")
    if len(value) > MAX_STRING or not value.isprintable():
        raise SciprobeError(f"{where}: {what} must be printable text of at most {MAX_STRING} characters")
    return value.strip()


def _mapping(value: Any, where: str, what: str, allowed: Sequence[str]) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SciprobeError(f"{where}: {what} must be a mapping")
    unknown = [str(k) for k in value if k not in allowed]
    if unknown:
        raise SciprobeError(f"{where}: unknown {what} key(s) {', '.join(unknown)} (known: {', '.join(allowed)})")
    return value


def _count(value: Any, where: str, what: str, low: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= 10**9:
        raise SciprobeError(f"{where}: {what} must be an integer >= {low}")
    return value


def _setting(spec: Mapping[str, Any], where: str) -> Setting:
    group = spec.get("group")
    if group is not None:
        group = _mapping(group, where, "group", [str(k) for k in group] if isinstance(group, Mapping) else ())
        if len(group) != 1:
            raise SciprobeError(f"{where}: group must be one {{breakdown: group}} pair")
        (name, value), = group.items()
        group = (_text(name, where, "group breakdown"), _text(value, where, "group name"))
    return Setting(mode=_text(spec.get("mode"), where, "mode", optional=True),
                   shots=_count(spec.get("shots"), where, "shots", 0),
                   prompts=_text(spec.get("prompts"), where, "prompts", optional=True),
                   judge=_text(spec.get("judge"), where, "judge", optional=True),
                   data=_text(spec.get("data"), where, "data", optional=True),
                   subset=_text(spec.get("subset"), where, "subset", optional=True),
                   group=group, n_items=_count(spec.get("n_items"), where, "n_items", 1))


def _merge(layers: Sequence[tuple[str, Mapping[str, Any]]], where: str) -> dict[str, Any]:
    """The fields of a cell from its layers, in order; a column and its row may not both set one field."""
    merged: dict[str, Any] = {"setting": {}, "notes": [], "reasons": []}
    owner: dict[str, str] = {}
    for layer, fields in layers:
        if "comparable" in fields:  # a later layer decides: a row may be the exception to its table
            if not isinstance(fields["comparable"], bool):
                raise SciprobeError(f"{where}: comparable must be true or false")
            merged["comparable"] = fields["comparable"]
            if fields["comparable"]:
                merged["reasons"] = []
        for key, value in fields.items():
            if key == "note":
                merged["notes"].append(value)
            elif key == "reason":
                merged["reasons"].append(value)
            elif key == "comparable":
                continue
            elif key == "setting":
                for sub, sub_value in _mapping(value, where, "setting", _SETTING_KEYS).items():
                    _claim(owner, f"setting.{sub}", layer, where)
                    merged["setting"][sub] = sub_value
            else:
                _claim(owner, key, layer, where)
                merged[key] = value
    return merged


def _claim(owner: dict[str, str], key: str, layer: str, where: str) -> None:
    if {owner.get(key), layer} == {"column", "row"}:
        raise SciprobeError(f"{where}: both the column and the row set {key}")
    owner[key] = layer


@dataclass(frozen=True)
class _Grid:
    """A printed table's layout: its columns (label, fields), markers, rows, and the fields every cell shares."""

    source: str
    where: str
    columns: list[tuple[str, Mapping[str, Any]]]
    rows: list[Any]
    markers: dict[str, Mapping[str, Any]]
    fields: dict[str, Any]
    rows_are: str | None
    plus_minus: str | None

    @classmethod
    def read(cls, table: Any, where: str, name: str) -> _Grid:
        spec = _mapping(table, where, "table", ("source", "rows_are", "columns", "rows", "markers", "plus_minus",
                                                *_FIELDS))
        source = _text(spec.get("source"), where, "source")
        where = f"{name}: {source}"
        if spec.get("rows_are") not in (None, "models"):
            raise SciprobeError(f"{where}: rows_are must be 'models' or absent")
        columns, rows = spec.get("columns"), spec.get("rows")
        if not isinstance(columns, list) or not columns or not isinstance(rows, list) or not rows:
            raise SciprobeError(f"{where}: columns and rows must be non-empty lists")
        layout = []
        for number, column in enumerate(columns, 1):
            column = _mapping(column, f"{where} column {number}", "column", ("label", *_FIELDS))
            label = _text(column.get("label"), f"{where} column {number}", "label")
            layout.append((label, {k: v for k, v in column.items() if k != "label"}))
        if len({label for label, _ in layout}) != len(layout):
            raise SciprobeError(f"{where}: two columns have the same label")
        glyphs = spec.get("markers") or {}
        markers = {_text(glyph, where, "marker"): _mapping(fields, where, f"marker {glyph}", _FIELDS)
                   for glyph, fields in _mapping(glyphs, where, "markers", [str(g) for g in glyphs]).items()}
        return cls(source, where, layout, rows, markers, {k: v for k, v in spec.items() if k in _FIELDS},
                   spec.get("rows_are"), _text(spec.get("plus_minus"), where, "plus_minus", optional=True))


class _File:
    """Validates one file's content against a benchmark's declaration."""

    def __init__(self, benchmark: Any, name: str) -> None:
        self.benchmark = benchmark
        self.name = name

    def read(self, data: Any) -> PublishedFile:
        top = _mapping(data, self.name, "top-level", ("format", "paper", "setting", "tables", "stated"))
        if top.get("format") != FORMAT:
            raise SciprobeError(f"{self.name}: format must be {FORMAT}")
        paper = _mapping(top.get("paper"), self.name, "paper", ("title", "version", "url"))
        self.paper = _text(paper.get("version"), self.name, "paper.version")
        self.url = _text(paper.get("url"), self.name, "paper.url", optional=True)
        title = _text(paper.get("title"), self.name, "paper.title")
        defaults = ("file", _mapping({"setting": top.get("setting")}, self.name, "setting", ("setting",)))
        tables, stated = top.get("tables") or [], top.get("stated") or []
        if not isinstance(tables, list) or not isinstance(stated, list):
            raise SciprobeError(f"{self.name}: tables and stated must be lists")
        results: list[PublishedResult] = []
        shapes = []
        for index, table in enumerate(tables):
            shape, rows = self._table(table, index, defaults)
            shapes.append(shape)
            results.extend(rows)
        for index, number in enumerate(stated):
            results.append(self._stated(number, index, defaults))
        if not results:
            raise SciprobeError(f"{self.name}: no published numbers")
        _check_conflicts(results, self.name)
        return PublishedFile(self.benchmark.name, Paper(title, self.paper, self.url), tuple(results), tuple(shapes))

    def _table(self, table: Any, index: int, defaults: tuple[str, Mapping[str, Any]]
               ) -> tuple[TableShape, list[PublishedResult]]:
        grid = _Grid.read(table, f"{self.name}: tables[{index}]", self.name)
        results, blank, labels = [], 0, set()
        for row in grid.rows:
            label, values, row_fields = self._row(row, grid.where, grid.rows_are)
            if label in labels:
                raise SciprobeError(f"{grid.where}: row {label!r} appears twice")
            labels.add(label)
            row_where = f"{grid.where} row {label!r}"
            if len(values) != len(grid.columns):
                raise SciprobeError(f"{row_where}: {len(values)} values for {len(grid.columns)} columns")
            cells = _mapping(row_fields.pop("cells", None), row_where, "cells", [c for c, _ in grid.columns])
            if grid.rows_are == "models":
                row_fields = {"model": label, **row_fields}
            for (column, column_fields), cell in zip(grid.columns, values):
                where = f"{row_where} column {column!r}"
                if not isinstance(cell, str):
                    raise SciprobeError(f"{where}: write the value as printed, quoted (got {cell!r})")
                if cell.strip() in NOT_REPORTED:
                    blank += 1
                    continue
                number, plus, glyphs = _parse_cell(cell, grid.markers, grid.plus_minus is not None, where)
                layers = [defaults, ("table", grid.fields), ("column", column_fields), ("row", row_fields),
                          *(("marker", grid.markers[g]) for g in glyphs),
                          ("cell", _mapping(cells.get(column), where, "cell", _FIELDS))]
                notes = [f"± is the {grid.plus_minus}"] if plus is not None else []
                results.append(self._result(_merge(layers, where), number, cell.strip(), plus, notes,
                                            Source(self.paper, grid.source, label, column, self.url), where))
        return TableShape(grid.source, len(grid.rows), len(grid.columns), len(results), blank), results

    def _row(self, row: Any, where: str, rows_are: str | None) -> tuple[str, list[Any], Mapping[str, Any]]:
        if isinstance(row, list):
            if not row:
                raise SciprobeError(f"{where}: an empty row")
            label = _text(row[0], where, "row label")
            if rows_are != "models":
                raise SciprobeError(f"{where} row {label!r}: a list row needs rows_are: models (else a mapping "
                                    "with label, values and the fields it sets)")
            return label, list(row[1:]), {}
        spec = _mapping(row, where, "row", ("label", "values", "cells", *_FIELDS))
        label = _text(spec.get("label"), where, "row label")
        values = spec.get("values")
        if not isinstance(values, list):
            raise SciprobeError(f"{where} row {label!r}: values must be a list")
        return label, values, {k: v for k, v in spec.items() if k not in ("label", "values")}

    def _stated(self, number: Any, index: int, defaults: tuple[str, Mapping[str, Any]]) -> PublishedResult:
        where = f"{self.name}: stated[{index}]"
        spec = _mapping(number, where, "stated number", ("value", "source", *_FIELDS))
        source = _mapping(spec.get("source"), where, "source", ("table", "row", "column"))
        located = Source(self.paper, _text(source.get("table"), where, "source.table"),
                         _text(source.get("row"), where, "source.row"),
                         _text(source.get("column"), where, "source.column", optional=True), self.url)
        where = f"{self.name}: stated {located.describe()!r}"
        printed = spec.get("value")
        if not isinstance(printed, str):
            raise SciprobeError(f"{where}: write the value as printed, quoted (got {printed!r})")
        value, plus, _ = _parse_cell(printed, {}, False, where)
        fields = {k: v for k, v in spec.items() if k not in ("value", "source")}
        return self._result(_merge([defaults, ("row", fields)], where), value, printed.strip(), plus, [], located,
                            where)

    def _result(self, merged: Mapping[str, Any], value: float, printed: str, plus: float | None,
                extra_notes: list[str], source: Source, where: str) -> PublishedResult:
        comparable = merged.get("comparable", True)
        reasons = [_text(r, where, "reason") for r in merged["reasons"]]
        if not comparable and not reasons:
            raise SciprobeError(f"{where}: a number that is not comparable needs a reason")
        if comparable and reasons:
            raise SciprobeError(f"{where}: a reason is given but the number is comparable (set comparable: false)")
        model = _text(merged.get("model"), where, "model")
        metric = _text(merged.get("metric"), where, "metric")
        scale = merged.get("scale")
        if scale not in SCALES:
            raise SciprobeError(f"{where}: scale must be one of {', '.join(SCALES)}")
        setting = _setting(merged["setting"], where)
        task = _text(merged.get("task"), where, "task", optional=True)
        low, high = SCALES[scale]
        if not low <= value <= high:
            raise SciprobeError(f"{where}: {printed} is outside the {scale} scale")
        self._check_declared(task, metric, value, scale, setting, comparable, where)
        notes = tuple(_text(n, where, "note") for n in merged["notes"]) + tuple(extra_notes)
        return PublishedResult(self.benchmark.name, model, task, metric, value, printed, scale, setting, source,
                               comparable, "; ".join(reasons) or None, notes, plus)

    def _check_declared(self, task: str | None, metric: str, value: float, scale: str, setting: Setting,
                        comparable: bool, where: str) -> None:
        """Task, metric, mode, shots and group exist in the declaration; the printed scale is the metric's and the
        value lies in its range."""
        from sciprobe.scoring.ranges import score_range

        benchmark = self.benchmark
        if task is None:
            if comparable:
                raise SciprobeError(f"{where}: a comparable number needs a task")
            return
        spec = None
        if task in benchmark.aggregates:
            family = benchmark.aggregates[task]
        elif task in benchmark.tasks:
            spec = benchmark.tasks[task]
            family = spec.metric
        else:
            known = sorted([*benchmark.tasks, *benchmark.aggregates])
            raise SciprobeError(f"{where}: unknown task {task!r} of {benchmark.name} (known: {', '.join(known)}; "
                                "task: null for a number without one)")
        if spec is not None and setting.mode is not None and setting.mode not in spec.modes:
            raise SciprobeError(f"{where}: {task} has no mode {setting.mode!r} (modes: {', '.join(spec.modes)})")
        if spec is not None and setting.shots is not None and setting.shots != spec.num_fewshot:
            raise SciprobeError(f"{where}: {task} is {spec.num_fewshot}-shot, the number is {setting.shots}-shot")
        declared = score_range(family, metric, setting.mode or (spec.modes[0] if spec else "official"))
        if comparable:
            if setting.mode is None:
                raise SciprobeError(f"{where}: a comparable number needs the mode it corresponds to")
            if declared is None:
                raise SciprobeError(f"{where}: {family} declares no metric {metric!r} (sciprobe/scoring/ranges.py)")
            if setting.group and spec is not None and setting.group[0] not in {b.name for b in spec.breakdowns}:
                raise SciprobeError(f"{where}: {task} has no breakdown {setting.group[0]!r}")
        if declared is None:
            return
        low, high = SCALES[scale]
        bounded = math.isfinite(declared.low) and math.isfinite(declared.high)
        if low < declared.low or high > declared.high or (bounded and (low, high) != (declared.low, declared.high)):
            # e.g. a percent printed for a 0-1 metric: the value would be compared 100 times too large
            raise SciprobeError(f"{where}: the {scale} scale is not {family} {metric}'s range {declared.describe()}")
        if not declared.contains(value):
            raise SciprobeError(f"{where}: {value:g} is outside {family} {metric}'s range {declared.describe()}")


def _parse_cell(cell: str, markers: Mapping[str, Any], plus_minus: bool, where: str
                ) -> tuple[float, float | None, list[str]]:
    """A printed cell -> (value, ±, marker glyphs after it)."""
    text, glyphs = cell.strip(), []
    while True:
        glyph = next((g for g in markers if text.endswith(g)), None)
        if glyph is None:
            break
        glyphs.insert(0, glyph)
        text = text[: -len(glyph)].rstrip()
    plus = None
    if plus_minus and "±" in text:
        text, _, spread = (part.strip() for part in text.partition("±"))
        if not _NUMBER.fullmatch(spread):
            raise SciprobeError(f"{where}: {cell!r} is not a number ± a number")
        plus = float(spread)
    if not _NUMBER.fullmatch(text):
        raise SciprobeError(f"{where}: {cell!r} is not a printed number (markers: {', '.join(markers) or 'none'})")
    return float(text.replace("−", "-")), plus, glyphs


def _check_conflicts(results: Sequence[PublishedResult], name: str) -> None:
    """Two comparable numbers for the same model, task, metric and setting must agree (a table may repeat
    another's number; two different values would make any comparison ambiguous)."""
    seen: dict[tuple[Any, ...], PublishedResult] = {}
    for result in results:
        if not result.comparable:
            continue
        first = seen.setdefault(result.key, result)
        if first.value != result.value:
            raise SciprobeError(f"{name}: {result.model} {result.task} {result.metric} is {first.printed} in "
                                f"{first.source.describe()} but {result.printed} in {result.source.describe()}")


# ---------------------------------------------------------------- rows beside scored rows (report, Space)

#: how a published number is labelled wherever it is shown beside scored runs (never ranked, owned by nobody)
REPORTED = "reported in the paper"


def reported_label(result: PublishedResult) -> str:
    """``reported in the paper (Table 2)``: the row label of a published number shown beside scored rows."""
    return f"{REPORTED} ({result.source.table})"


def source_url(result: PublishedResult) -> str | None:
    """Where the number can be checked: the paper's URL, else the benchmark's homepage (which points to the
    paper); only an http(s) address."""
    from sciprobe.core.registry import get_benchmark

    url = result.source.url or getattr(get_benchmark(result.benchmark), "homepage", None)
    return url if isinstance(url, str) and url.startswith(("https://", "http://")) else None


def reported_numbers(benchmark: str, task: str | None = None,
                     metrics: Sequence[str] | None = None) -> list[PublishedResult]:
    """The comparable whole-test-set numbers of ``benchmark``'s paper (of ``task`` and ``metrics`` when given),
    each once (a number a second table repeats keeps its first source). A benchmark without published numbers has
    none."""
    try:
        results = published_results(benchmark)
    except SciprobeError:
        return []
    seen: set[tuple[Any, ...]] = set()
    out = []
    for r in results:
        if not r.comparable or r.setting.group is not None or r.setting.subset is not None:
            continue
        if (task is not None and r.task != task) or (metrics is not None and r.metric not in metrics):
            continue
        if r.key not in seen:
            seen.add(r.key)
            out.append(r)
    return out


# ---------------------------------------------------------------- sciprobe paper BENCH

def configure_paper_parser(parser: argparse.ArgumentParser) -> None:
    parser.description = ("The numbers a benchmark's paper reports (sciprobe/benchmarks/BENCH/published.yaml): model, "
                          "sciprobe task and metric, setting, value as printed and where it is printed. Numbers "
                          "marked not comparable are listed with the reason and never compared.")
    parser.add_argument("benchmark", metavar="BENCH", help="benchmark name (`sciprobe tasks` lists them)")
    parser.add_argument("--task", help="only this task (or aggregate)")
    parser.add_argument("--model", help="only models whose name contains this text (case-insensitive)")
    parser.add_argument("--json", action="store_true", help="as JSON")


def cmd_paper(args: argparse.Namespace) -> int:
    loaded = published_file(args.benchmark)
    results = list(loaded.results)
    if args.task:
        task = _task_name(args.benchmark, args.task)
        results = [r for r in results if r.task == task]
    if args.model:
        results = [r for r in results if args.model.casefold() in r.model.casefold()]
    if args.json:
        paper = {"title": loaded.paper.title, "version": loaded.paper.version, "url": loaded.paper.url}
        print(json.dumps({"benchmark": loaded.benchmark, "paper": paper, "results": [r.as_dict() for r in results]},
                         indent=2, ensure_ascii=False))
    else:
        print(format_published(loaded, results))
    return 0


def _task_name(benchmark: str, task: str) -> str:
    from sciprobe.core.registry import get_benchmark

    declared = get_benchmark(benchmark)
    if task in declared.aggregates:
        return task
    return declared.task(task).name


def format_published(loaded: PublishedFile, results: Sequence[PublishedResult]) -> str:
    """The rows as the CLI's text table; a number that is not comparable points to its reason below the table."""
    from sciprobe.results.summary import format_table

    reasons: dict[str, int] = {}
    rows = []
    for r in results:
        mark = "yes"
        if not r.comparable:
            mark = f"no [{reasons.setdefault(r.reason or '', len(reasons) + 1)}]"
        rows.append({"model": r.model, "task": r.task or "-", "metric": r.metric, "value": r.printed,
                     "setting": r.setting.describe(), "source": r.source.describe(), "comparable": mark})
    header = (f"{loaded.paper.title} ({loaded.paper.version}): {len(results)} published number(s), "
              f"{sum(r.comparable for r in results)} comparable")
    footnotes = [f"[{n}] {reason}" for reason, n in reasons.items()]
    return "\n".join([header, "", format_table(rows), *([""] + footnotes if footnotes else [])])
