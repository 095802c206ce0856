"""IDRBench's own figures in ``sciprobe report`` (the ``Benchmark.report_figures`` hook):

- IPI / I3: a reliability diagram of the models' stated confidence (``Confidence score:`` 0-100, read by the
  parser) against the accuracy of their verdicts, 10 equal-width bins, with the expected calibration error;
- I2R: the histogram of the rank of the first gold paper in the final standings (official mode: upstream's
  tie-break by title), from the per-query reciprocal ranks of the results file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sciprobe.results.figures import RunTask, figure, json_cell

BINS = np.linspace(0, 100, 11)


def _confidences(run: RunTask) -> tuple[np.ndarray, np.ndarray]:
    """(confidence 0-100, verdict correct) of the items with both a verdict and a stated confidence."""
    conf, correct = [], []
    for record in run.records or []:
        extra = json_cell(record.get("parsed_extra"))
        value = extra.get("confidence") if isinstance(extra, dict) else None
        prediction = record.get("prediction")
        if value is None or prediction is None or not 0 <= float(value) <= 100:
            continue
        conf.append(float(value))
        correct.append(float(prediction == record.get("gold")))
    return np.array(conf), np.array(correct)


def reliability_figure(runs: Sequence[RunTask], task: str) -> tuple[str, Any, str] | None:
    data = [(run, *_confidences(run)) for run in runs]
    data = [d for d in data if d[1].size]
    if not data:
        return None
    fig = figure(7.5, 5.2)
    top, bottom = fig.subplots(2, 1, height_ratios=(3, 1), sharex=True)
    top.plot([0, 1], [0, 1], color="#999999", linestyle=":", label="perfect calibration")
    notes = []
    for k, (run, conf, correct) in enumerate(data):
        which = np.clip(np.digitize(conf, BINS[1:-1]), 0, 9)
        counts = np.bincount(which, minlength=10)
        acc = np.bincount(which, weights=correct, minlength=10)
        mean_conf = np.bincount(which, weights=conf / 100, minlength=10)
        live = counts > 0
        x, y = mean_conf[live] / counts[live], acc[live] / counts[live]
        ece = float(np.sum(counts[live] / conf.size * np.abs(y - x)))
        color = run.color
        top.plot(x, y, marker="o", color=color, label=f"{run.label} (ECE {ece:.3f}, n={conf.size})")
        width = 0.08 / len(data)
        bottom.bar((BINS[:-1] + 5) / 100 + (k - (len(data) - 1) / 2) * width, counts, width=width, color=color)
        notes.append(f"{run.label}: ECE {ece:.3f} over {conf.size} answers with a confidence")
    top.set_ylabel("accuracy of the verdict")
    top.set_ylim(-0.02, 1.02)
    top.legend(fontsize=7, loc="upper left")
    top.grid(alpha=0.3)
    top.set_title(f"idrbench:{task}: reliability of the stated confidence", fontsize=10)
    bottom.set_xlabel("stated confidence / 100 (bin mean)")
    bottom.set_ylabel("answers")
    bottom.set_xlim(0, 1)
    caption = ("Reliability diagram: accuracy of the yes/no verdict against the model's own 'Confidence score' in "
               "ten bins; ECE = expected calibration error. " + "; ".join(notes))
    return "calibration", fig, caption


def _ranks(run: RunTask) -> tuple[np.ndarray, int, str] | None:
    table = run.entry.get("items") or {}
    modes = table.get("modes") or {}
    mode = "official" if "official" in modes else run.default_mode
    if mode not in modes:
        return None
    values = [v for v in modes[mode]["columns"].get("value", []) if v is not None]
    ranks = np.array([round(1 / v) for v in values if v > 0])
    return ranks, sum(1 for v in values if v == 0), mode


def rank_figure(runs: Sequence[RunTask]) -> tuple[str, Any, str] | None:
    data = [(run, r) for run in runs if (r := _ranks(run)) is not None]
    if not data:
        return None
    fig = figure(7.5, 4.0)
    ax = fig.add_subplot()
    top = max([int(r[0].max()) for _, r in data if r[0].size] + [30])
    edges = np.arange(0.5, top + 1.5)
    notes = []
    for run, (ranks, missing, mode) in data:
        color = run.color
        ax.hist(ranks, bins=edges, histtype="step", linewidth=1.8, color=color,
                linestyle="--" if run.baseline else "-", label=f"{run.label} [{mode}]")
        notes.append(f"{run.label}: gold ranked first in {int(np.sum(ranks == 1))} of {ranks.size + missing} "
                     f"queries{f', never ranked in {missing}' if missing else ''}")
    ax.set_xlabel("rank of the first gold paper in the final standings")
    ax.set_ylabel("queries")
    ax.set_title("idrbench:i2r: target rank after the Swiss tournament", fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return "target rank", fig, "Histogram of the gold paper's rank (1 = recommended first). " + "; ".join(notes)


def figures(task: str, runs: Sequence[RunTask]) -> list[tuple[str, Any, str]]:
    made = [rank_figure(runs)] if task == "i2r" else [reliability_figure(runs, task)]
    return [m for m in made if m is not None]


__all__ = ["figures", "rank_figure", "reliability_figure"]
