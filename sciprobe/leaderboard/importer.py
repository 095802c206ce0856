"""Import results files written by ``sciprobe evaluate`` / ``sciprobe demo`` / ``sciprobe baselines`` into a
leaderboard store, so a local leaderboard shows your own runs next to submissions (a reference baseline's file
becomes a reference result, owned by nobody: :mod:`~sciprobe.leaderboard.reference`). Scores are taken as computed
by sciprobe on this machine (the Space never accepts scores from submitters; this path is for the local store and
the Space's own baselines) — but a file is outside input all the same: it is read and its schema checked by
:func:`sciprobe.results.read.load_results_file` before anything is stored. A file that is not a sciprobe results
file (nor lighteval's) is refused with one line; a task whose entry is malformed, or whose numbers cannot come from its
metric (out of the range declared in :mod:`sciprobe.scoring.ranges`, a non-finite or absurd count) is refused with
one line and the rest imports.

Only what the evidence gate shows is imported (:func:`sciprobe.results.evidence.rank_verdict`): a complete result
covering
exactly the test ids of the data this leaderboard pins for its benchmark (:mod:`~sciprobe.leaderboard.pins`;
``SCIPROBE_LEADERBOARD_DATA``, else the bundled sample; those after its cutoff, for a cutoff result) — checked
against the pinned data itself, not against the counts the file claims. A result on other data or on some of the
items without saying so is left out with one line; a ``--limit`` sample of the pinned data is imported with one
line saying it is shown unranked.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.results.evidence import rank_verdict
from sciprobe.leaderboard.agreement import PROVENANCE_KEY, judge_scores_from_details
from sciprobe.results.read import details_file as _details_file
from sciprobe.leaderboard.pins import DataPin, data_pin
from sciprobe.leaderboard.queue import knowledge_cutoff
from sciprobe.leaderboard.records import DEFAULT_PROMPT_SET, ResultRecord
from sciprobe.leaderboard.reference import checked_flag
from sciprobe.leaderboard.store import LeaderboardStore
from sciprobe.leaderboard.validation import sanitize_text
from sciprobe.core.numbers import count
from sciprobe.results.read import ForeignResultsFile, load_results_file

MAX_NAME_CHARS = 200
COVERAGE_KEYS = ("n_items", "n_scored", "n_failed")

Warn = Callable[[str], None]


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def _family(model_id: str) -> str:
    return model_id.split("/", 1)[0] if "/" in model_id else model_id.split("-", 1)[0]


def _judge_scores(results_path: Path, details: str | None) -> dict | None:
    """Per-judge item scores from the task's details Parquet, when the task was scored by a panel of judges; None
    when there is no panel or no details file."""
    file = _details_file(results_path, details)
    try:
        return None if file is None else judge_scores_from_details(file)
    except Exception:  # noqa: BLE001 - an unreadable details file only loses the agreement view
        return None


def _text(value: Any, what: str, limit: int = MAX_NAME_CHARS) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise SciprobeError(f"{what} must be a non-empty string of at most {limit} characters")
    return value


def _check_task(key: str, task: Any) -> tuple[str, Any]:
    """(base task ref, TaskSpec) of one task entry whose structure and numbers are sound, else SciprobeError."""
    from sciprobe.core.registry import resolve_task
    from sciprobe.scoring.ranges import out_of_range

    if not isinstance(task, dict) or not isinstance(task.get("provenance"), dict):
        raise SciprobeError("no provenance")
    ref = ":".join(key.rsplit("|", 1)[0].split(":")[:2])
    benchmark, spec = resolve_task(ref)
    prov = task["provenance"]
    if prov.get("benchmark") != benchmark.name:
        shown = sanitize_text(prov.get("benchmark"), 40)
        raise SciprobeError(f"provenance.benchmark is {shown!r}, not {benchmark.name}")
    _text(prov.get("benchmark_version"), "provenance.benchmark_version", 40)
    _text(prov.get("dataset_fingerprint"), "provenance.dataset_fingerprint")
    if prov.get("dataset_revision") is not None:
        _text(prov["dataset_revision"], "provenance.dataset_revision")
    cutoff = prov.get("cutoff")
    if cutoff is not None and not (isinstance(cutoff, dict) and isinstance(cutoff.get("cutoff"), (str, type(None)))):
        raise SciprobeError("provenance.cutoff must be an object with a date")
    scores = task.get("scores")
    if not isinstance(scores, dict) or not scores:
        raise SciprobeError("no scores")
    for mode, report in scores.items():
        if mode not in spec.modes:
            raise SciprobeError(f"unknown mode {sanitize_text(mode, 30)!r} (modes: {', '.join(spec.modes)})")
        if not isinstance(report, dict):
            raise SciprobeError(f"scores.{mode} must be an object")
        problem = out_of_range(spec.metric, mode, report)
        if problem:
            raise SciprobeError(problem)
        coverage = report.get("coverage")
        counts = [count(coverage.get(k)) for k in COVERAGE_KEYS] if isinstance(coverage, Mapping) else [None]
        if None in counts or counts[1] > counts[0] or counts[2] > counts[0]:
            raise SciprobeError(f"scores.{mode}.coverage must hold counts n_items >= n_scored, n_failed")
    return ref, spec


#: (task ref, the result's cutoff or None) -> the pinned items it must cover (sciprobe.results.evidence.PinnedItems)
PinnedLookup = Callable[[str, "str | None"], Any]


def pinned_lookup(pins: Mapping[str, DataPin] | None = None) -> PinnedLookup:
    """The items a result must cover on the data ``pins`` names per benchmark (default: the environment's,
    :func:`~sciprobe.leaderboard.pins.data_pin`; a benchmark it does not name: its bundled sample)."""
    from sciprobe.leaderboard.validation import pinned_items

    def lookup(ref: str, cutoff: str | None) -> Any:
        benchmark = ref.partition(":")[0]
        pin = (pins or {}).get(benchmark) or data_pin(benchmark)
        return pinned_items(ref, pin.resolve(), cutoff)

    return lookup


def _id_list(ids: Any) -> list[str] | None:
    if not isinstance(ids, list) or not all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in ids):
        return None
    return [str(i) for i in ids]


def _scored_ids(task: Mapping[str, Any], results_path: Path) -> list[str] | None:
    """The item ids a task entry scored: its per-item table (``items.ids``), else the ``id`` column of its details
    file (a result written without the table, e.g. by ``sciprobe import-upstream``); None when it has neither."""
    items = task.get("items")
    if isinstance(items, Mapping):
        return _id_list(items.get("ids"))
    file = _details_file(results_path, task.get("details"))
    if file is None:
        return None
    try:
        import pyarrow.parquet as pq

        return _id_list(pq.read_table(file, columns=["id"]).column("id").to_pylist())
    except Exception:  # noqa: BLE001 - an unreadable details file: no ids, so the result is not taken
        return None


def gate(ref: str, task: Mapping[str, Any], pinned: PinnedLookup, results_path: Path) -> Any:
    """The evidence gate's verdict on one task entry of the results file ``results_path``, checked against the items
    of the data this leaderboard pins for its benchmark (``pinned``: :func:`pinned_lookup`)."""
    provenance = task["provenance"]
    verdict = rank_verdict(provenance)
    if not verdict.shown:  # no need to load the pinned data to refuse it
        return verdict
    cutoff = provenance.get("cutoff") if isinstance(provenance.get("cutoff"), Mapping) else {}
    date = cutoff.get("cutoff")
    counts = [report["coverage"].get("n_items") for report in task["scores"].values()]
    return rank_verdict(provenance, scored_ids=_scored_ids(task, results_path), n_items=counts,
                        pinned=pinned(ref, date if isinstance(date, str) and date else None))


def import_results_file(store: LeaderboardStore, path: Path, user: str = "local", *, warn: Warn = _warn,
                        pinned: PinnedLookup | None = None) -> list[str]:
    """Add every task of one results JSON to ``store``; returns the result ids (re-importing replaces).

    Raises :class:`SciprobeError` (one line) when the file is not a sciprobe results file. A task whose entry is
    malformed or whose numbers are out of its metric's range is refused through ``warn`` and left out; the other
    tasks import. A task the evidence gate does not rank (:func:`gate`: incomplete — a cap cut it short or calls
    got no answer — a ``--partial`` score, not the items of the pinned data it says it covers (``pinned``, default
    :func:`pinned_lookup` of the environment)) is left out with a ``warn`` line too; a ``--limit`` sample is
    imported with one, to be shown unranked."""
    path = Path(path)
    pinned = pinned or pinned_lookup()

    def again(written: Path) -> list[str]:
        return import_results_file(store, written, user, warn=warn, pinned=pinned)

    try:
        if path.suffix == ".parquet":  # a lighteval details file named on its own: rescored, then imported
            from sciprobe.leaderboard.lighteval_import import import_details_file

            if not path.is_file():  # a FIFO or a device is never opened (reading one blocks or never ends)
                raise SciprobeError("not a regular file: not read")

            return import_details_file(path, again)
    except SciprobeError as exc:
        raise SciprobeError(f"{path}: {exc}") from None
    try:
        results = load_results_file(path, skip_bad_tasks=True)
    except ForeignResultsFile as exc:
        if exc.kind != "lighteval":
            raise
        from sciprobe.leaderboard.lighteval_import import import_lighteval_results

        # lighteval's own results: every task rescored from its details
        return import_lighteval_results(
            path, exc.data, again, warn)
    for problem in results.skipped_tasks:
        warn(f"{sanitize_text(path, 300)}: task refused: {sanitize_text(problem, 300)}")
    block = results.block
    model_id = results.model_id
    try:  # a reference baseline (sciprobe baselines): a reference row, owned by nobody
        reference = checked_flag(model_id, block.get("reference_baseline"))
    except SciprobeError as exc:
        raise SciprobeError(f"{path}: {exc}") from None
    owner = "" if reference else user
    # I2R writes one entry per mode ("idrbench:i2r|0", "idrbench:i2r:corrected|0"): merge them per task.
    merged: dict[str, dict] = {}
    for key, task in block["tasks"].items():
        try:
            ref, _ = _check_task(str(key), task)
        except SciprobeError as exc:
            warn(f"{path}: task {sanitize_text(key, 60)!r} refused: {sanitize_text(exc, 200)}")
            continue
        try:
            verdict = gate(ref, task, pinned, path)
        except SciprobeError as exc:  # the pinned data cannot be loaded: nothing to check the result against
            warn(f"{path}: task {sanitize_text(key, 60)!r} left out: no pinned data to check it against "
                 f"({sanitize_text(exc, 200)})")
            continue
        if not verdict.shown:  # never on a leaderboard
            warn(f"{path}: task {sanitize_text(key, 60)!r} left out: {sanitize_text(verdict.reason, 300)}")
            continue
        if not verdict.rankable:  # a --limit sample: shown as one, never ranked next to full runs
            warn(f"{path}: task {sanitize_text(key, 60)!r} imported unranked: {sanitize_text(verdict.reason, 300)}")
        entry = merged.setdefault(ref, {"scores": {}, "provenance": dict(task["provenance"]), "default": None,
                                        "headline": ""})
        panel = _judge_scores(path, task.get("details"))
        if panel is not None:
            entry["provenance"][PROVENANCE_KEY] = panel
        entry["scores"].update(task["scores"])
        entry["default"] = entry["default"] or results.default_mode(key)
        entry["headline"] = entry["headline"] or (results.config(key).get("headline") or "")
    request_id = "import-" + results.digest[:16]
    knowledge = knowledge_cutoff(model_id, None) if reference is None else None
    ids = []
    for ref, entry in merged.items():
        from sciprobe.core.registry import resolve_task

        prov = entry["provenance"]
        default = entry["default"]
        headline = entry["headline"] or resolve_task(ref)[1].headline
        record = ResultRecord(
            request_id=request_id, user=owner, model_name=model_id, task=ref, benchmark=prov["benchmark"],
            benchmark_version=prov["benchmark_version"], dataset_fingerprint=prov["dataset_fingerprint"],
            headline=headline, default_mode=default, scores=entry["scores"], provenance=prov,
            cutoff=(prov.get("cutoff") or {}).get("cutoff"), dataset_revision=prov.get("dataset_revision") or None,
            judge_ids=list(block.get("judge_ids") or []), model_family="" if reference else _family(model_id),
            model_cutoff=knowledge.cutoff if knowledge else None,
            model_cutoff_source=knowledge.source if knowledge else None,
            prompt_set=prov.get("prompt_set") or DEFAULT_PROMPT_SET, reference_baseline=reference)
        ids.append(store.add_result(record))
    return ids


def results_files(location: Path) -> list[Path]:
    """``location`` itself when it is not a folder (a results JSON, or a lighteval details ``.parquet``; anything
    else is refused when read), else every ``results_*.json`` below it (sciprobe's, or lighteval's, which bring
    their details along)."""
    location = Path(location)
    return sorted(location.rglob("results_*.json")) if location.is_dir() else [location]


def import_results_dir(store: LeaderboardStore, folder: Path, user: str = "local", *, warn: Warn = _warn,
                       pinned: PinnedLookup | None = None) -> int:
    """Import every ``results_*.json`` below ``folder`` (or the file ``folder``); returns how many task results
    were added. A file that cannot be imported is one ``warn`` line and the import goes on with the next."""
    folder = Path(folder)
    if not folder.exists():
        warn(f"{folder}: no such file or folder; nothing imported from it")
        return 0
    added = 0
    for file in results_files(folder):
        try:
            added += len(import_results_file(store, file, user, warn=warn, pinned=pinned))
        except SciprobeError as exc:
            warn(f"skipped {sanitize_text(exc, 300)}")
        except Exception as exc:  # noqa: BLE001 - one bad file never ends the import with a traceback
            warn(f"skipped {file}: {type(exc).__name__}: {sanitize_text(exc, 200)}")
    return added
