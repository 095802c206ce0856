"""Strict validation of leaderboard submissions, before anything is stored or scored.

A submission is a predictions JSONL file for one task (the format of :mod:`sciprobe.data.predictions`) plus model
metadata. Checks, each failing with a one-line :class:`SubmissionError` that names the file and line:

* file name: a plain base name ending in ``.jsonl``/``.json`` (no directories, ``..``, control characters), or
  ``.parquet`` for lighteval's details file of a run of sciprobe's task cards: its answers become the predictions
  (:mod:`sciprobe.interop.lighteval_results`) and its golds must be the pinned dataset's (else it was made on other
  data);
* size: at most ``max_bytes`` (checked on disk before reading), every line at most ``max_line_bytes``;
* encoding: UTF-8 without byte-order mark, no NUL bytes (binary files);
* schema: one JSON object per line, no duplicate keys, only the task's fields (single-call tasks: ``id`` plus
  ``response`` *or* ``prediction``; I2R: ``id``, ``ranking``, optional ``scores``; an optional ``task`` field
  must name this task), no NaN/Infinity, bounded nesting and string lengths;
* ids: strings, each a test id of the dataset the leaderboard scores against (named in the message), no
  duplicates, none missing ("N of M items have no prediction": a missing prediction is not a wrong answer, and a
  partial submission is never ranked).

The output is a canonical JSONL (sorted ids, only known fields) — what is stored, hashed for duplicate
detection and fed to :func:`sciprobe.run.score_predictions.score_file` (which reads it with
:func:`sciprobe.data.predictions.read_predictions`). Free-text metadata is sanitised with :func:`sanitize_text`
and HTML-escaped for display with :func:`display_text`.
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.leaderboard.reference import PREFIX as REFERENCE_PREFIX
from sciprobe.leaderboard.reference import reserved_model_name
from sciprobe.core.numbers import MAX_ABS_NUMBER, finite_number

MAX_FILE_BYTES = 20_000_000
MAX_LINE_BYTES = 256_000          # well under sciprobe.data.predictions.MAX_LINE_BYTES
MAX_RESPONSE_CHARS = 100_000
MAX_RANKING = 500
MAX_TITLE_CHARS = 2_000
MAX_ID_CHARS = 200

# used with fullmatch: "$" alone would let a trailing newline through ("alice\n" passed the user-name check)
_MODEL_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+\-/:@]{0,119}")
_FILE_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\- ]{0,127}")
_FAMILY_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\- ]{0,39}")
_REVISION_RE = re.compile(r"[A-Za-z0-9._\-/]{0,80}")
_USER_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,38}")


class SubmissionError(SciprobeError):
    """A submission was rejected; the message is one line and safe to show."""


# ---------------------------------------------------------------- text fields

def sanitize_text(value: Any, max_len: int) -> str:
    """Drop control and format characters (incl. bidi overrides, zero-width), collapse whitespace, cap length."""
    try:
        text = "" if value is None else str(value)
    except ValueError:  # str() of an int with more than 4,300 digits
        text = f"<{type(value).__name__} too large to show>"
    text = "".join(" " if ch in "\t\n\r" else ch for ch in text
                   if ch in "\t\n\r" or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn"))
    text = " ".join(text.split())
    return text if len(text) <= max_len else text[: max_len - 1] + "…"


def display_text(value: Any, max_len: int = 120) -> str:
    """:func:`sanitize_text` then ``html.escape`` — for anything user-supplied that reaches the page."""
    return html.escape(sanitize_text(value, max_len), quote=True)


def _short(value: Any, n: int = 60) -> str:
    return repr(sanitize_text(value, n))


@dataclass(frozen=True)
class ModelInfo:
    """Submitted model metadata, already validated."""

    model_name: str
    model_family: str = ""
    model_revision: str = ""
    model_cutoff: str | None = None
    description: str = ""


def default_family(model_name: str) -> str:
    """``openai/gpt-4o-mini`` -> ``gpt``; ``meta-llama/Llama-3.1-8B`` -> ``llama``."""
    base = model_name.rsplit("/", 1)[-1].lower()
    match = re.match(r"[a-z]+", base)
    return match.group(0) if match else "other"


def validate_model_info(model_name: Any, model_family: Any = "", model_revision: Any = "", model_cutoff: Any = "",
                        description: Any = "") -> ModelInfo:
    """Model names are identifiers (``owner/name``-like, no markup), NFKC-normalised first (full-width letters
    become plain ones); free text is sanitised."""
    name = "" if model_name is None else unicodedata.normalize("NFKC", str(model_name)).strip()
    if not name:
        raise SubmissionError("model name is required")
    if not _MODEL_NAME_RE.fullmatch(name) or ".." in name or "//" in name:
        raise SubmissionError(f"model name {_short(name)} may only use letters, digits and . _ + - / : @ "
                              "(at most 120 characters)")
    if reserved_model_name(name):
        raise SubmissionError(f"model name {_short(name)}: the prefix {REFERENCE_PREFIX} is reserved for the "
                              "leaderboard's reference baselines")
    family = sanitize_text(model_family, 40)
    if family and not _FAMILY_RE.fullmatch(family):
        raise SubmissionError(f"model family {_short(family)} may only use letters, digits, spaces and . _ -")
    revision = sanitize_text(model_revision, 80)
    if not _REVISION_RE.fullmatch(revision):
        raise SubmissionError(f"model revision {_short(revision)} may only use letters, digits and . _ - /")
    cutoff = sanitize_text(model_cutoff, 10) or None
    if cutoff is not None:
        from sciprobe.data.cutoffs import parse_cutoff

        try:
            parse_cutoff(cutoff)
        except SciprobeError as exc:
            raise SubmissionError(f"knowledge cutoff: {exc}") from None
    return ModelInfo(name, family.lower() or default_family(name), revision, cutoff, sanitize_text(description, 500))


def validate_user(name: Any) -> str:
    """A user name as the store counts it for the rate limit, dedupe and ownership: NFKC, trimmed; letters,
    digits and ``_ . -`` only (no whitespace, control or look-alike characters survive); case is folded by the
    store (:func:`~sciprobe.leaderboard.records.identity_key`)."""
    if name is None or not str(name).strip():
        raise SubmissionError("sign in first")
    user = unicodedata.normalize("NFKC", str(name)).strip()
    if not _USER_RE.fullmatch(user):
        raise SubmissionError("user names may only use letters, digits and _ . - (at most 39 characters)")
    return user


def validate_file_name(name: Any) -> str:
    """A plain base name: no directory part, no traversal, no control characters, a JSONL extension."""
    raw = "" if name is None else str(name)
    if not raw:
        raise SubmissionError("the predictions file has no name")
    if "/" in raw or "\\" in raw or raw.startswith(".") or ".." in raw or "\x00" in raw:
        raise SubmissionError(f"file name {_short(raw)} is not allowed (no directories, '..' or hidden files)")
    if not _FILE_NAME_RE.fullmatch(raw):
        raise SubmissionError(f"file name {_short(raw)} may only use letters, digits, spaces and . _ - "
                              "(at most 128 characters)")
    if not raw.lower().endswith((".jsonl", ".json", ".parquet")):
        raise SubmissionError(f"file name {_short(raw)} must end with .jsonl (or .parquet: a lighteval details file)")
    return raw


# ---------------------------------------------------------------- the predictions file

@dataclass(frozen=True)
class TaskTarget:
    """What a task's predictions must match: the exact test ids and, for rankings, the candidates per id."""

    ref: str
    benchmark: str
    benchmark_version: str
    kind: str                                   # "single" | "ranking"
    allows_prediction: bool                     # yes/no labels accepted (classification tasks)
    ids: tuple[str, ...]
    candidates: Mapping[str, frozenset[str]] = field(default_factory=dict)
    dataset_fingerprint: str = ""
    min_item_date: str | None = None
    cutoff: str | None = None
    dataset: str = ""                           # how the dataset is named (hub id, folder:<name>, sample:<bench>)
    golds: Mapping[str, Any] = field(default_factory=dict)  # item id -> gold (details uploads must agree)


