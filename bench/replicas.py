"""Replicas: throughput with two model servers behind one spec vs one, and a run that loses one of two servers.

Command (from the repository root):  .venv/bin/python bench/replicas.py [--latency 0.3] [--concurrency 8]
                                      [--per-slot 20] [--repeats 3] [--conditions quiet busy]

Each server is a loopback stub in its own process (bench/stub_process.py) that takes ``--latency`` seconds per
request whatever the load, so the number of servers is the bound: one server at ``concurrency`` c answers at
most c / latency requests per second, two at 2c / latency (the spec's ``concurrency`` is per replica). The
default 300 ms keeps two servers' bound (53 req/s) below what litellm's ~3-5 ms of client CPU per call allows
on the 2-core bench machine under load (bench/judge_throughput.py), so the servers, not the client, are the
bound on both transports. Requests are distinct, the cache is off. For each transport (``default``:
``transport=auto``, which posts directly for this spec; ``litellm``), measured in the same run:

- ``1 server``: ``base_url=URL1`` (the baseline), ``per_slot * c`` requests;
- ``2 servers``: ``base_url=URL1|URL2``, ``per_slot * 2c`` requests: the ratio of achieved req/s to the
  baseline's is the speed-up (target >= 1.8);
- ``2 servers, one killed``: fresh servers; one is killed (SIGKILL) a third of the way into the run: answered /
  total must be 1 (its calls are retried on the other and it is taken out: sciprobe.llm.replicas); req/s
  shown against the same baseline.

Median of ``--repeats`` (min-max), quiet and busy (one CPU burner per core: bench/load.py), each row with the
load average at its start and end. Writes bench/results/replicas.md.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import signal
import statistics
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from load import (CONDITIONS, load_note, machine_condition, median_range, package_version,  # noqa: E402
                  write_results)
from stub_process import stub_process  # noqa: E402

from sciprobe.llm.client import LLMClient  # noqa: E402
from sciprobe.llm.types import Request  # noqa: E402

RESULTS = REPO / "bench" / "results" / "replicas.md"
TARGET = 1.8
TRANSPORTS = {"default": "", "litellm": ",transport=litellm"}


def batch(tag: str, n: int) -> list[Request]:
    return [Request.of([{"role": "user", "content": f"Judge item {tag}-{i}: is the claim supported?"}],
                       {"temperature": 0, "max_tokens": 16}) for i in range(n)]


def client_for(urls: list[str], suffix: str, concurrency: int) -> LLMClient:
    spec = f"openai/gpt-4o-mini,base_url={'|'.join(urls)},api_key=sk-bench,concurrency={concurrency}{suffix}"
    return LLMClient(spec, cache=None)


def timed(client: LLMClient, requests: list[Request]) -> tuple[float, int]:
    """(requests/s, answered) of one batch."""
    start = time.perf_counter()
    out = client.complete_many(requests)
    return len(requests) / (time.perf_counter() - start), sum(c.ok for c in out)


def throughput(urls: list[str], suffix: str, concurrency: int, n: int, repeats: int, tag: str) -> list[float]:
    client = client_for(urls, suffix, concurrency)
    client.complete_many(batch(f"warm{tag}", 2 * concurrency * len(urls)))
    rates = []
    for r in range(repeats):
        rate, answered = timed(client, batch(f"{tag}r{r}", n))
        if answered != n:
            raise RuntimeError(f"{n - answered} request(s) failed with {len(urls)} healthy server(s)")
        rates.append(rate)
    return rates


def killed_run(latency: float, suffix: str, concurrency: int, n: int, tag: str) -> tuple[float, int, dict]:
    """Two fresh servers, one killed a third of the way into the batch: (req/s, answered, per-replica report)."""
    with stub_process(latency) as victim, stub_process(latency) as survivor:
        client = client_for([victim.url, survivor.url], suffix, concurrency)
        client.complete_many(batch(f"warm{tag}", 4 * concurrency))
        expected_s = n * latency / (2 * concurrency)
        timer = threading.Timer(expected_s / 3, os.kill, (victim.pid, signal.SIGKILL))
        timer.start()
        try:
            rate, answered = timed(client, batch(tag, n))
        finally:
            timer.cancel()
        return rate, answered, client.stats.replicas.get(victim.url, {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.3, help="stub seconds per request")
    parser.add_argument("--concurrency", type=int, default=8, help="the spec's concurrency (per server)")
    parser.add_argument("--per-slot", type=int, default=20, help="requests per concurrency slot per batch")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=CONDITIONS)
    args = parser.parse_args()
    c = args.concurrency
    n1, n2 = args.per_slot * c, args.per_slot * 2 * c

    rows = []  # (condition, transport, setup, requests, rates, answered text, ratio, note)
    verdicts = []
    with contextlib.ExitStack() as stack:
        first = stack.enter_context(stub_process(args.latency))
        second = stack.enter_context(stub_process(args.latency))
        for name in args.conditions:
            with machine_condition(name) as condition:
                measured = []
                for transport, suffix in TRANSPORTS.items():
                    one = throughput([first.url], suffix, c, n1, args.repeats, f"{name}{transport}1")
                    two = throughput([first.url, second.url], suffix, c, n2, args.repeats, f"{name}{transport}2")
                    kills = [killed_run(args.latency, suffix, c, n2, f"{name}{transport}k{r}")
                             for r in range(args.repeats)]
                    measured.append((transport, one, two, kills))
            for transport, one, two, kills in measured:
                base = statistics.median(one)
                where = condition.describe()
                rows.append((where, transport, "1 server (baseline)", n1, one, f"{n1}/{n1}", 1.0, ""))
                ratio = statistics.median(two) / base
                rows.append((where, transport, "2 servers", n2, two, f"{n2}/{n2}", ratio, ""))
                kill_rates = [k[0] for k in kills]
                answered = min(k[1] for k in kills)
                failed = [k[2].get("failed", 0) for k in kills]
                cooldowns = [k[2].get("cooldowns", 0) for k in kills]
                note = (f"killed server: failed attempts {median_range(failed, '{:.0f}')}, "
                        f"cool-downs {median_range(cooldowns, '{:.0f}')}")
                rows.append((where, transport, "2 servers, one killed", n2, kill_rates, f"{answered}/{n2} (min)",
                             statistics.median(kill_rates) / base, note))
                verdict = "PASS" if ratio >= TARGET and answered == n2 else "FAIL (below target)"
                verdicts.append(f"Target: 2 servers >= {TARGET}x one, and every item answered with one killed, "
                                f"{transport}, {name} -> {ratio:.2f}x, {answered}/{n2} -> {verdict}  ")

    import litellm  # already imported by the client; only for the version line

    command = (f"`.venv/bin/python bench/replicas.py --latency {args.latency} --concurrency {c} --per-slot "
               f"{args.per_slot} --repeats {args.repeats} --conditions {' '.join(args.conditions)}`")
    lines = [
        (f"Replicas: stub latency {args.latency * 1000:.0f} ms per request (each server its own process), "
         f"concurrency {c} per server, {args.per_slot} requests per slot, median of {args.repeats} (min-max); "
         f"{command}"),
        "",
        (f"Machine: {load_note()} at the end; Python {platform.python_version()}, litellm "
         f"{getattr(litellm, '__version__', None) or package_version('litellm')}; {first.note()} "
         "(bench/stub_process.py). "
         "busy = one CPU-burner process per core (bench/load.py). `default` = transport=auto (direct HTTP for "
         "this spec). The killed server gets SIGKILL a third of the way into the batch."),
        "",
        "| condition (load at start -> end) | transport | servers | requests | req/s (min-max) | answered | "
        "vs 1 server | notes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for where, transport, setup, n, rates, answered, ratio, note in rows:
        lines.append(f"| {where} | {transport} | {setup} | {n} | {median_range(rates, '{:.1f}')} | {answered} | "
                     f"{ratio:.2f}x | {note} |")
    write_results(RESULTS, lines, verdicts)


if __name__ == "__main__":
    main()
