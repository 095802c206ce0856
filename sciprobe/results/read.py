"""Reading a results file: the one place where ``report``, ``compare``, ``export``, ``leaderboard --import`` and
``sgibench score-overall`` read a results JSON (:func:`load_results_file`).

A results file is untrusted input. Whoever wrote it, the reader:

* opens regular files only: a FIFO, a device or a symlink to one is refused before a byte is read (the path is
  checked with ``stat``, opened with ``O_NONBLOCK`` so a FIFO cannot block, and the open file checked again with
  ``fstat``); a symlink to a regular file is read like that file;
* reads at most :data:`MAX_RESULTS_BYTES` bytes, counting the bytes actually read (a reported size proves nothing:
  ``/dev/zero`` and ``/proc`` files report 0);
* parses JSON with a cap on nesting (:data:`MAX_JSON_DEPTH`) and on integer literals (:data:`MAX_INT_DIGITS`
  digits: no count, seed or score sciprobe writes comes near it, and a 5,000-digit int would raise wherever it
  is printed), and refuses lone surrogates (text no page or store can encode);
* validates the schema once (:func:`_check_task` and the checks beside it, documented in ``docs/results.md``):
  every headline is a number or null, every interval a pair of finite numbers or nulls, coverage counts are
  ints, the per-item table's ids, columns and flags are lists of the right types and lengths (and its statistic
  computes), the model id is a short string without control characters, and so on.

It returns a :class:`ResultsFile` whose ``data`` readers may index without further checks, or raises
:class:`ResultsFileError`: one line naming the file and the field (``runs/r.json: sciprobe.tasks["idrbench:ipi|0"]
.scores.official.coverage.n_items: expected a count, got a string``). A valid JSON file that is not sciprobe's
(lighteval's results, anything without a ``sciprobe`` block) raises the subclass :class:`ForeignResultsFile`, so a
command reading a folder skips it with one line. With ``skip_bad_tasks`` a task whose entry is malformed is left
out and described in ``skipped_tasks`` instead, so the rest of the file is still read.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError

__all__ = ["MAX_INT_DIGITS", "MAX_JSON_DEPTH", "MAX_RESULTS_BYTES", "ForeignResultsFile", "ResultsFile",
           "ResultsFileError", "load_results_file", "parse_json_bytes", "read_json_file", "read_regular_file"]

#: bytes read from one results file at most (the largest real file, PreScience with per-item tables, is ~10 MB)
MAX_RESULTS_BYTES = 64_000_000
#: a results file nests about ten levels (sciprobe.tasks.KEY.scores.MODE.breakdowns.NAME.groups.GROUP.score)
MAX_JSON_DEPTH = 40
#: digits of an integer literal; counts stay below 1e15 and bootstrap seeds below 2**64
MAX_INT_DIGITS = 40
#: characters of a model id, judge id, task key or mode name
MAX_NAME_CHARS = 200

_TASK_KEY = re.compile(r"^[A-Za-z0-9_.@-]+(?::[A-Za-z0-9_.@-]+)+\|\d{1,4}$")
_MODE_NAME = re.compile(r"^[A-Za-z0-9_.@-]{1,60}$")
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_@-]*$")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")


class ResultsFileError(SciprobeError):
    """A results file that cannot be used, as one line naming the file and, where there is one, the field."""

    def __init__(self, path: Path | str, problem: str, field: str = "") -> None:
        self.path, self.field, self.problem = Path(path), field, problem
        super().__init__(f"{_shown_path(path)}: {field + ': ' if field else ''}{problem}")


class ForeignResultsFile(ResultsFileError):
    """Valid JSON that is not a sciprobe results file. ``kind`` is ``"lighteval"`` for lighteval's own results
    (``data`` then holds it parsed: the leaderboard's importer rescores it from its details), else ``""``."""

    def __init__(self, path: Path | str, problem: str, data: Any = None, kind: str = "") -> None:
        super().__init__(path, problem)
        self.data, self.kind = data, kind


@dataclass(frozen=True)
class ResultsFile:
    """A checked results file. ``data`` is the parsed JSON, valid as ``docs/results.md`` describes it (tasks left
    out with ``skip_bad_tasks`` are removed from ``data["sciprobe"]["tasks"]`` and listed in ``skipped_tasks``,
    one line each); ``digest`` is the sha256 of the bytes read."""

    path: Path
    data: dict[str, Any]
    digest: str
    skipped_tasks: tuple[str, ...] = ()

    @property
    def block(self) -> dict[str, Any]:
        return self.data["sciprobe"]

    @property
    def model_id(self) -> str:
        return self.block["model_id"]

    @property
    def tasks(self) -> dict[str, dict[str, Any]]:
        return self.block["tasks"]

    @property
    def reference_baseline(self) -> dict[str, Any] | None:
        return self.block.get("reference_baseline") or None

    def config(self, key: str) -> dict[str, Any]:
        """``config_tasks[key]`` ({} when the file has none)."""
        return (self.data.get("config_tasks") or {}).get(key) or {}

    def default_mode(self, key: str) -> str:
        """The task's default mode: the declared one when it was scored, else its first mode."""
        scores = self.tasks[key]["scores"]
        mode = self.config(key).get("default_mode")
        return mode if mode in scores else next(iter(scores))

    def headline(self, key: str) -> str:
        """The task's headline metric: as declared in ``config_tasks``, else its intervals' metric, else ``""``."""
        return _declared_headline(self.config(key), self.tasks[key])


def is_lighteval_results(data: Any) -> bool:
    """True for lighteval's results JSON: ``config_general.lighteval_sha`` a string (lighteval writes the commit or
    ``"?"``; sciprobe's own files write null there), ``results``, and no ``sciprobe`` block."""
    return (isinstance(data, dict) and "sciprobe" not in data and isinstance(data.get("config_general"), dict)
            and isinstance(data["config_general"].get("lighteval_sha"), str) and isinstance(data.get("results"), dict))


def details_file(results_path: Path, details: Any) -> Path | None:
    """The task's details Parquet (``<out>/details/...``, next to ``<out>/results``) when it is a file inside
    ``<out>``; None otherwise."""
    if not isinstance(details, str) or not details:
        return None
    parents = results_path.resolve().parents
    file = parents[2] / details if len(parents) > 2 else None
    try:
        if file is None or not file.resolve().is_relative_to(parents[2]) or not file.is_file():
            return None
    except (OSError, ValueError):
        return None
    return file


def load_results_file(path: Path | str, *, skip_bad_tasks: bool = False,
                      max_bytes: int = MAX_RESULTS_BYTES) -> ResultsFile:
    """Read, parse and validate one sciprobe results file (see the module docstring). Raises
    :class:`ResultsFileError` (:class:`ForeignResultsFile` for another tool's JSON) in one line."""
    path = Path(path)
    raw = read_regular_file(path, max_bytes)
    data = parse_json_bytes(raw, path)
    tasks, skipped = _check_document(path, data, skip_bad_tasks)
    data["sciprobe"]["tasks"] = tasks
    return ResultsFile(path, data, hashlib.sha256(raw).hexdigest(), tuple(skipped))


def read_json_file(path: Path | str, *, max_bytes: int = MAX_RESULTS_BYTES, what: str = "JSON file") -> Any:
    """Any JSON file read with the same guards (regular file, byte cap, nesting and integer caps); no schema."""
    path = Path(path)
    return parse_json_bytes(read_regular_file(path, max_bytes, what), path)


# ---------------------------------------------------------------- reading bytes

def _shown_path(path: Path | str) -> str:
    """A path as one line (a file name may hold a newline or a terminal escape)."""
    text = str(path)
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}"
                   for ch in text)


