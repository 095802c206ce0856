"""Several scoring workers on one store (issue 17): a claim with a lease, exactly-once scoring, a dead worker's
request taken over once its lease has expired. Lease time comes from an injected fake clock (advanced by the
test, never slept on); the workers are real processes scoring real submissions through the real pipeline."""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import os
import signal
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from clock_support import SharedClock

from sciprobe.interop.hub_api import CommitConflict, LocalFolderApi
from sciprobe.leaderboard.hub_store import HubStore
from sciprobe.leaderboard.queue import LeaseKeeper, Worker, data_for, process_pending, run_worker, submit
from sciprobe.leaderboard.records import FAILED, FINISHED, PENDING, RUNNING, ResultRecord, SubmissionRequest
from sciprobe.leaderboard.store import MAX_ATTEMPTS, LeaseLost, SQLiteStore
from sciprobe.leaderboard.validation import task_target, validate_model_info, validate_submission

LEASE = dt.timedelta(seconds=60)
REQUESTS, RESULTS = "sciprobe/requests", "sciprobe/results"
SPAWN = multiprocessing.get_context("spawn")


def make_request(k: int) -> SubmissionRequest:
    return SubmissionRequest(request_id=uuid.uuid4().hex, user=f"user{k}", model_name=f"user{k}/model",
                             task="idrbench:ipi", benchmark="idrbench", benchmark_version="1.0.0",
                             dataset_fingerprint="fp", predictions_sha256=uuid.uuid4().hex, n_predictions=16,
                             predictions_file="p.jsonl")


def make_result(request: SubmissionRequest) -> ResultRecord:
    report = {"macro_f1": 0.5, "coverage": {"n_items": 16, "n_scored": 16, "n_failed": 0}}
    return ResultRecord(request_id=request.request_id, user=request.user, model_name=request.model_name,
                        task=request.task, benchmark="idrbench", benchmark_version="1.0.0", dataset_fingerprint="fp",
                        headline="macro_f1", default_mode="official", scores={"official": report}, provenance={})


def open_store(kind: str, root: Path, clock) -> SQLiteStore | HubStore:
    if kind == "sqlite":
        return SQLiteStore(root / "lb", clock=clock)
    return HubStore(LocalFolderApi(root / "hub"), REQUESTS, RESULTS, clock=clock)


def published(store, requests: list[SubmissionRequest]) -> list[SubmissionRequest]:
    """Add requests as a Space would (the hub store commits them: then other processes see them)."""
    out = [store.add_submission(r, b"{}\n") for r in requests]
    if hasattr(store, "flush"):
        store.flush()
    return out


# ---------------------------------------------------------------- the lease, in one process, on both stores

@pytest.fixture(params=["sqlite", "hub"])
def kind(request) -> str:
    return request.param


def test_claims_exclude_each_other_until_the_lease_expires(kind, tmp_path):
    clock = SharedClock()
    store = open_store(kind, tmp_path, clock)
    (request,) = published(store, [make_request(0)])
    (first,) = store.claim_pending(5, worker="w1", lease=LEASE)
    assert first.status == RUNNING and first.claimed_by.startswith("w1#") and first.attempts == 1
    other = open_store(kind, tmp_path, clock)  # a second worker on the same store
    assert other.claim_pending(5, worker="w2", lease=LEASE) == []
    clock.advance(LEASE.total_seconds() - 1)
    assert other.claim_pending(5, worker="w2", lease=LEASE) == []  # still w1's
    clock.advance(1)
    (second,) = other.claim_pending(5, worker="w2", lease=LEASE)  # expired: w1 is taken to be dead
    assert second.request_id == request.request_id and second.claimed_by.startswith("w2#") and second.attempts == 2
    # w1 comes back: its claim is gone, so none of its changes land
    with pytest.raises(LeaseLost):
        store.finish(request.request_id, make_result(request), claim=first.claimed_by)
    with pytest.raises(LeaseLost):
        store.set_status(request.request_id, FAILED, error="late", claim=first.claimed_by)
    assert not store.renew_lease(request.request_id, first.claimed_by, LEASE)
    done = other.finish(request.request_id, make_result(request), claim=second.claimed_by)
    assert done.status == FINISHED and done.claimed_by is None and done.result_id
    fresh = open_store(kind, tmp_path, clock)
    assert [r.status for r in fresh.list_requests()] == [FINISHED]
    assert [r.request_id for r in fresh.list_results()] == [request.request_id]  # one result, w2's


