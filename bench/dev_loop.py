"""The developer loop (issue 28): how long the test suite takes, and how fast an interrupted run ends.

Command (from the repository root):
    .venv/bin/python bench/dev_loop.py [--interrupt-repeats 3] [--suite] [--before CHECKOUT]
                                       [--conditions quiet busy]

- interrupt: pytest runs a Ray loopback cluster test (the bundled model generating on the cluster: the test is
  blocked in a Ray call, where a KeyboardInterrupt waits); once the cluster's nodes are up and the test has run
  for a few seconds, the run gets a SIGTERM. Measured: seconds from the signal to pytest's exit, and to the last
  cluster process gone (a process whose command line names the cluster's loopback addresses), serial and with
  ``-n 2``. ``--before CHECKOUT`` runs the same in another checkout's tests (the one before the change).
  Target: the run ends and leaves nothing within 15 s.
- suite (``--suite``, ~40 min): the whole suite as scripts/test.sh runs it (scripts/pytest-phased.sh: one worker
  per core, then the serial tests alone) vs in one process (``SCIPROBE_TEST_WORKERS=0``, the baseline, same
  run), and the clock-shifted fast tests (scripts/test-future.sh), wall time; quiet only (a busy run of the
  suite takes over an hour). Machine bound in the same run: a CPU loop in two processes vs one.
  Target: scripts/test.sh <= 10 min on 2 cores.
Writes bench/results/dev_loop.md.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from load import CONDITIONS, load_note, machine_condition, median_range, write_results  # noqa: E402

RESULTS = REPO / "bench" / "results" / "dev_loop.md"
RAY_TEST = "tests/llm/test_local_model_ray.py::test_generation_on_the_cluster_matches_a_local_run"
CLUSTER_MARKS = (b"127.0.0.2", b"127.0.0.3")  # the loopback cluster's node addresses (tests/ray_cluster_support.py)
INTERRUPT_TARGET_S = 15.0
SUITE_TARGET_S = 600.0
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1"}


def cluster_pids() -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as fh:
                    cmdline = fh.read()
            except OSError:
                continue
            if any(mark in cmdline for mark in CLUSTER_MARKS):
                found.append(int(name))
    return found


def interrupt_once(checkout: Path, workers: int) -> tuple[float, float, int]:
    """(s to pytest's exit, s to the last cluster process gone, processes left after 120 s)."""
    assert not cluster_pids(), "a loopback cluster is already running: stop it first"
    python = str(REPO / ".venv" / "bin" / "python")
    args = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", RAY_TEST] + (["-n", str(workers)] if workers
                                                                                 else [])
    proc = subprocess.Popen(args, cwd=checkout, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while len(cluster_pids()) < 4:  # head and worker nodes with their daemons
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the cluster did not come up (pytest exit {proc.poll()})")
        time.sleep(0.2)
    time.sleep(8)  # the cluster registers its CPUs, the test starts generating
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    exited = time.monotonic() - sent
    while cluster_pids() and time.monotonic() - sent < 120:
        time.sleep(0.2)
    gone = time.monotonic() - sent
    left = cluster_pids()
    for pid in left:  # clean up after a checkout that leaves its cluster behind
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return exited, gone, len(left)


def suite_once(workers: str, marks: str | None = None, clock_shift: bool = False) -> tuple[float, str]:
    """(wall s, what pytest said) of the suite as scripts/test.sh runs it (scripts/pytest-phased.sh: the parallel
    run, then the serial tests alone), on ``workers`` workers (``0``: one process)."""
    env = {**ENV, "SCIPROBE_TEST_WORKERS": workers}
    if clock_shift:
        env["SCIPROBE_CLOCK_SHIFT_DAYS"] = "365"
        env["PYTHONPATH"] = str(REPO / "tests" / "clock_shift")
    args = ["bash", str(REPO / "scripts" / "pytest-phased.sh"), "-q", "-p", "no:cacheprovider"] + (
        ["-m", marks] if marks else [])
    start = time.monotonic()
    proc = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    said = [line.strip("= ") for line in proc.stdout.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
    return time.monotonic() - start, f"exit {proc.returncode}: " + ("; ".join(said) or "(no summary)")


def cpu_loop_bound() -> float:
    """Wall time of a fixed CPU loop in one process over the same loop in two processes at once (2.0 = 2 cores)."""
    code = "x = 0\nfor i in range(30_000_000): x += i"
    one = time.monotonic()
    subprocess.run([sys.executable, "-c", code], check=True)
    one = time.monotonic() - one
    two = time.monotonic()
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(2)]
    for p in procs:
        p.wait()
    two = time.monotonic() - two
    return 2 * one / two


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interrupt-repeats", type=int, default=3)
    parser.add_argument("--suite", action="store_true", help="also time the whole suite (~30 min)")
    parser.add_argument("--before", type=Path, help="a checkout of the code before the change (its tests)")
    parser.add_argument("--conditions", nargs="+", choices=CONDITIONS, default=list(CONDITIONS))
    opts = parser.parse_args()

    lines = ["| condition (load at start -> end) | tests of | run | s to pytest's exit | s to the cluster gone | "
             "processes left |", "|---|---|---|---|---|---|"]
    verdicts = []
    checkouts = [("this checkout", REPO)] + ([("before", opts.before)] if opts.before else [])
    for name in opts.conditions:
        with machine_condition(name) as condition:
            for label, checkout in checkouts:
                for workers in (0, 2):
                    runs = [interrupt_once(checkout, workers)
                            for _ in range(opts.interrupt_repeats if label == "this checkout" else 1)]
                    exits, gones, lefts = zip(*runs)
                    run = "serial" if workers == 0 else f"-n {workers}"
                    lines.append(f"| {condition.describe()} | {label} | {run} | {median_range(exits, '{:.1f}')} | "
                                 f"{median_range(gones, '{:.1f}')} | {max(lefts)} |")
                    if label == "this checkout":
                        ok = max(gones) <= INTERRUPT_TARGET_S and max(lefts) == 0
                        verdicts.append(f"Target: an interrupted run ({run}) ends and leaves no cluster process "
                                        f"within {INTERRUPT_TARGET_S:.0f} s, {condition.describe()} -> worst "
                                        f"{max(gones):.1f} s, {max(lefts)} left -> {'PASS' if ok else 'FAIL'}")
    body = [f"SIGTERM to a pytest running `{RAY_TEST}` (a Ray loopback cluster test, blocked in a Ray call); "
            f"`.venv/bin/python bench/dev_loop.py --interrupt-repeats {opts.interrupt_repeats}"
            f"{' --suite' if opts.suite else ''}{' --before CHECKOUT' if opts.before else ''}`", "",
            load_note(), "", *lines, ""]
    if opts.suite:
        bound = cpu_loop_bound()
        serial, serial_summary = suite_once("0")
        parallel, parallel_summary = suite_once("auto")
        future, future_summary = suite_once("auto", "not slow and not ray_cluster", clock_shift=True)
        body += ["The whole suite, quiet (wall time; what pytest said at the end of each run):", "",
                 "| run | s | x serial | pytest said |", "|---|---|---|---|",
                 f"| one process (`SCIPROBE_TEST_WORKERS=0`, baseline) | {serial:.0f} | 1.00x | {serial_summary} |",
                 f"| scripts/test.sh (one worker per core, then the serial tests) | {parallel:.0f} | "
                 f"{serial / parallel:.2f}x | {parallel_summary} |",
                 f"| scripts/test-future.sh (fast tests, clock +365 days) | {future:.0f} | | "
                 f"{future_summary} |",
                 f"| machine bound: a CPU loop in 2 processes vs 1 | | {bound:.2f}x | |", ""]
        verdicts.append(f"Target: scripts/test.sh <= {SUITE_TARGET_S / 60:.0f} min, quiet -> {parallel / 60:.1f} min "
                        f"-> {'PASS' if parallel <= SUITE_TARGET_S else 'FAIL'}")
    write_results(RESULTS, body, ["  \n".join(verdicts)])


if __name__ == "__main__":
    main()
