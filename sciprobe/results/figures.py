"""The generic figures of ``sciprobe report`` (matplotlib, Agg; every function returns a Figure). Each run keeps
one color in every figure; reference baselines are drawn dashed (diamond markers).

- :func:`scores_figure`: each run's headline with its bootstrap interval, one row per run and mode;
- :func:`breakdown_figure`: a heatmap of group scores (rows: groups, columns: runs), with the items per group;
- :func:`cutoff_figure`: the headline recomputed on the items dated strictly after each cutoff, with a
  bootstrap band, and how many items remain.

Benchmark-specific figures (calibration, rank histograms, scatter plots) come from the
``Benchmark.report_figures`` hook.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["NOT_IN_MODE", "NO_ITEMS", "RunTask", "breakdown_figure", "cutoff_curve", "cutoff_figure", "figure",
           "fit_axis", "item_day", "json_cell", "literal_text", "scores_figure"]

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#bcbd22")


@dataclass
class RunTask:
    """One task of one results file, as the report shows it."""

    label: str                     # the run's label (model id, "(baseline)" ...)
    key: str                       # "idrbench:ipi|0"
    entry: dict[str, Any]          # sciprobe.tasks[key], validated by sciprobe.results.read
    headline: str
    default_mode: str
    baseline: bool = False
    records: list[dict[str, Any]] | None = None   # the details file's records, when readable
    color: str = PALETTE[0]
    notes: list[str] = field(default_factory=list)
    data: str = ""                 # the data the task ran on ("folder:idrbench · 1120 items · 3f2a...")

    def score(self, mode: str) -> float | None:
        value = (self.entry["scores"].get(mode) or {}).get(self.headline)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
            and math.isfinite(value) else None

    def ci(self, mode: str) -> dict[str, Any]:
        return (self.entry["scores"].get(mode) or {}).get("ci") or {}


def json_cell(value: Any) -> Any:
    """A details cell that may hold JSON text (dicts and mixed-type columns are stored as JSON)."""
    import json

    if isinstance(value, str) and value[:1] in ("{", "[", '"'):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def figure(width: float, height: float) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def literal_text(fig: Any) -> Any:
    """``fig`` with every text drawn as written: labels come from results files, and matplotlib reads ``$...$``
    as mathtext (a model id ``$\\frac{}$`` would end the report with a ValueError). Called before ``savefig``,
    inside ``matplotlib.rc_context({"text.parse_math": False})`` so tick labels made while drawing follow."""
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        text.set_parse_math(False)
    return fig


def _wrap(text: str, width: int = 28) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


def scores_figure(runs: Sequence[RunTask], title: str, declared: tuple[float, float] | None = None) -> Any:
    """Horizontal interval plot: one row per (run, mode); ``declared``: the metric's range, for an axis whose
    values are all equal."""
    rows = [(run, mode) for run in runs for mode in run.entry["scores"]]
    fig = figure(7.5, 0.9 + 0.42 * len(rows))
    ax = fig.add_subplot()
    for y, (run, mode) in enumerate(reversed(rows)):
        value, ci = run.score(mode), run.ci(mode)
        color = run.color
        if ci.get("low") is not None and ci.get("high") is not None:  # floats: a JSON integer may exceed int64
            ax.plot([float(ci["low"]), float(ci["high"])], [y, y], color=color, linewidth=2.5, solid_capstyle="butt",
                    linestyle=(0, (3, 1.5)) if run.baseline else "-")
        if value is not None:
            ax.plot([value], [y], marker="D" if run.baseline else "o", color=color, markersize=7)
            ax.annotate(f"{value:.3f}", (value, y), textcoords="offset points", xytext=(0, 7), ha="center",
                        fontsize=8)
        else:
            ax.annotate("no number", (0.5, y), xycoords=("axes fraction", "data"), ha="center", va="center",
                        fontsize=8, color="#aa0000")
    ax.set_yticks(range(len(rows)), [f"{run.label} [{mode}]" for run, mode in reversed(rows)], fontsize=8)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    fit_axis(ax.set_xlim, [v for run, mode in rows for v in (run.score(mode), run.ci(mode).get("low"),
                                                              run.ci(mode).get("high"))], declared)
    ax.set_xlabel(rows[0][0].headline if rows else "")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return fig


#: a heatmap cell of a run whose mode has no breakdown (no headline number in that mode, e.g. official IDRBench
#: macro-F1 when one class is missing): nothing was left out of the run, the mode simply gives no number
NOT_IN_MODE = "n/a in this mode"
#: a heatmap cell of a group none of the run's items belongs to
NO_ITEMS = "no items in run"
#: rows of a heatmap at most (the groups with the most items; a results file may declare thousands)
MAX_HEATMAP_GROUPS = 60


def _count_of(cell: Any) -> int:
    return (cell.get("n_items") or 0) if isinstance(cell, dict) else 0


def breakdown_figure(name: str, title: str, columns: Sequence[tuple[str, dict[str, Any] | None]], metric: str,
                     data_label: str = "") -> Any:
    """``columns``: (column label, {group: {"score", "n_items", "n_scored"}}) per run, None for a run whose mode
    has no such breakdown (:data:`NOT_IN_MODE`); groups are the union; ``data_label``: the data the runs used."""
    every = {g for _, groups in columns for g in groups or {}}
    size = {g: max(_count_of((groups or {}).get(g)) for _, groups in columns) for g in every}
    shown = sorted(every, key=lambda g: (-size[g], g))[:MAX_HEATMAP_GROUPS]  # the largest groups
    groups = sorted(shown, key=lambda g: (g == "unknown", g))
    if len(every) > len(groups):
        title = f"{title} ({len(groups)} largest of {len(every)} groups)"
    data = np.full((len(groups), len(columns)), np.nan)
    counts = [["" for _ in columns] for _ in groups]
    for j, (_, by_group) in enumerate(columns):
        for i, group in enumerate(groups):
            if by_group is None:
                counts[i][j] = NOT_IN_MODE
                continue
            cell = by_group.get(group)
            if cell is None:
                continue
            if cell.get("score") is not None:
                data[i, j] = cell["score"]
            counts[i][j] = f"n={cell.get('n_scored', 0)}/{cell.get('n_items', 0)}"
    fig = figure(min(2.2 + 1.6 * len(columns), 14), 1.3 + 0.5 * len(groups))
    ax = fig.add_subplot()
    import matplotlib

    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#e8e8e8")
    finite = data[np.isfinite(data)]
    middle = float(np.mean(finite)) if finite.size else 0.0
    image = ax.imshow(np.ma.masked_invalid(data), aspect="auto", cmap=cmap)
    for i in range(len(groups)):
        for j in range(len(columns)):
            value = data[i, j]
            if counts[i][j] in ("", NOT_IN_MODE):
                text, shade = counts[i][j] or NO_ITEMS, "#555555"
            else:
                text = ("no number" if np.isnan(value) else f"{value:.3f}") + f"\n{counts[i][j]}"
                shade = "#333333" if np.isnan(value) or value >= middle else "white"
            ax.text(j, i, text, ha="center", va="center", fontsize=7, color=shade)
    ax.set_xticks(range(len(columns)), [_wrap(label, 18) for label, _ in columns], fontsize=7)
    ax.set_yticks(range(len(groups)), [_wrap(g, 34) for g in groups], fontsize=7)
    ax.set_title(f"{metric} by {title}" + (f"\n{_wrap(data_label, 48)}" if data_label else ""), fontsize=10)
    fig.colorbar(image, ax=ax, shrink=0.8, label=metric)
    return fig


_DATE = re.compile(r"^\d{4}(-\d{2}){0,2}$")


def item_day(value: Any) -> str | None:
    """An item's date as an ISO day (a year or a month is its first day), None for no date or text that is no
    date (a results file is outside input: ``2024-13-45`` or ``today`` never reaches the date axis)."""
    text = str(value)[:10] if value else ""
    if not _DATE.match(text):
        return None
    try:
        return str(np.datetime64(text, "D"))
    except ValueError:
        return None


def cutoff_curve(table: dict[str, Any], mode: str, *, max_points: int = 24, n_resamples: int = 200,
                 seed: int = 0) -> dict[str, list[Any]] | None:
    """The headline on the items dated strictly after each cutoff (the distinct item dates, or ``max_points``
    quantiles of them), with a percentile band from ``n_resamples`` seeded resamples; None without two dates."""
    from sciprobe.scoring.bootstrap import BootstrapSettings, bootstrap, interval, units_of
    from sciprobe.scoring.item_scores import ItemScores, evaluate_statistic

    spec = (table.get("modes") or {}).get(mode)
    dates = [item_day(d) for d in table.get("dates") or []]
    known = sorted({d for d in dates if d})
    if spec is None or len(known) < 2:
        return None
    if len(known) > max_points:
        known = sorted({known[int(q)] for q in np.linspace(0, len(known) - 1, max_points)})
    cutoffs = [d for d in known[:-1]]  # after the last date nothing is left
    items = ItemScores.from_json(spec)
    cols = items.arrays()
    date_array = np.array([d or "" for d in dates])
    masks = np.stack([(date_array > c) & (date_array != "") for c in cutoffs]).astype(float)
    scored = items.scored()

    def stat(weights: np.ndarray) -> np.ndarray:
        return evaluate_statistic(items.statistic, cols, weights, items.params, masks)

    point = stat(np.ones((1, len(dates))))[0]
    unit_of_item, n_units = units_of(table.get("clusters"), len(dates))
    samples = bootstrap(stat, unit_of_item, n_units, BootstrapSettings(n_resamples, seed))
    bands = [interval(samples[:, k], 0.95)[:2] for k in range(len(cutoffs))]
    return {"cutoff": cutoffs, "score": [None if np.isnan(v) else float(v) for v in point],
            "low": [b[0] for b in bands], "high": [b[1] for b in bands],
            "n_scored": [int((m.astype(bool) & scored).sum()) for m in masks]}


def fit_axis(set_limits: Any, values: Sequence[Any], declared: tuple[float, float] | None) -> None:
    """Give an axis a real range when its values do not (all equal, or none): matplotlib would show +-0.055
    around the value (ticks -0.04 to 0.04 for a score of 0), which reads as a measured spread. ``declared``: the
    metric's range (sciprobe.scoring.ranges), used when both ends are finite."""
    from sciprobe.core.numbers import finite_number

    finite = [v for v in map(finite_number, values) if v is not None]
    if finite and max(finite) - min(finite) > 1e-9 * max(1.0, abs(max(finite))):
        return
    if declared is not None and all(np.isfinite(declared)):
        low, high = declared
    else:
        centre = finite[0] if finite else 0.0
        half = max(abs(centre) * 0.5, 1.0)
        low, high = centre - half, centre + half
    pad = 0.05 * (high - low)
    set_limits(low - pad, high + pad)


