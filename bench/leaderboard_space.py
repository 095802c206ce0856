"""The leaderboard Space's fixed costs (issue 28): page load against the number of stored rows, and the time to the
first page on a first and a second start.

    PYTHONPATH=. HF_HUB_OFFLINE=1 .venv/bin/python bench/leaderboard_space.py [--rows 0,100,1000] [--repeat 3]

Page load: the Space's own ``load`` handler (what every visitor's page runs), on a store holding N synthetic result
rows, against a baseline in the same run: the same handler with the pre-issue-28 read path (no change counters, no
per-load snapshot, so every table, plot and dropdown reads and decodes the store again), on an unchanged store
and right after a new result (the first load after a change derives every view again). Start: ``build_app`` plus
one page load, in a fresh process, first on an empty store (baselines and fingerprints computed) then again on the
same store (the second start: fingerprints from the store's cache); beside it the floor under any first page, a
fresh process that only imports gradio. Data: SCIPROBE_LEADERBOARD_DATA as set by the
caller (pinned release data), else the bundled sample. Submissions: idrbench:ipi on the same data, one distinct
file per submitter.
Results go to bench/results/leaderboard_space.md. The release-data run:

    SCIPROBE_LEADERBOARD_DATA=idrbench=/path/to/built/idrbench PYTHONPATH=. HF_HUB_OFFLINE=1 \
        .venv/bin/python bench/leaderboard_space.py

(built from the v1 release files with ``sciprobe.build.build_benchmark``, as tests/conftest.py's
``idrbench_release_built`` does).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from load import load_note, machine_condition, write_results  # noqa: E402


class Unversioned:
    """The store as the Space saw it before issue 28: no change counters, so every call reads the table and
    every view is derived again."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def __getattr__(self, name: str):
        if name in ("results_version", "requests_version"):
            raise AttributeError(name)
        return getattr(self._inner, name)


def bench_row(i: int):
    from sciprobe.leaderboard.records import ResultRecord

    report = {"metric": "m", "mode": "strict", "macro_f1": (i % 97) / 97, "macro_f1_ci": [0.1, 0.9],
              "coverage": {"n_items": 40, "n_scored": 40, "n_failed": 0, "failure_rate": 0.0}}
    return ResultRecord(
        request_id=f"req-{i}", user=f"user{i % 50}", model_name=f"org{i % 50}/model-{i}", task="idrbench:ipi",
        benchmark="idrbench", benchmark_version="1.0.0", dataset_fingerprint="fp-bench", headline="macro_f1",
        default_mode="strict", scores={"strict": report, "official": {**report, "mode": "official"}},
        provenance={"note": "bench row"}, model_family=f"fam{i % 7}")


def fill(store, rows: int) -> None:
    for i in range(rows):
        store.add_result(bench_row(i))


def page_load_seconds(demo, repeat: int, change=None) -> float:
    """Median seconds of the page's ``load`` handler; ``change(n)`` (if given) writes to the store before each."""
    load = next(f for f in demo.fns.values() if f.api_name == "load")
    times = []
    for n in range(repeat):
        if change is not None:
            change(n)
        start = time.perf_counter()
        load.fn(None, None, None, None)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def page_loads(rows: int, repeat: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """((before, now) on an unchanged store, (before, now) for the first load after a new result)."""
    from sciprobe.leaderboard.app import Settings, build_app
    from sciprobe.leaderboard.store import SQLiteStore

    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "store")
        fill(store, rows)
        demo = build_app(store, Settings(), ["idrbench"])
        now = page_load_seconds(demo, repeat)
        now_changed = page_load_seconds(demo, repeat, lambda n: store.add_result(bench_row(rows + n)))
        old_demo = build_app(Unversioned(store), Settings(), ["idrbench"])
        old_demo.sciprobe_service.one_read = contextlib.nullcontext  # no per-load snapshot either
        before = page_load_seconds(old_demo, repeat)
        before_changed = page_load_seconds(old_demo, repeat, lambda n: store.add_result(bench_row(rows + repeat + n)))
    return (before, now), (before_changed, now_changed)


