"""I2R wall time per instance: comparisons of a round asked in parallel vs one call at a time.

Command (from the repository root):  .venv/bin/python bench/i2r_parallel.py [--instances 4] [--latency 0.05]

A loopback OpenAI-compatible stub answers every comparison after ``--latency`` seconds (a stand-in for a
provider's response time); the reply is a deterministic function of the prompt, so every configuration plays
the same tournaments. Baseline, measured in the same run: one call at a time (concurrency 1). Target: the
parallel runner is at least 8x faster per instance with exactly the same number of calls.
Writes bench/results/i2r_parallel.md.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sciprobe.llm.client import LLMClient  # noqa: E402
from sciprobe.llm.stub_server import StubServer  # noqa: E402
from sciprobe.benchmarks.idrbench.i2r import run_i2r  # noqa: E402

TARGET = 8.0


def synthetic_rows(n: int, players: int = 30) -> list[dict]:
    def paper(i: int, k: int) -> dict:
        return {"title": f"Instance {i} candidate {k:02d}", "abstract": f"Abstract of candidate {k} in instance {i}."}

    return [{"id": f"bench-{i}", "pa_id": f"bench-{i}", "seed": {"title": f"Seed {i}", "abstract": "A seed paper."},
             "targets": [{"id": "t", **paper(i, 0)}], "distractors": [paper(i, k) for k in range(1, players)]}
            for i in range(n)]


def reply(body: dict) -> str:
    digest = hashlib.sha256(body["messages"][-1]["content"].encode()).digest()
    return f"Your choice: Paper {1 + digest[0] % 2}\nConfidence score: 70"


def timed(rows: list[dict], url: str, concurrency: int, lockstep: bool) -> tuple[float, int]:
    client = LLMClient(f"openai/bench-stub,base_url={url},api_key=sk-bench", cache=None, concurrency=concurrency)
    start = time.perf_counter()
    calls = 0
    if lockstep:
        calls += run_i2r(rows, client, {"temperature": 0})[2]
    else:
        for row in rows:
            calls += run_i2r([row], client, {"temperature": 0})[2]
    return time.perf_counter() - start, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    rows = synthetic_rows(args.instances)
    with StubServer(reply=reply, latency_s=args.latency) as server:
        runs = {
            "one call at a time (baseline)": timed(rows, server.base_url, 1, lockstep=False),
            "round in parallel, instances one by one": timed(rows, server.base_url, 32, lockstep=False),
            "round in parallel, instances in lockstep": timed(rows, server.base_url, 32, lockstep=True),
        }
    base_time, base_calls = runs["one call at a time (baseline)"]
    lines = [f"I2R, {args.instances} instances x 30 players, stub latency {args.latency * 1000:.0f} ms, "
             f"10 Swiss rounds; `.venv/bin/python bench/i2r_parallel.py --instances {args.instances} "
             f"--latency {args.latency}`", "",
             "| configuration | calls | wall s / instance | speed-up vs baseline |", "|---|---|---|---|"]
    for name, (seconds, calls) in runs.items():
        lines.append(f"| {name} | {calls} | {seconds / args.instances:.2f} | {base_time / seconds:.1f}x |")
    # `sciprobe evaluate` plays all instances in lockstep; that is the runner's wall time per instance.
    per_instance = base_time / runs["round in parallel, instances in lockstep"][0]
    same_calls = len({calls for _, calls in runs.values()}) == 1
    lines += ["", f"Target: >= {TARGET:.0f}x per instance with the same call count -> "
              f"{per_instance:.1f}x, calls equal: {same_calls} -> {'PASS' if per_instance >= TARGET and same_calls else 'FAIL'}"]
    text = "\n".join(lines) + "\n"
    out = Path(__file__).parent / "results" / "i2r_parallel.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
