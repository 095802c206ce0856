"""The Hub-backed leaderboard store: a requests dataset repo and a results dataset repo (the HF leaderboard
template's data contract, shared/spec/ecosystem.md §7), all I/O through a :class:`~sciprobe.leaderboard.hub_api.HubApi`.

Layout::

    requests repo:  <model_slug>/request_<bench>_<task>_<request_id>.json     one JSON per request (status inside)
                    predictions/<request_id>.jsonl                             the canonical predictions
    results repo:   <model_slug>/results_<bench>_<version>_<task>_<result_id>.json
                    <model_slug>/details_<result_id>.parquet

``result_id`` hashes (model, benchmark, version, dataset fingerprint, cutoff, judge set, task), so a result on a
different dataset revision gets its own file and its own leaderboard row. Writes are buffered and committed
in one commit per repo by :meth:`HubStore.flush` (or automatically once ``batch_size`` files are waiting).
Within one process a lock makes dedupe and rate limiting exact; the Hub has no transactions, so run one
writer (the Space) per repo pair.
"""

from __future__ import annotations

import datetime as dt
import json
import threading

from sciprobe.errors import SciprobeError
from sciprobe.leaderboard.hub_api import HubApi
from sciprobe.leaderboard.records import PENDING, RUNNING, ResultRecord, SubmissionRequest, iso, parse_iso, utc_now
from sciprobe.leaderboard.store import (
    DuplicateSubmission,
    RateLimited,
    _human,
    check_transition,
    duplicate_message,
    provenance_view,
)
from sciprobe.results import model_slug


def _dump(obj: dict) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


class HubStore:
    """:class:`~sciprobe.leaderboard.store.LeaderboardStore` on two hub dataset repos."""

    def __init__(self, api: HubApi, requests_repo: str, results_repo: str, *, batch_size: int = 50) -> None:
        self.api = api
        self.requests_repo = requests_repo
        self.results_repo = results_repo
        self.batch_size = batch_size
        self._lock = threading.RLock()
        self._requests: dict[str, tuple[str, SubmissionRequest]] = {}
        self._results: dict[str, tuple[str, ResultRecord]] = {}
        self._pending: dict[str, dict[str, bytes]] = {requests_repo: {}, results_repo: {}}
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
    def refresh(self) -> None:
        """Re-read both repos (pending writes stay buffered and win over what the snapshot holds)."""
        with self._lock:
            requests: dict[str, tuple[str, SubmissionRequest]] = {}
            root = self.api.snapshot(self.requests_repo, patterns=["*/request_*.json"])  # not the predictions
            if root is not None:
                for file in sorted(root.glob("*/request_*.json")):
                    req = SubmissionRequest.from_json(json.loads(file.read_text("utf-8")))
                    requests[req.request_id] = (str(file.relative_to(root).as_posix()), req)
            results: dict[str, tuple[str, ResultRecord]] = {}
            root = self.api.snapshot(self.results_repo, patterns=["*/results_*.json"])  # not the details
            if root is not None:
                for file in sorted(root.glob("*/results_*.json")):
                    res = ResultRecord.from_json(json.loads(file.read_text("utf-8")))
                    results[res.result_id] = (str(file.relative_to(root).as_posix()), res)
            for path, data in self._pending[self.requests_repo].items():
                if path.endswith(".json"):
                    req = SubmissionRequest.from_json(json.loads(data))
                    requests[req.request_id] = (path, req)
            for path, data in self._pending[self.results_repo].items():
                if path.endswith(".json"):
                    res = ResultRecord.from_json(json.loads(data))
                    results[res.result_id] = (path, res)
            self._requests, self._results = requests, results

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
            self.commits += made
            return made

    # -- requests
    def add_submission(self, request: SubmissionRequest, predictions: bytes, *, max_recent: int | None = None,
                       window: dt.timedelta = dt.timedelta(days=1)) -> SubmissionRequest:
        with self._lock:
            existing = self.find_duplicate(request.user, request.model_name, request.task, request.predictions_sha256)
            if existing is not None:
                raise DuplicateSubmission(duplicate_message(existing))
            if max_recent is not None:
                recent = self.count_recent(request.user, window)
                if recent >= max_recent:
                    raise RateLimited(f"rate limit: {request.user} already made {recent} submissions in the last "
                                      f"{_human(window)} (limit {max_recent}); try again later")
            now = iso(utc_now())
            request.status, request.submitted_time, request.updated_time = PENDING, now, now
            path = self.request_path(request)
            self._requests[request.request_id] = (path, request)
            self._write(self.requests_repo, self.predictions_path(request.request_id), predictions)
            self._write(self.requests_repo, path, _dump(request.to_json()))
            return request

    def _get(self, request_id: str) -> tuple[str, SubmissionRequest]:
        if request_id not in self._requests:
            raise SciprobeError(f"unknown request {request_id!r}")
        return self._requests[request_id]

    def set_status(self, request_id: str, status: str, error: str | None = None,
                   result_id: str | None = None) -> SubmissionRequest:
        with self._lock:
            path, request = self._get(request_id)
            check_transition(request.status, status)
            request.status, request.updated_time, request.error = status, iso(utc_now()), error
            request.result_id = result_id or request.result_id
            self._write(self.requests_repo, path, _dump(request.to_json()))
            return request

    def claim_pending(self, limit: int = 1) -> list[SubmissionRequest]:
        with self._lock:
            pending = sorted((r for _, r in self._requests.values() if r.status == PENDING),
                             key=lambda r: r.submitted_time)[:limit]
            return [self.set_status(r.request_id, RUNNING) for r in pending]

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

    def find_duplicate(self, user: str, model_name: str, task: str, predictions_sha256: str) -> SubmissionRequest | None:
        with self._lock:
            for _, r in self._requests.values():
                if (r.user, r.model_name, r.task, r.predictions_sha256) == (user, model_name, task, predictions_sha256):
                    return r
        return None

    def count_recent(self, user: str, window: dt.timedelta) -> int:
        since = utc_now() - window
        with self._lock:
            return sum(1 for _, r in self._requests.values() if r.user == user and parse_iso(r.submitted_time) > since)

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