_START = """
import time, sys
t0 = float(sys.argv[1])
from sciprobe.leaderboard.app import Settings, build_app
demo = build_app(None, Settings.from_env())
load = next(f for f in demo.fns.values() if f.api_name == "load")
load.fn(None, None, None, None)
print(time.time() - t0)
"""


_IMPORT_GRADIO = """
import time, sys
t0 = float(sys.argv[1])
if sys.argv[2] == "plain":
    import gradio
else:
    from sciprobe.leaderboard.gradio_import import import_gradio
    import_gradio()
print(time.time() - t0)
"""


def import_gradio_seconds(how: str) -> float:
    """The floor under any first page: a fresh process that imports gradio (``plain``, or as the Space does,
    without its stub writer: ``space``), and nothing else."""
    out = subprocess.run([sys.executable, "-c", _IMPORT_GRADIO, repr(time.time()), how],
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, check=True,
                         timeout=600)
    return float(out.stdout.strip().splitlines()[-1])


def start_seconds(store_dir: Path) -> float:
    env = {**os.environ, "SCIPROBE_LEADERBOARD_DIR": str(store_dir), "SCIPROBE_LEADERBOARD_STORE": "sqlite",
           "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _START, repr(time.time())], env=env, capture_output=True,
                         text=True, check=True, timeout=1800)
    return float(out.stdout.strip().splitlines()[-1])


def _prediction_files(folder: Path, count: int) -> list[Path]:
    import json

    from sciprobe.leaderboard.queue import data_for
    from sciprobe.leaderboard.validation import task_target

    ids = task_target("idrbench:ipi", data_for("idrbench")).ids
    files = []
    for n in range(count):
        path = folder / f"p{n}.jsonl"
        path.write_text("".join(json.dumps({"id": i, "prediction": "yes" if (k * 7 + n) % 5 < 2 else "no"}) + "\n"
                                for k, i in enumerate(ids)))
        files.append(path)
    return files


def submissions_per_second(count: int, submitters: int, processes: int) -> float:
    """``count`` distinct submissions of idrbench:ipi sent by ``submitters`` threads at once through the Space's
    service, scored in this thread (``processes`` 0) or by a pool of ``processes``; submissions per second."""
    from concurrent.futures import ThreadPoolExecutor

    from sciprobe.leaderboard.app import LeaderboardService, Settings
    from sciprobe.leaderboard.scoring_pool import ScoringPool
    from sciprobe.leaderboard.store import SQLiteStore

    with tempfile.TemporaryDirectory() as tmp:
        files = _prediction_files(Path(tmp), count + 1)
        service = LeaderboardService(SQLiteStore(Path(tmp) / "store"), Settings(data=Settings.from_env().data),
                                     ["idrbench"])
        service.scoring = ScoringPool(processes)
        # warm, as a running Space is: its processes load the scoring path at launch (ScoringPool.warm_up), and
        # the in-thread baselines score one untimed submission first
        for future in service.scoring.warm_up(service.pins):
            future.result()
        if processes <= 1:
            service.submit("warm", "idrbench:ipi", str(files[count]), "org/warm")
        start = time.perf_counter()
        with ThreadPoolExecutor(submitters) as threads:
            statuses = list(threads.map(lambda n: service.submit(f"user{n}", "idrbench:ipi", str(files[n]),
                                                                 f"org/model-{n}")[1]["status"], range(count)))
        elapsed = time.perf_counter() - start
        service.scoring.close()
        assert statuses == ["FINISHED"] * count, statuses
    return count / elapsed


