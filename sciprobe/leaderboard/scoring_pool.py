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

``SCIPROBE_LEADERBOARD_SCORING_PROCESSES``: how many processes (``0`` or ``1``: in the request thread, the library's
default; the Space's entry, leaderboard_space/app.py, defaults to one per core). Why the pool once measured slower
than one submitter, and what changed (issue 28): a cold process paid 0.3-0.7 s for each of its first submissions
(now :meth:`ScoringPool.warm_up` scores one throwaway submission in each), and with BLAS and Arrow on a thread per
core one submission already took ~1.8 of 2 cores in bursts, so a second process found none free (now each
process computes on one core, :func:`one_thread_each`).
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
SETTINGS = "sciprobe.leaderboard.app:Settings"


def processes_from_env() -> int:
    raw = os.environ.get(PROCESSES_ENV)
    if not raw:  # off in the library (tests, `sciprobe leaderboard`): the Space's entry turns it on
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


#: what a scoring process sets before it loads numpy, scipy or pyarrow (see :func:`one_thread_each`)
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def one_thread_each() -> None:
    """Each scoring process computes on one core: the pool's parallelism is its processes, one submission each.
    With their default of a thread per core, BLAS (the bootstrap's matrix products) and Arrow let one submission
    take ~1.8 of this machine's 2 cores in bursts (measured: 0.21 s of CPU for 0.15 s of wall time), so a second
    process found no core free and 2 processes scored no faster than 1."""
    os.environ.update(ONE_THREAD)  # for the libraries loaded from here on (numpy, scipy's own BLAS)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)  # any already loaded
    except ImportError:  # threadpoolctl comes with scikit-learn; without it the variables above still hold
        pass
    try:
        import pyarrow

        pyarrow.set_cpu_count(1)
        pyarrow.set_io_thread_count(1)
    except ImportError:
        pass


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
                _score_throwaway(inline[0], pin, task_target(inline[0], pin.resolve()).ids)
        except Exception:  # noqa: BLE001 - warming is best effort; the submission reports any real problem
            continue
    time.sleep(0.5)  # so that each process of the pool takes one warm-up, not one process all of them


def _score_throwaway(task: str, pin: Any, ids: Sequence[str]) -> None:
    """Validate, store and score one blank submission of ``task`` on a scratch store that is then deleted: the
    first real submission of a process otherwise pays for everything scoring touches once (the writers, the
    bootstrap, the metadata reads; 0.3-0.7 s against 0.11 s warm, measured)."""
    import json
    import tempfile

    from sciprobe.core.lazy import resolve

    with tempfile.TemporaryDirectory(prefix="sciprobe-lb-warm-") as tmp:
        predictions = Path(tmp) / "warm-up.jsonl"
        predictions.write_text("".join(json.dumps({"id": item, "response": ""}) + "\n" for item in ids), "utf-8")
        store = SQLiteStore(Path(tmp) / "store")
        try:
            resolve(ACCEPT)(store, resolve(SETTINGS)(), [pin.benchmark], {pin.benchmark: pin},
                            "warm-up", task, str(predictions), "warm-up/model", "", "", "", "", None)
        except SciprobeError:  # a blank file some task refuses: the parts it did reach are warm
            pass
        finally:
            store.close()


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
                self._executor = ProcessPoolExecutor(self.processes, initializer=one_thread_each,
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
