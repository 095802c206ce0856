"""Model-based scoring on a busy machine: torch's intra-op threads chosen by sciprobe vs torch's default.

Command (from the repository root):  .venv/bin/python bench/scoring_threads.py [--repeats 3] [--idea-items 5]
                                      [--pairs 40] [--conditions quiet busy]

Two scorers run a model on the CPU per item (sciprobe.scoring.torch_threads): SGI-Bench idea generation (the
objective terms' MiniLM embedder) and PreScience contribution generation (BERTScore, the bundled MiniLM). Each
setting runs in its own process: the model is loaded and warmed on other items first, then each repeat scores
fresh items (new texts: no cache hit) in the task's first mode; wall time of that scoring, median (min-max).
Settings: ``chosen`` (sciprobe's choice, no override) and ``torch default`` (SCIPROBE_TORCH_THREADS = the CPU
count, what torch picks by itself on this machine). Inputs: synthetic items of bench/card_stderr.py on the
bundled SGI sample's rows. Target (issue 28): with the chosen setting, busy (one CPU burner per core,
bench/load.py) <= 1.5x quiet. Writes bench/results/scoring_threads.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from load import CONDITIONS, load_note, machine_condition, median_range, write_results  # noqa: E402

RESULTS = REPO / "bench" / "results" / "scoring_threads.md"
TARGET = 1.5
SETTINGS = ("chosen", "torch default")
SCORERS = ("SGI-Bench idea_generation (objective terms)", "PreScience contribution_generation (BERTScore)")
BOUND = "machine bound: one CPU-bound Python thread, no torch"


def child(repeats: int, idea_items_n: int, pairs: int) -> dict:
    """Runs in the measured process: {scorer: [seconds per repeat], "threads": {scorer: params' torch_threads}}."""
    from card_stderr import contribution_items, idea_items, idea_rows

    from sciprobe.core.registry import get_benchmark

    rng = random.Random(0)
    sgi = get_benchmark("sgibench").task("idea_generation")
    prescience = get_benchmark("prescience").task("contribution_generation")
    out: dict = {"threads": {}}
    with tempfile.TemporaryDirectory(prefix="sciprobe-bench-") as scratch:
        rows = idea_rows(Path(scratch))
        cases = {SCORERS[0]: (sgi, lambda k: idea_items(rng, idea_items_n, rows, f"r{k}-")),
                 SCORERS[1]: (prescience, lambda k: contribution_items(rng, pairs))}
        for label, (task, make) in cases.items():
            report = task.score(make("warm"), task.modes[0])  # loads the model, on other items
            out["threads"][label] = _threads_of(report)
            times = []
            for k in range(repeats):
                items = make(k)
                start = time.perf_counter()
                task.score(items, task.modes[0])
                times.append(time.perf_counter() - start)
            out[label] = times
    out[BOUND] = one_thread_bound(repeats)
    out["threads"][BOUND] = 1
    return out


def _threads_of(report) -> object:
    """``torch_threads`` from a report's params, at the top or one level down (PreScience nests BERTScore's)."""
    params = getattr(report, "params", {}) or {}
    for where in (params, *[v for v in params.values() if isinstance(v, dict)]):
        if "torch_threads" in where:
            return where["torch_threads"]
    return "?"


def one_thread_bound(repeats: int) -> list[float]:
    """Wall time of a fixed single-threaded CPU loop (no torch): what the machine's load alone does to one
    thread, the bound of a one-thread scorer's busy/quiet ratio (CPU share, caches, clock)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        total = 0
        for i in range(3_000_000):
            total += i * i % 7
        times.append(time.perf_counter() - start)
    return times


def run_setting(setting: str, args: argparse.Namespace) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "SCIPROBE_TORCH_THREADS"}
    if setting == "torch default":
        env["SCIPROBE_TORCH_THREADS"] = str(os.cpu_count() or 1)
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, __file__, "--child", "--repeats", str(args.repeats), "--idea-items",
                           str(args.idea_items), "--pairs", str(args.pairs)], env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{setting}: {done.stderr[-1500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _ratio(measured: dict, scorer: str) -> float:
    return (statistics.median(measured[("busy", "chosen")][scorer])
            / statistics.median(measured[("quiet", "chosen")][scorer]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--idea-items", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=CONDITIONS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.repeats, args.idea_items, args.pairs)))
        return

    measured: dict[tuple[str, str], dict] = {}
    described: dict[str, str] = {}
    for name in args.conditions:
        with machine_condition(name) as condition:
            for setting in SETTINGS:
                measured[(name, setting)] = run_setting(setting, args)
        described[name] = condition.describe()

    command = (f"`.venv/bin/python bench/scoring_threads.py --repeats {args.repeats} --idea-items {args.idea_items} "
               f"--pairs {args.pairs} --conditions {' '.join(args.conditions)}`")
    lines = [f"Wall time of one scoring of fresh items (model loaded and warm), median of {args.repeats} (min-max); "
             f"{command}", "",
             f"Machine: {load_note()} at the end. busy = one CPU-burner process per core (bench/load.py). "
             f"SGI: {args.idea_items} idea items; BERTScore: {args.pairs} pairs of ~150-word abstracts.", "",
             "| scorer | setting (torch threads) | condition (load at start -> end) | s | x quiet, same setting |",
             "|---|---|---|---|---|"]
    verdicts = []
    for scorer in (*SCORERS, BOUND):
        for setting in SETTINGS if scorer != BOUND else SETTINGS[:1]:
            quiet = measured.get(("quiet", setting))
            for name in args.conditions:
                run = measured[(name, setting)]
                ratio = (f"{statistics.median(run[scorer]) / statistics.median(quiet[scorer]):.2f}x"
                         if quiet else "")
                lines.append(f"| {scorer} | {setting} ({run['threads'][scorer]}) | {described[name]} | "
                             f"{median_range(run[scorer])} | {ratio} |")
        if {"quiet", "busy"} <= set(args.conditions) and scorer != BOUND:
            ratio, bound = (_ratio(measured, name) for name in (scorer, BOUND))
            verdicts.append(f"Target: busy <= {TARGET:g}x quiet with the chosen threads, {scorer} -> {ratio:.2f}x "
                            f"(machine bound for one thread, same run: {bound:.2f}x) -> "
                            f"{'PASS' if ratio <= TARGET else 'FAIL (below target)'}  ")
    write_results(RESULTS, lines, verdicts)


if __name__ == "__main__":
    main()