@functools.lru_cache(maxsize=64)
def _load_target(ref: str, data: str | None, fingerprint_key: str) -> TaskTarget:
    from sciprobe.core.registry import resolve_task
    from sciprobe.run.score_predictions import row_item_id
    from sciprobe.data.task_data import load_task_data
    from sciprobe.run.task_runner import runner_of

    benchmark, task = resolve_task(ref)
    loaded = load_task_data(benchmark, task, data)
    runner = runner_of(task)
    kind = "ranking" if "ranking" in runner.prediction_fields(task) else "single"
    candidates = {}
    if kind == "ranking":
        candidates = {str(r["id"]): runner.candidates(r) or frozenset() for r in loaded.rows}
    dates = sorted(str(r["date"]) for r in loaded.rows if r.get("date"))
    ids = tuple(row_item_id(benchmark, task, r) for r in loaded.rows)
    golds = {i: task.gold(r) for i, r in zip(ids, loaded.rows)} if task.gold else {}
    return TaskTarget(ref, benchmark.name, benchmark.version, kind, bool(task.prediction_labels), ids, candidates,
                      loaded.fingerprint, dates[0] if dates else None, loaded.cutoff.get("cutoff"),
                      describe_dataset(loaded.source, loaded.revision), golds)


def describe_dataset(label: str, revision: str | None) -> str:
    """The dataset a leaderboard scores against, for messages: ``org/idrbench@rev``, or the bundled sample."""
    if label.startswith("sample:"):
        return f"the bundled {label.split(':', 1)[1]} sample (a demo)"
    return f"{label}@{revision}" if revision else label


