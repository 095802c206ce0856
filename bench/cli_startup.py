"""Start-up of the light ``sciprobe`` commands against a bare ``python -c pass``.

Command (from the repository root):  .venv/bin/python bench/cli_startup.py [--runs 15] [--conditions quiet busy]
                                      [--python PYTHON]

Each run starts every command once, in turn (so drift in the machine's load touches them all alike), and times
its wall clock from spawn to exit; ``--runs`` runs per condition, quiet and busy (bench/load.py). Commands:

- ``python -c pass`` (the baseline: the interpreter, its site-packages and the editable-install hook);
- ``python -c "import argparse"``: the argument parser alone (reference only, no target);
- ``python -m sciprobe --help``, ``python -m sciprobe tasks``, ``python -m sciprobe cutoffs``,
  ``python -m sciprobe cutoffs --help``;
- ``sciprobe tasks`` with its index of the declarations not cached (``SCIPROBE_HOME`` fresh for every run: the
  first run after an install or a change to a declaration computes it, :mod:`sciprobe.cli.index`; reference
  only, no target).

Bytecode and the declarations' index are cached, as on a user's machine after the first command: the commands
run with ``PYTHONPYCACHEPREFIX`` and ``SCIPROBE_HOME`` set to fresh temporary folders (this repository's tests run
with ``PYTHONDONTWRITEBYTECODE``) and every command runs once to fill them before the timed runs. The ratio is
the command's median over the baseline's median in the same condition; the range is the command's min-max over
the same baseline median.
Target (issue 15): every sciprobe command <= 2x ``python -c pass``, quiet and busy.
Writes bench/results/cli_startup.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from load import CONDITIONS, load_note, machine_condition, median_range, write_results  # noqa: E402

RESULTS = REPO / "bench" / "results" / "cli_startup.md"
TARGET = 2.0
BASELINE = "python -c pass"
REFERENCE = "python -c \"import argparse\""
#: ``sciprobe tasks`` computing its index (a fresh SCIPROBE_HOME every run)
COLD = "sciprobe tasks, index not cached"
COMMANDS = {
    BASELINE: ["-c", "pass"],
    REFERENCE: ["-c", "import argparse"],
    "sciprobe --help": ["-m", "sciprobe", "--help"],
    "sciprobe tasks": ["-m", "sciprobe", "tasks"],
    "sciprobe cutoffs": ["-m", "sciprobe", "cutoffs"],
    "sciprobe cutoffs --help": ["-m", "sciprobe", "cutoffs", "--help"],
    COLD: ["-m", "sciprobe", "tasks"],
}
#: rows measured but not held to the target
REFERENCES = (BASELINE, REFERENCE, COLD)


def time_once(python: str, args: list[str], env: dict[str, str], cwd: str) -> float:
    began = time.perf_counter()
    done = subprocess.run([python, *args], env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return elapsed


def measure(python: str, runs: int, env: dict[str, str], cwd: str) -> dict[str, list[float]]:
    """Times of every command; ``cwd`` is a folder of its own, so ``python -m sciprobe`` finds the sciprobe
    installed for ``python``, not a checkout it happens to run in."""
    times: dict[str, list[float]] = {label: [] for label in COMMANDS}
    for _ in range(runs):
        for label, args in COMMANDS.items():
            run_env = {**env, "SCIPROBE_HOME": tempfile.mkdtemp(dir=cwd)} if label == COLD else env
            times[label].append(time_once(python, args, run_env, cwd))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs of every command per condition (>= 10)")
    parser.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=CONDITIONS)
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose sciprobe is measured")
    args = parser.parse_args()
    if args.runs < 10:
        parser.error("--runs must be at least 10")

    with tempfile.TemporaryDirectory(prefix="sciprobe-bench-") as scratch:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPYCACHEPREFIX=str(Path(scratch) / "pycache"), SCIPROBE_HOME=str(Path(scratch) / "home"),
                   HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
        measure(args.python, 1, env, scratch)  # fill the bytecode cache and the declarations' index
        rows = []  # (condition, {label: times})
        for name in args.conditions:
            with machine_condition(name) as condition:
                times = measure(args.python, args.runs, env, scratch)
            rows.append((condition.describe(), times))

    command = (f"`.venv/bin/python bench/cli_startup.py --runs {args.runs} --conditions {' '.join(args.conditions)}`")
    lines = [
        f"Wall time from spawn to exit of the light commands vs `{BASELINE}`, {args.runs} runs per condition "
        f"(commands interleaved), median (min-max); {command}",
        "",
        f"Machine: {load_note()} at the end; Python {platform.python_version()}; bytecode and the declarations' "
        "index cached (PYTHONPYCACHEPREFIX, SCIPROBE_HOME, filled before timing). busy = one CPU-burner process "
        f"per core (bench/load.py). References, no target: `{REFERENCE}` (the argument parser alone) and "
        f"`{COLD}` (a fresh SCIPROBE_HOME every run: the first command after an install or a change to a "
        "declaration computes the index).",
        "",
        "| condition (load at start -> end) | command | ms | x python -c pass |",
        "|---|---|---|---|",
    ]
    verdicts = []
    for condition, times in rows:
        base = statistics.median(times[BASELINE])
        for label, values in times.items():
            ratios = [v / base for v in values]
            lines.append(f"| {condition} | `{label}` | {median_range([v * 1000 for v in values], '{:.1f}')} | "
                         f"{statistics.median(values) / base:.2f} ({min(ratios):.2f}-{max(ratios):.2f}) |")
        measured = {label: statistics.median(values) / base for label, values in times.items()
                    if label not in REFERENCES}
        worst = max(measured, key=measured.get)
        passed = all(ratio <= TARGET for ratio in measured.values())
        verdicts.append(f"Target: every sciprobe command <= {TARGET:g}x `{BASELINE}`, {condition.split(',')[0]} -> "
                        + ", ".join(f"{label} {ratio:.2f}x" for label, ratio in measured.items())
                        + f" (worst: {worst}) -> {'PASS' if passed else 'FAIL (below target)'}  ")
    write_results(RESULTS, lines, verdicts)


if __name__ == "__main__":
    main()
