"""Leaderboard storage: one interface (:class:`LeaderboardStore`), two implementations.

* :class:`SQLiteStore` — the embedded default: one SQLite file in WAL mode under a local folder. Every write
  is one ``BEGIN IMMEDIATE`` transaction; a ``UNIQUE(user, model_name, task, predictions_sha256)`` constraint
  makes duplicate detection race-free and the rate-limit count runs inside the same transaction as the insert,
  so concurrent submissions neither get lost nor duplicated.
* :class:`sciprobe.leaderboard.hub_store.HubStore` — requests and results dataset repos on the Hub (the HF
  leaderboard template's data contract), all hub I/O behind a small ``api`` object.

:func:`sciprobe.leaderboard.store_factory.open_store` picks one from the environment (``SCIPROBE_LEADERBOARD_STORE``, ``SCIPROBE_LEADERBOARD_DIR``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, runtime_checkable

from sciprobe.errors import SciprobeError
from sciprobe.leaderboard.records import (
    FAILED,
    FINISHED,
    PENDING,
    RUNNING,
    STATUSES,
    ResultRecord,
    SubmissionRequest,
    iso,
    parse_iso,
    utc_now,
)


class DuplicateSubmission(SciprobeError):
    """The same user already submitted these exact predictions for this model and task."""


class RateLimited(SciprobeError):
    """The user has reached the submission limit for the current window."""


_TRANSITIONS = {PENDING: {RUNNING, FAILED}, RUNNING: {FINISHED, FAILED, PENDING}, FINISHED: set(), FAILED: set()}


def check_transition(old: str, new: str) -> None:
    if new not in STATUSES:
        raise SciprobeError(f"unknown status {new!r}")
    if new not in _TRANSITIONS[old]:
        raise SciprobeError(f"request cannot go from {old} to {new}")


def duplicate_message(existing: SubmissionRequest) -> str:
    return (f"duplicate submission: you already submitted these predictions for {existing.model_name} on "
            f"{existing.task} (request {existing.request_id[:8]}, {existing.status})")


@runtime_checkable
class LeaderboardStore(Protocol):
    """What the app, the scoring worker and the CLI need from storage."""

    def add_submission(self, request: SubmissionRequest, predictions: bytes, *, max_recent: int | None = None,
                       window: dt.timedelta = dt.timedelta(days=1)) -> SubmissionRequest:
        """Store a PENDING request and its (canonical) predictions. Raises :class:`DuplicateSubmission`
        or :class:`RateLimited`; nothing is stored then."""

    def set_status(self, request_id: str, status: str, error: str | None = None,
                   result_id: str | None = None) -> SubmissionRequest: ...

    def claim_pending(self, limit: int = 1) -> list[SubmissionRequest]:
        """Atomically move up to ``limit`` PENDING requests to RUNNING and return them (oldest first)."""

    def get_request(self, request_id: str) -> SubmissionRequest: ...

    def list_requests(self, status: str | None = None) -> list[SubmissionRequest]: ...

    def get_predictions(self, request_id: str) -> bytes: ...

    def add_result(self, result: ResultRecord, details: bytes | None = None) -> str:
        """Store a result (replacing the same cell's earlier result); returns its result id."""

    def list_results(self, benchmark: str | None = None) -> list[ResultRecord]: ...

    def get_result(self, result_id: str) -> ResultRecord: ...

    def get_provenance(self, result_id: str) -> dict: ...

    def find_duplicate(self, user: str, model_name: str, task: str, predictions_sha256: str) -> SubmissionRequest | None: ...

    def count_recent(self, user: str, window: dt.timedelta) -> int: ...


def provenance_view(result: ResultRecord) -> dict:
    """Everything a reader needs to judge one result: provenance, coverage per mode, identity."""
    return {
        "result_id": result.result_id, "row_id": result.row_id, "model": result.model_name,
        "model_revision": result.model_revision, "model_family": result.model_family,
        "model_knowledge_cutoff": result.model_cutoff, "task": result.task, "benchmark": result.benchmark,
        "benchmark_version": result.benchmark_version, "dataset_fingerprint": result.dataset_fingerprint,
        "dataset_revision": result.dataset_revision, "revision": result.revision,
        "cutoff": result.cutoff, "judge_ids": result.judge_ids, "min_item_date": result.min_item_date,
        "contamination_free": result.contamination_free, "submitted_by": result.user,
        "request_id": result.request_id, "created_time": result.created_time,
        "scores": result.scores, "provenance": result.provenance,
    }


_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    request_id TEXT PRIMARY KEY,
    user TEXT NOT NULL,
    model_name TEXT NOT NULL,
    task TEXT NOT NULL,
    predictions_sha256 TEXT NOT NULL,
    status TEXT NOT NULL,
    submitted_ts REAL NOT NULL,
    record TEXT NOT NULL,
    UNIQUE (user, model_name, task, predictions_sha256)
);
CREATE INDEX IF NOT EXISTS requests_user_ts ON requests (user, submitted_ts);
CREATE INDEX IF NOT EXISTS requests_status ON requests (status, submitted_ts);
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
"""


class SQLiteStore:
    """The embedded store: ``<folder>/leaderboard.sqlite3`` (WAL). Safe across threads and processes."""

    FILE_NAME = "leaderboard.sqlite3"

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / self.FILE_NAME
        self._local = threading.local()
        self._connection().executescript(_SCHEMA)  # idempotent; executescript manages its own transaction

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
        con.execute("BEGIN IMMEDIATE")
        try:
            yield con
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None

    # -- requests
    def add_submission(self, request: SubmissionRequest, predictions: bytes, *, max_recent: int | None = None,
                       window: dt.timedelta = dt.timedelta(days=1)) -> SubmissionRequest:
        now = utc_now()
        request.status, request.submitted_time, request.updated_time = PENDING, iso(now), iso(now)
        with self._tx() as con:
            existing = self._find_duplicate(con, request.user, request.model_name, request.task,
                                            request.predictions_sha256)
            if existing is not None:
                raise DuplicateSubmission(duplicate_message(existing))
            if max_recent is not None:
                recent = self._count_recent(con, request.user, window)
                if recent >= max_recent:
                    raise RateLimited(f"rate limit: {request.user} already made {recent} submissions in the last "
                                      f"{_human(window)} (limit {max_recent}); try again later")
            try:
                con.execute("INSERT INTO requests VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            (request.request_id, request.user, request.model_name, request.task,
                             request.predictions_sha256, request.status, now.timestamp(),
                             json.dumps(request.to_json())))
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
        con.execute("UPDATE requests SET status = ?, record = ? WHERE request_id = ?",
                    (request.status, json.dumps(request.to_json()), request.request_id))

    def set_status(self, request_id: str, status: str, error: str | None = None,
                   result_id: str | None = None) -> SubmissionRequest:
        with self._tx() as con:
            request = self._load_request(con, request_id)
            check_transition(request.status, status)
            request.status, request.updated_time = status, iso(utc_now())
            request.error = error
            request.result_id = result_id or request.result_id
            self._save_request(con, request)
        return request

    def claim_pending(self, limit: int = 1) -> list[SubmissionRequest]:
        with self._tx() as con:
            ids = [r[0] for r in con.execute(
                "SELECT request_id FROM requests WHERE status = ? ORDER BY submitted_ts LIMIT ?", (PENDING, limit))]
            claimed = []
            for request_id in ids:
                request = self._load_request(con, request_id)
                request.status, request.updated_time = RUNNING, iso(utc_now())
                self._save_request(con, request)
                claimed.append(request)
        return claimed

    def get_request(self, request_id: str) -> SubmissionRequest:
        return self._load_request(self._connection(), request_id)

    def list_requests(self, status: str | None = None) -> list[SubmissionRequest]:
        sql, args = "SELECT record FROM requests", ()
        if status is not None:
            sql, args = sql + " WHERE status = ?", (status,)
        rows = self._connection().execute(sql + " ORDER BY submitted_ts", args).fetchall()
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
                          "AND predictions_sha256 = ?", (user, model_name, task, sha)).fetchone()
        return SubmissionRequest.from_json(json.loads(row[0])) if row else None

    def find_duplicate(self, user: str, model_name: str, task: str, predictions_sha256: str) -> SubmissionRequest | None:
        return self._find_duplicate(self._connection(), user, model_name, task, predictions_sha256)

    def _count_recent(self, con: sqlite3.Connection, user: str, window: dt.timedelta) -> int:
        since = (utc_now() - window).timestamp()
        return con.execute("SELECT COUNT(*) FROM requests WHERE user = ? AND submitted_ts > ?",
                           (user, since)).fetchone()[0]

    def count_recent(self, user: str, window: dt.timedelta) -> int:
        return self._count_recent(self._connection(), user, window)

    # -- results
    def add_result(self, result: ResultRecord, details: bytes | None = None) -> str:
        with self._tx() as con:
            con.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?)",
                        (result.result_id, result.request_id, result.benchmark,
                         parse_iso(result.created_time).timestamp(), json.dumps(result.to_json()), details))
        return result.result_id

    def list_results(self, benchmark: str | None = None) -> list[ResultRecord]:
        sql, args = "SELECT record FROM results", ()
        if benchmark is not None:
            sql, args = sql + " WHERE benchmark = ?", (benchmark,)
        rows = self._connection().execute(sql + " ORDER BY created_ts", args).fetchall()
        return [ResultRecord.from_json(json.loads(r[0])) for r in rows]

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
    from sciprobe.paths import sciprobe_home

    env = os.environ.get("SCIPROBE_LEADERBOARD_DIR")
    return Path(env) if env else sciprobe_home() / "leaderboard"


__all__ = [
    "FAILED",
    "FINISHED",
    "PENDING",
    "RUNNING",
    "DuplicateSubmission",
    "LeaderboardStore",
    "RateLimited",
    "ResultRecord",
    "SQLiteStore",
    "SubmissionRequest",
    "default_store_dir",
    "provenance_view",
]
