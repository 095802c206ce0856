"""Throughput of the SciTaste-Bench metrics (sciprobe.benchmarks.scitaste.scoring.wape.wape_grade — Scheme 2 — and
sciprobe.benchmarks.scitaste.scoring.composite.scitaste_composite — Scheme 1) on 1,000,000 synthetic prediction/gold
pairs, against
a plain-Python loop of the same definitions timed in the same run; the baseline's numbers must equal ours
(column "agree"). Target (issue): under one second each. Writes bench/results/scitaste_metrics.md.

    .venv/bin/python bench/scitaste_metrics.py [--n 1000000] [--repeat 5] [--out bench/results/scitaste_metrics.md]

Each of our rows is run ``--repeat`` times (default 5) and reported as the median wall time with its min–max and
the median CPU time, beside the load average before and after: a figure taken on a busy machine says so.

Data: gold totals and dimensions with two decimals (as released), predictions as whole numbers (as LLMs answer),
1 % failed answers (NaN), six disciplines. A second composite row uses continuous float predictions, which
cannot take the counting fast path of the ranking (worst case).
"""

from __future__ import annotations

import argparse
import bisect
import math
import os
import platform
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from sciprobe.benchmarks.scitaste.scoring.composite import SUBWEIGHTS, placeholder_weights, scitaste_composite
from sciprobe.benchmarks.scitaste.scoring.wape import GRADE_BOUNDS_PCT, GRADES, KNOTS_V1, wape_grade

DISCIPLINES = ("physics", "mathematics", "chemistry", "biology", "medicine", "finance")