def _file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular_file(path: Path | str, max_bytes: int, what: str = "results file") -> bytes:
    """The bytes of the regular file ``path`` (at most ``max_bytes``, counted as read); ResultsFileError for a
    missing file, a folder, a FIFO, a device (or a symlink to one), an unreadable or a larger file."""
    try:
        before = os.stat(path)
    except FileNotFoundError:
        raise ResultsFileError(path, f"no such {what}") from None
    except OSError as exc:
        raise ResultsFileError(path, f"cannot read ({exc.strerror or type(exc).__name__})") from None
    if stat.S_ISDIR(before.st_mode):
        raise ResultsFileError(path, f"is a folder, not a {what}")
    if not stat.S_ISREG(before.st_mode):
        raise ResultsFileError(path, f"is {_file_kind(before.st_mode)}, not a regular file: not read")
    try:  # O_NONBLOCK: a FIFO swapped in after the stat cannot block the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ResultsFileError(path, f"cannot read ({exc.strerror or type(exc).__name__})") from None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise ResultsFileError(path, f"is {_file_kind(opened.st_mode)}, not a regular file: not read")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise ResultsFileError(path, f"larger than {max_bytes:,} bytes: not read")
    except OSError as exc:
        raise ResultsFileError(path, f"cannot read ({exc.strerror or type(exc).__name__})") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


