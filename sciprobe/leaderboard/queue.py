"""Submission queue and server-side scoring.

Every accepted submission becomes a PENDING request in the store. Scoring always goes through
:func:`sciprobe.run.score_predictions.score_file` on the stored canonical predictions — submitted scores are never
trusted. Tasks whose scoring is pure (single-call tasks parsed and scored locally, I2R rankings) are scored
*inline* by the Space right after the request is stored (PENDING -> RUNNING -> FINISHED | FAILED within the
same call); tasks that need an LLM judge or an agent loop (any other ``runner``) stay PENDING for
:func:`process_pending` / :func:`run_worker`, run by a separate worker process (``sciprobe leaderboard --worker``).

The worker scores such a request by running the task's real runner on a
:class:`~sciprobe.run.replay.ReplayClient` (the model's answers come from the stored predictions) with real judges
(:class:`Worker`: ``judge`` spec or ``;``-separated panel, one :class:`~sciprobe.llm.ledger.RunLedger` for the
worker's lifetime = its ``max_calls`` / ``max_cost`` budget across requests, the response cache of
``sciprobe evaluate``). When the budget runs out inside a request, that request goes back to PENDING (its judge
answers so far are cached, so a later worker resumes cheaply), no result is stored, and the worker stops. A
worker without a judge leaves judged requests PENDING and stops too: the submission is fine, the worker is not.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.leaderboard.agreement import PROVENANCE_KEY
from sciprobe.leaderboard.records import (
    DEFAULT_PROMPT_SET,
    FAILED,
    PENDING,
    ResultRecord,
    SubmissionRequest,
)
from sciprobe.leaderboard.store import DEFAULT_LEASE, LeaderboardStore, LeaseLost
from sciprobe.leaderboard.validation import ValidatedSubmission, sanitize_text

DataFor = Callable[[str], str]


def data_for(benchmark_name: str) -> str:
    """The dataset the leaderboard scores ``benchmark_name`` against (:mod:`sciprobe.leaderboard.pins`).

    ``SCIPROBE_LEADERBOARD_DATA="idrbench=owner/name@revision,scitaste=..."`` pins it per benchmark (a built
    folder is accepted too); a benchmark it does not name is scored against its bundled sample — a demo, built
    once into ``$SCIPROBE_HOME/datasets`` and announced as such on every tab of the Space.
    """
    from sciprobe.leaderboard.pins import data_pin

    return data_pin(benchmark_name).resolve()


def scored_inline(task_ref: str) -> bool:
    from sciprobe.core.registry import resolve_task

    from sciprobe.run.task_runner import runner_of

    return runner_of(resolve_task(task_ref)[1]).reads_predictions


@dataclass(frozen=True)
class KnowledgeCutoff:
    """A model's knowledge cutoff for the contamination check: ``cutoff`` (``YYYY-MM-DD``) from ``source``
    (``registry`` or ``claim``), and the submitter's ``claimed`` date, kept even when the registry wins."""

    cutoff: str | None
    source: str | None
    claimed: str | None = None


def knowledge_cutoff(model_name: str, claimed: str | None) -> KnowledgeCutoff:
    """The registry's cutoff when it knows the model (a claim never overrides it: a conflicting claim is kept
    beside it and shown as such), else the submitter's claim, else unknown. A month claim means the end of that
    month, as everywhere in sciprobe.data.cutoffs."""
    from sciprobe.data.cutoffs import parse_cutoff
    from sciprobe.leaderboard.records import registry_cutoff

    claim = parse_cutoff(claimed).isoformat() if claimed else None
    registry = registry_cutoff(model_name)
    if registry:
        return KnowledgeCutoff(registry, "registry", claim)
    return KnowledgeCutoff(claim, "claim" if claim else None, claim)


def _log(message: str) -> None:
    print(f"[sciprobe worker] {message}", file=sys.stderr, flush=True)


