"""Reading release files strictly. Every benchmark's source reader goes through these helpers, so bad input is
refused at build time with one line naming the file, the item and the value: never stored verbatim, coerced
to another type, or crashed on with a traceback (project rule 4).

Dates: one parser, :func:`parse_release_date`, with a declared precision. It accepts exactly the formats the
releases use: ISO ``YYYY-MM-DD`` (day precision: IDRBench IPI records, the PreScience corpus), ``YYYY-MM``
(month) and ``YYYY`` (year), zero-padded, on the calendar; a SciTaste ``year`` is an integer
(:func:`release_year`). ``None`` and ``""`` mean "no date" (IDRBench writes ``""``). A date is stored as the
first day of its period (ISO ``YYYY-MM-DD``) beside its precision, so "strictly after a cutoff" is the
conservative "the whole period is after it".
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import namedtuple
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from sciprobe.core.errors import SciprobeError

TYPE_CHECKING = False  # typing's flag without importing typing: these modules are on the CLI's start-up path
if TYPE_CHECKING:
    from typing import Any

PRECISIONS: tuple[str, ...] = ("day", "month", "year")
DATE_FORMATS: dict[str, str] = {"day": "YYYY-MM-DD", "month": "YYYY-MM", "year": "YYYY"}
#: Deepest JSON nesting a release record may have (the releases use at most 4 levels).
MAX_JSON_DEPTH = 32
_DATE = re.compile(r"([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2}))?)?")  # ASCII digits only


def shown(value: Any, limit: int = 80) -> str:
    """A value as it appears in an error line: its repr (newlines escaped), cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---------------------------------------------------------------- dates

class ReleaseDate(namedtuple("ReleaseDate", ["start", "precision"])):
    """A parsed release date: ``start`` (``datetime.date``), the first day of its period, and ``precision``
    ("day", "month" or "year"). A plain named tuple, neither a dataclass nor a ``typing.NamedTuple``:
    ``sciprobe cutoffs`` reads dates, and importing ``dataclasses`` costs a quarter of Python's start-up,
    ``typing`` a tenth."""

    __slots__ = ()

    @property
    def iso(self) -> str:
        return self.start.isoformat()

    @property
    def end(self) -> dt.date:
        """The last day of the period (a month-precision cutoff means the end of that month)."""
        if self.precision == "year":
            return dt.date(self.start.year, 12, 31)
        if self.precision == "month":
            import calendar  # here: `sciprobe cutoffs` and `sciprobe --help` import this module at start-up

            return dt.date(self.start.year, self.start.month,
                           calendar.monthrange(self.start.year, self.start.month)[1])
        return self.start


def parse_release_date(value: Any, where: str, precisions: Iterable[str] = PRECISIONS) -> ReleaseDate | None:
    """``YYYY-MM-DD`` / ``YYYY-MM`` / ``YYYY`` (those of ``precisions``) -> :class:`ReleaseDate`; None or "" ->
    None; anything else (another format, a non-string, a day off the calendar) -> :class:`SciprobeError`."""
    if value is None or value == "":
        return None
    allowed = tuple(precisions)
    expected = " or ".join(DATE_FORMATS[p] for p in allowed)
    match = _DATE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise SciprobeError(f"{where}: date {shown(value)} is not {expected}")
    precision = "day" if match[3] else "month" if match[2] else "year"
    if precision not in allowed:
        raise SciprobeError(f"{where}: date {shown(value)} is not {expected}")
    try:
        start = dt.date(int(match[1]), int(match[2] or 1), int(match[3] or 1))
    except ValueError as exc:
        raise SciprobeError(f"{where}: date {shown(value)} is not a calendar date ({exc})") from None
    return ReleaseDate(start, precision)


