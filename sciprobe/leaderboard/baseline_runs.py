"""Reference baselines for the leaderboard's own data: computed when missing, stored like any result.

:func:`ensure_baselines` runs at the start of the Space and of ``sciprobe leaderboard``. For every benchmark and
every (baseline, task) the benchmark declares (``Benchmark.baselines``), it looks for a stored reference result on
the data the leaderboard scores that benchmark against (:mod:`~sciprobe.leaderboard.pins`: the pinned dataset or
the bundled sample), by dataset fingerprint. Missing ones — a new store, or pinned data that changed — are scored
by the path of ``sciprobe baselines`` (:func:`sciprobe.run.baselines.run_baselines`, cheap non-LLM predictors) and
imported (:func:`~sciprobe.leaderboard.importer.import_results_file`). Results on earlier data stay, as separate
rows (their *Revision* says which data), like any model's.

Never a made-up number: a mode a baseline cannot be scored in is left out (its cell is n/a; the tab lists such
modes, :func:`~sciprobe.leaderboard.reference.unscored_modes`), and a task the baseline cannot be scored on, or
where it did not predict every item (e.g. it reads release files this data did not come from), is not stored and is
a note on the tab. So is a benchmark with no data to compute on (no pin and no bundled sample). Such tasks are tried
again at the next start (they are still missing).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.leaderboard.pins import DATA_ENV, DataPin
from sciprobe.leaderboard.records import identity_key
from sciprobe.leaderboard.reference import PREFIX
from sciprobe.leaderboard.store import LeaderboardStore

Log = Callable[[str], None]


def _log(message: str) -> None:
    print(f"[sciprobe leaderboard] {message}", file=sys.stderr, flush=True)


def _fingerprint(benchmark: Any, task: Any, location: str) -> str:
    """The fingerprint a result on ``location`` records (a built folder: its shards' checksum, computed once)."""
    if Path(location).is_dir():
        from sciprobe.data.build import dataset_fingerprint

        return dataset_fingerprint(Path(location))
    from sciprobe.data.task_data import load_task_data

    return load_task_data(benchmark, task, location).fingerprint


def _inputs_key(benchmark: Any, task: Any, location: str) -> str:
    """Everything a task's fingerprint depends on: the benchmark version, the task, and the data — a hub location
    by its pinned revision (immutable), a folder by its files' names, sizes and modification times."""
    head = f"fingerprint|{benchmark.name}@{getattr(benchmark, 'version', '')}|{task.name}|"
    folder = Path(location)
    if not folder.is_dir():
        return head + "hub:" + location
    stats = sorted((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns)
                   for p in folder.rglob("*") if p.is_file())
    digest = hashlib.sha256(json.dumps([str(folder.resolve()), stats]).encode()).hexdigest()
    return head + "folder:" + digest


class _FolderCache:
    """The derived-value cache for a store that has none of its own (the hub store): a SQLite file in the
    leaderboard folder (``$SCIPROBE_LEADERBOARD_DIR``; on a Space, persistent storage keeps it across restarts)."""

    def __init__(self) -> None:
        from sciprobe.leaderboard.store import default_store_dir

        folder = default_store_dir()
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "derived-cache.sqlite3"

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        con.execute("CREATE TABLE IF NOT EXISTS derived_cache (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        return con

    def cached_value(self, key: str) -> str | None:
        with closing(self._connect()) as con:
            row = con.execute("SELECT value FROM derived_cache WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def cache_value(self, key: str, value: str) -> None:
        with closing(self._connect()) as con:
            con.execute("INSERT OR REPLACE INTO derived_cache VALUES (?, ?)", (key, value))


def cached_fingerprint(store: LeaderboardStore, benchmark: Any, task: Any, location: str) -> str:
    """:func:`_fingerprint`, computed once per pinned revision (or folder state) and kept in the store (a store
    without a cache of its own: in the leaderboard folder), so a restart does not load every task's data again."""
    cache = store if hasattr(store, "cached_value") and hasattr(store, "cache_value") else _FolderCache()
    key = _inputs_key(benchmark, task, location)
    found = cache.cached_value(key)
    if found is not None:
        return found
    value = _fingerprint(benchmark, task, location)
    cache.cache_value(key, value)
    return value


def missing_baselines(store: LeaderboardStore, benchmark: Any, location: str,
                      notes: list[str]) -> dict[str, list[str]]:
    """{baseline name: [task names]} with no stored reference result on ``location``'s data."""
    from sciprobe.run.baselines import baselines_of

    have = {(identity_key(r.model_name), r.task, r.dataset_fingerprint)
            for r in store.list_results(benchmark.name) if r.is_reference}
    fingerprints: dict[str, str | None] = {}
    todo: dict[str, list[str]] = {}
    for baseline in baselines_of(benchmark):
        for name in baseline.tasks:
            if name not in fingerprints:
                try:
                    fingerprints[name] = cached_fingerprint(store, benchmark, benchmark.task(name), location)
                except SciprobeError as exc:
                    fingerprints[name] = None
                    notes.append(f"{benchmark.name}:{name}: no data for its baselines ({exc})")
            if fingerprints[name] is None:
                continue
            key = (identity_key(PREFIX + baseline.name), f"{benchmark.name}:{name}", fingerprints[name])
            if key not in have:
                todo.setdefault(baseline.name, []).append(name)
    return todo


def _keep_complete(path: Path, results: list[Any], name: str, notes: list[str]) -> bool:
    """Drop from the written file every task where the baseline left items without a prediction; False when
    nothing is left to import."""
    data = json.loads(path.read_text("utf-8"))
    tasks = data["sciprobe"]["tasks"]
    for result in results:
        errors = [r for r in result.records if r.get("error")]
        if errors and result.key in tasks:
            del tasks[result.key]
            notes.append(f"{name} · {result.key.split('|')[0]}: not shown, no prediction for {len(errors)} of "
                         f"{len(result.records)} items on this data ({str(errors[0]['error'])[:120]})")
    path.write_text(json.dumps(data), "utf-8")
    return bool(tasks)


def ensure_benchmark(store: LeaderboardStore, pin: DataPin, *, log: Log = _log) -> list[str]:
    """Compute and store the missing reference baselines of one benchmark; returns the notes for its tab."""
    from sciprobe.run.baselines import baselines_of, run_baselines
    from sciprobe.core.registry import get_benchmark
    from sciprobe.leaderboard.importer import import_results_file, pinned_lookup

    benchmark = get_benchmark(pin.benchmark)
    if not baselines_of(benchmark):
        return []
    notes: list[str] = []
    try:
        location = pin.resolve()
    except SciprobeError as exc:
        return [f"reference baselines not computed, no data: {exc} (a leaderboard pins it: "
                f"{DATA_ENV}={pin.benchmark}=OWNER/NAME@REVISION)"]
    todo = missing_baselines(store, benchmark, location, notes)
    pinned = pinned_lookup({pin.benchmark: pin})  # the baselines rank on the data they were computed on
    with tempfile.TemporaryDirectory(prefix="sciprobe-lb-baselines-") as tmp:
        for name, tasks in todo.items():
            log(f"computing reference baseline {benchmark.name}/{name} ({', '.join(tasks)})")
            try:
                runs = run_baselines(benchmark.name, names=[name], tasks=tasks, data=location,
                                     output_dir=Path(tmp) / name, log=_splitter(notes, log))
            except SciprobeError as exc:
                notes.append(f"{name}: not computed: {exc}")
                continue
            for _, path, results in runs:
                if _keep_complete(path, results, name, notes):
                    import_results_file(store, path, warn=notes.append, pinned=pinned)
    for note in notes:
        log(f"{benchmark.name}: {note}")
    return notes


def _splitter(notes: list[str], log: Log) -> Log:
    """``run_baselines``' lines: a task it skipped (with the reason) is a note for the tab; a mode it could not
    score only goes to the log, because the tab derives those from the stored results (they stay n/a)."""
    def take(message: str) -> None:
        if " skipped: " in message:
            notes.append(message)
        else:
            log(message)

    return take


def ensure_baselines(store: LeaderboardStore, pins: Mapping[str, DataPin], *, log: Log = _log) -> dict[str, list[str]]:
    """:func:`ensure_benchmark` for every pinned benchmark, then one flush (hub store); notes per benchmark."""
    notes = {bench: ensure_benchmark(store, pin, log=log) for bench, pin in pins.items()}
    flush = getattr(store, "flush", None)
    if flush is not None:
        flush("Add reference baselines")
    return notes


__all__ = ["cached_fingerprint", "ensure_baselines", "ensure_benchmark", "missing_baselines"]
