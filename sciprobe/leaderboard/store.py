"""Leaderboard storage: one interface (:class:`LeaderboardStore`), two implementations.

* :class:`SQLiteStore` — the embedded default: one SQLite file in WAL mode under a local folder. Every write
  is one ``BEGIN IMMEDIATE`` transaction; a ``UNIQUE(user, model_name, task, predictions_sha256)`` constraint
  makes duplicate detection race-free and the rate-limit count and the model-name ownership check run inside the
  same transaction as the insert, so concurrent submissions neither get lost nor duplicated.
* :class:`sciprobe.leaderboard.hub_store.HubStore` — requests and results dataset repos on the Hub (the HF
  leaderboard template's data contract), all hub I/O behind a small ``api`` object.

Identity: users and model names count by :func:`~sciprobe.leaderboard.records.identity_key` (NFKC, trimmed,
case-folded) for dedupe, the rate limit and ownership. **A model name belongs to its first submitter**: the user of
the earliest request for that name; anyone else submitting under it (in any case or width variant) is refused
(:class:`ModelNameTaken`). Result rows also carry their owner (``records.row_key``).

Workers: :meth:`claim_pending` hands a request to one worker under a *claim* (a token) with a *lease*; the lease
expires if the worker dies, and then any worker may claim the request again. Status changes and the result of a
claimed request are accepted only from the claim's holder (:class:`LeaseLost` otherwise), so several workers on
one store score each request exactly once. A request claimed more than :data:`MAX_ATTEMPTS` times (its workers
keep dying on it) is FAILED instead of being handed out again.

:func:`sciprobe.leaderboard.store_factory.open_store` picks one from the environment
(``SCIPROBE_LEADERBOARD_STORE``, ``SCIPROBE_LEADERBOARD_DIR``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, runtime_checkable

from sciprobe.core.errors import SciprobeError
from sciprobe.leaderboard.records import (
    FAILED,
    FINISHED,
    PENDING,
    RUNNING,
    STATUSES,
    ResultRecord,
    SubmissionRequest,
    identity_key,
    iso,
    parse_iso,
    utc_now,
)

Clock = Callable[[], dt.datetime]

#: how long a claim holds without renewal; the worker renews it while it scores (queue.LeaseKeeper)
DEFAULT_LEASE = dt.timedelta(minutes=10)
#: a request whose lease expired this many times (its workers died) is FAILED rather than claimed again
MAX_ATTEMPTS = 3


class DuplicateSubmission(SciprobeError):
    """The same user already submitted these exact predictions for this model and task."""


class RateLimited(SciprobeError):
    """The user has reached the submission limit for the current window."""


class ModelNameTaken(SciprobeError):
    """The model name (in some case or width variant) belongs to another user: its first submitter."""


class LeaseLost(SciprobeError):
    """A worker acted on a request it no longer holds (its lease expired and another worker claimed it)."""


_TRANSITIONS = {PENDING: {RUNNING, FAILED}, RUNNING: {FINISHED, FAILED, PENDING}, FINISHED: set(), FAILED: set()}


def check_transition(old: str, new: str) -> None:
    if new not in STATUSES:
        raise SciprobeError(f"unknown status {new!r}")
    if new not in _TRANSITIONS[old]:
        raise SciprobeError(f"request cannot go from {old} to {new}")


def duplicate_message(existing: SubmissionRequest) -> str:
    return (f"duplicate submission: you already submitted these predictions for {existing.model_name} on "
            f"{existing.task} (request {existing.request_id[:8]}, {existing.status})")


def rate_limit_message(user: str, recent: int, window: dt.timedelta, max_recent: int) -> str:
    return (f"rate limit: {user} already made {recent} submissions in the last {_human(window)} "
            f"(limit {max_recent}); try again later")


def ownership_message(model_name: str, first: SubmissionRequest) -> str:
    return (f"model name {model_name} belongs to {first.user}, who submitted it first (as {first.model_name}); "
            "submit under your own model name")


def claim_token(worker: str = "") -> str:
    """A new claim: the worker's name (for the queue view) plus a nonce (two claims never share a token)."""
    name = worker or f"{socket.gethostname()}:{os.getpid()}"
    return f"{name[:60]}#{uuid.uuid4().hex[:12]}"