def release_year(value: Any, where: str, key: str = "year") -> ReleaseDate:
    """An integer year (not a bool, a float or a string) -> :class:`ReleaseDate` of year precision."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SciprobeError(f"{where}: {key} must be an integer year, got {shown(value)}")
    if not 1000 <= value <= 9999:
        raise SciprobeError(f"{where}: {key} {value} is not a four-digit year")
    return ReleaseDate(dt.date(value, 1, 1), "year")


# ---------------------------------------------------------------- JSON files

def check_depth(value: Any, where: str, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse JSON nested deeper than ``limit`` (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth > limit:
                raise SciprobeError(f"{where}: JSON nested deeper than {limit} levels")
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))


def parse_json(text: str, where: str) -> Any:
    """``json.loads`` with one-line errors for malformed and absurdly nested input."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SciprobeError(f"{where}: malformed JSON ({exc})") from None
    except RecursionError:
        raise SciprobeError(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    check_depth(value, where)
    return value


def _read_text(path: Path) -> str:
    try:
        return path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise SciprobeError(f"{path.name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def iter_json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of every non-blank line of a JSON-lines file, streaming."""
    try:
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if line.strip():
                    yield number, parse_json(line, f"{path.name} line {number}")
    except UnicodeDecodeError as exc:
        raise SciprobeError(f"{path.name}: not UTF-8 text ({exc.reason})") from None


def json_records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """The records of a release file: a JSON list of objects (``.json``) or one object per line (``.jsonl``),
    each with where it stands (``"file record i"`` / ``"file line n"``). An empty file is an error."""
    path = Path(path)
    if path.suffix == ".jsonl":
        records = [(f"{path.name} line {n}", value) for n, value in iter_json_lines(path)]
    else:
        text = _read_text(path)
        data = parse_json(text, path.name) if text.strip() else []
        if not isinstance(data, list):
            raise SciprobeError(f"{path.name} must hold a JSON list of records, not a {type(data).__name__}")
        records = [(f"{path.name} record {i}", value) for i, value in enumerate(data)]
    if not records:
        raise SciprobeError(f"{path.name}: the file has no items")
    for where, value in records:
        if not isinstance(value, dict):
            raise SciprobeError(f"{where}: expected a JSON object, got {shown(value)}")
    return records


# ---------------------------------------------------------------- typed fields

def get_field(record: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in record:
        raise SciprobeError(f"{where}: missing field {key!r}")
    return record[key]


def text(value: Any, where: str, key: str, *, required: bool = False) -> str | None:
    """A text field: a string, or None when absent (an error when ``required``); never a number coerced."""
    if value is None:
        if required:
            raise SciprobeError(f"{where}: missing field {key!r}")
        return None
    if not isinstance(value, str):
        raise SciprobeError(f"{where}: field {key!r} must be text, got {type(value).__name__} {shown(value)}")
    return value


def text_list(value: Any, where: str, key: str) -> list[str]:
    """A list of strings (None -> [])."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise SciprobeError(f"{where}: field {key!r} must be a list of text, got {type(value).__name__} "
                            f"{shown(value)}")
    return [text(item, where, key, required=True) for item in value]  # type: ignore[misc]


def integer(value: Any, where: str, key: str) -> int:
    """An integer field (a bool or a float is refused, not truncated)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SciprobeError(f"{where}: field {key!r} must be an integer, got {type(value).__name__} {shown(value)}")
    return value


def number(value: Any, where: str, key: str) -> float:
    """A finite int or float field (a bool or a numeric string is refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value in (
            float("inf"), float("-inf")):
        raise SciprobeError(f"{where}: field {key!r} must be a finite number, got {type(value).__name__} "
                            f"{shown(value)}")
    return float(value)


# ---------------------------------------------------------------- ids

def check_unique_ids(items: Iterable[tuple[Any, str]], name: str = "id") -> None:
    """``(id, where)`` pairs: refuse the first id seen twice, naming both places (file and item)."""
    first: dict[Any, str] = {}
    for item_id, where in items:
        if item_id in first:
            raise SciprobeError(f"duplicate {name} {shown(item_id)}: {first[item_id]} and {where}")
        first[item_id] = where
