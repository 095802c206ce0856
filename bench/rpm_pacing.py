"""Throughput under a provider's requests-per-minute limit: paced client vs unpaced baseline.

Command (from the repository root):  .venv/bin/python bench/rpm_pacing.py [--rpm 1200] [--seconds 30] [--repeats 3]
                                      [--conditions quiet busy]

The loopback stub (sciprobe.testing.stub_server) enforces ``--rpm`` with a token bucket of ``--burst`` requests
(2: a provider that tolerates almost no burst) and answers over-limit requests with 429 + Retry-After, as
providers do; it sleeps ``--latency`` per answer. It runs in its own process, as a provider would
(bench/stub_process.py: sharing this process's GIL would jitter arrivals at its bucket), a fresh one (fresh
bucket) per run; it reports its 429 count when stopped. Every client sends
``rpm / 60 * seconds`` distinct requests at concurrency 16 with the cache off:

- ``unpaced (default path)``: the spec without a limit (it still honours Retry-After on each 429);
- ``paced (default path)``: the same spec plus ``rpm=<limit>`` (sciprobe.llm.pacing), as a user writes it
  (``transport=auto``: direct HTTP);
- ``paced, litellm (old default)``: the same with ``transport=litellm``, the default path before issue 15.

Achieved RPM is answered requests / wall time * 60 (a request that ran out of retries is not throughput); the
last answer's latency is part of the wall time, so the best possible is n / (n - 1 + latency * rate) of the
limit (0.995 with the defaults). Median of ``--repeats`` (min-max), quiet and busy (bench/load.py).
Target (issue 15): the paced default path >= 0.99 of the limit (never above it) with no 429, quiet and busy.
Writes bench/results/rpm_pacing.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from load import CONDITIONS, load_note, machine_condition, median_range, write_results  # noqa: E402
from stub_process import stub_process  # noqa: E402

from sciprobe.llm.client import LLMClient  # noqa: E402
from sciprobe.llm.types import Request  # noqa: E402

RESULTS = REPO / "bench" / "results" / "rpm_pacing.md"
TARGET = 0.99
TARGET_ROW = "paced (default path)"


def requests(tag: str, n: int) -> list[Request]:
    return [Request.of([{"role": "user", "content": f"Judge {tag}-{i}: supported?"}], {"max_tokens": 8})
            for i in range(n)]


def run(tag: str, spec: str, n: int, rpm: float, latency: float, burst: float) -> dict:
    with stub_process(latency, rpm=rpm, burst=burst) as stub:
        client = LLMClient(spec.format(url=stub.url), cache=None, backoff_base_s=0.2)
        began = time.perf_counter()
        out = client.complete_many(requests(tag, n))
        elapsed = time.perf_counter() - began
        ok = sum(c.ok for c in out)
    return {"ok": ok, "elapsed": elapsed, "fraction": ok / elapsed * 60 / rpm, "status_429": stub.seen["count_429"],
            "retries": client.stats.retries, "note": stub.note()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rpm", type=float, default=1200)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--burst", type=float, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=CONDITIONS)
    args = parser.parse_args()

    n = int(args.rpm / 60 * args.seconds)
    base = "openai/gpt-4o-mini,base_url={url},api_key=sk-bench,concurrency=16,max_retries=20"
    clients = {"unpaced (default path)": base, TARGET_ROW: base + f",rpm={args.rpm:g}",
               "paced, litellm (old default)": base + f",rpm={args.rpm:g},transport=litellm"}
    rows = []  # (condition, label, runs)
    for name in args.conditions:
        with machine_condition(name) as condition:
            runs: dict[str, list[dict]] = {label: [] for label in clients}
            for r in range(args.repeats):
                for label, spec in clients.items():
                    runs[label].append(run(f"{name}{r}{label[:6]}", spec, n, args.rpm, args.latency, args.burst))
        rows += [(condition.describe(), label, results) for label, results in runs.items()]

    command = (f"`.venv/bin/python bench/rpm_pacing.py --rpm {args.rpm:g} --seconds {args.seconds:g} "
               f"--latency {args.latency:g} --burst {args.burst:g} --repeats {args.repeats} "
               f"--conditions {' '.join(args.conditions)}`")
    lines = [
        f"Throughput under a {args.rpm:g} RPM provider limit (stub token bucket, burst {args.burst:g}, latency "
        f"{args.latency * 1000:.0f} ms), {n} requests at concurrency 16, median of {args.repeats} (min-max); "
        f"{command}",
        "",
        f"Machine: {load_note()} at the end; Python {platform.python_version()}; {rows[0][2][0]['note']} "
        f"(bench/stub_process.py). busy = one CPU-burner process per core (bench/load.py). Best possible fraction "
        f"with this setup: {n / (n - 1 + args.latency * args.rpm / 60):.3f}.",
        "",
        "| condition (load at start -> end) | client | requests ok (min) | wall s | fraction of limit | "
        "429s from stub (max) | retries (max) |",
        "|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for condition, label, results in rows:
        fractions = [r["fraction"] for r in results]
        lines.append(f"| {condition} | {label} | {min(r['ok'] for r in results)}/{n} | "
                     f"{median_range([r['elapsed'] for r in results], '{:.1f}')} | "
                     f"{median_range(fractions, '{:.3f}')} | "
                     f"{max(r['status_429'] for r in results)} | {max(r['retries'] for r in results)} |")
        if label == TARGET_ROW:
            fraction = statistics.median(fractions)
            no_429 = all(r["status_429"] == 0 for r in results)
            passed = TARGET <= fraction <= 1.0 + 1e-9 and no_429 and all(r["ok"] == n for r in results)
            verdicts.append(f"Target: paced default path >= {TARGET} of the limit with no 429, "
                            f"{condition.split(',')[0]} -> {fraction:.3f}, "
                            f"{max(r['status_429'] for r in results)} x 429 "
                            f"-> {'PASS' if passed else 'FAIL (below target)'}  ")
    write_results(RESULTS, lines, verdicts)


if __name__ == "__main__":
    main()
