"""The fixed cost of ``sciprobe evaluate``: CPU of a 10-item dry run and of a real 10-item run, vs importing
pyarrow.parquet and json in a bare interpreter (issue 28).

Command (from the repository root):
    .venv/bin/python bench/evaluate_fixed_cost.py [--repeats 5] [--conditions quiet busy] [--before /work/main]

Each measurement is one fresh process, bytecode cached (PYTHONPYCACHEPREFIX, filled by a warm-up run); its CPU
(user + system, the process and its children) comes from ``getrusage(RUSAGE_CHILDREN)`` around it. Commands,
interleaved within each repeat:
  baseline   ``python -c "import pyarrow.parquet, json"``
  dry run    ``sciprobe evaluate idrbench:ipi --limit 10 --dry-run`` (the plan: calls, tokens, cost)
  real run   the same without ``--dry-run``, ``--no-cache``, results written, against a loopback stub (in its
             own process, bench/stub_process.py) that answers every item with a parsable verdict
Model spec ``openai/gpt-4o-mini,base_url=<stub>,api_key=sk-bench`` (the default direct-HTTP transport, priced).
Data: the IDRBench v1 release (../shared/data/idrbench/data, 1,120 IPI items), built once to a temp dir.
``--before CHECKOUT`` also runs the dry and real runs of another checkout (PYTHONPATH=CHECKOUT): the code
before this change, measured in the same run. Targets (issue 28): dry run <= 3x the baseline; real run <= 2x
its own dry run; quiet and busy (bench/load.py: one CPU burner per core).
Writes bench/results/evaluate_fixed_cost.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from item_cpu import VERDICT, build_release  # noqa: E402
from load import CONDITIONS, load_note, machine_condition, median_range, write_results  # noqa: E402
from stub_process import stub_process  # noqa: E402

RESULTS = REPO / "bench" / "results" / "evaluate_fixed_cost.md"
DRY_TARGET, REAL_TARGET = 3.0, 2.0
BASELINE = [sys.executable, "-c", "import pyarrow.parquet, json"]
BASELINE_LABEL = '`python -c "import pyarrow.parquet, json"`'


def child_cpu(command: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one run of ``command``, which must succeed. It runs in a neutral folder:
    ``python -m`` puts the working directory first on sys.path, which would shadow PYTHONPATH's checkout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False, cwd=tempfile.gettempdir())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:6])}...: exit {done.returncode}: {done.stderr[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def evaluate_command(spec: str, data: Path, out: Path, dry: bool) -> list[str]:
    command = [sys.executable, "-m", "sciprobe", "evaluate", "idrbench:ipi", "--limit", "10", "--model", spec,
               "--data", str(data)]
    return command + (["--dry-run"] if dry else ["--no-cache", "--output-dir", str(out)])


def environment(checkout: Path, home: Path, pycache: Path) -> dict[str, str]:
    """The children's environment: bytecode cached under ``pycache`` as an installed package has it (this
    repository's tests run with PYTHONDONTWRITEBYTECODE; the warm-up fills the cache before timing)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(checkout), "SCIPROBE_HOME": str(home), "PYTHONPYCACHEPREFIX": str(pycache),
            "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=CONDITIONS)
    parser.add_argument("--before", type=Path, default=None, help="another checkout, measured in the same run")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="sciprobe-fixed-cost-"))
    checkouts = {"this checkout": REPO, **({"before": args.before.resolve()} if args.before else {})}
    rows: list[tuple[str, str, str, list[float]]] = []
    try:
        data = build_release(work)
        with stub_process(0.005, VERDICT, "verdict") as stub:
            spec = f"openai/gpt-4o-mini,base_url={stub.url},api_key=sk-bench"
            envs = {name: environment(path, work / f"home-{n}", work / f"pycache-{n}")
                    for n, (name, path) in enumerate(checkouts.items())}
            commands = [("baseline", "-", BASELINE, envs["this checkout"])]
            for name, env in envs.items():
                commands += [(name, "dry run", evaluate_command(spec, data, work / "out", True), env),
                             (name, "real run", evaluate_command(spec, data, work / "out", False), env)]
            for _, _, command, env in commands:  # warm-up: bytecode, the declarations' index
                child_cpu(command, env)
            for condition_name in args.conditions:
                with machine_condition(condition_name) as condition:
                    cpu: dict[tuple[str, str], list[float]] = {(c, k): [] for c, k, _, _ in commands}
                    for _ in range(args.repeats):
                        for checkout, kind, command, env in commands:
                            cpu[(checkout, kind)].append(child_cpu(command, env))
                rows += [(condition.describe(), checkout, kind, values) for (checkout, kind), values in cpu.items()]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    command = (f"`.venv/bin/python bench/evaluate_fixed_cost.py --repeats {args.repeats} --conditions "
               f"{' '.join(args.conditions)}{f' --before {args.before}' if args.before else ''}`")
    lines = [f"CPU (user + system) of one process, median of {args.repeats} (min-max); {command}", "",
             f"Machine: {load_note()} at the end; {stub.note()} (bench/stub_process.py). busy = one CPU-burner "
             "process per core (bench/load.py). Model spec openai/gpt-4o-mini on the direct HTTP transport; "
             "data: the IDRBench v1 release, built once. before: the checkout given as --before, same commands.",
             "", "| condition (load at start -> end) | sciprobe | command | CPU s | x baseline | x its dry run |",
             "|---|---|---|---|---|---|"]
    verdicts = []
    for condition in dict.fromkeys(r[0] for r in rows):
        here = {(c, k): statistics.median(v) for cond, c, k, v in rows if cond == condition}
        base = here[("baseline", "-")]
        for cond, checkout, kind, values in rows:
            if cond != condition:
                continue
            median = statistics.median(values)
            dry = here.get((checkout, "dry run"))
            vs_dry = f"{median / dry:.2f}x" if kind == "real run" and dry else ""
            what = kind if kind != "-" else BASELINE_LABEL
            lines.append(f"| {condition} | {checkout} | {what} | {median_range(values)} | {median / base:.2f}x "
                         f"| {vs_dry} |")
        label = condition.split(",")[0]
        dry_ratio = here[("this checkout", "dry run")] / base
        real_ratio = here[("this checkout", "real run")] / here[("this checkout", "dry run")]
        verdicts.append(f"Target: dry run <= {DRY_TARGET:g}x {BASELINE_LABEL}, {label} -> "
                        f"{dry_ratio:.2f}x -> {'PASS' if dry_ratio <= DRY_TARGET else 'FAIL (below target)'}  ")
        verdicts.append(f"Target: real 10-item run <= {REAL_TARGET:g}x its dry run, {label} -> {real_ratio:.2f}x -> "
                        f"{'PASS' if real_ratio <= REAL_TARGET else 'FAIL (below target)'}  ")
    write_results(RESULTS, lines, verdicts)


if __name__ == "__main__":
    main()
