"""Judge client throughput vs the concurrency bound, against a loopback stub with injected latency.

Command (from the repository root):  .venv/bin/python bench/judge_throughput.py [--latency 0.1] [--per-slot 20]
                                     [--transport litellm http]

The stub (sciprobe.llm.stub_server) runs in its own process, as a provider would, and sleeps ``--latency``
seconds per request. For concurrency c the best any client can do is c / latency requests per second (the
bound); we report achieved req/s as a fraction of it. Requests are distinct (no batch dedup), the cache is
off, and every call goes through the real stack: LLMClient -> litellm.acompletion -> HTTP (transport
``litellm``, the default), or LLMClient -> aiohttp POST (transport ``http``, sciprobe.llm.http_backend, for
OpenAI-compatible servers).
Each concurrency level gets a warm-up batch (litellm imports lazily on first calls), then ``--repeats`` timed
batches of ``per_slot * c`` requests; the table shows the median. Baseline, measured in the same run:
concurrency 1. Target: >= 0.9 of the bound at concurrency 32. Writes bench/results/judge_throughput.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sciprobe.llm.client import LLMClient
from sciprobe.llm.types import Request

TARGET = 0.9
TARGET_CONCURRENCY = 32
RESULTS = REPO / "bench" / "results" / "judge_throughput.md"


def start_stub(latency: float) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sciprobe.llm.stub_server", "--port", "0", "--latency", str(latency)],
        stdout=subprocess.PIPE, text=True, env=env,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http://"):
        proc.kill()
        raise RuntimeError(f"stub server did not start (got {url!r})")
    return proc, url


def batch(tag: str, n: int) -> list[Request]:
    return [Request.of([{"role": "user", "content": f"Judge item {tag}-{i}: is the claim supported?"}],
                       {"temperature": 0, "max_tokens": 16}) for i in range(n)]


def measure(url: str, concurrency: int, n: int, repeats: int, transport: str) -> list[float]:
    """Achieved requests/s of each timed batch."""
    client = LLMClient(f"openai/gpt-4o-mini,base_url={url},api_key=sk-bench,concurrency={concurrency},"
                       f"transport={transport}", cache=None)
    client.complete_many(batch(f"warm{concurrency}", max(2 * concurrency, 16)))
    rates = []
    for r in range(repeats):
        requests = batch(f"c{concurrency}r{r}", n)
        start = time.perf_counter()
        out = client.complete_many(requests)
        elapsed = time.perf_counter() - start
        failed = sum(not c.ok for c in out)
        if failed:
            raise RuntimeError(f"{failed} request(s) failed at concurrency {concurrency}: {out[0].error}")
        rates.append(n / elapsed)
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.1, help="stub seconds per request")
    parser.add_argument("--per-slot", type=int, default=20, help="requests per concurrency slot per batch")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--transport", nargs="+", default=["litellm", "http"], choices=["litellm", "http"])
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    proc, url = start_stub(args.latency)
    try:
        rows = {(t, c): measure(url, c, args.per_slot * c, args.repeats, t)
                for t in args.transport for c in args.concurrency}
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    import litellm  # already imported by the client; only for the version line

    command = f"`.venv/bin/python bench/judge_throughput.py --latency {args.latency} --per-slot {args.per_slot}`"
    litellm_version = getattr(litellm, "__version__", None) or _version("litellm")
    lines = [
        (f"Judge client throughput; stub latency {args.latency * 1000:.0f} ms (separate process), "
         f"{args.per_slot} requests per slot, median of {args.repeats}; {command}"),
        "",
        (f"Machine: {os.cpu_count()} CPUs, load average {load_before:.1f} at start; "
         f"Python {platform.python_version()}, litellm {litellm_version}"),
        "",
        "| transport | concurrency | requests | bound req/s | achieved req/s (min-max) | fraction of bound | "
        "vs concurrency 1 |",
        "|---|---|---|---|---|---|---|",
    ]
    for (transport, c), rates in rows.items():
        base = statistics.median(rows[(transport, min(args.concurrency))])
        bound = c / args.latency
        achieved = statistics.median(rates)
        spread = f"{achieved:.1f} ({min(rates):.1f}-{max(rates):.1f})"
        cells = [transport, c, args.per_slot * c, f"{bound:.0f}", spread, f"{achieved / bound:.2f}",
                 f"{achieved / base:.1f}x"]
        lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    lines.append("")
    for transport in args.transport:
        if (transport, TARGET_CONCURRENCY) in rows:
            fraction = statistics.median(rows[(transport, TARGET_CONCURRENCY)]) / (TARGET_CONCURRENCY / args.latency)
            verdict = "PASS" if fraction >= TARGET else "FAIL"
            target = f"Target: >= {TARGET} of the bound at concurrency {TARGET_CONCURRENCY}"
            lines.append(f"{target}, transport {transport} -> {fraction:.2f} -> {verdict}  ")
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


if __name__ == "__main__":
    main()