def claimable(request: SubmissionRequest, now: dt.datetime) -> bool:
    """PENDING, or RUNNING under a lease that has expired (or was never recorded: a pre-lease claim)."""
    if request.status == PENDING:
        return True
    if request.status != RUNNING:
        return False
    return not request.lease_until or parse_iso(request.lease_until) <= now


def holds(request: SubmissionRequest, claim: str | None) -> bool:
    return claim is None or (request.status == RUNNING and request.claimed_by == claim)


def lost_message(request: SubmissionRequest) -> str:
    return (f"request {request.request_id[:8]} is no longer ours ({request.status}"
            f"{', claimed by ' + request.claimed_by if request.claimed_by else ''}); its lease expired")


def apply_claim(request: SubmissionRequest, token: str, now: dt.datetime, lease: dt.timedelta) -> SubmissionRequest:
    """The request as claimed: RUNNING under ``token`` until ``now + lease``; one more attempt counted."""
    request.status, request.updated_time = RUNNING, iso(now)
    request.claimed_by, request.lease_until = token, iso(now + lease)
    request.attempts += 1
    return request


def apply_status(request: SubmissionRequest, status: str, now: dt.datetime, error: str | None,
                 result_id: str | None) -> SubmissionRequest:
    check_transition(request.status, status)
    request.status, request.updated_time, request.error = status, iso(now), error
    request.result_id = result_id or request.result_id
    if status != RUNNING:
        request.claimed_by = request.lease_until = None
    return request


def worn_out(request: SubmissionRequest) -> bool:
    return request.attempts > MAX_ATTEMPTS


def worn_out_message(request: SubmissionRequest) -> str:
    return (f"scoring stopped {request.attempts - 1} times without finishing (the workers died or lost their lease "
            "on this request); not retried")


@runtime_checkable
class LeaderboardStore(Protocol):
    """What the app, the scoring worker and the CLI need from storage."""

    def add_submission(self, request: SubmissionRequest, predictions: bytes, *, max_recent: int | None = None,
                       window: dt.timedelta = dt.timedelta(days=1)) -> SubmissionRequest:
        """Store a PENDING request and its (canonical) predictions. Raises :class:`DuplicateSubmission`,
        :class:`RateLimited` or :class:`ModelNameTaken`; nothing is stored then."""

    def set_status(self, request_id: str, status: str, error: str | None = None,
                   result_id: str | None = None, *, claim: str | None = None) -> SubmissionRequest:
        """Change a request's status; with ``claim``, only while that claim holds it (else :class:`LeaseLost`)."""

    def claim_pending(self, limit: int = 1, *, worker: str = "",
                      lease: dt.timedelta = DEFAULT_LEASE) -> list[SubmissionRequest]:
        """Atomically claim up to ``limit`` PENDING (or lease-expired RUNNING) requests, oldest first, under one
        new claim token (``request.claimed_by``); they are RUNNING until ``now + lease``."""

    def claim_request(self, request_id: str, *, worker: str = "",
                      lease: dt.timedelta = DEFAULT_LEASE) -> SubmissionRequest | None:
        """Claim one request if it is claimable; None when another worker holds it or it is done."""

    def renew_lease(self, request_id: str, claim: str, lease: dt.timedelta = DEFAULT_LEASE) -> bool:
        """Extend a held claim to ``now + lease``; False when the claim is lost."""

    def finish(self, request_id: str, result: ResultRecord, details: bytes | None = None, *,
               claim: str | None = None) -> SubmissionRequest:
        """Store the result and mark the request FINISHED, together; with ``claim``, only while it holds."""

    def get_request(self, request_id: str) -> SubmissionRequest: ...

    def list_requests(self, status: str | None = None) -> list[SubmissionRequest]: ...

    def get_predictions(self, request_id: str) -> bytes: ...

    def add_result(self, result: ResultRecord, details: bytes | None = None) -> str:
        """Store a result (replacing the same cell's earlier result); returns its result id."""

    def list_results(self, benchmark: str | None = None) -> list[ResultRecord]: ...

    def get_result(self, result_id: str) -> ResultRecord: ...

    def get_provenance(self, result_id: str) -> dict: ...

    def find_duplicate(self, user: str, model_name: str, task: str,
                       predictions_sha256: str) -> SubmissionRequest | None: ...

    def count_recent(self, user: str, window: dt.timedelta) -> int: ...

    def model_owner(self, model_name: str) -> SubmissionRequest | None:
        """The first request under ``model_name`` (by identity): its user owns the name."""