def test_a_renewed_lease_holds(kind, tmp_path):
    clock = SharedClock()
    store = open_store(kind, tmp_path, clock)
    published(store, [make_request(0)])
    (mine,) = store.claim_pending(worker="w1", lease=LEASE)
    clock.advance(50)
    assert store.renew_lease(mine.request_id, mine.claimed_by, LEASE)
    clock.advance(50)  # 100 s after the claim, 50 s after the renewal
    assert open_store(kind, tmp_path, clock).claim_pending(worker="w2", lease=LEASE) == []
    clock.advance(11)
    assert len(open_store(kind, tmp_path, clock).claim_pending(worker="w2", lease=LEASE)) == 1


def test_a_request_whose_workers_keep_dying_fails(kind, tmp_path):
    clock = SharedClock()
    store = open_store(kind, tmp_path, clock)
    (request,) = published(store, [make_request(0)])
    for attempt in range(1, MAX_ATTEMPTS + 1):
        (claimed,) = store.claim_pending(worker=f"w{attempt}", lease=LEASE)
        assert claimed.attempts == attempt
        clock.advance(LEASE.total_seconds())
    assert store.claim_pending(worker="last", lease=LEASE) == []
    failed = open_store(kind, tmp_path, clock).get_request(request.request_id)
    assert failed.status == FAILED and "not retried" in failed.error and failed.claimed_by is None


def test_claim_request_takes_only_that_request(kind, tmp_path):
    clock = SharedClock()
    store = open_store(kind, tmp_path, clock)
    first, second = published(store, [make_request(0), make_request(1)])
    claimed = store.claim_request(second.request_id, worker="inline", lease=LEASE)
    assert claimed.request_id == second.request_id
    assert store.claim_request(second.request_id, worker="again", lease=LEASE) is None
    assert [r.request_id for r in store.claim_pending(5, worker="w", lease=LEASE)] == [first.request_id]


def test_lease_keeper_renews_while_scoring(tmp_path):
    """The keeper's pause is injected: it renews once, then waits for the end of the block."""
    clock = SharedClock()
    store = SQLiteStore(tmp_path / "lb", clock=clock)
    published(store, [make_request(0)])
    (mine,) = store.claim_pending(worker="w1", lease=LEASE)
    pauses: list[float] = []
    renewed = threading.Event()

    def wait(stop: threading.Event, seconds: float) -> bool:
        pauses.append(seconds)
        if len(pauses) == 1:
            clock.advance(40)  # the scoring has been running for 40 s when the keeper wakes
            return False
        renewed.set()
        return stop.wait()

    with LeaseKeeper(store, mine, LEASE, wait=wait):
        assert renewed.wait(60)
    assert pauses == [20.0, 20.0]
    lease_until = dt.datetime.fromisoformat(store.get_request(mine.request_id).lease_until)
    assert lease_until == clock.now() + LEASE  # renewed at +40 s: holds until +100 s


def test_hub_claim_retries_after_a_concurrent_commit(tmp_path):
    """A claim is a conditional commit: when another commit lands between reading and committing, it re-reads
    and tries again (here one conflicting commit is injected)."""
    clock = SharedClock()

    class RacingApi(LocalFolderApi):
        conflicts = 0

        def commit(self, repo_id, files, message, repo_type="dataset", *, parent_commit=None):
            if parent_commit is not None and self.conflicts == 0:
                self.conflicts += 1
                super().commit(repo_id, {"other/note.json": b"{}"}, "someone else")  # moves the head
            return super().commit(repo_id, files, message, repo_type, parent_commit=parent_commit)

    api = RacingApi(tmp_path / "hub")
    store = HubStore(api, REQUESTS, RESULTS, clock=clock)
    published(store, [make_request(0)])
    (claimed,) = store.claim_pending(worker="w1", lease=LEASE)
    assert api.conflicts == 1 and claimed.attempts == 1
    assert HubStore(api, REQUESTS, RESULTS, clock=clock).get_request(claimed.request_id).status == RUNNING
    with pytest.raises(CommitConflict):
        api.commit(REQUESTS, {"x/y.json": b"{}"}, "stale", parent_commit="1")


