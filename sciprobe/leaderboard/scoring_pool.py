"""Scoring submissions in worker processes, so throughput grows with concurrent submitters up to the cores.

Scoring a submission is CPU-bound Python (parsing, metrics, bootstrap intervals): in the Space's request threads
it holds the GIL, and 50 submitters sent at once were scored at 1.17x a single one on 2 cores (issue 28). Here the
request thread claims the request (as before) and a process of a :class:`ScoringPool` scores it on the same
SQLite file — the store is safe across processes, and every change is made under the claim, so nothing is lost
or scored twice. The thread waits for the child and then reads the request back.

Only a :class:`~sciprobe.leaderboard.store.SQLiteStore` on the real clock can be shared this way (a hub store
keeps its state in the Space's process; an injected clock cannot cross into a child): with any other store the
request is scored in the calling thread, as before.

``SCIPROBE_LEADERBOARD_SCORING_PROCESSES``: how many processes (default: the CPU count; ``0`` or ``1``: score in
the request thread).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from sciprobe.errors import SciprobeError
from sciprobe.leaderboard.records import SubmissionRequest, utc_now
from sciprobe.leaderboard.store import LeaderboardStore, SQLiteStore

PROCESSES_ENV = "SCIPROBE_LEADERBOARD_SCORING_PROCESSES"

Scorer = Callable[[LeaderboardStore, SubmissionRequest, Callable[[str], str]], SubmissionRequest]


def processes_from_env() -> int:
    raw = os.environ.get(PROCESSES_ENV)
    if not raw:
        return os.cpu_count() or 1
    try:
        value = int(raw)
    except ValueError:
        raise SciprobeError(f"{PROCESSES_ENV} must be a number of processes, not {raw!r}") from None
    if value < 0:
        raise SciprobeError(f"{PROCESSES_ENV} must be 0 or more, not {value}")
    return value


def shareable(store: LeaderboardStore) -> bool:
    """A store a child process can open on its own and act on with the same effect."""
    return isinstance(store, SQLiteStore) and store.clock is utc_now


def _score_in_child(folder: str, request_id: str, locations: Mapping[str, str]) -> int:
    """In the pool's process: open the store, score the (already claimed) request under its claim; returns the
    process id (which processes scored is part of what the pool reports)."""
    from sciprobe.leaderboard.queue import process_request

    store = SQLiteStore(folder)
    try:
        process_request(store, store.get_request(request_id), data=lambda benchmark: locations[benchmark])
    finally:
        store.close()
    return os.getpid()


def _warm() -> None:
    """Import the scoring path once per process, before the first submission waits on it."""
    import sciprobe.leaderboard.queue  # noqa: F401
    import sciprobe.scoring_cli  # noqa: F401


class ScoringPool:
    """A lazily started pool of ``processes`` scoring processes (spawned: the Space's threads are never forked)."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self._executor: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self.process_ids: set[int] = set()  # the processes that scored a request so far

    @property
    def enabled(self) -> bool:
        return self.processes > 1

    def _pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ProcessPoolExecutor(self.processes,
                                                     mp_context=multiprocessing.get_context("spawn"))
            return self._executor

    def warm_up(self) -> None:
        """Start the processes and their imports in the background (the page is served meanwhile)."""
        if self.enabled:
            pool = self._pool()
            for _ in range(self.processes):
                pool.submit(_warm)

    def score(self, store: SQLiteStore, request: SubmissionRequest, locations: Mapping[str, str]) -> SubmissionRequest:
        """Score a claimed request in a pool process; the request as the store has it afterwards."""
        pid = self._pool().submit(_score_in_child, str(Path(store.folder)), request.request_id,
                                  dict(locations)).result()
        with self._lock:
            self.process_ids.add(pid)
        return store.get_request(request.request_id)

    def close(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True, cancel_futures=True)
                self._executor = None


__all__ = ["PROCESSES_ENV", "ScoringPool", "processes_from_env", "shareable"]