def provenance_view(result: ResultRecord) -> dict:
    """Everything a reader needs to judge one result: provenance, coverage per mode, identity."""
    return {
        "result_id": result.result_id, "row_id": result.row_id, "model": result.model_name,
        "model_revision": result.model_revision, "model_family": result.model_family,
        "model_knowledge_cutoff": result.model_cutoff, "knowledge_cutoff_source": result.cutoff_source,
        "claimed_knowledge_cutoff": result.claimed_cutoff, "task": result.task, "benchmark": result.benchmark,
        "benchmark_version": result.benchmark_version, "dataset_fingerprint": result.dataset_fingerprint,
        "dataset_revision": result.dataset_revision, "revision": result.revision,
        "cutoff": result.cutoff, "judge_ids": result.judge_ids, "min_item_date": result.min_item_date,
        "contamination_free": result.contamination_free, "contamination": result.contamination_label,
        "submitted_by": result.user, "request_id": result.request_id, "created_time": result.created_time,
        "scores": result.scores, "provenance": result.provenance, "reference_baseline": result.reference_baseline,
    }


def _change_counter(table: str) -> str:
    """A change counter for ``table``, kept by triggers so that every writer (any process, the migration included)
    bumps it: readers compare it to decide whether their decoded copy of the table is still current."""
    events = "".join(
        f"CREATE TRIGGER IF NOT EXISTS {table}_changed_{event.lower()} AFTER {event} ON {table}\n"
        f"    BEGIN UPDATE counters SET value = value + 1 WHERE name = '{table}'; END;\n"
        for event in ("INSERT", "UPDATE", "DELETE"))
    return f"INSERT OR IGNORE INTO counters VALUES ('{table}', 0);\n{events}"


