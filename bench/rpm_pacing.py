"""Throughput under a provider's requests-per-minute limit: paced client vs unpaced baseline.

Command (from the repository root):  .venv/bin/python bench/rpm_pacing.py [--rpm 1200] [--seconds 30]

The loopback stub (sciprobe.llm.stub_server) enforces ``--rpm`` with a token bucket of ``--burst`` requests
(2: a provider that tolerates almost no burst) and answers over-limit requests with 429 + Retry-After, as
providers do; it sleeps ``--latency`` per answer. It runs in this process (at these rates its CPU is
negligible) so its 429 counter can be read. Both clients send ``rpm / 60 * seconds`` distinct requests at
concurrency 16 with the cache off:

- baseline: the client without a configured limit (it still honours Retry-After on each 429);
- paced: the same spec plus ``rpm=<limit>`` (sciprobe.llm.pacing).

Achieved RPM is answered requests / wall time * 60 (a request that ran out of retries is not throughput).
Target (issue 7): the paced client stays within 5% of the limit (>= 0.95 of it, and never above it)
without a single 429. Writes bench/results/rpm_pacing.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sciprobe.llm.client import LLMClient
from sciprobe.llm.stub_server import StubServer
from sciprobe.llm.types import Request

RESULTS = REPO / "bench" / "results" / "rpm_pacing.md"
TOLERANCE = 0.05


def requests(tag: str, n: int) -> list[Request]:
    return [Request.of([{"role": "user", "content": f"Judge {tag}-{i}: supported?"}], {"max_tokens": 8})
            for i in range(n)]


def run(label: str, spec: str, n: int, rpm: float, latency: float, burst: float) -> dict:
    with StubServer(latency_s=latency, rpm=rpm, burst=burst) as stub:
        client = LLMClient(spec.format(url=stub.base_url), cache=None, backoff_base_s=0.2)
        began = time.perf_counter()
        out = client.complete_many(requests(label, n))
        elapsed = time.perf_counter() - began
        return {"label": label, "n": n, "ok": sum(c.ok for c in out), "elapsed": elapsed,
                "achieved_rpm": sum(c.ok for c in out) / elapsed * 60, "status_429": stub.count_429,
                "retries": client.stats.retries}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rpm", type=float, default=1200)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--burst", type=float, default=2)
    args = parser.parse_args()

    n = int(args.rpm / 60 * args.seconds)
    base = "openai/gpt-4o-mini,base_url={url},api_key=sk-bench,concurrency=16,max_retries=20"
    load = os.getloadavg()[0]
    rows = [run("baseline (no rpm)", base, n, args.rpm, args.latency, args.burst),
            run(f"paced (rpm={args.rpm:g})", base + f",rpm={args.rpm:g}", n, args.rpm, args.latency, args.burst)]
    paced = rows[1]
    fraction = paced["achieved_rpm"] / args.rpm
    passed = (1 - TOLERANCE) <= fraction <= 1.0 + 1e-9 and paced["status_429"] == 0 and paced["ok"] == n
    command = (f"`.venv/bin/python bench/rpm_pacing.py --rpm {args.rpm:g} --seconds {args.seconds:g} "
               f"--latency {args.latency:g} --burst {args.burst:g}`")
    lines = [
        f"Throughput under a {args.rpm:g} RPM provider limit (stub token bucket, burst {args.burst:g}, latency "
        f"{args.latency * 1000:.0f} ms), {n} requests at concurrency 16; {command}",
        "",
        f"Machine: {os.cpu_count()} CPUs, load average {load:.1f} at start; Python {platform.python_version()}",
        "",
        "| client | requests ok | wall s | achieved RPM | fraction of limit | 429s from stub | retries |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(f"| {row['label']} | {row['ok']}/{row['n']} | {row['elapsed']:.1f} | {row['achieved_rpm']:.0f} | "
                     f"{row['achieved_rpm'] / args.rpm:.3f} | {row['status_429']} | {row['retries']} |")
    lines += ["", f"Target: paced within {TOLERANCE:.0%} of the limit with no 429 -> {fraction:.3f}, "
                  f"{paced['status_429']} x 429 -> {'PASS' if passed else 'FAIL'}"]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