# ---------------------------------------------------------------- three processes racing for claims

def _claim_loop(kind: str, root: str, clock: SharedClock, name: str, out) -> None:
    store = open_store(kind, Path(root), clock)
    mine = []
    while batch := store.claim_pending(2, worker=name, lease=LEASE):
        for request in batch:
            store.finish(request.request_id, make_result(request), claim=request.claimed_by)
            mine.append(request.request_id)
    out.put((name, mine))


def test_three_processes_claim_each_request_once(kind, tmp_path):
    clock = SharedClock()
    store = open_store(kind, tmp_path, clock)
    requests = published(store, [make_request(k) for k in range(24)])
    out = SPAWN.Queue()
    procs = [SPAWN.Process(target=_claim_loop, args=(kind, str(tmp_path), clock, f"p{k}", out)) for k in range(3)]
    for p in procs:
        p.start()
    claimed = dict(out.get(timeout=600) for _ in procs)
    for p in procs:
        p.join(600)
    every = [r for mine in claimed.values() for r in mine]
    assert sorted(every) == sorted(r.request_id for r in requests)  # each exactly once, none lost
    fresh = open_store(kind, tmp_path, clock)
    assert {r.status for r in fresh.list_requests()} == {FINISHED}
    assert len(fresh.list_results()) == 24


# ---------------------------------------------------------------- real workers, one killed mid-request

class ReportingStore(SQLiteStore):
    """A worker's store that reports every request it finished (the result stored with the FINISHED status)."""

    events = None

    def finish(self, request_id, result, details=None, *, claim=None):
        done = super().finish(request_id, result, details, claim=claim)
        self.events.put(("finished", self.name, request_id))
        return done


def _worker_process(folder: str, clock: SharedClock, name: str, events, stop, block: bool) -> None:
    store = ReportingStore(folder, clock=clock)
    store.events, store.name = events, name

    def data(benchmark: str) -> str:  # called once per scoring run, with the predictions already read
        events.put(("started", name, benchmark))
        if block:
            events.put(("mid-request", name, os.getpid()))
            threading.Event().wait()  # hangs here until SIGKILL
        return data_for(benchmark)

    worker = Worker(use_cache=False, name=name, lease=LEASE, log=lambda line: events.put(("log", name, line)))
    run_worker(store, poll_seconds=0.05, data=data, stop=stop, worker=worker)


