"""Scoring submissions in worker processes, so throughput grows with concurrent submitters up to the cores.

Accepting a submission is CPU-bound Python (validation against the pinned data, scoring, bootstrap intervals): in
the Space's request threads it holds the GIL, and 50 submitters sent at once were scored at 1.17x a single one on
2 cores (issue 28). Here the request thread hands the whole submission (validate, store, score) to a process of a
:class:`ScoringPool`, which works on the same SQLite file: the store is safe across processes (dedupe, rate limit
and ownership are one transaction; scoring happens under a claim), so nothing is lost or scored twice. The thread
waits for the child and then reads the request back.

Only a :class:`~sciprobe.leaderboard.store.SQLiteStore` on the real clock can be shared this way (a hub store
keeps its state in the Space's process; an injected clock cannot cross into a child): with any other store the
request is scored in the calling thread, as before.

``SCIPROBE_LEADERBOARD_SCORING_PROCESSES``: how many processes (default ``0``: score in the request thread, since
the pool measured slower than threads on this 2-core machine; ``0`` or ``1``: in the request thread).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.leaderboard.records import SubmissionRequest, utc_now
from sciprobe.leaderboard.store import LeaderboardStore, SQLiteStore

PROCESSES_ENV = "SCIPROBE_LEADERBOARD_SCORING_PROCESSES"
#: what a pool process runs for each submission
ACCEPT = "sciprobe.leaderboard.app:accept_submission"


def processes_from_env() -> int:
    raw = os.environ.get(PROCESSES_ENV)
    if not raw:  # off by default: on 2 shared cores the pool measured slower than the request threads (BENCHMARKS.md)
        return 0
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


_child_stores: dict[str, SQLiteStore] = {}  # in a pool process: one open store per folder, kept between requests


def _child_store(folder: str) -> SQLiteStore:
    """Opening a store writes (its schema check takes the write lock): a pool process opens it once."""
    if folder not in _child_stores:
        _child_stores[folder] = SQLiteStore(folder)
    return _child_stores[folder]


def _accept_in_child(folder: str, settings: Any, benchmarks: Sequence[str], pins: dict,
                     args: tuple) -> tuple[int, str | None, str | None]:
    """In a pool process: accept the submission on the shared store (validate, store, score). Returns
    (process id, request id, None) or (process id, None, the one-line reason it was refused)."""
    from sciprobe.core.lazy import resolve

    accept_submission = resolve(ACCEPT)  # named, not imported: the app imports this module to build the pool
    try:
        request = accept_submission(_child_store(folder), settings, benchmarks, pins, *args)
    except SciprobeError as exc:
        return os.getpid(), None, str(exc)
    return os.getpid(), request.request_id, None


def _warm(pins: dict) -> None:
    """Load the scoring path and the pinned data once per process, before the first submission waits on it (a
    cold process took 5-6 s for its first IDRBench submission, a warm one 0.6 s)."""
    import time

    import sciprobe.results.evidence  # noqa: F401
    from sciprobe.core.lazy import resolve

    resolve(ACCEPT)
    import sciprobe.scoring.classification  # noqa: F401 - with sklearn.metrics: most of a cold first score
    import sciprobe.run.score_predictions  # noqa: F401
    from sciprobe.core.registry import get_benchmark
    from sciprobe.leaderboard.queue import scored_inline
    from sciprobe.leaderboard.validation import task_target

    for benchmark, pin in pins.items():
        try:
            inline = [f"{benchmark}:{name}" for name in get_benchmark(benchmark).tasks
                      if scored_inline(f"{benchmark}:{name}")]
            if inline:
                task_target(inline[0], pin.resolve())
        except Exception:  # noqa: BLE001 - warming is best effort; the submission reports any real problem
            continue
    time.sleep(0.5)  # so that each process of the pool takes one warm-up, not one process all of them


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

    def warm_up(self, pins: dict | None = None) -> list:
        """Start the processes and load their scoring path (and ``pins``' data) in the background; the page is
        served meanwhile. Returns the warm-up futures (a bench waits for them)."""
        if not self.enabled:
            return []
        pool = self._pool()
        return [pool.submit(_warm, dict(pins or {})) for _ in range(self.processes)]

    def accept(self, store: SQLiteStore, settings: Any, benchmarks: Sequence[str], pins: dict,
               args: tuple) -> SubmissionRequest:
        """:func:`~sciprobe.leaderboard.app.accept_submission` in a pool process; the request as the store has it
        afterwards, or the child's refusal raised here. A process that died takes no request with it unnoticed:
        the pool is replaced and the submitter told (a request it had stored stays in the queue)."""
        try:
            pid, request_id, refused = self._pool().submit(_accept_in_child, str(Path(store.folder)), settings,
                                                           list(benchmarks), dict(pins), args).result()
        except BrokenProcessPool:
            self.close()
            raise SciprobeError("the scoring process stopped; if the Queue tab lists your request, the scoring "
                                "worker will score it, else submit again") from None
        with self._lock:
            self.process_ids.add(pid)
        if refused is not None:
            raise SciprobeError(refused)
        return store.get_request(request_id)

    def close(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=True, cancel_futures=True)
                self._executor = None


__all__ = ["PROCESSES_ENV", "ScoringPool", "processes_from_env", "shareable"]