@dataclass
class Worker:
    """What scores judged requests: the judge panel, the budget (one ledger for the worker's lifetime) and the
    response cache. ``Worker.create(judge=..., max_calls=..., max_cost=...)`` builds the ledger and the cache.

    ``name`` labels its claims; ``lease`` is how long a claim holds unless renewed; while it scores a request a
    :class:`LeaseKeeper` renews the claim every ``lease / 3`` (``wait`` is the keeper's pause, injectable)."""

    judge: str | None = None
    ledger: Any = None
    cache: Any = None
    use_cache: bool = True
    log: Callable[[str], None] = field(default=_log)
    paused: SubmissionRequest | None = None  # the last request that had to go back to PENDING
    name: str = ""
    lease: dt.timedelta = DEFAULT_LEASE

    @classmethod
    def create(cls, judge: str | None = None, *, max_calls: int | None = None, max_cost: float | None = None,
               use_cache: bool = True, log: Callable[[str], None] = _log, name: str = "",
               lease: dt.timedelta = DEFAULT_LEASE) -> Worker:
        from sciprobe.llm.ledger import Budget, RunLedger
        from sciprobe.llm.spec import ModelSpec, split_specs

        budget = Budget(max_calls, max_cost)
        for spec in split_specs(judge):  # a typo in --judge fails the worker at start, never a submission
            ModelSpec.parse(spec)
        if max_cost is not None and split_specs(judge):
            from sciprobe.run.evaluation import check_priced

            check_priced(split_specs(judge))
        cache = None
        if use_cache:
            from sciprobe.llm.cache import ResponseCache, default_cache_path

            cache = ResponseCache(default_cache_path())
        return cls(judge=judge, ledger=RunLedger(budget), cache=cache, use_cache=use_cache, log=log, name=name,
                   lease=lease)

    @property
    def exhausted(self) -> bool:
        return bool(self.ledger is not None and self.ledger.exhausted)


class LeaseKeeper:
    """Renews a claim while a request is scored (a scoring run may outlast one lease), in a daemon thread that
    stops with the ``with`` block. A failed renewal means another worker has the request: ``lost`` says so and
    the result will be refused by the store anyway."""

    def __init__(self, store: LeaderboardStore, request: SubmissionRequest, lease: dt.timedelta,
                 wait: Callable[[threading.Event, float], bool] | None = None) -> None:
        self.store, self.request, self.lease = store, request, lease
        self.interval = max(lease.total_seconds() / 3, 0.01)
        self.wait = wait or (lambda event, seconds: event.wait(seconds))
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease-{request.request_id[:8]}", daemon=True)

    def _run(self) -> None:
        while not self.wait(self._stop, self.interval) and not self._stop.is_set():
            try:
                if not self.store.renew_lease(self.request.request_id, self.request.claimed_by, self.lease):
                    self.lost = True
                    return
            except Exception:  # noqa: BLE001 - a store hiccup: try again next interval; the lease has slack
                continue

    def __enter__(self) -> LeaseKeeper:
        if self.request.claimed_by:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=60)


def new_request(sub: ValidatedSubmission, user: str) -> SubmissionRequest:
    return SubmissionRequest(
        request_id=uuid.uuid4().hex, user=user, model_name=sub.model.model_name, task=sub.target.ref,
        benchmark=sub.target.benchmark, benchmark_version=sub.target.benchmark_version,
        dataset_fingerprint=sub.target.dataset_fingerprint, predictions_sha256=sub.sha256,
        n_predictions=sub.n_predictions, predictions_file=sub.file_name, model_family=sub.model.model_family,
        model_revision=sub.model.model_revision, model_cutoff=sub.model.model_cutoff,
        description=sub.model.description)


def _flush(store: LeaderboardStore, message: str) -> None:
    flush = getattr(store, "flush", None)
    if flush is not None:
        flush(message)


def submit(store: LeaderboardStore, sub: ValidatedSubmission, user: str, *, data: DataFor = data_for,
           max_recent: int | None = None, window: dt.timedelta = dt.timedelta(days=1),
           inline: bool | None = None,
           score: Callable[[SubmissionRequest], SubmissionRequest] | None = None) -> SubmissionRequest:
    """Store a validated submission (dedupe, ownership and rate limit are atomic in the store), then score it
    inline when the task allows. Returns the request in its final (or PENDING) state.

    ``score`` scores the claimed request (default: :func:`process_request` in this thread; the Space passes its
    :class:`~sciprobe.leaderboard.scoring_pool.ScoringPool`)."""
    request = store.add_submission(new_request(sub, user), sub.canonical, max_recent=max_recent, window=window)
    if inline if inline is not None else scored_inline(request.task):
        # scored in the same call: one commit per repo for request, status changes and result together
        claimed = store.claim_request(request.request_id, worker="inline")
        if claimed is not None:  # else a worker got it first: it scores it
            request = score(claimed) if score is not None else process_request(store, claimed, data=data)
        _flush(store, f"Add and score {request.model_name} on {request.task}")
    else:
        _flush(store, f"Add {request.model_name} on {request.task} to the queue")
    return store.get_request(request.request_id)


