"""PreScience at release scale: build a generated 500,000-paper corpus at the data-movement bound, within 2 GB,
and query date windows fast.

Command (from the repository root):
    .venv/bin/python bench/prescience_corpus.py [--n-papers 500000] [--release DIR] [--repeat 3] [--configs ...]
        [--before CHECKOUT]

1. Writes a synthetic release in the released schema (``sciprobe.benchmarks.prescience.synthetic``), unless
   ``--release`` points at one already written with the same size.
2. The floor, measured in the same run: read every release file with pyarrow and write it back (Parquet as
   Parquet, the JSON-lines files as Parquet), ``--repeat`` times, each in a subprocess.
3. Builds it with ``sciprobe.data.build.build_benchmark``, each run in a **subprocess** that reports its own peak
   resident set size (``VmHWM``: a child's ``ru_maxrss`` would include its parent's), ``--repeat`` times
   (interleaved with the floor runs); every run must write the same
   Parquet bytes (dataset fingerprint). ``--before CHECKOUT`` also builds once with the sciprobe of another
   checkout (e.g. ``git archive`` of the previous commit) and compares its fingerprint, time and memory.
   Targets: median build <= 3x the median floor; peak RSS < 2 GB.
4. Loads the test corpus into a :class:`~sciprobe.benchmarks.prescience.history.CorpusIndex` (metadata
   columns) and times date-window queries (zero-copy slices of the date-sorted table) and H^{<t} views.
   Target: < 0.5 s.

Writes bench/results/prescience_corpus.md with the load average before and after (issue 15: a figure taken on a
busy machine says so).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sciprobe.benchmarks.prescience.synthetic import CorpusConfig, write_corpus  # noqa: E402

MEMORY_TARGET_MB = 2048
QUERY_TARGET_S = 0.5
FLOOR_RATIO_TARGET = 3.0
# Peak memory is the process's own high-water mark (VmHWM): ru_maxrss of a child also counts the RSS its parent
# had when it forked, so it would report the bench process's peak, not the build's.
PEAK = """
def peak_mb():
    status = open("/proc/self/status").read()
    return int(status.split("VmHWM:")[1].split()[0]) / 1024
"""
BUILD_SCRIPT = PEAK + """
import json, sys, time
from sciprobe.core.registry import get_benchmark
from sciprobe.data.build import build_benchmark, dataset_fingerprint
source, out, configs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
start = time.perf_counter()
report = build_benchmark(get_benchmark("prescience"), source, out, configs=configs or None, overwrite=True)
seconds = time.perf_counter() - start
peak = peak_mb()
print(json.dumps({"rows": report.rows, "seconds": seconds, "fingerprint": dataset_fingerprint(out), "peak_mb": peak}))
"""
FLOOR_SCRIPT = PEAK + """
import json, sys, time
from pathlib import Path
import pyarrow.json as pj
import pyarrow.parquet as pq
release, scratch = Path(sys.argv[1]), Path(sys.argv[2])
scratch.mkdir(parents=True, exist_ok=True)
start = time.perf_counter()
for path in sorted(release.glob("*.parquet")):
    pq.write_table(pq.read_table(path), scratch / path.name)
for path in sorted(release.glob("*.jsonl")):
    pq.write_table(pj.read_json(path), scratch / (path.stem + ".parquet"))