def _wait_for(condition, what: str, timeout: float = 600.0) -> None:
    """Poll a condition (a deadline for a hung test, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _ipi_file(path: Path, variant: int) -> Path:
    target = task_target("idrbench:ipi", data_for("idrbench"))
    path.write_text("".join(json.dumps({"id": i, "prediction": "yes" if (k + variant) % 3 == 0 else "no"}) + "\n"
                            for k, i in enumerate(target.ids)))
    return path


def test_three_workers_one_killed_mid_request_every_request_scored_exactly_once(tmp_path):
    clock = SharedClock()
    folder = tmp_path / "lb"
    store = SQLiteStore(folder, clock=clock)
    data = data_for("idrbench")  # built here once, before the workers read it
    n = 9
    requests = []
    for k in range(n):
        sub = validate_submission("idrbench:ipi", _ipi_file(tmp_path / f"p{k}.jsonl", k),
                                  validate_model_info(f"user{k}/model-{k}"), data=data)
        requests.append(submit(store, sub, f"user{k}", inline=False))
    assert {r.status for r in requests} == {PENDING}

    events, stop = SPAWN.Queue(), SPAWN.Event()
    victim = SPAWN.Process(target=_worker_process, args=(str(folder), clock, "victim", events, stop, True),
                           daemon=True)
    healthy = [SPAWN.Process(target=_worker_process, args=(str(folder), clock, f"w{k}", events, stop, False),
                             daemon=True) for k in (1, 2)]
    try:
        _run_three_workers(store, clock, victim, healthy, events, stop, requests)
    finally:
        for p in (victim, *healthy):
            if p.is_alive():
                p.kill()
                p.join(60)


def _run_three_workers(store, clock, victim, healthy, events, stop, requests) -> None:
    n = len(requests)
    seen: list[tuple] = []

    def drain() -> None:
        while not events.empty():
            seen.append(events.get())

    victim.start()
    while not any(e[0] == "mid-request" for e in seen):  # the victim holds a request, half scored
        seen.append(events.get(timeout=600))
    held = [r for r in store.list_requests(RUNNING)]
    assert len(held) == 1 and held[0].claimed_by.startswith("victim#")
    held = held[0]

    for p in healthy:
        p.start()
    _wait_for(lambda: (drain(), len(store.list_requests(FINISHED)) == n - 1)[1], "the other requests")
    # the held request is still the victim's: nobody (the two workers, nor this process) can claim it
    assert store.get_request(held.request_id).claimed_by == held.claimed_by
    assert store.claim_pending(10, worker="test", lease=LEASE) == []

    os.kill(victim.pid, signal.SIGKILL)  # dies mid-request, holding its claim
    victim.join(60)
    assert victim.exitcode == -signal.SIGKILL
    assert store.get_request(held.request_id).status == RUNNING  # the lease has not expired yet
    clock.advance(LEASE.total_seconds() + 1)  # now it has: a live worker takes the request over
    _wait_for(lambda: (drain(), len(store.list_requests(FINISHED)) == n)[1], "the dead worker's request")
    stop.set()
    for p in healthy:
        p.join(120)
        assert p.exitcode == 0
    drain()

    finished = Counter(e[2] for e in seen if e[0] == "finished")
    assert finished == Counter({r.request_id: 1 for r in requests})  # every request scored exactly once
    assert not any(e[1] == "victim" for e in seen if e[0] == "finished")
    started = Counter(e[1] for e in seen if e[0] == "started")
    assert started["victim"] == 1 and started["w1"] + started["w2"] == n  # no scoring run was wasted
    final = {r.request_id: r for r in store.list_requests()}
    assert {r.status for r in final.values()} == {FINISHED}
    assert final[held.request_id].attempts == 2 and final[held.request_id].claimed_by is None
    results = store.list_results()
    assert sorted(r.request_id for r in results) == sorted(final)  # one result per request, none lost
    assert all(final[r.request_id].result_id == r.result_id for r in results)
    assert not any("dropped" in e[2] for e in seen if e[0] == "log")


def test_process_pending_skips_a_request_another_worker_took_over(tmp_path):
    """A worker that outlived its lease: its scoring run is discarded, nothing stored twice."""
    clock = SharedClock()
    store = SQLiteStore(tmp_path / "lb", clock=clock)
    data = data_for("idrbench")
    sub = validate_submission("idrbench:ipi", _ipi_file(tmp_path / "p.jsonl", 0), validate_model_info("u/m"),
                              data=data)
    request = submit(store, sub, "u", inline=False)
    logs: list[str] = []

    def slow_data(benchmark: str) -> str:  # while w1 scores, its lease expires and w2 takes the request
        clock.advance(LEASE.total_seconds())
        (taken,) = SQLiteStore(tmp_path / "lb", clock=clock).claim_pending(worker="w2", lease=LEASE)
        assert taken.request_id == request.request_id
        return data_for(benchmark)

    done = process_pending(store, data=slow_data, worker=Worker(use_cache=False, name="w1", lease=LEASE,
                                                                log=logs.append))
    assert done == [] and store.list_results() == []
    assert store.get_request(request.request_id).claimed_by.startswith("w2#")
    assert len(logs) == 1 and "dropped request" in logs[0] and "lease expired" in logs[0]
