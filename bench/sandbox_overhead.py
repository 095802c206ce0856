"""Per-run overhead of the dry-experiment sandbox (sciprobe.sandbox.runner) over a bare interpreter start.

Both sides run the same trivial program with the same interpreter, alternating, in the same process:

* baseline: ``subprocess.run([python, "main.py"])`` in a fresh temp dir (what upstream's runner does, minus
  ``conda run``), including writing the file and removing the dir;
* sandboxed: ``run_python(code, python=python)`` (bwrap, tmpfs work dir opened from the host, setpriv/prlimit,
  watchdog).

Target (issue): < 100 ms beyond the program's own time. The table also gives the ratio of the medians
(sandboxed / baseline), measured in the same run. Usage::

    .venv/bin/python bench/sandbox_overhead.py [--runs 40] [--python PATH] [--write bench/results/sandbox_overhead.md]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sciprobe.sandbox.runner import run_python, sandbox_available  # noqa: E402

PROGRAMS = {
    "print": "print('[Final Output]')\nprint(42)\n",
    "import json,math": "import json, math\nprint(json.dumps({'x': math.pi}))\n",
}


def baseline(python: str, code: str) -> float:
    t0 = time.perf_counter()
    d = tempfile.mkdtemp(prefix="sbx-bench-")
    try:
        Path(d, "main.py").write_text(code)
        p = subprocess.run([python, "main.py"], cwd=d, capture_output=True, text=True, timeout=60, check=False)
        assert p.returncode == 0, p.stderr
    finally:
        shutil.rmtree(d)
    return time.perf_counter() - t0


def sandboxed(python: str, code: str) -> float:
    t0 = time.perf_counter()
    r = run_python(code, python=python)
    assert r.exit_code == 0 and r.sandboxed, r
    return time.perf_counter() - t0


def stats(xs: list[float]) -> tuple[float, float, float]:
    xs = sorted(xs)
    return statistics.median(xs) * 1000, xs[int(0.9 * (len(xs) - 1))] * 1000, statistics.mean(xs) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--python", action="append", help="interpreter(s) to measure (default: this one)")
    ap.add_argument("--write", type=Path, default=None, help="write the markdown table here")
    args = ap.parse_args()
    ok, reason = sandbox_available()
    if not ok:
        print(f"sandbox unavailable: {reason}", file=sys.stderr)
        return 1
    pythons = [os.path.abspath(p) for p in args.python or [sys.executable]]
    rows = []
    for python in pythons:
        version = subprocess.run([python, "-c", "import sys;print(sys.version.split()[0])"], capture_output=True,
                                 text=True, check=True).stdout.strip()
        for name, code in PROGRAMS.items():
            for _ in range(3):  # warm-up (page cache, interpreter prefix lookup cache)
                baseline(python, code)
                sandboxed(python, code)
            base, sbx = [], []
            for _ in range(args.runs):
                base.append(baseline(python, code))
                sbx.append(sandboxed(python, code))
            b, s = stats(base), stats(sbx)
            rows.append((f"`{python}` ({version})", name, b, s, s[0] - b[0], s[0] / b[0]))
    cmd = "python bench/sandbox_overhead.py " + " ".join(
        a if not a.startswith("/") else a.replace(str(ROOT) + "/", "") for a in sys.argv[1:])
    lines = [
        "# Sandbox overhead (sciprobe.sandbox.runner)",
        "",
        (f"Command: `{cmd.strip()}` — {args.runs} alternating runs per side after 3 warm-ups; "
         f"{os.cpu_count()} cores; {reason}; euid {os.geteuid()}."),
        "",
        ("Baseline = `subprocess.run([python, 'main.py'])` in a fresh temp dir (write + run + remove). "
         "Sandboxed = `run_python(code, python=...)` (bwrap namespaces + mounts, tmpfs work dir, setpriv/prlimit, "
         "seccomp, watchdog, cleanup). Times in ms, wall clock per run."),
        "",
        ("| interpreter | program | baseline median | baseline p90 | sandboxed median | sandboxed p90 "
         "| overhead (median) | ratio (medians) |"),
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for interp, name, b, s, over, ratio in rows:
        lines.append(f"| {interp} | `{name}` | {b[0]:.1f} | {b[1]:.1f} | {s[0]:.1f} | {s[1]:.1f} | **{over:.1f}** "
                     f"| {ratio:.2f} |")
    worst = max(r[4] for r in rows)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines += ["", f"Host load average at the end (1/5/15 min): {load} — other jobs on the machine inflate both "
              "sides."]
    lines += ["", f"Target < 100 ms: {'met' if worst < 100 else 'NOT met'} (worst median overhead {worst:.1f} ms)."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