print(json.dumps({"seconds": time.perf_counter() - start, "peak_mb": peak_mb()}))
"""


def generate(release: Path, n_papers: int) -> dict:
    marker = release / "bench_corpus.json"
    if marker.is_file() and json.loads(marker.read_text()).get("n_papers") == n_papers:
        return {**json.loads(marker.read_text()), "reused": True}
    start = time.perf_counter()
    counts = write_corpus(release, CorpusConfig(n_papers=n_papers, seed=1))
    info = {"n_papers": n_papers, "counts": counts, "seconds": time.perf_counter() - start}
    marker.write_text(json.dumps(info))
    return {**info, "reused": False}


def floor(release: Path, scratch: Path) -> float:
    """Seconds to read every release file with pyarrow and write it back (the data-movement floor), measured in a
    subprocess like the build."""
    proc = subprocess.run([sys.executable, "-c", FLOOR_SCRIPT, str(release), str(scratch)], capture_output=True,
                          text=True, cwd=ROOT)
    shutil.rmtree(scratch, ignore_errors=True)
    if proc.returncode:
        raise SystemExit(f"floor failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]


def build(release: Path, out: Path, configs: list[str], code: Path | None = None) -> dict:
    """One build in a subprocess (``code``: the checkout whose sciprobe to use; default this one)."""
    env = {**os.environ, "PYTHONPATH": str(code)} if code else None
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", BUILD_SCRIPT, str(release), str(out), json.dumps(configs)],
                          capture_output=True, text=True, cwd=code or ROOT, env=env)
    wall = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"build failed:\n{proc.stderr[-4000:]}")
    shutil.rmtree(out, ignore_errors=True)
    return {**json.loads(proc.stdout.strip().splitlines()[-1]), "wall": wall}


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} s ({min(values):.1f}–{max(values):.1f})"


def queries(release: Path) -> dict:
    from sciprobe.benchmarks.prescience.history import CorpusIndex

    start = time.perf_counter()
    index = CorpusIndex.from_parquet(release / "test.parquet", columns=[],
                                     author_publications=release / "author_publications.jsonl")
    index.row_of(""), index.author_ids  # the id lookups are built on first use: count them in the load
    load = time.perf_counter() - start
    windows = [("2024-10-01", "2025-10-01"), ("2025-01-01", "2025-02-01"), ("2023-10-01", "2024-10-01"),
               ("2020-01-01", "2025-10-01"), ("2025-09-15", "2025-09-16")]
    times, rows = [], []
    for _ in range(3):
        for lo, hi in windows:
            t0 = time.perf_counter()
            table = index.window(lo, hi)
            times.append(time.perf_counter() - t0)
            rows.append(table.num_rows)
    view_times = []
    for t in ("2024-10-01", "2025-03-17", "2025-09-30"):
        t0 = time.perf_counter()
        view = index.view(t)
        view.papers(["corpus_id", "date"])
        view_times.append(time.perf_counter() - t0)
    sample = index.ids.slice(0, 2000).to_pylist()
    t0 = time.perf_counter()
    view = index.view("2025-06-01")
    for cid in sample:
        view.citation_count(cid)
    per_count = (time.perf_counter() - t0) / len(sample)
    authors = list(index.author_ids)[:2000]
    t0 = time.perf_counter()
    for a in authors:
        view.author_history(a)
    per_author = (time.perf_counter() - t0) / len(authors)
    return {"load_s": load, "n_papers": index.n_papers, "window_median_s": statistics.median(times),
            "window_max_s": max(times), "window_rows": rows[:len(windows)], "view_max_s": max(view_times),
            "citation_count_ms": per_count * 1000, "author_history_ms": per_author * 1000,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-papers", type=int, default=500_000)
    parser.add_argument("--release", type=Path, default=Path(tempfile.gettempdir()) / "sciprobe-prescience-bench")
    parser.add_argument("--configs", nargs="*", default=[], help="configs to build (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="floor and build runs (median reported)")
    parser.add_argument("--before", type=Path, help="a checkout of the previous sciprobe: build once with it too")
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "results" / "prescience_corpus.md")
    args = parser.parse_args()
    args.release.mkdir(parents=True, exist_ok=True)
    gen = generate(args.release, args.n_papers)
    print("generated", json.dumps(gen), flush=True)
    load_start = os.getloadavg()
    out = args.release.parent / (args.release.name + "-built")
    floors, builds = [], []
    for run in range(args.repeat):  # interleaved, so both see the same machine
        floors.append(floor(args.release, args.release.parent / (args.release.name + "-floor")))
        builds.append(build(args.release, out, args.configs))
        summary = {k: v for k, v in builds[-1].items() if k != "rows"}
        print(f"run {run + 1}: floor {floors[-1]:.1f} s, build {json.dumps(summary)}", flush=True)
    before = build(args.release, out, args.configs, args.before) if args.before else None
    if before:
        print("before", json.dumps({k: v for k, v in before.items() if k != "rows"}), flush=True)
    load_end = os.getloadavg()
    q = queries(args.release)
    print("queries", json.dumps(q), flush=True)
    fingerprints = {b["fingerprint"] for b in builds}
    same_bytes = len(fingerprints) == 1 and (before is None or before["fingerprint"] in fingerprints)
    walls = [b["wall"] for b in builds]
    # both timed inside their process (interpreter start and imports left out of each)
    ratio = statistics.median(b["seconds"] for b in builds) / statistics.median(floors)
    peak = max(b["peak_mb"] for b in builds)
    sizes = {p.name: p.stat().st_size / 2**20 for p in sorted(args.release.glob("*.*"))
             if p.suffix in (".parquet", ".jsonl")}
    mem_ok, query_ok = peak < MEMORY_TARGET_MB, q["window_max_s"] < QUERY_TARGET_S
    load = f"{'/'.join(f'{x:.1f}' for x in load_start)} at start, {'/'.join(f'{x:.1f}' for x in load_end)} at end"
    command = (f"`.venv/bin/python bench/prescience_corpus.py --n-papers {args.n_papers} --repeat {args.repeat}"
               + (f" --configs {' '.join(args.configs)}" if args.configs else "")
               + (" --before CHECKOUT" if args.before else "") + "`")
    built = builds[0]
    lines = [
        f"PreScience corpus at release scale; {command}",
        "",
        f"Synthetic release (seed 1, released schema): {gen['counts']['train']:,} papers in `train.parquet` "
        f"({gen['counts']['train_targets']:,} targets), {gen['counts']['test']:,} in `test.parquet` "
        f"({gen['counts']['test_targets']:,} targets), {gen['counts']['authors']:,} authors; union = "
        f"{args.n_papers:,} generated papers. Files: " + ", ".join(f"`{k}` {v:,.0f} MB" for k, v in sizes.items())
        + (f"; generated in {gen['seconds']:.0f} s." if not gen.get("reused") else " (reused)."),
        "",
        "| measurement | value | target | result |",
        "|---|---|---|---|",
        f"| floor: read + rewrite the release with pyarrow, median (min–max) of {args.repeat} | {spread(floors)} "
        "| — | — |",
        f"| build (`build_benchmark`, configs: {', '.join(args.configs) or 'all'}), median (min–max) of "
        f"{args.repeat} | {spread([b['seconds'] for b in builds])}; subprocess wall with imports "
        f"{spread(walls)} | — | — |",
        f"| build / floor (medians) | {ratio:.1f}× | ≤ {FLOOR_RATIO_TARGET:.0f}× | "
        f"{'PASS' if ratio <= FLOOR_RATIO_TARGET else 'BELOW TARGET'} |",
        f"| peak RSS of a build subprocess (VmHWM, max of {args.repeat}) | {peak:,.0f} MB "
        f"| < {MEMORY_TARGET_MB:,} MB | "
        f"{'PASS' if mem_ok else 'FAIL'} |",
        f"| same Parquet bytes in every run{' and with --before' if before else ''} (dataset fingerprint) | "
        f"`{sorted(fingerprints)[0][:16]}`{f' ({len(fingerprints)} different)' if len(fingerprints) > 1 else ''}"
        f" | equal | {'PASS' if same_bytes else 'FAIL'} |",
        *([f"| before (`--before`: previous checkout, 1 run) | {before['wall']:.1f} s, peak RSS "
           f"{before['peak_mb']:,.0f} MB, fingerprint `{before['fingerprint'][:16]}` | peak no higher | "
           f"{'PASS' if peak <= before['peak_mb'] else 'FAIL'}: build "
           f"{statistics.median(walls) / before['wall']:.2f}× the wall time, {peak / before['peak_mb']:.2f}× the "
           "peak |"]
          if before else []),
        "| date-window query (`CorpusIndex.window`, a slice of the date-sorted table), max of "
        f"{len(q['window_rows']) * 3} "
        f"| {q['window_max_s'] * 1000:.1f} ms (median {q['window_median_s'] * 1000:.1f} ms) | < "
        f"{QUERY_TARGET_S * 1000:.0f} ms | {'PASS' if query_ok else 'FAIL'} |",
        f"| H^{{<t}} view + `papers()` slice, max of 3 | {q['view_max_s'] * 1000:.1f} ms | — | — |",
        f"| `citation_count` / `author_history` per call | {q['citation_count_ms']:.3f} ms / "
        f"{q['author_history_ms']:.3f} ms | — | — |",
        f"| index load ({q['n_papers']:,} test-corpus papers, metadata columns + author map) | {q['load_s']:.1f} s, "
        f"process RSS {q['rss_mb']:,.0f} MB | — | — |",
        "",
        "Rows built: " + "; ".join(f"`{c}` " + ", ".join(f"{s} {n:,}" for s, n in splits.items())
                                 for c, splits in built["rows"].items()),
        "",
        "Window rows (first pass): " + ", ".join(f"{n:,}" for n in q["window_rows"]),
        "",
        f"Machine: 2 cores, 24 GB, load average (1/5/15 min) {load} (other jobs share the machine). Floor and "
        "build runs alternate, so both see the same load. The build writes every config: the corpus configs pass "
        "Parquet record batches through as Arrow (no Python object per row), the instance configs come from one "
        "metadata index per split corpus, built once per build; `datasets` still writes its Arrow cache and then "
        "the Parquet shards, so the build moves its output twice.",
    ]
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(args.results.read_text())


if __name__ == "__main__":
    main()