def task_target(ref: str, data: str | None) -> TaskTarget:
    """The ids (and candidates) of ``ref`` in ``data`` (a built dataset folder); cached per folder content."""
    if task_ref_error(ref):
        raise SubmissionError(task_ref_error(ref))
    key = ""
    if data and Path(data).is_dir():
        from sciprobe.data.build import dataset_fingerprint

        key = dataset_fingerprint(Path(data))
    return _load_target(ref, data, key)


@functools.lru_cache(maxsize=64)
def _cutoff_ids(ref: str, data: str | None, fingerprint_key: str, cutoff: str) -> tuple[str, ...]:
    from sciprobe.core.registry import resolve_task
    from sciprobe.data.cutoffs import parse_cutoff
    from sciprobe.run.score_predictions import row_item_id
    from sciprobe.data.task_data import load_task_data

    benchmark, task = resolve_task(ref)
    loaded = load_task_data(benchmark, task, data, cutoff=parse_cutoff(cutoff))
    return tuple(row_item_id(benchmark, task, r) for r in loaded.rows)


def pinned_items(ref: str, data: str | None, cutoff: str | None = None) -> Any:
    """What a result of ``ref`` must cover to be ranked on the data ``data`` (a leaderboard's pin): its test ids,
    those after ``cutoff`` (ISO date) when the result has one
    (:class:`sciprobe.results.evidence.PinnedItems`; :func:`sciprobe.results.evidence.rank_verdict` decides)."""
    from sciprobe.results.evidence import PinnedItems

    target = task_target(ref, data)
    ids = target.ids
    if cutoff:
        ids = _cutoff_ids(ref, data, target.dataset_fingerprint, cutoff)  # cached per data content
    return PinnedItems(frozenset(ids), len(target.ids), f"this leaderboard's data ({target.dataset})")


def task_ref_error(ref: Any) -> str | None:
    """None when ``ref`` names a registered task, else the message."""
    from sciprobe.core.registry import resolve_task

    if not isinstance(ref, str) or not ref:
        return "choose a task (BENCH:TASK)"
    try:
        resolve_task(ref)
    except SciprobeError as exc:
        return f"wrong task: {sanitize_text(exc, 300)}"
    # agent loops: no predictions file can stand in for them
    from sciprobe.run.score_predictions import replay_refusal

    return replay_refusal(ref)


