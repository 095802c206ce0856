"""PreScience at release scale: build a generated 500,000-paper corpus within 2 GB and query date windows fast.

Command (from the repository root):
    .venv/bin/python bench/prescience_corpus.py [--n-papers 500000] [--release DIR] [--configs ...]

1. Writes a synthetic release in the released schema (``sciprobe.benchmarks.prescience.synthetic``), unless
   ``--release`` points at one already written with the same size.
2. Builds it with ``sciprobe.build.build_benchmark`` in a **subprocess** and records that process's peak
   resident set size (``getrusage(RUSAGE_CHILDREN).ru_maxrss``) and wall time. Target: peak RSS < 2 GB.
3. Loads the test corpus into a :class:`~sciprobe.benchmarks.prescience.history.CorpusIndex` (metadata
   columns) and times date-window queries (``pyarrow.compute`` filters) and H^{<t} views. Target: < 0.5 s.

Writes bench/results/prescience_corpus.md (spec prescience.md §1.2; issue "Done means").
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sciprobe.benchmarks.prescience.synthetic import CorpusConfig, write_corpus

MEMORY_TARGET_MB = 2048
QUERY_TARGET_S = 0.5
BUILD_SCRIPT = """
import json, sys, time
from sciprobe.benchmarks import get_benchmark
from sciprobe.build import build_benchmark
source, out, configs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
start = time.perf_counter()
report = build_benchmark(get_benchmark("prescience"), source, out, configs=configs or None, overwrite=True)
print(json.dumps({"rows": report.rows, "seconds": time.perf_counter() - start}))
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


def build(release: Path, out: Path, configs: list[str]) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", BUILD_SCRIPT, str(release), str(out), json.dumps(configs)],
                          capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"build failed:\n{proc.stderr[-4000:]}")
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return {**result, "wall": wall, "peak_mb": peak_kb / 1024, "previous_child_peak_mb": before / 1024}


def queries(release: Path) -> dict:
    from sciprobe.benchmarks.prescience.history import CorpusIndex

    start = time.perf_counter()
    index = CorpusIndex.from_parquet(release / "test.parquet", author_publications=release / "author_publications.jsonl",
                                     columns=[])
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
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "results" / "prescience_corpus.md")
    args = parser.parse_args()
    args.release.mkdir(parents=True, exist_ok=True)
    gen = generate(args.release, args.n_papers)
    print("generated", json.dumps(gen), flush=True)
    out = args.release.parent / (args.release.name + "-built")
    built = build(args.release, out, args.configs)
    print("built", json.dumps(built), flush=True)
    q = queries(args.release)
    print("queries", json.dumps(q), flush=True)
    sizes = {p.name: p.stat().st_size / 2**20 for p in sorted(args.release.glob("*.*")) if p.suffix in (".parquet", ".jsonl")}
    mem_ok, query_ok = built["peak_mb"] < MEMORY_TARGET_MB, q["window_max_s"] < QUERY_TARGET_S
    lines = [
        f"PreScience corpus at release scale; `.venv/bin/python bench/prescience_corpus.py --n-papers {args.n_papers}`"
        + (f" --configs {' '.join(args.configs)}" if args.configs else ""),
        "",
        f"Synthetic release (seed 1, released schema): {gen['counts']['train']:,} papers in `train.parquet` "
        f"({gen['counts']['train_targets']:,} targets), {gen['counts']['test']:,} in `test.parquet` "
        f"({gen['counts']['test_targets']:,} targets), {gen['counts']['authors']:,} authors; union = "
        f"{args.n_papers:,} generated papers. Files: " + ", ".join(f"`{k}` {v:,.0f} MB" for k, v in sizes.items())
        + (f"; generated in {gen['seconds']:.0f} s." if not gen.get("reused") else " (reused)."),
        "",
        "| measurement | value | target | result |",
        "|---|---|---|---|",
        f"| build (`build_benchmark`, configs: {', '.join(args.configs) or 'all'}) peak RSS of the build "
        f"subprocess | {built['peak_mb']:,.0f} MB | < {MEMORY_TARGET_MB:,} MB | {'PASS' if mem_ok else 'FAIL'} |",
        f"| build wall time | {built['wall']:.0f} s | — | — |",
        f"| date-window query (`CorpusIndex.window`, pyarrow.compute), max of {len(q['window_rows']) * 3} "
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
        "Machine: 2 cores, 24 GB. Peak RSS is `ru_maxrss` of the build subprocess (the corpus configs stream "
        "record batches; instance configs hold a metadata-only index of one split's corpus).",
    ]
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(args.results.read_text())


if __name__ == "__main__":
    main()
