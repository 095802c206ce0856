"""CPU per single-call item, end to end: request + answer + parse + score + details, on the default client path.

Command (from the repository root):  .venv/bin/python bench/item_cpu.py [--repeats 3] [--conditions quiet busy]

``sciprobe evaluate idrbench:ipi`` (the public ``evaluate`` API, response cache on, as a user runs it) against a
loopback OpenAI-compatible stub in its own process that answers every item with a parsable verdict. The CPU
of *this* process (all threads: ``time.process_time``) is measured for ``--small`` and ``--large`` items; the
difference divided by the difference in items is the marginal CPU of one item, free of fixed costs (imports,
loading the data, writing results). Specs: ``openai/gpt-4o-mini,base_url=<stub>`` as written (the default
path) and the same with ``transport=litellm`` (the default path before issue 15; baseline, same run).
Data: the IDRBench v1 release from ``../shared/data/idrbench/data`` (1,120 IPI items), built once to a temp dir.
Target (issue 15): <= 1 ms of CPU per item on the default path, quiet and busy (bench/load.py).
Writes bench/results/item_cpu.md.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE"):
    os.environ.setdefault(_var, "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from load import CONDITIONS, load_note, machine_condition, median_range, write_results  # noqa: E402
from stub_process import stub_process  # noqa: E402

from sciprobe.run.evaluation import EvaluationRequest, evaluate  # noqa: E402

TARGET_MS = 1.0
RESULTS = REPO / "bench" / "results" / "item_cpu.md"
#: ../shared next to the main checkout (a worktree sits one level deeper)
RELEASES = [root / "shared" / "data" / "idrbench" / "data" for root in (REPO.parent, REPO.parent.parent)]
PATHS = {"default": "", "litellm (old default)": ",transport=litellm"}
VERDICT = 'def verdict(body):\n    return "Your verdict: Yes\\nConfidence score: 80"\n'


def build_release(work: Path) -> Path:
    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.build import build_benchmark

    release = next((r for r in RELEASES if (r / "data_exp_1.json").is_file()), None)
    if release is None:
        raise SystemExit(f"needs the IDRBench release in one of {', '.join(map(str, RELEASES))}")
    out = work / "idrbench"
    build_benchmark(get_benchmark("idrbench"), release, out)
    return out


def run_cpu(spec: str, data: Path, limit: int, work: Path) -> float:
    """CPU seconds of one evaluate() of ``limit`` IPI items, with a fresh (empty) response cache."""
    home = Path(tempfile.mkdtemp(dir=work))
    os.environ["SCIPROBE_HOME"] = str(home)
    start = time.process_time()
    _, results = evaluate(EvaluationRequest(tasks=["idrbench:ipi"], model=spec, data=str(data), limit=limit,
                                            output_dir=home / "out"))
    cpu = time.process_time() - start
    records = results[0].records
    failed = sum(r["error"] is not None for r in records)
    if len(records) != limit or failed:
        raise RuntimeError(f"{spec}: {len(records)} records, {failed} failed")
    return cpu


@contextlib.contextmanager
def _removed_after(path: Path) -> Iterator[None]:
    try:
        yield
    finally:
        shutil.rmtree(path, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=1100)
    parser.add_argument("--latency", type=float, default=0.005, help="stub seconds per answer")
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=CONDITIONS)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="sciprobe-item-cpu-"))
    data = build_release(work)
    rows: list[tuple[str, str, list[float]]] = []
    with stub_process(args.latency, VERDICT, "verdict") as stub, _removed_after(work):
        base = f"openai/gpt-4o-mini,base_url={stub.url},api_key=sk-bench"
        for suffix in PATHS.values():  # warm-up: imports, first-call setup
            run_cpu(base + suffix, data, 20, work)
        for name in args.conditions:
            with machine_condition(name) as condition:
                per_item: dict[str, list[float]] = {path: [] for path in PATHS}
                for _ in range(args.repeats):
                    for path, suffix in PATHS.items():
                        small = run_cpu(base + suffix, data, args.small, work)
                        large = run_cpu(base + suffix, data, args.large, work)
                        per_item[path].append((large - small) / (args.large - args.small) * 1000)
            rows += [(condition.describe(), path, values) for path, values in per_item.items()]

    command = (f"`.venv/bin/python bench/item_cpu.py --repeats {args.repeats} --small {args.small} --large "
               f"{args.large} --latency {args.latency:g} --conditions {' '.join(args.conditions)}`")
    lines = [f"CPU of one IDRBench IPI item end to end (request, answer, parse, score, details; response cache on), "
             f"marginal over {args.large - args.small} items, median of {args.repeats} (min-max); {command}", "",
             f"Machine: {load_note()} at the end; {stub.note()} (bench/stub_process.py). busy = one CPU-burner "
             "process per core during the measurement (bench/load.py). CPU is this process's only (all its threads).",
             "",
             "| condition (load at start -> end) | client path | CPU ms per item | litellm / this |",
             "|---|---|---|---|"]
    verdicts = []
    for condition, path, values in rows:
        litellm = statistics.median(next(v for c, p, v in rows if c == condition and p == "litellm (old default)"))
        median = statistics.median(values)
        lines.append(f"| {condition} | {path} | {median_range(values, '{:.3f}')} | {litellm / median:.1f}x |")
        if path == "default":
            verdicts.append(f"Target: <= {TARGET_MS:g} ms of CPU per item on the default path, "
                            f"{condition.split(',')[0]} -> {median:.3f} ms -> "
                            f"{'PASS' if median <= TARGET_MS else 'FAIL (below target)'}  ")
    write_results(RESULTS, lines, verdicts)


if __name__ == "__main__":
    main()
