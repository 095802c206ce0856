"""SciTaste-Bench's own figure in ``sciprobe report``: predicted against gold scores, one panel for the composite
(ATI) and one per dimension, per run (the ``Benchmark.report_figures`` hook)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sciprobe.results.figures import RunTask, figure, json_cell


def _pairs(run: RunTask, dims: Sequence[str]) -> dict[str, tuple[list[float], list[float]]]:
    out: dict[str, tuple[list[float], list[float]]] = {d: ([], []) for d in ("composite", *dims)}
    for record in run.records or []:
        pred, gold = json_cell(record.get("prediction")), json_cell(record.get("gold"))
        if not isinstance(pred, dict) or not isinstance(gold, dict):
            continue
        out["composite"][0].append(float(gold["total"]))
        out["composite"][1].append(float(pred["total"]))
        for d in dims:
            out[d][0].append(float(gold["dims"][d]))
            out[d][1].append(float(pred["dims"][d]))
    return out


def scatter_figure(run: RunTask) -> tuple[str, Any, str] | None:
    from sciprobe.benchmarks.scitaste.scoring.composite import DIMENSIONS

    pairs = _pairs(run, DIMENSIONS)
    if not pairs["composite"][0]:
        return None
    fig = figure(11, 5.6)
    axes = fig.subplots(2, 4, sharex=True, sharey=True).ravel()
    color = run.color
    for ax, (name, (gold, pred)) in zip(axes, pairs.items()):
        ax.plot([0, 100], [0, 100], color="#999999", linestyle=":", linewidth=1)
        ax.scatter(gold, pred, s=14, color=color, alpha=0.75)
        r = np.corrcoef(gold, pred)[0, 1] if len(set(gold)) > 1 and len(set(pred)) > 1 else float("nan")
        ax.set_title(f"{name.replace('_', ' ')} (r={r:.2f})" if np.isfinite(r) else f"{name.replace('_', ' ')}",
                     fontsize=8)
        ax.set_xlim(0, 100)
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
    fig.supxlabel("gold score", fontsize=9)
    fig.supylabel("predicted score", fontsize=9)
    fig.suptitle(f"{run.label}: predicted vs gold ({len(pairs['composite'][0])} parsed answers)", fontsize=10)
    return (f"scatter {run.label}", fig, f"{run.label}: each parsed answer's composite (ATI) and seven dimension "
            "scores against the gold values; dotted line: perfect prediction; r: Pearson correlation.")


def figures(task: str, runs: Sequence[RunTask]) -> list[tuple[str, Any, str]]:
    return [made for run in runs if (made := scatter_figure(run)) is not None]