# ---------------------------------------------------------------- parsing JSON

class _LongInt:
    """An integer literal of more than MAX_INT_DIGITS digits, kept out of Python's int (refused by the walk)."""

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _capped_int(text: str) -> int | _LongInt:
    digits = len(text) - (text[:1] == "-")
    return _LongInt(digits) if digits > MAX_INT_DIGITS else int(text)


def parse_json_bytes(raw: bytes, path: Path | str) -> Any:
    """``raw`` as JSON: UTF-8, nested at most MAX_JSON_DEPTH levels, integers of at most MAX_INT_DIGITS digits,
    no lone surrogate; else ResultsFileError (the field named where there is one)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsFileError(path, f"not UTF-8 text (byte {exc.start}): not valid Unicode") from None
    try:
        value = json.loads(text, parse_int=_capped_int)
    except RecursionError:
        raise ResultsFileError(path, f"JSON nested too deeply (more than {MAX_JSON_DEPTH} levels)") from None
    except json.JSONDecodeError as exc:
        raise ResultsFileError(path, f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except ValueError as exc:  # a float literal Python cannot read
        raise ResultsFileError(path, f"not valid JSON ({type(exc).__name__})") from None
    problem = _walk(value, surrogates=bool(_SURROGATE_ESCAPE.search(raw)))
    if problem is not None:
        raise ResultsFileError(path, problem[1], problem[0])
    return value


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def _walk(value: Any, *, surrogates: bool) -> tuple[str, str] | None:
    """(field, problem) of the first container nested too deeply, integer too long or (when ``surrogates``) text
    with a lone surrogate; None when there is none. Iterative: the depth is what is being checked. A container's
    path is kept as (parent, key) links and spelled out only for the message."""
    if isinstance(value, _LongInt):
        return "(top)", f"an integer of {value.digits} digits (at most {MAX_INT_DIGITS}): refused"
    Link = tuple[Any, Any]  # (parent link, key); None at the top

    def spelled(link: Link | None, key: Any = None) -> str:
        keys = [] if key is None else [key]
        while link is not None:
            link, step = link
            keys.append(step)
        field = ""
        for step in reversed(keys):
            field = _at(field, step)
        return field or "(top)"

    stack: list[tuple[Any, int, Link | None]] = [(value, 1, None)] if isinstance(value, (dict, list)) else []
    while stack:
        node, depth, link = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return spelled(link), f"JSON nested too deeply (more than {MAX_JSON_DEPTH} levels)"
        pairs = node.items() if type(node) is dict else enumerate(node)
        for key, child in pairs:
            kind = type(child)
            if kind is dict or kind is list:
                stack.append((child, depth + 1, (link, key)))
            elif kind is _LongInt:
                return spelled(link, key), f"an integer of {child.digits} digits (at most {MAX_INT_DIGITS}): refused"
            elif surrogates and ((kind is str and _has_surrogate(child))
                                 or (type(key) is str and _has_surrogate(key))):
                return spelled(link, key), "text with a lone surrogate (\\ud800-\\udfff): not valid Unicode"
    return None


def _at(field: str, key: Any) -> str:
    """``field.key``, ``field[3]`` or ``field["idrbench:ipi|0"]`` (a shown key is cut and made printable)."""
    if isinstance(key, int):
        return f"{field}[{key}]"
    if _PLAIN_KEY.match(key) and len(key) <= 60:
        return f"{field}.{key}" if field else key
    shown = _shown_path(key if len(key) <= 60 else key[:59] + "…")
    return f"{field}[{json.dumps(shown, ensure_ascii=False)}]"


# ---------------------------------------------------------------- the schema

class _Invalid(Exception):
    """A field that does not hold what the schema says (turned into ResultsFileError or a skipped task)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field, self.problem = field, problem


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return {str: "a string", list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def _shown_value(value: Any) -> str:
    """A number as itself (integers are short: MAX_INT_DIGITS), anything else by its kind."""
    if _is_number(value):
        return repr(value)
    return _kind(value)


def _expect(value: Any, field: str, ok: bool, what: str) -> None:
    if not ok:
        raise _Invalid(field, f"expected {what}, got {_kind(value)}")


def _object(value: Any, field: str, *, optional: bool = False) -> dict[str, Any]:
    if value is None and optional:
        return {}
    _expect(value, field, isinstance(value, dict), "an object" + (" or null" if optional else ""))
    return value


def _list(value: Any, field: str, *, optional: bool = False) -> list[Any]:
    if value is None and optional:
        return []
    _expect(value, field, isinstance(value, list), "a list" + (" or null" if optional else ""))
    return value


def _text(value: Any, field: str, *, optional: bool = True) -> str | None:
    if value is None and optional:
        return None
    _expect(value, field, isinstance(value, str), "a string" + (" or null" if optional else ""))
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(value: Any, field: str) -> None:
    _expect(value, field, value is None or _is_number(value), "a number or null")


def _finite(value: Any, field: str) -> None:
    _expect(value, field, value is None or (_is_number(value) and math.isfinite(value)), "a finite number or null")


def _count(value: Any, field: str, *, optional: bool = False, limit: int = 10**15) -> int | None:
    """A non-negative int up to ``limit`` (counts; a seed may use every digit the parser lets through)."""
    if value is None and optional:
        return None
    if not (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= limit):
        raise _Invalid(field, f"expected a count (an integer >= 0){' or null' if optional else ''}, got "
                              f"{_shown_value(value)}")
    return value


def _name(value: Any, field: str, *, optional: bool = False) -> str | None:
    """A model or judge id: a short one-line string without control or format characters."""
    if value is None and optional:
        return None
    _expect(value, field, isinstance(value, str), "a string" + (" or null" if optional else ""))
    if not value.strip() or len(value) > MAX_NAME_CHARS:
        raise _Invalid(field, f"expected a non-empty string of at most {MAX_NAME_CHARS} characters")
    bad = next((ch for ch in value if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co")), None)
    if bad is not None:
        raise _Invalid(field, f"holds the control character U+{ord(bad):04X}")
    return value


def _texts(value: Any, field: str) -> None:
    for k, item in enumerate(_list(value, field, optional=True)):
        _text(item, f"{field}[{k}]", optional=False)


def _check_document(path: Path, data: Any, skip_bad_tasks: bool) -> tuple[dict[str, Any], list[str]]:
    """The valid tasks of ``data`` and one line per task left out; ResultsFileError for a file-level problem."""
    if not isinstance(data, dict):
        raise ForeignResultsFile(path, f"not a sciprobe results file (the JSON is {_kind(data)}, not an object)")
    if "sciprobe" not in data:

        if is_lighteval_results(data):
            raise ForeignResultsFile(path, "lighteval's results file, not a sciprobe results file (no \"sciprobe\" "
                                     "block; `sciprobe leaderboard --import` rescores it from its details)",
                                     data, "lighteval")
        raise ForeignResultsFile(path, "not a sciprobe results file (no \"sciprobe\" block; write one with "
                                 "`sciprobe evaluate` or `sciprobe score`)", data)
    try:
        block = _check_block(data)
        configs = _object(data.get("config_tasks"), "config_tasks", optional=True)
    except _Invalid as exc:
        raise ResultsFileError(path, exc.problem, exc.field) from None
    tasks: dict[str, Any] = {}
    skipped: list[str] = []
    for key, entry in block["tasks"].items():
        field = _at("sciprobe.tasks", key)
        try:
            _check_task(key, entry, configs.get(key), field)
        except _Invalid as exc:
            if not skip_bad_tasks:
                raise ResultsFileError(path, exc.problem, exc.field) from None
            skipped.append(f"{exc.field}: {exc.problem}")
            continue
        tasks[key] = entry
    if not tasks:
        raise ResultsFileError(path, f"no usable task ({skipped[0]})" if skipped else "no task",
                               "" if skipped else "sciprobe.tasks")
    return tasks, skipped


def _check_block(data: dict[str, Any]) -> dict[str, Any]:
    block = _object(data["sciprobe"], "sciprobe")
    _name(block.get("model_id"), "sciprobe.model_id")
    for k, judge in enumerate(_list(block.get("judge_ids"), "sciprobe.judge_ids", optional=True)):
        _name(judge, f"sciprobe.judge_ids[{k}]")
    baseline = block.get("reference_baseline")
    if baseline is not False:  # the leaderboard's importer checks the flag against the model id
        baseline = _object(baseline, "sciprobe.reference_baseline", optional=True)
        for name in ("name", "description", "benchmark"):
            _text(baseline.get(name), f"sciprobe.reference_baseline.{name}")
    incomplete = _object(block.get("incomplete"), "sciprobe.incomplete", optional=True)
    _text(incomplete.get("reason"), "sciprobe.incomplete.reason")
    _texts(incomplete.get("tasks_not_run"), "sciprobe.incomplete.tasks_not_run")
    for name, summary in _object(incomplete.get("call_failures"), "sciprobe.incomplete.call_failures",
                                 optional=True).items():
        _call_failures(summary, _at("sciprobe.incomplete.call_failures", name))
    partial = _object(block.get("partial"), "sciprobe.partial", optional=True)
    for name in ("n_predicted", "n_items"):
        _count(partial.get(name), f"sciprobe.partial.{name}", optional=True)
    tasks = _object(block.get("tasks"), "sciprobe.tasks")
    if not tasks:
        raise _Invalid("sciprobe.tasks", "holds no task")
    general = _object(data.get("config_general"), "config_general", optional=True)
    for name in ("start_time", "end_time", "model_name"):
        _text(general.get(name), f"config_general.{name}")
    return block


def _call_failures(value: Any, field: str) -> None:
    summary = _object(value, field, optional=True)
    if summary:
        _count(summary.get("n"), f"{field}.n")
        _count(summary.get("n_items"), f"{field}.n_items")
        _text(summary.get("example"), f"{field}.example")
        for kind, n in _object(summary.get("kinds"), f"{field}.kinds", optional=True).items():
            _count(n, _at(f"{field}.kinds", kind))


def _declared_headline(config: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    headline = config.get("headline")
    if isinstance(headline, str) and headline:
        return headline
    return next((s["ci"]["metric"] for s in entry["scores"].values()
                 if isinstance(s.get("ci"), dict) and isinstance(s["ci"].get("metric"), str)), "")


def _check_task(key: str, entry: Any, config: Any, field: str) -> None:
    """One ``sciprobe.tasks[key]`` entry (and its ``config_tasks[key]``)."""
    if not _TASK_KEY.match(key):
        raise _Invalid(field, "a task key is BENCHMARK:TASK|SHOTS (letters, digits, _ . @ -)")
    entry = _object(entry, field)
    config = _object(config, _at("config_tasks", key), optional=True)
    for name in ("headline", "default_mode", "name"):
        _text(config.get(name), _at(_at("config_tasks", key), name))
    scores = _object(entry.get("scores"), f"{field}.scores")
    if not scores:
        raise _Invalid(f"{field}.scores", "no scores")
    _check_provenance(entry.get("provenance"), f"{field}.provenance")
    _text(entry.get("details"), f"{field}.details")
    _texts(entry.get("analysis_notes"), f"{field}.analysis_notes")
    for mode, report in scores.items():
        if not _MODE_NAME.match(mode):
            raise _Invalid(_at(f"{field}.scores", mode), "a mode name is letters, digits, _ . @ - (at most 60)")
        _object(report, _at(f"{field}.scores", mode))
    headline = _declared_headline(config, entry)
    for mode, report in scores.items():
        _check_report(report, _at(f"{field}.scores", mode), headline)
    if entry.get("items") is not None:
        _check_items(entry["items"], f"{field}.items")


def _check_limit(value: Any, field: str) -> None:
    """A ``--limit``: a count (older files) or ``{"n", "seed", "strategy"}`` (sciprobe.data.task_data)."""
    if isinstance(value, dict):
        _count(value.get("n"), f"{field}.n", optional=True)
        _count(value.get("seed"), f"{field}.seed", optional=True, limit=10**MAX_INT_DIGITS)
        _text(value.get("strategy"), f"{field}.strategy")
    else:
        _count(value, field, optional=True)


def _check_provenance(value: Any, field: str) -> None:
    prov = _object(value, field, optional=True)
    for name in ("benchmark", "benchmark_version", "dataset", "dataset_fingerprint", "dataset_revision",
                 "prompt_set", "prompt_hash", "prompt_version", "judge_id", "executor", "scored_from"):
        _text(prov.get(name), f"{field}.{name}")
    _name(prov.get("model_id"), f"{field}.model_id", optional=True)
    _texts(prov.get("judge_ids"), f"{field}.judge_ids")
    _check_limit(prov.get("limit"), f"{field}.limit")
    subset = _object(prov.get("subset"), f"{field}.subset", optional=True)
    _expect(subset.get("kind"), f"{field}.subset.kind", subset.get("kind") in (None, "limit", "cutoff"),
            '"limit", "cutoff" or null')
    for name in ("n", "of"):
        _count(subset.get(name), f"{field}.subset.{name}", optional=True)
    cutoff = _object(prov.get("cutoff"), f"{field}.cutoff", optional=True)
    _text(cutoff.get("cutoff"), f"{field}.cutoff.cutoff")
    _text(cutoff.get("source"), f"{field}.cutoff.source")
    for name in ("n_items_before", "n_items_after"):
        _count(cutoff.get(name), f"{field}.cutoff.{name}", optional=True)
    incomplete = prov.get("incomplete")
    _expect(incomplete, f"{field}.incomplete", incomplete is None or isinstance(incomplete, (str, dict)),
            "a string, an object or null")
    partial = _object(prov.get("partial"), f"{field}.partial", optional=True)
    for name in ("n_predicted", "n_items"):
        _count(partial.get(name), f"{field}.partial.{name}", optional=True)
    _call_failures(prov.get("call_failures"), f"{field}.call_failures")
    baseline = _object(prov.get("reference_baseline"), f"{field}.reference_baseline", optional=True)
    for name in ("name", "description"):
        _text(baseline.get(name), f"{field}.reference_baseline.{name}")


def _check_interval(value: Any, field: str, *, optional: bool = True) -> None:
    ci = _object(value, field, optional=optional)
    if not ci:
        return
    low, high = ci.get("low"), ci.get("high")
    _finite(low, f"{field}.low")
    _finite(high, f"{field}.high")
    if (low is None) != (high is None):
        raise _Invalid(field, "low and high are both numbers or both null")
    if low is not None and low > high:
        raise _Invalid(field, "low is above high")
    for name in ("metric", "method", "unit", "reason"):
        _text(ci.get(name), f"{field}.{name}")
    for name in ("n_resamples", "n_valid_resamples", "n_units"):
        _count(ci.get(name), f"{field}.{name}", optional=True)
    _count(ci.get("seed"), f"{field}.seed", optional=True, limit=10**MAX_INT_DIGITS)
    _number(ci.get("estimate"), f"{field}.estimate")
    _finite(ci.get("confidence"), f"{field}.confidence")


def _check_coverage(value: Any, field: str) -> None:
    coverage = _object(value, field)
    n_items = _count(coverage.get("n_items"), f"{field}.n_items")
    for name in ("n_scored", "n_failed"):
        if _count(coverage.get(name), f"{field}.{name}") > n_items:
            raise _Invalid(f"{field}.{name}", f"more than n_items ({n_items})")
    _number(coverage.get("failure_rate"), f"{field}.failure_rate")


def _check_report(report: dict[str, Any], field: str, headline: str) -> None:
    """One mode's ``ScoreReport.as_dict()`` with its interval and breakdowns."""
    if headline and headline in report:
        _number(report[headline], _at(field, headline))
    _check_coverage(report.get("coverage"), f"{field}.coverage")
    _text(report.get("metric"), f"{field}.metric")
    _text(report.get("mode"), f"{field}.mode")
    _texts(report.get("notes"), f"{field}.notes")
    _object(report.get("params"), f"{field}.params", optional=True)
    _check_interval(report.get("ci"), f"{field}.ci")
    for metric, ci in _object(report.get("other_ci"), f"{field}.other_ci", optional=True).items():
        _check_interval(ci, _at(f"{field}.other_ci", metric))
    for name, breakdown in _object(report.get("breakdowns"), f"{field}.breakdowns", optional=True).items():
        where = _at(f"{field}.breakdowns", name)
        breakdown = _object(breakdown, where)
        _text(breakdown.get("title"), f"{where}.title")
        for group, cell in _object(breakdown.get("groups"), f"{where}.groups", optional=True).items():
            at = _at(f"{where}.groups", group)
            cell = _object(cell, at)
            for number in ("score", "ci_low", "ci_high"):
                _number(cell.get(number), f"{at}.{number}")
            for count in ("n_items", "n_scored", "n_failed"):
                _count(cell.get(count), f"{at}.{count}", optional=True)


_NUMBER_CELL = (int, float, type(None))


def _number_cell(value: Any) -> bool:
    return type(value) in _NUMBER_CELL


def _text_cell(value: Any) -> bool:
    return value is None or type(value) is str


def _labels_cell(value: Any) -> bool:
    return type(value) is list and all(type(label) is str for label in value)


def _flag_cell(value: Any) -> bool:
    return type(value) is bool


_CELL_KINDS: dict[Callable[[Any], bool], str] = {
    _number_cell: "a number or null", _text_cell: "a string or null", _labels_cell: "a list of strings",
    _flag_cell: "true or false"}


def _column(values: Any, field: str, n: int, ok: Callable[[Any], bool]) -> None:
    """A per-item column: a list of ``n`` cells that each pass ``ok`` (one fast pass; the first bad cell is
    looked up only for the message)."""
    values = _list(values, field)
    if len(values) != n:
        raise _Invalid(field, f"holds {len(values)} entries for {n} items")
    if not all(map(ok, values)):
        k = next(k for k, value in enumerate(values) if not ok(value))
        raise _Invalid(f"{field}[{k}]", f"expected {_CELL_KINDS[ok]}, got {_kind(values[k])}")


def _check_items(value: Any, field: str) -> None:
    """The per-item table: ids, dates, clusters, groups and per mode the statistic, its columns and flags; the
    statistic is evaluated once, so a table that cannot give its headline never reaches a reader."""
    table = _object(value, field)
    ids = _list(table.get("ids"), f"{field}.ids")
    n = len(ids)
    if not all(type(item) is str for item in ids):
        k = next(k for k, item in enumerate(ids) if type(item) is not str)
        raise _Invalid(f"{field}.ids[{k}]", f"expected a string, got {_kind(ids[k])}")
    for name in ("dates", "clusters"):
        if table.get(name) is not None:
            _column(table[name], f"{field}.{name}", n, _text_cell)
    _text(table.get("cluster_field"), f"{field}.cluster_field")
    for name, labels in _object(table.get("groups"), f"{field}.groups", optional=True).items():
        _column(labels, _at(f"{field}.groups", name), n, _labels_cell)
    for mode, spec in _object(table.get("modes"), f"{field}.modes", optional=True).items():
        where = _at(f"{field}.modes", mode)
        spec = _object(spec, where)
        _text(spec.get("statistic"), f"{where}.statistic", optional=False)
        _text(spec.get("test"), f"{where}.test")
        _object(spec.get("params"), f"{where}.params", optional=True)
        columns = _object(spec.get("columns"), f"{where}.columns")
        for name, values in columns.items():
            _column(values, _at(f"{where}.columns", name), n, _number_cell)
        _column(spec.get("failed"), f"{where}.failed", n, _flag_cell)
        _evaluates(spec, where)


def _evaluates(spec: dict[str, Any], field: str) -> None:
    from sciprobe.scoring.item_scores import ItemScores

    try:
        items = ItemScores.from_json(spec)
        items.scored()
        items.value()
    except SciprobeError as exc:
        raise _Invalid(field, str(exc).splitlines()[0][:200]) from None
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as exc:
        # a missing column (KeyError), params of the wrong shape: the statistic cannot be computed
        raise _Invalid(field, f"the item statistic cannot be computed ({type(exc).__name__}: "
                              f"{_shown_path(str(exc))[:80]})") from None