def _spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def machine_bound(cores: int, jobs: int = 8, size: int = 3_000_000) -> float:
    """How many times one process's throughput this machine gives ``cores`` processes right now (the same
    CPU-bound loop, in a pool of 1 and of ``cores``): the ceiling any scoring pool can reach in this run."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    rates = []
    for workers in (1, cores):
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            list(pool.map(_spin, [1] * workers))  # started
            start = time.perf_counter()
            list(pool.map(_spin, [size] * jobs))
            rates.append(jobs / (time.perf_counter() - start))
    return rates[1] / rates[0]


def throughput_rows(condition, count: int) -> tuple[list[str], float]:
    cores = os.cpu_count() or 1
    bounds = [machine_bound(cores)]  # before and after the submissions: the shared machine's load moves
    single = submissions_per_second(count, 1, 0)
    threads_only = submissions_per_second(count, 8, 0)
    pooled = submissions_per_second(count, 8, cores)
    bounds.append(machine_bound(cores))
    rows = [f"| {condition.describe()} | {count} submissions, 1 submitter, scored in-thread (baseline) | "
            f"{single:.2f}/s | | 1.0x |",
            f"| {condition.describe()} | {count} submissions, 8 submitters, scored in-thread (the library default) | "
            f"{threads_only:.2f}/s | | {threads_only / single:.2f}x |",
            f"| {condition.describe()} | {count} submissions, 8 submitters, pool of {cores} processes (the Space's "
            f"default) | | "
            f"{pooled:.2f}/s | {pooled / single:.2f}x |",
            f"| {condition.describe()} | machine bound: a CPU loop in {cores} processes vs 1 (before, after) | | | "
            f"{min(bounds):.2f}-{max(bounds):.2f}x |"]
    return rows, pooled / single


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="0,100,1000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--conditions", default="quiet,busy")
    parser.add_argument("--submissions", type=int, default=24)
    args = parser.parse_args()
    data = os.environ.get("SCIPROBE_LEADERBOARD_DATA") or "bundled sample"
    lines = ["# Leaderboard Space: page load and start (issue 28)", "",
             f"Data: {data}. Command: `PYTHONPATH=. HF_HUB_OFFLINE=1 .venv/bin/python bench/leaderboard_space.py "
             f"--rows {args.rows} --repeat {args.repeat} --submissions {args.submissions}`. {load_note()}", "",
             "| condition | measure | before (pre-#28 read path) | now | ratio |", "|---|---|---|---|---|"]
    verdicts = []
    for name in args.conditions.split(","):
        with machine_condition(name) as condition:
            for rows in [int(r) for r in args.rows.split(",")]:
                (before, now), (before_changed, now_changed) = page_loads(rows, args.repeat)
                lines.append(f"| {condition.describe()} | page load, {rows} rows | {before:.2f} s | {now:.2f} s | "
                             f"{before / now:.1f}x |")
                lines.append(f"| {condition.describe()} | first page load after a new result, {rows} rows | "
                             f"{before_changed:.2f} s | {now_changed:.2f} s | {before_changed / now_changed:.1f}x |")
                if rows == 1000:
                    verdicts.append(f"Target: page load with 1,000 rows <= 0.5 s, {condition.describe()} -> "
                                    f"{now:.2f} s -> {'PASS' if now <= 0.5 else 'FAIL'}")
            with tempfile.TemporaryDirectory() as tmp:
                first, second = start_seconds(Path(tmp)), start_seconds(Path(tmp))
            lines.append(f"| {condition.describe()} | first page after process start | {first:.1f} s (first "
                         f"start) | {second:.1f} s (second start) | {first / second:.1f}x |")
            plain, space = import_gradio_seconds("plain"), import_gradio_seconds("space")
            lines.append(f"| {condition.describe()} | floor: a fresh process importing gradio, nothing else | "
                         f"{plain:.1f} s (plain `import gradio`) | {space:.1f} s (as the Space imports it) | "
                         f"{plain / space:.1f}x |")
            verdicts.append(f"Target: first page <= 5 s after a second start, {condition.describe()} -> "
                            f"{second:.1f} s -> {'PASS' if second <= 5 else 'FAIL'}")
            if args.submissions:
                rows, ratio = throughput_rows(condition, args.submissions)
                lines += rows
                verdicts.append(f"Target: 8 concurrent submitters >= 1.8x a single submitter on 2 cores, "
                                f"{condition.describe()} -> {ratio:.2f}x -> {'PASS' if ratio >= 1.8 else 'FAIL'}")
        print("\n".join(lines[-12:]), flush=True)
    write_results(ROOT / "bench" / "results" / "leaderboard_space.md", lines, verdicts)


if __name__ == "__main__":
    main()