def cutoff_figure(curves: Sequence[tuple[RunTask, dict[str, list[Any]]]], metric: str, title: str,
                  declared: tuple[float, float] | None = None) -> Any:
    import matplotlib.dates as mdates

    fig = figure(7.5, 4.2)
    ax = fig.add_subplot()
    counts = ax.twinx()
    for run, curve in curves:
        x = np.array(curve["cutoff"], dtype="datetime64[D]")
        y = np.array([np.nan if v is None else v for v in curve["score"]], dtype=float)
        low = np.array([np.nan if v is None else v for v in curve["low"]], dtype=float)
        high = np.array([np.nan if v is None else v for v in curve["high"]], dtype=float)
        color = run.color
        ax.plot(x, y, marker=".", color=color, label=run.label, linestyle="--" if run.baseline else "-")
        ax.fill_between(x, low, high, color=color, alpha=0.15)
    run, curve = curves[0]
    counts.step(np.array(curve["cutoff"], dtype="datetime64[D]"), curve["n_scored"], where="post", color="#444444",
                alpha=0.35, linewidth=1)
    values = [v for _, curve in curves for k in ("score", "low", "high") for v in curve[k]]
    fit_axis(ax.set_ylim, values, declared)
    if not any(v is not None for _, curve in curves for v in curve["score"]):
        ax.annotate("no number at any cutoff", (0.5, 0.5), xycoords="axes fraction", ha="center", fontsize=9,
                    color="#aa0000")
    counts.set_ylabel("items after the cutoff (first run)", fontsize=8, color="#444444")
    ax.set_xlabel("cutoff (items dated strictly after it)")
    ax.set_ylabel(metric)
    ax.set_title(title, fontsize=10)
    locator = mdates.AutoDateLocator(maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    return fig
