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
item's score needs failed). :func:`leave_out_call_failures` (run by :func:`sciprobe.task_runner.run_task` on
every result) rescores what is left and records the count and the reasons in the result's provenance.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from sciprobe.declaration import Parsed

#: ``parse_path`` of an item whose call got no answer (never a parse failure, never scored).
CALL_FAILED = "error"
#: ``parse_path`` of an item whose model answered with nothing (an empty reply, a null prediction): the
#: model's failure, scored as each mode scores an unparsable answer.
NO_ANSWER = "failed:no_answer"

COMPLETE, PARTIAL, INCOMPLETE = "complete", "partial", "incomplete"


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
    from sciprobe.scoring.report import Coverage, ScoreReport

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


__all__ = ["CALL_FAILED", "COMPLETE", "INCOMPLETE", "NO_ANSWER", "PARTIAL", "call_failed", "call_failure",
           "call_failure_summary", "describe_failures", "error_is_call_failure", "failure_kind",
           "leave_out_call_failures",
           "mark_call_failure", "result_status", "run_status", "score_or_none", "unanswered"]
