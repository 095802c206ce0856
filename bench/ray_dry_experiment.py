"""SGI-Bench dry-experiment executions on a Ray cluster: a worker node with 2 CPUs (2 worker processes) vs 1.

Command (from the repository root):  .venv/bin/python bench/ray_dry_experiment.py [--items 8] [--repeats 3]

Workload: ``run_sgi_dry`` (the dry-experiment runner: model call, program assembly, 5 sandboxed unit-test runs
per item) on synthetic items whose model answer (from a loopback stub) burns ~1 s of CPU in the transplanted
function, so the runs are CPU-bound; one item in four is answered wrongly, so the scores are not all 100.
The unit-test data are generated once before timing (cached by content, as in real use).

Each repetition starts a fresh loopback Ray cluster (tests/ray_cluster_support.py: a head with no CPUs and one
worker node, each a `ray start` process on its own 127.0.0.x address) for each configuration, in alternating
order, warms its worker processes, then times the runner with ``executor=ray://...``. Baseline, measured in the
same run: the same cluster shape with 1 CPU. For reference, local threads (``workers`` 1 and 2) too. Target:
2 worker processes >= 1.7x the throughput of 1 (the runs are CPU-bound, the machine has 2 cores), with
identical scores in every configuration. The 1-minute load average around each measurement is reported: other
jobs on a shared machine take CPU from both sides. Writes bench/results/ray_dry_experiment.md.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from ray_cluster_support import LoopbackRayCluster  # noqa: E402

from sciprobe.benchmarks.sgibench import prompts, score_dry  # noqa: E402
from sciprobe.benchmarks.sgibench.dry_runner import N_TESTS, run_sgi_dry  # noqa: E402
from sciprobe.core.executors import get_executor, shutdown_executors  # noqa: E402
from sciprobe.llm.client import LLMClient  # noqa: E402
from sciprobe.testing.stub_server import StubServer  # noqa: E402
from sciprobe.sandbox.runner import run_many, sandbox_available  # noqa: E402

TARGET = 1.7
BURN = ("    acc = 0\n    for i in range({n}):\n        acc = (acc * 31 + i) % 1000003\n"
        "    return [v * factor{wrong} for v in values] if acc >= 0 else []\n")


def answer(item: int, loops: int) -> str:
    wrong = " + 1" if item % 4 == 3 else ""
    return f"<answer>\ndef scale(values, factor):\n{BURN.format(n=loops, wrong=wrong)}</answer>"


def rows(n: int, tmp: Path) -> list[dict]:
    import datasets

    from sciprobe.core.registry import get_benchmark
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.data.build import build_benchmark

    source = write_synthetic_source(tmp / "source", n=n)
    build_benchmark(get_benchmark("sgibench"), source, tmp / "built", configs=["dry_experiment"])
    data = datasets.load_dataset(str(tmp / "built"), "dry_experiment", split="test").to_list()
    return [{**r, "question": f"[item {k}]\n{r['question']}"} for k, r in enumerate(data)]


def outcomes(records: list[dict]) -> dict:
    """The official scores without the execution-time metric (a measurement)."""
    values = score_dry(records, "official").values
    out = {k: v for k, v in values.items() if k != "aet"}
    out["per_item"] = [{k: v for k, v in item.items() if k != "aet"} for item in out.get("per_item", [])]
    return out


def timed(data: list[dict], client: LLMClient, executor, workers: int | None) -> tuple[float, dict, float, float]:
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    records, _, _, prov = run_sgi_dry(data, client, {}, build_messages=prompts.dry_messages, modes=("official",),
                                      executor=executor, workers=workers)
    elapsed = time.perf_counter() - start
    assert prov["n_runs"] == N_TESTS * len(data), prov
    return elapsed, outcomes(records), load_before, os.getloadavg()[0]


def on_cluster(cpus: int, token: str, data: list[dict], client: LLMClient) -> tuple[float, dict, float, float]:
    with LoopbackRayCluster(worker_cpus=(cpus,), token=token) as cluster:
        executor = get_executor(cluster.address)
        try:
            cluster.wait_for_cpus(executor)
            run_many(["print(1)\n"] * (4 * cpus), executor=executor)  # start the worker processes
            return timed(data, client, executor, None)
        finally:
            shutdown_executors()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--loops", type=int, default=12_000_000, help="iterations of the CPU burn per run")
    parser.add_argument("--no-local", action="store_true", help="skip the local-thread reference rows")
    args = parser.parse_args()
    ok, reason = sandbox_available()
    if not ok:
        print(f"sandbox unavailable: {reason}", file=sys.stderr)
        return 1
    token = secrets.token_hex(32)  # Ray reads its auth token once per process: every cluster here shares it
    os.environ.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token)
    import ray

    tmp = Path(tempfile.mkdtemp(prefix="sciprobe-bench-ray-"))
    os.environ["SCIPROBE_HOME"] = str(tmp / "home")
    data = rows(args.items, tmp)
    n_runs = N_TESTS * len(data)
    configs = ["ray, 1 worker process", "ray, 2 worker processes"]
    if not args.no_local:
        configs += ["local, 1 thread", "local, 2 threads"]
    results: dict[str, list[tuple[float, dict, float, float]]] = {c: [] for c in configs}

    def reply(body: dict) -> str:
        text = body["messages"][-1]["content"]
        return answer(int(text.split("]", 1)[0].removeprefix("[item ")), args.loops)

    with StubServer(reply=reply) as stub:
        client = LLMClient(f"openai/bench-coder,base_url={stub.base_url},api_key=sk-bench", cache=None)
        print("warm-up: generating the unit-test data once", flush=True)
        timed(data[:1], client, None, None)
        for rep in range(args.repeats):
            order = [1, 2] if rep % 2 == 0 else [2, 1]
            for cpus in order:
                label = configs[cpus - 1]
                results[label].append(on_cluster(cpus, token, data, client))
                print(f"rep {rep + 1}: {label}: {results[label][-1][0]:.1f} s", flush=True)
            if not args.no_local:
                for workers in order:
                    label = configs[1 + workers]
                    results[label].append(timed(data, client, None, workers))
                    print(f"rep {rep + 1}: {label}: {results[label][-1][0]:.1f} s", flush=True)
    reference = results[configs[0]][0][1]
    identical = all(r[1] == reference for runs in results.values() for r in runs)
    base = statistics.median(r[0] for r in results[configs[0]])
    cmd = "python bench/ray_dry_experiment.py " + " ".join(sys.argv[1:])
    lines = [
        "# Dry-experiment executions on a Ray cluster: 2 worker processes vs 1",
        "",
        (f"Command: `{cmd.strip()}` — {args.items} synthetic items x {N_TESTS} sandboxed unit-test runs = {n_runs} "
         f"runs per measurement, each burning {args.loops:,} loop iterations (~1 s CPU idle); {args.repeats} "
         f"repetitions, configurations alternating; a fresh loopback cluster (head without CPUs + one worker node) "
         f"per Ray measurement; {os.cpu_count()} cores; Python {sys.version.split()[0]}, Ray {ray.__version__}; "
         f"{reason}."),
        "",
        "| configuration | wall s per repetition | median s | runs/s (median) | speed-up vs 1 Ray worker "
        "| load avg (1 min) before -> after |",
        "|---|---|---:|---:|---:|---|",
    ]
    for label in configs:
        runs = results[label]
        median = statistics.median(r[0] for r in runs)
        loads = ", ".join(f"{r[2]:.1f}->{r[3]:.1f}" for r in runs)
        lines.append(f"| {label} | {', '.join(f'{r[0]:.1f}' for r in runs)} | {median:.1f} | {n_runs / median:.2f} "
                     f"| {base / median:.2f}x | {loads} |")
    speedup = base / statistics.median(r[0] for r in results[configs[1]])
    per_rep = [a[0] / b[0] for a, b in zip(results[configs[0]], results[configs[1]])]
    passed = speedup >= TARGET and identical
    lines += ["", f"Speed-up per repetition (1 worker / 2 workers, same repetition): "
                  f"{', '.join(f'{x:.2f}x' for x in per_rep)}.",
              "", f"Scores (official, every metric but the execution time) identical in every configuration and "
                  f"repetition: {identical}; PassAll@5 = {reference['passall_at_5']:.2f}.",
              "", "On a machine shared with other jobs a CPU-bound process gets its share of the cores, not the "
                  "cores: the load average says how many others competed.",
              "", f"Target: >= {TARGET}x with identical scores -> {speedup:.2f}x, identical: {identical} -> "
                  f"{'PASS' if passed else 'FAIL'}"]
    text = "\n".join(lines) + "\n"
    print(text)
    out = ROOT / "bench" / "results" / "ray_dry_experiment.md"
    out.write_text(text)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