def _judge_scores(details_file: Path) -> dict | None:
    """Per-judge item scores when the task was scored by a judge panel (the Space's agreement view)."""
    from sciprobe.leaderboard.agreement import judge_scores_from_details

    try:
        return judge_scores_from_details(details_file) if details_file.is_file() else None
    except Exception:  # noqa: BLE001 - an unreadable details file only loses the agreement view
        return None


class _Paused(Exception):
    """Scoring stopped for a reason that is the worker's, not the submission's: back to PENDING."""


def process_request(store: LeaderboardStore, request: SubmissionRequest, *, data: DataFor = data_for,
                    worker: Worker | None = None) -> SubmissionRequest:
    """Score one claimed (RUNNING) request with ``score_file``; store the result and mark it FINISHED in one step,
    or mark it FAILED — or, when the worker has no judge for a judged task or its budget ran out during the
    request, PENDING again (with the reason in ``error``) and nothing stored. Bad judge credentials
    (``FatalBackendError``) also pause the request. Every change is made under the request's claim: when the
    lease was lost meanwhile (another worker took the request over), nothing is stored and the request is
    returned as the store has it."""
    worker = worker or Worker(use_cache=False)
    try:
        return _process(store, request, data, worker)
    except LeaseLost as lost:
        worker.log(f"dropped request {request.request_id[:8]}: {lost}")
        return store.get_request(request.request_id)


def _process(store: LeaderboardStore, request: SubmissionRequest, data: DataFor,
             worker: Worker) -> SubmissionRequest:
    """:func:`process_request` that raises :class:`LeaseLost` when the request is no longer this worker's."""
    claim = request.claimed_by
    with LeaseKeeper(store, request, worker.lease):
        try:
            result, details = _score(store, request, data, worker)
        except _Paused as paused:
            return store.set_status(request.request_id, PENDING, error=sanitize_text(str(paused), 300),
                                    claim=claim)
        except Exception as exc:  # noqa: BLE001 - a failed scoring must never leave a request RUNNING
            message = sanitize_text(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 300)
            return store.set_status(request.request_id, FAILED, error=message, claim=claim)
        return store.finish(request.request_id, result, details, claim=claim)


