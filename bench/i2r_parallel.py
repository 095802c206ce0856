"""I2R wall time per instance: comparisons of a round asked in parallel vs one call at a time.

Command (from the repository root):  .venv/bin/python bench/i2r_parallel.py [--instances 4] [--latency 0.05]
                                      [--repeats 3] [--conditions quiet busy]

A loopback OpenAI-compatible stub in its own process (bench/stub_process.py) answers every comparison after
``--latency`` seconds (a stand-in for a provider's response time); the reply is a deterministic function of the
prompt, so every configuration plays the same tournaments. Baseline, measured in the same run: one call at a
time (concurrency 1). The parallel configurations use concurrency 32 on the default path (``transport=auto``:
direct HTTP) and, for comparison, ``transport=litellm`` (the default path before issue 15). Median of
``--repeats`` (min-max), quiet and busy (bench/load.py).
Target (issue 15): the lockstep runner on the default path is at least 14x faster per instance than the
baseline, with exactly the same number of calls, quiet and busy. Writes bench/results/i2r_parallel.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from load import CONDITIONS, load_note, machine_condition, median_range  # noqa: E402
from stub_process import stub_process  # noqa: E402

from sciprobe.llm.client import LLMClient  # noqa: E402
from sciprobe.benchmarks.idrbench.i2r import run_i2r  # noqa: E402

TARGET = 14.0
BASELINE = "one call at a time (baseline)"
TARGET_ROW = "round in parallel, instances in lockstep"
#: (concurrency, lockstep, spec suffix) per configuration
CONFIGS = {
    BASELINE: (1, False, ""),
    "round in parallel, instances one by one": (32, False, ""),
    TARGET_ROW: (32, True, ""),
    "lockstep, litellm (old default)": (32, True, ",transport=litellm"),
}
REPLY = '''
import hashlib
def choose(body):
    digest = hashlib.sha256(body["messages"][-1]["content"].encode()).digest()
    return f"Your choice: Paper {1 + digest[0] % 2}\\nConfidence score: 70"
'''


def synthetic_rows(n: int, players: int = 30) -> list[dict]:
    def paper(i: int, k: int) -> dict:
        return {"title": f"Instance {i} candidate {k:02d}", "abstract": f"Abstract of candidate {k} in instance {i}."}

    return [{"id": f"bench-{i}", "pa_id": f"bench-{i}", "seed": {"title": f"Seed {i}", "abstract": "A seed paper."},
             "targets": [{"id": "t", **paper(i, 0)}], "distractors": [paper(i, k) for k in range(1, players)]}
            for i in range(n)]


def timed(rows: list[dict], url: str, concurrency: int, lockstep: bool, suffix: str) -> tuple[float, int]:
    client = LLMClient(f"openai/bench-stub,base_url={url},api_key=sk-bench{suffix}", cache=None,
                       concurrency=concurrency)
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
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=CONDITIONS)
    args = parser.parse_args()
    rows = synthetic_rows(args.instances)
    results = []  # (condition, config, seconds list, calls set)
    with stub_process(args.latency, REPLY, "choose") as stub:
        timed(rows[:1], stub.url, 32, True, "")  # warm-up: imports, first calls
        timed(rows[:1], stub.url, 32, True, ",transport=litellm")
        for name in args.conditions:
            with machine_condition(name) as condition:
                runs: dict[str, list[tuple[float, int]]] = {config: [] for config in CONFIGS}
                for _ in range(args.repeats):
                    for config, (concurrency, lockstep, suffix) in CONFIGS.items():
                        runs[config].append(timed(rows, stub.url, concurrency, lockstep, suffix))
            results += [(condition.describe(), config, [s for s, _ in r], {c for _, c in r})
                        for config, r in runs.items()]

    command = (f"`.venv/bin/python bench/i2r_parallel.py --instances {args.instances} --latency {args.latency} "
               f"--repeats {args.repeats} --conditions {' '.join(args.conditions)}`")
    lines = [f"I2R, {args.instances} instances x 30 players, stub latency {args.latency * 1000:.0f} ms, "
             f"10 Swiss rounds, median of {args.repeats} (min-max); {command}", "",
             f"Machine: {load_note()} at the end; {stub.note()} (bench/stub_process.py). busy = one CPU-burner "
             "process per core (bench/load.py).", "",
             "| condition (load at start -> end) | configuration | calls | wall s / instance | speed-up vs baseline |",
             "|---|---|---|---|---|"]
    verdicts = []
    for condition, config, seconds, calls in results:
        base = statistics.median(next(s for c, k, s, _ in results if c == condition and k == BASELINE))
        per_instance = [s / args.instances for s in seconds]
        speedup = [base / s for s in seconds]
        lines.append(f"| {condition} | {config} | {'/'.join(map(str, sorted(calls)))} | "
                     f"{median_range(per_instance)} | {median_range(speedup, '{:.1f}')}x |")
        if config == TARGET_ROW:
            all_calls = {k for c, _, _, cs in results if c == condition for k in cs}
            value = statistics.median(speedup)
            passed = value >= TARGET and len(all_calls) == 1
            verdicts.append(f"Target: >= {TARGET:.0f}x per instance with the same call count, default path, "
                            f"{condition.split(',')[0]} -> {value:.1f}x, calls equal: {len(all_calls) == 1} -> "
                            f"{'PASS' if passed else 'FAIL (below target)'}  ")
    text = "\n".join(lines + [""] + verdicts) + "\n"
    out = Path(__file__).parent / "results" / "i2r_parallel.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