@functools.lru_cache(maxsize=8)
def _tasks_taking(field_name: str) -> str:
    """The registered tasks whose predictions files carry ``field_name`` (for hints)."""
    from sciprobe.core.registry import benchmark_names, get_benchmark
    from sciprobe.run.task_runner import runner_of

    refs = [f"{b}:{t.name}" for b in benchmark_names() for t in get_benchmark(b).tasks.values()
            if field_name in runner_of(t).prediction_fields(t)]
    return ", ".join(refs) or "no registered task"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed (use null)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _parse_line(raw: bytes, where: str) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
        item = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise SubmissionError(f"{where}: JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise SubmissionError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):  # Python refuses ints of more than 4,300 digits
            raise SubmissionError(f"{where}: a number with too many digits") from None
        raise SubmissionError(f"{where}: {sanitize_text(exc, 120)}") from None
    if not isinstance(item, dict):
        raise SubmissionError(f"{where}: expected a JSON object, got {type(item).__name__}")
    try:  # a "\ud800" escape parses to a lone surrogate, which no UTF-8 store or page can hold
        json.dumps(item, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise SubmissionError(f"{where}: text that is not valid Unicode (a lone surrogate such as \\ud800)") from None
    except RecursionError:
        raise SubmissionError(f"{where}: JSON nested too deeply") from None
    return item


def _check_item(item: dict[str, Any], target: TaskTarget, where: str) -> dict[str, Any]:
    """The canonical item (only known fields, normalised values) or a SubmissionError."""
    item_id = item.get("id")
    if "id" not in item:
        raise SubmissionError(f"{where}: missing \"id\"")
    if not isinstance(item_id, str) or not item_id or len(item_id) > MAX_ID_CHARS:
        raise SubmissionError(f"{where}: \"id\" must be a non-empty string (ids are strings, e.g. \"2501.04639\")")
    if "task" in item and item["task"] != target.ref:
        raise SubmissionError(f"{where}: wrong task {_short(item['task'])}; this upload is for {target.ref}")
    if target.kind == "ranking":
        allowed = {"id", "task", "ranking", "scores"}
    else:
        allowed = {"id", "task", "response", "prediction"}
    extra = sorted(set(item) - allowed)
    if extra:
        hint = f" (ranking fields belong to {_tasks_taking('ranking')})" if {"ranking", "scores"} & set(extra) else ""
        hint = hint or (" (response/prediction fields belong to single-answer tasks)"
                        if {"response", "prediction"} & set(extra) else "")
        raise SubmissionError(f"{where}: unexpected field {_short(extra[0])} for {target.ref}{hint}")
    if target.kind == "ranking":
        return {"id": item_id, **_check_ranking(item, target, where)}
    has_response, has_prediction = "response" in item, "prediction" in item
    if has_response == has_prediction:
        raise SubmissionError(f"{where}: give exactly one of \"response\" (raw model text) or \"prediction\"")
    if has_response:
        response = item["response"]
        if response is not None and not isinstance(response, str):
            raise SubmissionError(f"{where}: \"response\" must be a string or null, got {type(response).__name__}")
        if isinstance(response, str) and len(response) > MAX_RESPONSE_CHARS:
            raise SubmissionError(f"{where}: \"response\" is longer than {MAX_RESPONSE_CHARS} characters")
        return {"id": item_id, "response": response}
    if not target.allows_prediction:
        raise SubmissionError(f"{where}: {target.ref} takes raw \"response\" text, not \"prediction\"")
    label = item["prediction"]
    if isinstance(label, bool):
        label = "yes" if label else "no"
    if label is not None and (not isinstance(label, str) or label.strip().lower() not in ("yes", "no")):
        raise SubmissionError(f"{where}: \"prediction\" must be \"yes\", \"no\" or null, got {_short(label, 30)}")
    return {"id": item_id, "prediction": label.strip().lower() if isinstance(label, str) else None}


def _check_ranking(item: dict[str, Any], target: TaskTarget, where: str) -> dict[str, Any]:
    ranking = item.get("ranking")
    if not isinstance(ranking, list) or not ranking or not all(isinstance(t, str) for t in ranking):
        raise SubmissionError(f"{where}: \"ranking\" must be a non-empty list of candidate titles")
    if len(ranking) > MAX_RANKING or any(len(t) > MAX_TITLE_CHARS for t in ranking):
        raise SubmissionError(f"{where}: \"ranking\" is too long")
    if len(set(ranking)) != len(ranking):
        raise SubmissionError(f"{where}: \"ranking\" lists a title twice")
    allowed = target.candidates.get(item["id"], frozenset())
    unknown = [t for t in ranking if t not in allowed]
    if unknown and item["id"] in target.candidates:
        raise SubmissionError(f"{where}: {_short(unknown[0])} is not a candidate for id {_short(item['id'])}")
    out: dict[str, Any] = {"ranking": ranking}
    scores = item.get("scores")
    if scores is not None:
        numbers = [finite_number(s, limit=MAX_ABS_NUMBER) for s in scores] if isinstance(scores, list) else [None]
        if len(numbers) != len(ranking) or None in numbers:
            raise SubmissionError(f"{where}: \"scores\" must be a list of finite numbers "
                                  f"(|x| <= {MAX_ABS_NUMBER:.0e}) as long as \"ranking\"")
        out["scores"] = numbers
    return out


def parse_submission(data: bytes, target: TaskTarget, file_name: str, *,
                     max_line_bytes: int = MAX_LINE_BYTES) -> dict[str, dict[str, Any]]:
    """Every line checked against ``target``; returns id -> canonical item (all ids present exactly once)."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise SubmissionError(f"{file_name}: starts with a byte-order mark; save it as UTF-8 without BOM")
    if b"\x00" in data:
        raise SubmissionError(f"{file_name}: binary data (NUL bytes); expected a UTF-8 JSONL text file")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SubmissionError(f"{file_name}: not UTF-8 text (invalid byte at offset {exc.start})") from None
    known = set(target.ids)
    out: dict[str, dict[str, Any]] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        where = f"{file_name} line {number}"
        if len(raw) > max_line_bytes:
            raise SubmissionError(f"{where}: longer than {max_line_bytes} bytes")
        if not raw.strip():
            continue
        item = _check_item(_parse_line(raw, where), target, where)
        if item["id"] not in known:
            raise SubmissionError(f"{where}: unknown id {_short(item['id'])} for {target.ref} in "
                                  f"{target.dataset or 'the dataset this leaderboard scores against'}")
        if item["id"] in out:
            raise SubmissionError(f"{where}: duplicate id {_short(item['id'])}")
        out[item["id"]] = item
    if not out:
        raise SubmissionError(f"{file_name} holds no predictions")
    missing = [i for i in target.ids if i not in out]
    if missing:
        raise SubmissionError(f"{file_name}: {len(missing)} of {len(target.ids)} items have no prediction "
                              f"(first: {_short(missing[0])}); a partial submission is never ranked: submit one line "
                              f"per test item of {target.ref} (null for no answer)")
    return out


def lighteval_details_predictions(path: Path, target: TaskTarget, name: str) -> bytes:
    """A lighteval details file of ``target``'s task as predictions JSONL (its answers as raw ``response`` text);
    its golds must be the leaderboard dataset's: details made on other data are refused, whatever their ids."""
    from sciprobe.interop.lighteval_results import check_golds, predictions_bytes, read_details

    try:
        run = read_details(path)
        if run.task.rsplit("|", 1)[0] != target.ref:
            raise SciprobeError(f"the details are of task {_short(run.task)}, this upload is for {target.ref}")
        check_golds(run, target.golds, target.dataset or target.ref)
    except SciprobeError as exc:
        raise SubmissionError(f"{name}: {sanitize_text(exc, 300)}") from None
    if target.kind != "single":
        raise SubmissionError(f"{name}: {target.ref} takes rankings, which lighteval details do not hold")
    return predictions_bytes(run)


def _refuse_lighteval_results(raw: bytes, name: str) -> None:
    """A lighteval results JSON holds only aggregated scores, which a Space never takes from outside: say so
    (rather than "line 1: not valid JSON")."""
    if not raw.lstrip().startswith(b"{") or b"lighteval_sha" not in raw[:200_000]:
        return
    from sciprobe.results.read import is_lighteval_results

    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return
    if is_lighteval_results(data):
        raise SubmissionError(f"{name} is lighteval's results file: its scores are never taken from outside; upload "
                              "that run's details file (details_<task>|<shots>_<date>.parquet, lighteval "
                              "--save-details), which this Space rescores")


def canonical_jsonl(items: Mapping[str, Mapping[str, Any]], order: Sequence[str]) -> bytes:
    return "".join(json.dumps(items[i], ensure_ascii=False, sort_keys=True) + "\n" for i in order).encode("utf-8")


@dataclass(frozen=True)
class ValidatedSubmission:
    """A submission that passed every check: what gets stored and scored."""

    target: TaskTarget
    model: ModelInfo
    file_name: str
    canonical: bytes
    sha256: str
    n_predictions: int


def validate_submission(task_ref: Any, file_path: Path | str | None, model: ModelInfo, *, data: str | None,
                        file_name: str | None = None, max_bytes: int = MAX_FILE_BYTES,
                        max_line_bytes: int = MAX_LINE_BYTES) -> ValidatedSubmission:
    """Check everything; raise :class:`SubmissionError` with one line on the first problem."""
    error = task_ref_error(task_ref)
    if error:
        raise SubmissionError(error)
    if file_path is None or not Path(file_path).is_file():
        raise SubmissionError("upload a predictions file (JSONL)")
    path = Path(file_path)
    name = validate_file_name(file_name if file_name is not None else path.name)
    size = path.stat().st_size
    if size > max_bytes:
        raise SubmissionError(f"{name}: {size} bytes is over the {max_bytes}-byte limit")
    if size == 0:
        raise SubmissionError(f"{name} is empty")
    target = task_target(task_ref, data)
    raw = lighteval_details_predictions(path, target, name) if name.lower().endswith(".parquet") else path.read_bytes()
    _refuse_lighteval_results(raw, name)
    items = parse_submission(raw, target, name, max_line_bytes=max_line_bytes)
    canonical = canonical_jsonl(items, target.ids)
    return ValidatedSubmission(target, model, name, canonical, hashlib.sha256(canonical).hexdigest(), len(items))
