"""No number without its evidence: which items got no answer, and what a result may be used for.

A result is one of three things (README, "Complete, partial, incomplete"):

* **complete** — every item the task was asked on has an answer (or, scored from a file, a prediction) and a
  verdict; the only kind that is exported (model-index, eval-results) or put on a leaderboard.
* **partial** — ``sciprobe score --partial`` of a predictions file that lacks items: scored over the items it
  has, marked ``partial`` everywhere it is shown, never exported or ranked.
* **incomplete** — some items got no answer: a ``--max-calls``/``--max-cost`` cap stopped the run, or calls
  failed (connection refused, timeout, exhausted quota, 5xx after the retries). The items whose call failed
  are left out of every mode's score (a failed call is not a wrong answer), the command exits
  ``EXIT_INCOMPLETE``, no model-index is written, nothing is exported or ranked, and rerunning the same
  command resumes from the response cache (failures are never cached, so only they are asked again).

Runners mark an item whose call got no answer with ``parse_path = CALL_FAILED`` and the reason in ``error``
(:func:`unanswered` for the evaluated model's completion, :func:`mark_call_failure` when a judge call the
item's score needs failed). :func:`leave_out_call_failures` (run by :func:`sciprobe.run.task_runner.run_task` on
every result) rescores what is left and records the count and the reasons in the result's provenance.

A complete result may still cover only part of its dataset (``provenance["subset"]``, :func:`subset_of`): a
``--limit`` sample (``limit``) or the items after a temporal cutoff (``cutoff``). Such a score is shown against
the dataset (``120/1120 (limit)``, :func:`coverage_text`), never as if it were the benchmark's. What a result may
be used for is decided here and nowhere else (:func:`rank_verdict`): only a complete result on the full data a
leaderboard pins, item for item (the ids it scored are the pinned data's test ids, not the file's own claim), is
ranked; a cutoff result is ranked only among results with the same cutoff (its own group: the same cutoff gives
every model the same items); a ``--limit`` sample is shown, labelled, but never ranked, exported or put in a model
card.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sciprobe.core.declaration import Parsed

#: ``parse_path`` of an item whose call got no answer (never a parse failure, never scored).
CALL_FAILED = "error"
#: ``parse_path`` of an item whose model answered with nothing (an empty reply, a null prediction): the
#: model's failure, scored as each mode scores an unparsable answer.
NO_ANSWER = "failed:no_answer"

COMPLETE, PARTIAL, INCOMPLETE = "complete", "partial", "incomplete"
#: kinds of subset (``provenance["subset"]["kind"]``): a ``--limit`` sample, the items after a temporal cutoff
LIMIT, CUTOFF = "limit", "cutoff"


def unanswered(completion: Any) -> Parsed:
    """The parse of a completion that is not ``ok``: a call failure, or (``completion.empty``) an empty answer."""
    if getattr(completion, "empty", False):
        return Parsed(None, NO_ANSWER, {"official": None, "reason": "no_answer"})
    return Parsed(None, CALL_FAILED, {"official": None})


def call_failed(completion: Any) -> bool:
    """True when ``completion`` got no answer from its provider (neither text nor an empty answer)."""
    return not completion.ok and not getattr(completion, "empty", False)


def error_is_call_failure(error: str | None) -> bool:
    """For runners that keep only a failed call's error text (judge replies): True when it got no answer (not an
    empty reply, which is the judge's unreadable verdict)."""
    return error is not None and not str(error).startswith(("EmptyResponse", "empty prediction",
                                                             "judge returned no text"))


def mark_call_failure(record: dict[str, Any], error: str, who: str | None = None) -> None:
    """Mark ``record`` as an item whose call got no answer; ``who`` names a judge whose call it was (the
    model's own parse path is kept in ``answer_parse_path``)."""
    if record.get("parse_path") not in (None, CALL_FAILED):
        record["answer_parse_path"] = record["parse_path"]
    record["parse_path"] = CALL_FAILED
    if record.get("error") is None:
        record["error"] = f"{who}: {error}" if who else error


def call_failure(record: Mapping[str, Any]) -> str | None:
    """Why ``record``'s call got no answer, or None when it did."""
    if record.get("parse_path") != CALL_FAILED:
        return None
    return str(record.get("error") or "no answer")