def _score(store: LeaderboardStore, request: SubmissionRequest, data: DataFor,
           worker: Worker) -> tuple[ResultRecord, bytes | None]:
    """The result of one request (not stored), or :class:`_Paused` / any exception."""
    from sciprobe.llm.backends import FatalBackendError
    from sciprobe.run.score_predictions import JudgeRequired, score_file

    with tempfile.TemporaryDirectory(prefix="sciprobe-lb-") as tmp:
        preds = Path(tmp) / "predictions.jsonl"
        preds.write_bytes(store.get_predictions(request.request_id))
        location = data(request.benchmark)
        from sciprobe.leaderboard.validation import task_target

        target = task_target(request.task, location)  # the pinned data now: it must be what was validated
        if target.dataset_fingerprint != request.dataset_fingerprint:
            raise SciprobeError("the leaderboard dataset changed since this submission was validated (it is now "
                                f"{target.dataset}); resubmit")
        try:
            path, results = score_file(request.task, preds, data=location, model_name=request.model_name,
                                       output_dir=Path(tmp) / "out", judge=worker.judge, ledger=worker.ledger,
                                       cache=worker.cache, use_cache=worker.use_cache)
        except JudgeRequired as exc:
            raise _Paused(f"waiting for a worker with a judge: {exc}") from None
        except FatalBackendError as exc:  # bad judge credentials / permissions: the worker's problem
            raise _Paused(f"judge unusable: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
        task_result = results[0]
        from sciprobe.results.evidence import COMPLETE, result_status

        incomplete = next((r.provenance.get("incomplete") or "incomplete" for r in results
                           if result_status(r.provenance) != COMPLETE), None)
        if incomplete:  # never a leaderboard result (a cap, judge calls without an answer); answers are cached
            why = "worker budget spent" if worker.exhausted else "scoring incomplete"
            raise _Paused(f"{why} ({incomplete}); judge answers so far are cached, a later worker resumes it")
        prov = dict(task_result.provenance)
        if prov.get("dataset_fingerprint") != request.dataset_fingerprint:
            raise SciprobeError("the leaderboard dataset changed since this submission was validated; resubmit")
        written = json.loads(path.read_text("utf-8"))
        block = written["sciprobe"]["tasks"][task_result.key]
        from sciprobe.results.evidence import rank_verdict
        from sciprobe.leaderboard.validation import pinned_items

        # the one gate every ranked result passes: every item of the pinned data, by id
        verdict = rank_verdict(prov, scored_ids=(block.get("items") or {}).get("ids"),
                               n_items=[r["coverage"]["n_items"] for r in block["scores"].values()],
                               pinned=pinned_items(request.task, location))
        if not verdict.rankable:  # a submission is scored on every pinned item: anything else is a bug here
            raise SciprobeError(f"not ranked: {verdict.reason}")
        details_file = Path(tmp) / "out" / block["details"]
        details = details_file.read_bytes() if details_file.is_file() else None
        panel = _judge_scores(details_file)
        prov.update({"predictions_sha256": request.predictions_sha256, "predictions_file": request.predictions_file,
                     "scored_by": "sciprobe.run.score_predictions.score_file",
                     "environment": written["sciprobe"]["environment"],
                     "judge_ids": written["sciprobe"]["judge_ids"], "generation_parameters":
                     written["config_general"]["generation_parameters"]})
        if panel is not None:
            prov[PROVENANCE_KEY] = panel
        cutoff = (prov.get("cutoff") or {}).get("cutoff")
        knowledge = knowledge_cutoff(request.model_name, request.model_cutoff)
        result = ResultRecord(
            request_id=request.request_id, user=request.user, model_name=request.model_name, task=request.task,
            benchmark=request.benchmark, benchmark_version=request.benchmark_version,
            dataset_fingerprint=request.dataset_fingerprint, headline=task_result.headline,
            default_mode=task_result.default_mode, scores=block["scores"], provenance=prov, cutoff=cutoff,
            dataset_revision=prov.get("dataset_revision") or None,
            judge_ids=list(written["sciprobe"]["judge_ids"]), model_family=request.model_family,
            model_revision=request.model_revision, model_cutoff=knowledge.cutoff,
            model_cutoff_source=knowledge.source, claimed_cutoff=knowledge.claimed,
            min_item_date=target.min_item_date,
            prompt_set=prov.get("prompt_set") or DEFAULT_PROMPT_SET)
        return result, details


def process_pending(store: LeaderboardStore, *, limit: int = 10, data: DataFor = data_for,
                    worker: Worker | None = None) -> list[SubmissionRequest]:
    """The worker's step: claim and score up to ``limit`` PENDING (or lease-expired) requests, one claim at a time
    (a claim is held only while its request is scored, so other workers share the queue and a dead worker strands
    one request, not a batch); one commit at the end.

    Returns the requests it worked on. A request that comes back PENDING (no judge, budget spent) ends the step.
    A request whose lease this worker lost meanwhile (another worker took it over) is left to that worker."""
    worker = worker or Worker(use_cache=False)
    done: list[SubmissionRequest] = []
    for _ in range(limit):
        claimed = store.claim_pending(1, worker=worker.name, lease=worker.lease)
        if not claimed:
            break
        try:
            outcome = _process(store, claimed[0], data, worker)
        except LeaseLost as lost:
            worker.log(f"dropped request {claimed[0].request_id[:8]}: {lost}")
            continue
        done.append(outcome)
        if outcome.status == PENDING:
            break
    if done:
        _flush(store, f"Score {len(done)} queued request(s)")
    return done


def run_worker(store: LeaderboardStore, *, poll_seconds: float = 30.0, data: DataFor = data_for,
               stop: threading.Event | None = None, max_rounds: int | None = None,
               worker: Worker | None = None) -> int:
    """Poll the queue until ``stop`` is set (or ``max_rounds`` polls); returns the number of requests scored
    (FINISHED or FAILED). Stops early, with a log line, when a request had to go back to PENDING (the worker's
    budget is spent, or it has no judge for a judged task)."""
    processed, rounds = 0, 0
    stop = stop or threading.Event()
    worker = worker or Worker.create()
    while not stop.is_set() and (max_rounds is None or rounds < max_rounds):
        refresh = getattr(store, "refresh", None)
        if refresh is not None:
            refresh()
        done = process_pending(store, data=data, worker=worker)
        processed += sum(1 for r in done if r.status != PENDING)
        rounds += 1
        paused = [r for r in done if r.status == PENDING]
        if paused:
            worker.paused = paused[0]
            left = len(store.list_requests(PENDING))
            worker.log(f"stopping: request {paused[0].request_id[:8]} ({paused[0].task}) is PENDING again: "
                       f"{paused[0].error}; {left} request(s) left in the queue")
            break
        if max_rounds is None or rounds < max_rounds:
            stop.wait(poll_seconds)
    return processed


__all__ = ["KnowledgeCutoff", "LeaseKeeper", "Worker", "data_for", "knowledge_cutoff",
           "process_pending", "process_request", "run_worker", "scored_inline", "submit"]
