"""The Hub-backed leaderboard store: a requests dataset repo and a results dataset repo (the HF leaderboard
template's data contract, shared/spec/ecosystem.md §7), all I/O through a
:class:`~sciprobe.interop.hub_api.HubApi`.

Layout::

    requests repo:  <model_slug>/request_<bench>_<task>_<request_id>.json     one JSON per request (status inside)
                    predictions/<request_id>.jsonl                             the canonical predictions
    results repo:   <model_slug>/results_<bench>_<version>_<task>_<result_id>.json
                    <model_slug>/details_<result_id>.parquet

``result_id`` hashes (owner, model, benchmark, version, dataset fingerprint, cutoff, judge set, task), so a result
on a different dataset revision gets its own file and its own leaderboard row. Writes are buffered and committed
in one commit per repo by :meth:`HubStore.flush` (or automatically once ``batch_size`` files are waiting).
Within one process a lock makes dedupe, rate limiting and model-name ownership exact; the Hub has no
transactions, so run one *submitting* writer (the Space) per repo pair.

Several *workers* may share the repos: a claim is a conditional commit (``parent_commit`` = the head the worker
read; :class:`~sciprobe.interop.hub_api.CommitConflict` when another commit landed in between, then it
re-reads and retries), and so are a claimed request's status changes — the Hub's equivalent of SQLite's
``UPDATE ... WHERE the claim is free or expired``. A claimed request's result is committed to the results repo
before its FINISHED status, so a crash between the two leaves a RUNNING request whose lease expires and which is
scored again (the result file has the same path, so it is replaced, never duplicated); a worker that outlived its
lease finds the FINISHED commit refused (:class:`~sciprobe.leaderboard.store.LeaseLost`).
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.interop.hub_api import CommitConflict, HubApi
from sciprobe.leaderboard.records import (
    FAILED,
    FINISHED,
    PENDING,
    STATUSES,
    ResultRecord,
    SubmissionRequest,
    identity_key,
    iso,
    parse_iso,
    utc_now,
)
from sciprobe.leaderboard.store import (
    DEFAULT_LEASE,
    DuplicateSubmission,
    LeaseLost,
    ModelNameTaken,
    RateLimited,
    apply_claim,
    apply_status,
    claim_token,
    claimable,
    duplicate_message,
    holds,
    lost_message,
    ownership_message,
    provenance_view,
    rate_limit_message,
    worn_out,
    worn_out_message,
)
from sciprobe.results.write import model_slug

#: conditional commits tried before a claim gives up for this round (the queue is busy; the worker polls again)
CAS_ATTEMPTS = 8


def _dump(obj: dict) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def _request(data: Any) -> SubmissionRequest:
    request = SubmissionRequest.from_json(data)
    parse_iso(request.submitted_time)  # sorting and rate limits read it: a bad one is an unreadable file
    if request.status not in STATUSES or not isinstance(request.request_id, str):
        raise ValueError("not a request")
    return request


def _read_records(root: Path | None, pattern: str, parse: Callable[[Any], Any]) -> dict[str, tuple[str, Any]]:
    """``{id: (path in repo, record)}`` of the files matching ``pattern``; a file that is not a readable record
    (hand-edited, truncated) is skipped with a warning instead of taking the leaderboard down."""
    found: dict[str, tuple[str, Any]] = {}
    if root is None:
        return found
    for file in sorted(root.glob(pattern)):
        path = file.relative_to(root).as_posix()
        try:
            record = parse(json.loads(file.read_text("utf-8")))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            warnings.warn(f"leaderboard: skipping unreadable {path} ({type(exc).__name__})", stacklevel=2)
            continue
        key = record.request_id if isinstance(record, SubmissionRequest) else record.result_id
        if key in found and isinstance(record, ResultRecord) and record.created_time < found[key][1].created_time:
            continue  # two files of one cell (the model spelt in another case, an older layout): the latest wins
        found[key] = (path, record)
    return found


class HubStore:
    """:class:`~sciprobe.leaderboard.store.LeaderboardStore` on two hub dataset repos."""

    def __init__(self, api: HubApi, requests_repo: str, results_repo: str, *, batch_size: int = 50,
                 clock: Callable[[], dt.datetime] = utc_now) -> None:
        self.api = api
        self.requests_repo = requests_repo
        self.results_repo = results_repo
        self.batch_size = batch_size
        self.clock = clock
        self._lock = threading.RLock()
        self._requests: dict[str, tuple[str, SubmissionRequest]] = {}
        self._results: dict[str, tuple[str, ResultRecord]] = {}
        self._pending: dict[str, dict[str, bytes]] = {requests_repo: {}, results_repo: {}}
        self._unpublished: set[str] = set()  # requests added here and not committed yet: nobody else sees them
        self.commits: int = 0
        self.refresh()

    # -- paths
    @staticmethod
    def request_path(request: SubmissionRequest) -> str:
        bench, _, task = request.task.partition(":")
        return f"{model_slug(request.model_name)}/request_{bench}_{task}_{request.request_id}.json"

    @staticmethod
    def predictions_path(request_id: str) -> str:
        return f"predictions/{request_id}.jsonl"

    @staticmethod
    def result_path(result: ResultRecord) -> str:
        task = result.task.partition(":")[2]
        return (f"{model_slug(result.model_name)}/results_{result.benchmark}_{result.benchmark_version}_{task}_"
                f"{result.result_id}.json")

    @staticmethod
    def details_path(result: ResultRecord) -> str:
        return f"{model_slug(result.model_name)}/details_{result.result_id}.parquet"

    # -- reading the repos
    def _load_requests(self, revision: str | None = None) -> None:
        root = self.api.snapshot(self.requests_repo, patterns=["*/request_*.json"], revision=revision)
        requests = _read_records(root, "*/request_*.json", _request)
        for path, data in self._pending[self.requests_repo].items():
            if path.endswith(".json"):
                req = SubmissionRequest.from_json(json.loads(data))
                requests[req.request_id] = (path, req)
        self._requests = requests

    def refresh(self) -> None:
        """Re-read both repos (pending writes stay buffered and win over what the snapshot holds)."""
        with self._lock:
            self._load_requests()
            root = self.api.snapshot(self.results_repo, patterns=["*/results_*.json"])  # not the details
            results = _read_records(root, "*/results_*.json", ResultRecord.from_json)
            for path, data in self._pending[self.results_repo].items():
                if path.endswith(".json"):
                    res = ResultRecord.from_json(json.loads(data))
                    results[res.result_id] = (path, res)
            self._results = results

    def _write(self, repo: str, path: str, data: bytes) -> None:
        self._pending[repo][path] = data
        if sum(len(files) for files in self._pending.values()) >= self.batch_size:
            self.flush()

    def flush(self, message: str = "Update leaderboard") -> int:
        """Commit every buffered file: one commit per repo. Returns the number of commits made."""
        with self._lock:
            made = 0
            for repo in (self.requests_repo, self.results_repo):
                files = self._pending[repo]
                if files:
                    self.api.commit(repo, dict(files), message)
                    files.clear()
                    made += 1
            self._unpublished.clear()
            self.commits += made
            return made

    # -- requests
    def add_submission(self, request: SubmissionRequest, predictions: bytes, *, max_recent: int | None = None,
                       window: dt.timedelta = dt.timedelta(days=1)) -> SubmissionRequest:
        with self._lock:
            existing = self.find_duplicate(request.user, request.model_name, request.task, request.predictions_sha256)
            if existing is not None:
                raise DuplicateSubmission(duplicate_message(existing))
            first = self.model_owner(request.model_name)
            if first is not None and identity_key(first.user) != identity_key(request.user):
                raise ModelNameTaken(ownership_message(request.model_name, first))
            if max_recent is not None:
                recent = self.count_recent(request.user, window)
                if recent >= max_recent:
                    raise RateLimited(rate_limit_message(request.user, recent, window, max_recent))
            now = iso(self.clock())
            request.status, request.submitted_time, request.updated_time = PENDING, now, now
            request.claimed_by = request.lease_until = None
            path = self.request_path(request)
            self._requests[request.request_id] = (path, request)
            self._unpublished.add(request.request_id)
            self._write(self.requests_repo, self.predictions_path(request.request_id), predictions)
            self._write(self.requests_repo, path, _dump(request.to_json()))
            return request

    def _get(self, request_id: str) -> tuple[str, SubmissionRequest]:
        if request_id not in self._requests:
            raise SciprobeError(f"unknown request {request_id!r}")
        return self._requests[request_id]

    def _conditional(self, change: Callable[[], dict[str, bytes] | None], message: str) -> Any:
        """Run ``change`` on a fresh view of the requests repo and commit what it returns only if the repo did not
        move meanwhile (retried on conflict). ``change`` returns the files to commit (None: nothing to do)."""
        for _ in range(CAS_ATTEMPTS):
            head = self.api.head(self.requests_repo)
            self._load_requests(head)
            files = change()
            if not files:
                return False
            files = {**self._pending[self.requests_repo], **files}  # our buffered request writes ride along
            try:
                self.api.commit(self.requests_repo, files, message, parent_commit=head)
            except CommitConflict:
                continue
            except BaseException:
                self._load_requests()  # drop what change() did to the in-memory view
                raise
            self._pending[self.requests_repo].clear()
            self._unpublished.clear()
            self.commits += 1
            self._load_requests()
            return True
        self._load_requests()
        return None

    def _changed(self, request_id: str, claim: str | None, status: str, error: str | None,
                 result_id: str | None) -> dict[str, bytes]:
        """The request file after the change (in memory), or :class:`LeaseLost`."""
        path, request = self._get(request_id)
        if not holds(request, claim):
            raise LeaseLost(lost_message(request))
        apply_status(request, status, self.clock(), error, result_id)
        return {path: _dump(request.to_json())}

    def set_status(self, request_id: str, status: str, error: str | None = None,
                   result_id: str | None = None, *, claim: str | None = None) -> SubmissionRequest:
        with self._lock:
            if claim is None or request_id in self._unpublished:  # nobody else acts on it: buffered
                for path, data in self._changed(request_id, claim, status, error, result_id).items():
                    self._write(self.requests_repo, path, data)
                return self._get(request_id)[1]

            def change() -> dict[str, bytes]:
                return self._changed(request_id, claim, status, error, result_id)

            if self._conditional(change, f"{status} {request_id[:8]}") is None:
                raise SciprobeError(f"could not record {status} for request {request_id[:8]}: the requests repo "
                                    "kept changing")
            return self._get(request_id)[1]

    def finish(self, request_id: str, result: ResultRecord, details: bytes | None = None, *,
               claim: str | None = None) -> SubmissionRequest:
        with self._lock:
            if claim is not None and request_id not in self._unpublished:
                self._load_requests(self.api.head(self.requests_repo))
                request = self._get(request_id)[1]
                if not holds(request, claim):  # checked before writing the result: a lost lease writes nothing
                    raise LeaseLost(lost_message(request))
                self.add_result(result, details)
                self.flush_repo(self.results_repo, f"Result of {request_id[:8]}")  # the result first: never lost
            else:
                self.add_result(result, details)
            return self.set_status(request_id, FINISHED, result_id=result.result_id, claim=claim)

    def flush_repo(self, repo: str, message: str) -> None:
        with self._lock:
            files = self._pending[repo]
            if files:
                self.api.commit(repo, dict(files), message)
                files.clear()
                self.commits += 1

    def _claim(self, pick: Callable[[list[SubmissionRequest]], list[SubmissionRequest]], worker: str,
               lease: dt.timedelta) -> list[SubmissionRequest]:
        token = claim_token(worker)
        claimed: list[SubmissionRequest] = []

        def change() -> dict[str, bytes] | None:
            now = self.clock()
            claimed.clear()
            candidates = sorted((r for _, r in self._requests.values() if claimable(r, now)),
                                key=lambda r: r.submitted_time)
            files = {}
            for request in pick(candidates):
                apply_claim(request, token, now, lease)
                if worn_out(request):
                    apply_status(request, FAILED, now, worn_out_message(request), None)
                else:
                    claimed.append(request)
                files[self._get(request.request_id)[0]] = _dump(request.to_json())
            return files or None

        with self._lock:
            if self._conditional(change, f"Claim by {token}") is None:
                return []  # the repo kept moving: nothing claimed this round
            return [self._get(r.request_id)[1] for r in claimed]

    def claim_pending(self, limit: int = 1, *, worker: str = "",
                      lease: dt.timedelta = DEFAULT_LEASE) -> list[SubmissionRequest]:
        return self._claim(lambda candidates: candidates[:limit], worker, lease)

    def claim_request(self, request_id: str, *, worker: str = "",
                      lease: dt.timedelta = DEFAULT_LEASE) -> SubmissionRequest | None:
        with self._lock:
            if request_id in self._unpublished:  # nobody else can see it yet: claimed here, committed later
                path, request = self._get(request_id)
                if not claimable(request, self.clock()):
                    return None
                apply_claim(request, claim_token(worker), self.clock(), lease)
                self._write(self.requests_repo, path, _dump(request.to_json()))
                return request
            claimed = self._claim(lambda candidates: [r for r in candidates if r.request_id == request_id],
                                  worker, lease)
            return claimed[0] if claimed else None

    def renew_lease(self, request_id: str, claim: str, lease: dt.timedelta = DEFAULT_LEASE) -> bool:
        with self._lock:
            if request_id in self._unpublished:
                path, request = self._get(request_id)
                if not holds(request, claim):
                    return False
                request.lease_until = iso(self.clock() + lease)
                self._write(self.requests_repo, path, _dump(request.to_json()))
                return True

            def change() -> dict[str, bytes] | None:
                path, request = self._get(request_id)
                if not holds(request, claim):
                    return None
                request.lease_until = iso(self.clock() + lease)
                return {path: _dump(request.to_json())}

            return bool(self._conditional(change, f"Renew {request_id[:8]}"))

    def get_request(self, request_id: str) -> SubmissionRequest:
        with self._lock:
            return self._get(request_id)[1]

    def list_requests(self, status: str | None = None) -> list[SubmissionRequest]:
        with self._lock:
            found = [r for _, r in self._requests.values() if status is None or r.status == status]
        return sorted(found, key=lambda r: r.submitted_time)

    def get_predictions(self, request_id: str) -> bytes:
        path = self.predictions_path(request_id)
        with self._lock:
            if path in self._pending[self.requests_repo]:
                return self._pending[self.requests_repo][path]
        data = self.api.download(self.requests_repo, path)
        if data is None:
            raise SciprobeError(f"no predictions stored for request {request_id!r}")
        return data

    def find_duplicate(self, user: str, model_name: str, task: str,
                       predictions_sha256: str) -> SubmissionRequest | None:
        wanted = (identity_key(user), identity_key(model_name), task, predictions_sha256)
        with self._lock:
            for _, r in self._requests.values():
                if (identity_key(r.user), identity_key(r.model_name), r.task, r.predictions_sha256) == wanted:
                    return r
        return None

    def model_owner(self, model_name: str) -> SubmissionRequest | None:
        key = identity_key(model_name)
        with self._lock:
            same = [r for _, r in self._requests.values() if identity_key(r.model_name) == key]
        return min(same, key=lambda r: r.submitted_time) if same else None

    def count_recent(self, user: str, window: dt.timedelta) -> int:
        since, key = self.clock() - window, identity_key(user)
        with self._lock:
            return sum(1 for _, r in self._requests.values()
                       if identity_key(r.user) == key and parse_iso(r.submitted_time) > since)

    # -- results
    def add_result(self, result: ResultRecord, details: bytes | None = None) -> str:
        with self._lock:
            path = self.result_path(result)
            self._results[result.result_id] = (path, result)
            if details is not None:
                self._write(self.results_repo, self.details_path(result), details)
            self._write(self.results_repo, path, _dump(result.to_json()))
            return result.result_id

    def list_results(self, benchmark: str | None = None) -> list[ResultRecord]:
        with self._lock:
            found = [r for _, r in self._results.values() if benchmark is None or r.benchmark == benchmark]
        return sorted(found, key=lambda r: r.created_time)

    def get_result(self, result_id: str) -> ResultRecord:
        with self._lock:
            if result_id not in self._results:
                raise SciprobeError(f"unknown result {result_id!r}")
            return self._results[result_id][1]

    def get_provenance(self, result_id: str) -> dict:
        return provenance_view(self.get_result(result_id))