def failure_kind(error: str) -> str:
    """The kind of a failed call from its error text (``APIConnectionError: ...`` -> ``APIConnectionError``;
    a judge's failure ``judge X: Timeout: ...`` -> ``Timeout (judge)``)."""
    text = str(error).strip()
    judge = text.startswith("judge ")
    if judge:
        text = text.split(": ", 1)[1] if ": " in text else text
    kind = text.split(":", 1)[0].strip() or "unknown"
    if " " in kind or len(kind) > 60:
        kind = "other"
    return f"{kind} (judge)" if judge else kind


def call_failure_summary(records: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """``{"n", "n_items", "kinds": {kind: count}, "example"}`` over the records whose call failed; None if none."""
    records = list(records)
    errors = [e for e in (call_failure(r) for r in records) if e is not None]
    if not errors:
        return None
    kinds = Counter(failure_kind(e) for e in errors)
    return {"n": len(errors), "n_items": len(records), "kinds": dict(kinds.most_common()), "example": errors[0][:300]}


def describe_failures(summary: Mapping[str, Any]) -> str:
    """``3 of 3 items got no answer (APIConnectionError: 3)``."""
    kinds = ", ".join(f"{k}: {n}" for k, n in (summary.get("kinds") or {}).items())
    return f"{summary.get('n')} of {summary.get('n_items')} items got no answer ({kinds})"


def leave_out_call_failures(task: Any, result: Any) -> None:
    """When some of ``result``'s items got no answer: rescore every mode over the answered items only (a failed
    call is never a wrong answer, in any mode), keep the modes' own params, and mark the result incomplete
    (``provenance["call_failures"]`` and ``provenance["incomplete"]``)."""
    summary = call_failure_summary(result.records)
    if summary is None:
        return
    answered = [r for r in result.records if call_failure(r) is None]
    for mode, old in list(result.scores.items()):
        new = score_or_none(task, answered, mode)
        if new is None:
            continue
        new.params = {**old.params, **new.params}
        new.notes = [f"{describe_failures(summary)}: left out of this score", *new.notes]
        result.scores[mode] = new
    result.provenance["call_failures"] = summary
    result.provenance.setdefault("incomplete", describe_failures(summary))


def score_or_none(task: Any, records: list[Any], mode: str) -> Any:
    """``task.score(records, mode)``; with no record at all, a report that scores nothing (n/a, 0 items)."""
    if records:
        return task.score(records, mode)
    from sciprobe.scoring.score_report import Coverage, ScoreReport

    return ScoreReport(metric=task.metric, mode=mode, values={task.headline: None} if task.headline else {},
                       coverage=Coverage(0, 0, 0), notes=["no item was answered"])


def result_status(provenance: Mapping[str, Any] | None) -> str:
    """``complete``, ``partial`` or ``incomplete`` for a task's provenance (a results file's or a record's)."""
    provenance = provenance or {}
    if provenance.get("incomplete") or provenance.get("call_failures"):
        return INCOMPLETE
    if provenance.get("partial"):
        return PARTIAL
    return COMPLETE


def run_status(block: Mapping[str, Any] | None) -> str:
    """The status of a whole results file from its ``sciprobe`` block (the worst of its tasks)."""
    block = block or {}
    if block.get("incomplete"):
        return INCOMPLETE
    tasks = block.get("tasks") if isinstance(block.get("tasks"), Mapping) else {}
    statuses = {result_status(t.get("provenance") if isinstance(t, Mapping) else None) for t in tasks.values()}
    for status in (INCOMPLETE, PARTIAL):
        if status in statuses or (status == PARTIAL and block.get("partial")):
            return status
    return COMPLETE


def _count(value: Any) -> int | None:
    """A count read from a results file (outside input once: a bool, a float or a 5,000-digit int is none)."""
    from sciprobe.core.numbers import count

    return count(value) if isinstance(value, int) and not isinstance(value, bool) else None


def limit_count(provenance: Mapping[str, Any] | None) -> Any:
    """The ``--limit`` a result ran with: its count, whether recorded as a number (older files) or as a sample's
    record ``{"n", "seed", "strategy"}`` (sciprobe.data.task_data); None without one."""
    limit = provenance.get("limit") if isinstance(provenance, Mapping) else None
    return limit.get("n") if isinstance(limit, Mapping) else limit


def subset_of(provenance: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``{"kind": "limit" | "cutoff", "n": items asked, "of": items in the dataset's test split}`` when the result
    covers only part of its dataset, else None. Results written before the block existed: derived from their
    integer ``limit`` and the cutoff's counts. A block that is not one (a hand-edited file) counts as a limit
    sample of unknown size: never taken for the full data."""
    provenance = provenance if isinstance(provenance, Mapping) else {}
    block = provenance.get("subset")
    if block is not None:
        if isinstance(block, Mapping) and block.get("kind") in (LIMIT, CUTOFF):
            return {"kind": block["kind"], "n": _count(block.get("n")), "of": _count(block.get("of"))}
        return {"kind": LIMIT, "n": None, "of": None}
    cutoff = provenance.get("cutoff") if isinstance(provenance.get("cutoff"), Mapping) else {}
    before, after = _count(cutoff.get("n_items_before")), _count(cutoff.get("n_items_after"))
    limit = limit_count(provenance)
    if _count(limit) is not None and after is not None and limit < after:
        return {"kind": LIMIT, "n": limit, "of": before}
    if before is not None and after is not None and after < before:
        return {"kind": CUTOFF, "n": after, "of": before}
    return None


def coverage_counts(coverage: Mapping[str, Any] | None,
                    provenance: Mapping[str, Any] | None = None) -> tuple[int | None, int | None, str | None]:
    """(items scored, items in the dataset, subset kind or None): the total is the dataset's test split for a
    subset, never the subset's own count; None for a count that is no count."""
    coverage = coverage if isinstance(coverage, Mapping) else {}
    scored, total = _count(coverage.get("n_scored")), _count(coverage.get("n_items"))
    subset = subset_of(provenance)
    if subset is not None:
        return scored, subset["of"], subset["kind"]
    return scored, total, None


def coverage_text(coverage: Mapping[str, Any] | None, provenance: Mapping[str, Any] | None = None) -> str:
    """``scored/total`` against the dataset: ``16/16``; ``120/1120 (limit)`` for a ``--limit`` sample, ``20/31
    (cutoff)`` after a temporal cutoff (the total is then the dataset's, never the subset's); ``?`` for a count
    that is no count."""
    scored, total, kind = coverage_counts(coverage, provenance)
    text = f"{'?' if scored is None else scored}/{'?' if total is None else total}"
    return f"{text} ({kind})" if kind else text


@dataclass(frozen=True)
class PinnedItems:
    """The data a leaderboard ranks a task on: its test ids (after the result's cutoff, when it has one), how many
    items its whole test split has, and how to name it in a message."""

    ids: frozenset[str]
    n_total: int
    label: str = "the pinned data"


@dataclass(frozen=True)
class Verdict:
    """What a result may be used for. ``shown``: a leaderboard may show it; ``rankable``: it may be ranked and
    exported; ``group``: the results it is ranked among (``""``: the full data; ``cutoff YYYY-MM-DD``: only results
    with that cutoff; ``sample``: a ``--limit`` sample, shown but never ranked); ``reason``: why it is not ranked,
    one line; ``cause``: ``incomplete``, ``partial``, ``sample``, ``other data`` or ``items`` (None: rankable)."""

    rankable: bool
    shown: bool
    group: str = ""
    reason: str = ""
    cause: str | None = None


#: :attr:`Verdict.group` of a ``--limit`` sample (shown, never ranked)
SAMPLE_GROUP = "sample"


def _cutoff_date(provenance: Mapping[str, Any]) -> str | None:
    cutoff = provenance.get("cutoff")
    date = cutoff.get("cutoff") if isinstance(cutoff, Mapping) else None
    return date if isinstance(date, str) and date else None


def rank_group(provenance: Mapping[str, Any] | None) -> str:
    """``""`` for a result on the full data, ``cutoff YYYY-MM-DD`` for one on the items after a cutoff, ``sample``
    for a ``--limit`` sample."""
    provenance = provenance if isinstance(provenance, Mapping) else {}
    subset = subset_of(provenance)
    if subset is not None and subset["kind"] == LIMIT:
        return SAMPLE_GROUP
    date = _cutoff_date(provenance)
    return f"cutoff {date}" if date else ""


def _describe_subset(subset: Mapping[str, Any]) -> str:
    n, of = subset.get("n"), subset.get("of")
    return f"{'?' if n is None else n} of {'?' if of is None else of} items ({subset.get('kind')})"


def _refused(reason: str, cause: str) -> Verdict:
    return Verdict(False, False, reason=reason, cause=cause)


def _items_problem(provenance: Mapping[str, Any], ids: list[str], counts: set[int | None],
                   pinned: PinnedItems, subset: Mapping[str, Any] | None) -> str | None:
    """Why the scored ``ids`` (and the per-mode item ``counts``) are not what the result says it covers of the
    pinned data: every pinned item, or for a ``--limit`` sample as many of them as it says; None when they are."""
    unknown = len(set(ids) - pinned.ids)
    if unknown or len(set(ids)) != len(ids):
        return (f"{unknown} of its item ids are not in {pinned.label}" if unknown
                else "it repeats item ids")
    if subset is not None and subset.get("of") is not None and subset["of"] != pinned.n_total:
        return f"it says the dataset has {subset['of']} items where {pinned.label} has {pinned.n_total}"
    sample = subset is not None and subset["kind"] == LIMIT
    expected = subset.get("n") if sample else len(pinned.ids)
    if len(ids) != expected:
        return (f"it covers {len(ids)} of the {len(pinned.ids)} items of {pinned.label} but says "
                + (f"it is a sample of {expected}" if sample else "it covers all of them"))
    if counts and counts != {len(ids)}:
        shown = ", ".join(sorted("?" if n is None else str(n) for n in counts))
        return f"its coverage counts {shown} items where it scored {len(ids)}"
    return None


def rank_verdict(provenance: Mapping[str, Any] | None, *, scored_ids: Collection[str] | None = None,
                 n_items: Iterable[Any] = (), pinned: PinnedItems | None = None) -> Verdict:
    """The one decision on what a task result may be used for: shown and ranked on a leaderboard (import, the
    Space's scoring, the tables), exported as a benchmark score, or neither.

    * Refused (never shown): an incomplete or partial result. With ``pinned`` (where a result enters a
      leaderboard) also one whose scored item ids (``scored_ids``, from the results file's per-item table) or
      per-mode item counts (``n_items``) are not what it says it covers of the pinned test ids — completeness is
      checked against the pinned data's items, never taken from the file's own counts; ids of other data are not
      the pinned ones. (The same items from another build or revision — upstream's raw release text, an earlier
      pin — are shown as rows of their own, ``Revision`` saying which.)
    * Shown, never ranked or exported: a ``--limit`` sample (group ``sample``).
    * Ranked: a result on every pinned item; one after a temporal cutoff only among results with that cutoff
      (group ``cutoff YYYY-MM-DD``: the same cutoff gives every model the same items)."""
    provenance = provenance if isinstance(provenance, Mapping) else {}
    status = result_status(provenance)
    if status != COMPLETE:
        why = provenance.get("incomplete") or provenance.get("partial") or ""
        if isinstance(why, Mapping):
            why = why.get("reason") or ", ".join(f"{k} {v}" for k, v in why.items())
        return _refused(f"{status} result ({str(why)[:160]}); only complete results are ranked", status)
    subset = subset_of(provenance)
    group = rank_group(provenance)
    if pinned is not None:  # the items decide; another build or revision of them is another row (its Revision)
        if scored_ids is None:
            return _refused("no per-item ids to check it against the items of the pinned data", "items")
        problem = _items_problem(provenance, [str(i) for i in scored_ids], {_count(n) for n in n_items}, pinned,
                                 subset)
        if problem is not None:
            return _refused(f"{problem}; only results on every item of the pinned data are ranked", "items")
    if group == SAMPLE_GROUP:
        return Verdict(False, True, group, f"a --limit sample: {_describe_subset(subset or {})}; shown, never "
                                           "ranked or exported (only results on every item are)", "sample")
    return Verdict(True, True, group)


__all__ = ["CALL_FAILED", "COMPLETE", "CUTOFF", "INCOMPLETE", "LIMIT", "NO_ANSWER", "PARTIAL", "SAMPLE_GROUP",
           "PinnedItems", "Verdict", "call_failed", "call_failure", "call_failure_summary", "coverage_counts",
           "coverage_text", "describe_failures", "error_is_call_failure", "failure_kind", "leave_out_call_failures",
           "limit_count", "mark_call_failure", "rank_group", "rank_verdict", "result_status", "run_status",
           "score_or_none", "subset_of", "unanswered"]