def make_data(n: int, seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    gold = np.round(rng.uniform(5, 95, (n, 8)), 2)
    noise = rng.normal(4, 12, (n, 8))
    pred = np.clip(np.rint(gold + noise), 0, 100)
    pred[rng.random(n) < 0.01] = np.nan
    pred_float = np.clip(gold + noise, 0, 100)
    pred_float[np.isnan(pred[:, 0])] = np.nan
    groups = np.array(DISCIPLINES)[rng.integers(0, 6, n)]
    return {"gold": gold, "pred": pred, "pred_float": pred_float, "groups": groups}


# ---------------------------------------------------------------- plain-Python baselines (same definitions)

def _score(pct: float) -> float:
    xs, ys = zip(*KNOTS_V1)
    if pct >= xs[-1]:
        return ys[-1]
    j = bisect.bisect_right(xs, pct) - 1
    return ys[j] + (pct - xs[j]) / (xs[j + 1] - xs[j]) * (ys[j + 1] - ys[j])


def baseline_wape(pred: list[float], gold: list[float], groups: list[str]) -> dict[str, Any]:
    err = tot = 0.0
    g_err: dict[str, float] = defaultdict(float)
    g_tot: dict[str, float] = defaultdict(float)
    n_failed = 0
    for p, g, k in zip(pred, gold, groups):
        if p != p:  # NaN: failed answer, dropped
            n_failed += 1
            continue
        e = abs(p - g)
        err += e
        tot += g
        g_err[k] += e
        g_tot[k] += g
    pct = 100 * err / tot
    by_group = {k: _score(100 * g_err[k] / g_tot[k]) for k in g_err}
    return {"wape_pct": pct, "score": _score(pct), "grade": GRADES[bisect.bisect_right(GRADE_BOUNDS_PCT, pct)],
            "macro_score": sum(by_group.values()) / len(by_group), "n_failed": n_failed}


def _ranks(xs: list[float]) -> list[float]:
    order = sorted(range(len(xs)), key=xs.__getitem__)
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _pearson(a: list[float], b: list[float]) -> float:
    n = len(a)
    ma, mb = sum(a) / n, sum(b) / n
    sab = saa = sbb = 0.0
    for x, y in zip(a, b):
        sab += (x - ma) * (y - mb)
        saa += (x - ma) ** 2
        sbb += (y - mb) ** 2
    return sab / math.sqrt(saa * sbb)


def baseline_composite(pred: list[list[float]], gold: list[list[float]]) -> dict[str, Any]:
    rows = [(p, g) for p, g in zip(pred, gold) if not any(v != v for v in p)]
    cols_p = [[p[j] for p, _ in rows] for j in range(8)]
    cols_g = [[g[j] for _, g in rows] for j in range(8)]
    n = len(rows)
    rho = [_pearson(_ranks(cols_p[j]), _ranks(cols_g[j])) for j in range(8)]
    mae = [sum(abs(x - y) for x, y in zip(cols_p[j], cols_g[j])) / n for j in range(8)]
    mse = sum((x - y) ** 2 for x, y in zip(cols_p[0], cols_g[0])) / n
    bias = sum(x - y for x, y in zip(cols_p[0], cols_g[0])) / n
    w = list(placeholder_weights().values())
    s = {"spearman": 100 * max(0.0, rho[0]), "pearson": 100 * max(0.0, _pearson(cols_p[0], cols_g[0])),
         "error": min(100.0, max(0.0, 0.5 * (100 - mae[0]) + 0.5 * (100 - math.sqrt(mse)))),
         "bias": max(0.0, 100 - abs(bias)),
         "dim_spearman": 100 * max(0.0, sum(wi * r for wi, r in zip(w, rho[1:]))),
         "dim_mae": max(0.0, 100 - sum(wi * m for wi, m in zip(w, mae[1:])))}
    return {"final": sum(SUBWEIGHTS[k] * v for k, v in s.items()), "spearman": rho[0], "mae": mae[0]}


# ---------------------------------------------------------------- timing

@dataclass(frozen=True)
class Timing:
    """Wall times of repeated runs (median, min, max) and the median CPU time of the same runs."""

    median: float
    low: float
    high: float
    cpu: float

    def cells(self) -> str:
        return f"{self.median:.3f} ({self.low:.3f}–{self.high:.3f}) | {self.cpu:.3f}"


def timed(fn: Callable[[], Any], repeat: int) -> tuple[Timing, Any]:
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return Timing(statistics.median(walls), min(walls), max(walls), statistics.median(cpus)), out


def once(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "scitaste_metrics.md"))
    args = parser.parse_args()
    load_before = os.getloadavg()
    d = make_data(args.n)
    gold, pred, pred_f, groups = d["gold"], d["pred"], d["pred_float"], d["groups"]
    rows = []

    # Scheme 2 (WAPE grade), numpy input, with and without the per-discipline breakdown
    t_np, ours = timed(lambda: wape_grade(pred[:, 0], gold[:, 0]), args.repeat)
    t_grp, ours_g = timed(lambda: wape_grade(pred[:, 0], gold[:, 0], groups=groups), args.repeat)
    p_list, g_list, k_list = pred[:, 0].tolist(), gold[:, 0].tolist(), groups.tolist()
    t_list, _ = timed(lambda: wape_grade(p_list, g_list, groups=k_list), args.repeat)
    t_base, base = once(lambda: baseline_wape(p_list, g_list, k_list))
    agree = (math.isclose(base["wape_pct"], ours_g.values["wape_pct"], rel_tol=1e-9)
             and base["grade"] == ours_g.values["grade"] and base["n_failed"] == ours_g.coverage.n_failed
             and math.isclose(base["macro_score"], ours_g.values["macro_score"], rel_tol=1e-9))
    rows += [("wape_grade", "numpy arrays", t_np, None, True),
             ("wape_grade + 6 groups", "numpy arrays", t_grp, t_base, agree),
             ("wape_grade + 6 groups", "Python lists", t_list, t_base, agree)]

    # Scheme 1 (composite): 8 columns -> 16 rankings
    t_c, ours_c = timed(lambda: scitaste_composite(pred, gold), args.repeat)
    t_cf, ours_cf = timed(lambda: scitaste_composite(pred_f, gold), args.repeat)
    pl, gl = pred.tolist(), gold.tolist()
    t_cl, ours_cl = timed(lambda: scitaste_composite(pl, gl), args.repeat)
    t_cb, base_c = once(lambda: baseline_composite(pl, gl))
    agree_c = all(math.isclose(base_c[k], ours.values[k], rel_tol=1e-9, abs_tol=1e-9)
                  for ours in (ours_c, ours_cl) for k in ("final", "spearman", "mae"))
    rows += [("scitaste_composite", "numpy, whole-number predictions", t_c, t_cb, agree_c),
             ("scitaste_composite", "numpy, continuous float predictions", t_cf, None, True),
             ("scitaste_composite", "Python lists of 8-value rows", t_cl, t_cb, agree_c)]

    lines = [
        "# SciTaste-Bench metric throughput",
        "",
        f"`bench/scitaste_metrics.py --n {args.n} --repeat {args.repeat}`: {args.n:,} prediction/gold pairs (1 % "
        "failed answers, six disciplines; composite rows = total + 7 dimensions). Ours: median wall time of "
        f"{args.repeat} runs (min–max) and their median CPU time; baseline: one run of a plain-Python loop of the "
        "same definitions (sorted() ranks for Spearman), in the same process. Target: < 1 s for WAPE and "
        "composite (median).",
        "",
        "| metric | input | ours, wall median (min–max) s | ours, CPU s | plain-Python loop (s) | speed-up | agree "
        "| target < 1 s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, inp, t, tb, ok in rows:
        base_s = f"{tb:.3f}" if tb else "—"
        speed = f"{tb / t.median:.0f}×" if tb else "—"
        verdict = "PASS" if t.median < 1.0 else "BELOW TARGET"
        lines.append(f"| {name} | {inp} | {t.cells()} | {base_s} | {speed} | {'yes' if ok else 'NO'} | {verdict} |")
    lines += [
        "",
        f"Results: WAPE {ours_g.values['wape_pct']:.3f} % → score {ours_g.values['score']:.2f} "
        f"(grade {ours_g.values['grade']}), macro {ours_g.values['macro_score']:.2f}; composite final "
        f"{ours_c.values['final']:.2f} ({ours_c.values['class']}), continuous-float variant "
        f"{ours_cf.values['final']:.2f}; n_failed {ours_g.coverage.n_failed:,}.",
        "",
        "Notes: `wape_grade` is one vectorised pass (+ `pandas.factorize`/`bincount` for groups; turning a numpy "
        "string array into Python objects for the factorisation is most of the grouped time). The composite ranks 16 "
        "columns; values on a 0.01 grid in [0, 100] (two-decimal gold, whole-number answers) are ranked by counting "
        "in O(n), other values by `argsort`. Python lists of 8-value rows are converted in one `np.fromiter` pass "
        "over the chained rows (`np.asarray` first walks every row to find the shape: twice the time); that "
        "conversion is still the largest cost on that input. Dot products avoid BLAS (`einsum`): a threaded BLAS "
        "spins on a busy machine.",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, numpy {np.__version__}; load average (1/5/15 min) at start "
        f"{'/'.join(f'{x:.1f}' for x in load_before)}, at end {'/'.join(f'{x:.1f}' for x in os.getloadavg())} "
        "(other jobs share the machine: wall times above the CPU times are waiting, not work).",
    ]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", "utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
