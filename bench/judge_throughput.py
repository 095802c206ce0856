"""Judge client throughput vs the concurrency bound, against a loopback stub with injected latency.

Command (from the repository root):  .venv/bin/python bench/judge_throughput.py [--latency 0.1] [--per-slot 20]
                                      [--concurrency 1 8 32 128] [--repeats 3] [--conditions quiet busy]

The stub (sciprobe.testing.stub_server) runs in its own process, as a provider would (bench/stub_process.py), and
sleeps ``--latency`` seconds per request. For concurrency c the best any client can do is c / latency requests per
second (the bound); we report achieved req/s as a fraction of it. Requests are distinct (no batch dedup), the cache is
off, and every call goes through the real stack. Client paths, measured in the same run:

- ``default``: the spec as a user writes it (``openai/gpt-4o-mini,base_url=...``): ``transport=auto`` posts
  directly (sciprobe.llm.http_backend);
- ``litellm (old default)``: the same spec with ``transport=litellm``, the default path before issue 15;
- ``raw aiohttp``: a bare aiohttp loop (no client at all) against the same stub: the ceiling of the setup
  itself (stub, loopback, machine), so a shortfall can be told apart from the client's.

Each concurrency level gets a warm-up batch, then ``--repeats`` timed batches of ``per_slot * c`` requests;
the table shows the median (min-max). Conditions quiet and busy (one CPU burner per core: bench/load.py).
Target (issue 15): >= 0.9 of the bound at concurrency 32 and 128 on the default path, quiet and busy.
Writes bench/results/judge_throughput.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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

from load import (CONDITIONS, load_note, machine_condition, median_range, package_version,  # noqa: E402
                  write_results)
from stub_process import stub_process  # noqa: E402

from sciprobe.llm.client import LLMClient  # noqa: E402
from sciprobe.llm.types import Request  # noqa: E402

TARGET = 0.9
TARGET_CONCURRENCY = (32, 128)
RESULTS = REPO / "bench" / "results" / "judge_throughput.md"
PATHS = {"default": "", "litellm (old default)": ",transport=litellm", "raw aiohttp": None}


def batch(tag: str, n: int) -> list[Request]:
    return [Request.of([{"role": "user", "content": f"Judge item {tag}-{i}: is the claim supported?"}],
                       {"temperature": 0, "max_tokens": 16}) for i in range(n)]


def client_rates(url: str, suffix: str, concurrency: int, n: int, repeats: int, tag: str) -> list[float]:
    """Achieved requests/s of each timed batch through LLMClient."""
    client = LLMClient(f"openai/gpt-4o-mini,base_url={url},api_key=sk-bench,concurrency={concurrency}{suffix}",
                       cache=None)
    client.complete_many(batch(f"warm{tag}{concurrency}", max(2 * concurrency, 16)))
    rates = []
    for r in range(repeats):
        requests = batch(f"{tag}c{concurrency}r{r}", n)
        start = time.perf_counter()
        out = client.complete_many(requests)
        elapsed = time.perf_counter() - start
        failed = sum(not c.ok for c in out)
        if failed:
            raise RuntimeError(f"{failed} request(s) failed at concurrency {concurrency}: {out[0].error}")
        rates.append(n / elapsed)
    return rates


def raw_rates(url: str, concurrency: int, n: int, repeats: int, tag: str) -> list[float]:
    """The same requests from a bare aiohttp loop: what the stub and the machine allow without any client."""
    import aiohttp

    async def run(count: int, label: str) -> float:
        connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:
            gate = asyncio.Semaphore(concurrency)

            async def one(i: int) -> None:
                body = {"model": "gpt-4o-mini", "temperature": 0, "max_tokens": 16,
                        "messages": [{"role": "user", "content": f"Judge item {label}-{i}: is the claim supported?"}]}
                async with gate, session.post(url + "/chat/completions", data=json.dumps(body),
                                              headers={"Content-Type": "application/json"}) as response:
                    json.loads(await response.read())

            start = time.perf_counter()
            await asyncio.gather(*(one(i) for i in range(count)))
            return count / (time.perf_counter() - start)

    asyncio.run(run(max(2 * concurrency, 16), f"rawwarm{tag}{concurrency}"))
    return [asyncio.run(run(n, f"raw{tag}c{concurrency}r{r}")) for r in range(repeats)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.1, help="stub seconds per request")
    parser.add_argument("--per-slot", type=int, default=20, help="requests per concurrency slot per batch")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 128])
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=CONDITIONS)
    args = parser.parse_args()

    rows = []  # (condition, path, concurrency, rates)
    with stub_process(args.latency) as stub:
        url = stub.url
        for name in args.conditions:
            with machine_condition(name) as condition:
                measured = []
                for c in args.concurrency:
                    n = args.per_slot * c
                    for path, suffix in PATHS.items():
                        rates = (raw_rates(url, c, n, args.repeats, name) if suffix is None
                                 else client_rates(url, suffix, c, n, args.repeats, name + path[:3]))
                        measured.append((path, c, rates))
            rows += [(condition.describe(), path, c, rates) for path, c, rates in measured]

    import litellm  # already imported by the client; only for the version line

    command = (f"`.venv/bin/python bench/judge_throughput.py --latency {args.latency} --per-slot {args.per_slot} "
               f"--concurrency {' '.join(map(str, args.concurrency))} --repeats {args.repeats} "
               f"--conditions {' '.join(args.conditions)}`")
    lines = [
        (f"Judge client throughput; stub latency {args.latency * 1000:.0f} ms (separate process), "
         f"{args.per_slot} requests per slot, median of {args.repeats} (min-max); {command}"),
        "",
        (f"Machine: {load_note()} at the end; Python {platform.python_version()}, litellm "
         f"{getattr(litellm, '__version__', None) or package_version('litellm')}; {stub.note()} "
         "(bench/stub_process.py). "
         "busy = one CPU-burner process per core (bench/load.py). `raw aiohttp` is no client at all: the ceiling of "
         "stub + loopback + machine."),
        "",
        "| condition (load at start -> end) | client path | concurrency | requests | bound req/s | "
        "achieved req/s (min-max) | fraction of bound |",
        "|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for condition, path, c, rates in rows:
        bound = c / args.latency
        achieved = statistics.median(rates)
        lines.append(f"| {condition} | {path} | {c} | {args.per_slot * c} | {bound:.0f} | "
                     f"{median_range(rates, '{:.1f}')} | {achieved / bound:.2f} |")
        if path == "default" and c in TARGET_CONCURRENCY:
            verdict = "PASS" if achieved / bound >= TARGET else "FAIL (below target)"
            verdicts.append(f"Target: >= {TARGET} of the bound at concurrency {c}, default path, "
                            f"{condition.split(',')[0]} -> {achieved / bound:.2f} -> {verdict}  ")
    write_results(RESULTS, lines, verdicts)


if __name__ == "__main__":
    main()