_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS requests (
    request_id TEXT PRIMARY KEY,
    user TEXT NOT NULL,                 -- identity_key(user)
    model_name TEXT NOT NULL,           -- identity_key(model name)
    task TEXT NOT NULL,
    predictions_sha256 TEXT NOT NULL,
    status TEXT NOT NULL,
    submitted_ts REAL NOT NULL,
    record TEXT NOT NULL,
    claimed_by TEXT,
    lease_until REAL,
    UNIQUE (user, model_name, task, predictions_sha256)
);
CREATE INDEX IF NOT EXISTS requests_user_ts ON requests (user, submitted_ts);
CREATE INDEX IF NOT EXISTS requests_status ON requests (status, submitted_ts);
CREATE INDEX IF NOT EXISTS requests_model ON requests (model_name, submitted_ts);
CREATE TABLE IF NOT EXISTS predictions (
    request_id TEXT PRIMARY KEY REFERENCES requests (request_id),
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    result_id TEXT PRIMARY KEY,
    request_id TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    created_ts REAL NOT NULL,
    record TEXT NOT NULL,
    details BLOB
);
CREATE INDEX IF NOT EXISTS results_benchmark ON results (benchmark);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
-- change counters: every result written, replaced or removed; every submission, claim, status change and lease
-- renewal (the Queue tab)
{_change_counter("results")}
{_change_counter("requests")}
-- values computed from immutable inputs (a dataset fingerprint of a pinned revision), kept across starts
CREATE TABLE IF NOT EXISTS derived_cache (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
SCHEMA_VERSION = 2

# the claim itself: one UPDATE whose WHERE admits only a free or expired request, so two workers can never both
# win it, in any number of processes (SQLite serialises writers; BEGIN IMMEDIATE takes the write lock first)
_CLAIMABLE = "(status = 'PENDING' OR (status = 'RUNNING' AND (lease_until IS NULL OR lease_until <= ?)))"
_CLAIM = f"""
UPDATE requests SET status = 'RUNNING', claimed_by = :token, lease_until = :until,
    record = json_set(record, '$.status', 'RUNNING', '$.updated_time', :now_iso, '$.claimed_by', :token,
                      '$.lease_until', :until_iso,
                      '$.attempts', coalesce(json_extract(record, '$.attempts'), 0) + 1)
WHERE request_id IN (SELECT request_id FROM requests WHERE {_CLAIMABLE.replace('?', ':now')} AND {{which}}
                     ORDER BY submitted_ts, rowid LIMIT :limit)
RETURNING record
"""


_WRITE_LOCKS: dict[str, threading.RLock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()


def _write_lock(path: Path) -> threading.RLock:
    """One lock per database file in this process, shared by every store object opened on it."""
    key = str(Path(path).resolve())
    with _WRITE_LOCKS_GUARD:
        return _WRITE_LOCKS.setdefault(key, threading.RLock())


class SQLiteStore:
    """The embedded store: ``<folder>/leaderboard.sqlite3`` (WAL). Safe across threads and processes.

    ``clock`` (default: UTC now) stamps requests and decides rate-limit windows and lease expiry; tests inject
    a fake one (shared between processes when they share a value)."""

    FILE_NAME = "leaderboard.sqlite3"

    def __init__(self, folder: Path | str, *, clock: Clock = utc_now) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / self.FILE_NAME
        self.clock = clock
        self._local = threading.local()
        self._write_lock = _write_lock(self.path)
        con = self._connection()
        con.executescript(_SCHEMA)  # idempotent; executescript manages its own transaction
        if con.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            self._migrate()

    # -- connections: one per thread, autocommit mode, explicit transactions
    def _connection(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=True)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            con.execute("PRAGMA busy_timeout=60000")
            con.execute("PRAGMA foreign_keys=ON")
            self._local.con = con
        return con

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        con = self._connection()
        # threads of this process take turns here first: a writer waiting on SQLite's own lock sleeps in its
        # busy handler (1, 2, 5 ... 100 ms steps) well past the moment the lock is free, while one waiting on this
        # lock wakes as soon as the writer before it commits. Other processes still meet at SQLite's lock.
        with self._write_lock:
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def _migrate(self) -> None:
        """Version 0 -> 1: lease columns; user and model columns hold identity keys. Version 1 -> 2: results of
        reference baselines (``provenance.reference_baseline``, imported before the leaderboard knew them) become
        reference results owned by nobody. Then result ids are recomputed for the current row key (model names by
        identity, the owner in it), keeping the latest result per new id. Confidence intervals and breakdowns need
        no step: they live in each result's scores, and a result stored without them shows n/a."""
        with self._tx() as con:
            version = con.execute("PRAGMA user_version").fetchone()[0]
            if version >= SCHEMA_VERSION:
                return
            if version < 1:
                self._migrate_requests(con)
            self._recompute_results(con, adopt_references=version < 2)
            con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @staticmethod
    def _migrate_requests(con: sqlite3.Connection) -> None:
        columns = {row[1] for row in con.execute("PRAGMA table_info(requests)")}
        for name, kind in (("claimed_by", "TEXT"), ("lease_until", "REAL")):
            if name not in columns:
                con.execute(f"ALTER TABLE requests ADD COLUMN {name} {kind}")
        for request_id, record in con.execute("SELECT request_id, record FROM requests").fetchall():
            request = SubmissionRequest.from_json(json.loads(record))
            try:
                con.execute("UPDATE requests SET user = ?, model_name = ? WHERE request_id = ?",
                            (identity_key(request.user), identity_key(request.model_name), request_id))
            except sqlite3.IntegrityError:  # two requests that differ only by case: keep the old spelling
                pass

    @staticmethod
    def _recompute_results(con: sqlite3.Connection, *, adopt_references: bool) -> None:
        latest: dict[str, tuple[str, ResultRecord]] = {}  # new id -> (old id, result): the latest wins
        for old_id, record in con.execute("SELECT result_id, record FROM results ORDER BY created_ts, rowid"):
            result = ResultRecord.from_json(json.loads(record))
            flag = (result.provenance or {}).get("reference_baseline") if isinstance(result.provenance, dict) \
                else None
            if adopt_references and isinstance(flag, dict) and not result.reference_baseline:
                result.reference_baseline, result.user = flag, ""
            latest[result.result_id] = (old_id, result)
        keep = {old_id for old_id, _ in latest.values()}
        for (old_id,) in con.execute("SELECT result_id FROM results").fetchall():
            if old_id not in keep:
                con.execute("DELETE FROM results WHERE result_id = ?", (old_id,))
        for new_id, (old_id, result) in latest.items():
            con.execute("UPDATE results SET result_id = ?, record = ? WHERE result_id = ?",
                        ("migrating:" + new_id, json.dumps(result.to_json()), old_id))  # no clash midway
        con.execute("UPDATE results SET result_id = substr(result_id, 11) WHERE result_id LIKE 'migrating:%'")

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None

    # -- requests
    def add_submission(self, request: SubmissionRequest, predictions: bytes, *, max_recent: int | None = None,
                       window: dt.timedelta = dt.timedelta(days=1)) -> SubmissionRequest:
        now = self.clock()
        request.status, request.submitted_time, request.updated_time = PENDING, iso(now), iso(now)
        request.claimed_by = request.lease_until = None
        user, model = identity_key(request.user), identity_key(request.model_name)
        with self._tx() as con:
            existing = self._find_duplicate(con, request.user, request.model_name, request.task,
                                            request.predictions_sha256)
            if existing is not None:
                raise DuplicateSubmission(duplicate_message(existing))
            first = self._model_owner(con, request.model_name)
            if first is not None and identity_key(first.user) != user:
                raise ModelNameTaken(ownership_message(request.model_name, first))
            if max_recent is not None:
                recent = self._count_recent(con, request.user, window)
                if recent >= max_recent:
                    raise RateLimited(rate_limit_message(request.user, recent, window, max_recent))
            try:
                con.execute("INSERT INTO requests (request_id, user, model_name, task, predictions_sha256, status, "
                            "submitted_ts, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            (request.request_id, user, model, request.task, request.predictions_sha256,
                             request.status, now.timestamp(), json.dumps(request.to_json())))
            except sqlite3.IntegrityError:  # unreachable under BEGIN IMMEDIATE; kept as the last line of defence
                raise DuplicateSubmission("duplicate submission") from None
            con.execute("INSERT INTO predictions VALUES (?, ?)", (request.request_id, predictions))
        return request

    def _load_request(self, con: sqlite3.Connection, request_id: str) -> SubmissionRequest:
        row = con.execute("SELECT record FROM requests WHERE request_id = ?", (request_id,)).fetchone()
        if row is None:
            raise SciprobeError(f"unknown request {request_id!r}")
        return SubmissionRequest.from_json(json.loads(row[0]))

    def _save_request(self, con: sqlite3.Connection, request: SubmissionRequest) -> None:
        lease = parse_iso(request.lease_until).timestamp() if request.lease_until else None
        con.execute("UPDATE requests SET status = ?, claimed_by = ?, lease_until = ?, record = ? WHERE request_id = ?",
                    (request.status, request.claimed_by, lease, json.dumps(request.to_json()), request.request_id))

    def _held(self, con: sqlite3.Connection, request_id: str, claim: str | None) -> SubmissionRequest:
        request = self._load_request(con, request_id)
        if not holds(request, claim):
            raise LeaseLost(lost_message(request))
        return request

    def set_status(self, request_id: str, status: str, error: str | None = None,
                   result_id: str | None = None, *, claim: str | None = None) -> SubmissionRequest:
        with self._tx() as con:
            request = apply_status(self._held(con, request_id, claim), status, self.clock(), error, result_id)
            self._save_request(con, request)
        return request

    def finish(self, request_id: str, result: ResultRecord, details: bytes | None = None, *,
               claim: str | None = None) -> SubmissionRequest:
        with self._tx() as con:
            request = self._held(con, request_id, claim)
            self._insert_result(con, result, details)
            request = apply_status(request, FINISHED, self.clock(), None, result.result_id)
            self._save_request(con, request)
        return request

    def _claim(self, which: str, args: dict, limit: int, worker: str,
               lease: dt.timedelta) -> list[SubmissionRequest]:
        now = self.clock()
        token = claim_token(worker)
        params = {**args, "token": token, "until": (now + lease).timestamp(), "until_iso": iso(now + lease),
                  "now": now.timestamp(), "now_iso": iso(now), "limit": limit}
        with self._tx() as con:
            claimed = [SubmissionRequest.from_json(json.loads(row[0]))
                       for row in con.execute(_CLAIM.format(which=which), params).fetchall()]
            usable = []
            for request in claimed:
                if worn_out(request):
                    self._save_request(con, apply_status(request, FAILED, now, worn_out_message(request), None))
                else:
                    usable.append(request)
        return sorted(usable, key=lambda r: r.submitted_time)

    def claim_pending(self, limit: int = 1, *, worker: str = "",
                      lease: dt.timedelta = DEFAULT_LEASE) -> list[SubmissionRequest]:
        return self._claim("1", {}, limit, worker, lease)

    def claim_request(self, request_id: str, *, worker: str = "",
                      lease: dt.timedelta = DEFAULT_LEASE) -> SubmissionRequest | None:
        claimed = self._claim("request_id = :request_id", {"request_id": request_id}, 1, worker, lease)
        return claimed[0] if claimed else None

    def renew_lease(self, request_id: str, claim: str, lease: dt.timedelta = DEFAULT_LEASE) -> bool:
        until = self.clock() + lease
        with self._tx() as con:
            cursor = con.execute(
                "UPDATE requests SET lease_until = ?, record = json_set(record, '$.lease_until', ?) "
                "WHERE request_id = ? AND status = 'RUNNING' AND claimed_by = ?",
                (until.timestamp(), iso(until), request_id, claim))
            return cursor.rowcount == 1

    def get_request(self, request_id: str) -> SubmissionRequest:
        return self._load_request(self._connection(), request_id)

    def list_requests(self, status: str | None = None) -> list[SubmissionRequest]:
        sql, args = "SELECT record FROM requests", ()
        if status is not None:
            sql, args = sql + " WHERE status = ?", (status,)
        rows = self._connection().execute(sql + " ORDER BY submitted_ts, rowid", args).fetchall()
        return [SubmissionRequest.from_json(json.loads(r[0])) for r in rows]

    def get_predictions(self, request_id: str) -> bytes:
        row = self._connection().execute("SELECT data FROM predictions WHERE request_id = ?",
                                         (request_id,)).fetchone()
        if row is None:
            raise SciprobeError(f"no predictions stored for request {request_id!r}")
        return bytes(row[0])

    def _find_duplicate(self, con: sqlite3.Connection, user: str, model_name: str, task: str,
                        sha: str) -> SubmissionRequest | None:
        row = con.execute("SELECT record FROM requests WHERE user = ? AND model_name = ? AND task = ? "
                          "AND predictions_sha256 = ?",
                          (identity_key(user), identity_key(model_name), task, sha)).fetchone()
        return SubmissionRequest.from_json(json.loads(row[0])) if row else None

    def find_duplicate(self, user: str, model_name: str, task: str,
                       predictions_sha256: str) -> SubmissionRequest | None:
        return self._find_duplicate(self._connection(), user, model_name, task, predictions_sha256)

    def _model_owner(self, con: sqlite3.Connection, model_name: str) -> SubmissionRequest | None:
        row = con.execute("SELECT record FROM requests WHERE model_name = ? ORDER BY submitted_ts, rowid LIMIT 1",
                          (identity_key(model_name),)).fetchone()
        return SubmissionRequest.from_json(json.loads(row[0])) if row else None

    def model_owner(self, model_name: str) -> SubmissionRequest | None:
        return self._model_owner(self._connection(), model_name)

    def _count_recent(self, con: sqlite3.Connection, user: str, window: dt.timedelta) -> int:
        since = (self.clock() - window).timestamp()
        return con.execute("SELECT COUNT(*) FROM requests WHERE user = ? AND submitted_ts > ?",
                           (identity_key(user), since)).fetchone()[0]

    def count_recent(self, user: str, window: dt.timedelta) -> int:
        return self._count_recent(self._connection(), user, window)

    # -- results
    def _insert_result(self, con: sqlite3.Connection, result: ResultRecord, details: bytes | None) -> None:
        con.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?)",
                    (result.result_id, result.request_id, result.benchmark,
                     parse_iso(result.created_time).timestamp(), json.dumps(result.to_json()), details))

    def add_result(self, result: ResultRecord, details: bytes | None = None) -> str:
        with self._tx() as con:
            self._insert_result(con, result, details)
        return result.result_id

    def list_results(self, benchmark: str | None = None) -> list[ResultRecord]:
        sql, args = "SELECT record FROM results", ()
        if benchmark is not None:
            sql, args = sql + " WHERE benchmark = ?", (benchmark,)
        rows = self._connection().execute(sql + " ORDER BY created_ts", args).fetchall()
        return [ResultRecord.from_json(json.loads(r[0])) for r in rows]

    def results_version(self) -> int:
        """A number that changes whenever any result is added, replaced or removed (by any process)."""
        return self._counter("results")

    def requests_version(self) -> int:
        """A number that changes whenever any request is added or changed (by any process)."""
        return self._counter("requests")

    def _counter(self, name: str) -> int:
        return self._connection().execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()[0]

    def cached_value(self, key: str) -> str | None:
        """A value stored by :meth:`cache_value` (at this or an earlier start), else None."""
        row = self._connection().execute("SELECT value FROM derived_cache WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def cache_value(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key``; the key must name every input the value depends on."""
        with self._tx() as con:
            con.execute("INSERT OR REPLACE INTO derived_cache VALUES (?, ?)", (key, value))

    def get_result(self, result_id: str) -> ResultRecord:
        row = self._connection().execute("SELECT record FROM results WHERE result_id = ?", (result_id,)).fetchone()
        if row is None:
            raise SciprobeError(f"unknown result {result_id!r}")
        return ResultRecord.from_json(json.loads(row[0]))

    def get_provenance(self, result_id: str) -> dict:
        return provenance_view(self.get_result(result_id))

    def get_details(self, result_id: str) -> bytes | None:
        row = self._connection().execute("SELECT details FROM results WHERE result_id = ?", (result_id,)).fetchone()
        return bytes(row[0]) if row and row[0] is not None else None


def _human(window: dt.timedelta) -> str:
    seconds = int(window.total_seconds())
    if seconds % 86400 == 0:
        return f"{seconds // 86400} day(s)"
    if seconds % 3600 == 0:
        return f"{seconds // 3600} hour(s)"
    return f"{seconds} s"


def default_store_dir() -> Path:
    """``$SCIPROBE_LEADERBOARD_DIR``, else ``$SCIPROBE_HOME/leaderboard``."""
    from sciprobe.core.paths import sciprobe_home

    env = os.environ.get("SCIPROBE_LEADERBOARD_DIR")
    return Path(env) if env else sciprobe_home() / "leaderboard"


__all__ = [
    "FAILED",
    "FINISHED",
    "PENDING",
    "RUNNING",
    "DEFAULT_LEASE",
    "DuplicateSubmission",
    "LeaderboardStore",
    "LeaseLost",
    "ModelNameTaken",
    "RateLimited",
    "ResultRecord",
    "SQLiteStore",
    "SubmissionRequest",
    "default_store_dir",
    "provenance_view",
]
