"""Leaderboard tables and plots from stored results (pure: results in, pandas / matplotlib out; no gradio).

One row per (model, benchmark, benchmark version, dataset fingerprint, dataset revision, cutoff, judge set, prompt
set) — results scored on a different dataset revision or benchmark version never share a row; the ``Revision``
column shows the hub revision (or ``files:<checksum>`` for a local dataset folder), ``Prompts`` the prompt set
(sciprobe's own wording, upstream's templates, or upstream templates that differ from the pin): the sets are never
ranked together (sciprobe's rows first, then the upstream-prompt rows, then the ``upstream-modified`` ones, each
ranked on its own). Every table has, per task, the headline metric of the chosen
mode, its 95% bootstrap interval (``<score column> 95% CI``: ``[low, high]`` or ``n/a``,
:mod:`~sciprobe.leaderboard.intervals`) and its coverage (``scored/total``) next to it; the overview adds a coverage
sum. Reference baselines (:mod:`~sciprobe.leaderboard.reference`) are rows of ``Type`` "reference baseline", listed
after every model row and never ranked with them; the filters (family, contamination-free, search) choose among the
models and leave the reference rows in place. Only complete results are
shown (:mod:`sciprobe.evidence`: never a partial or incomplete one). By default (:data:`DEFAULT_MODE`, shown as
"ranked") each task is ranked by its ``TaskSpec.ranked_mode``: a mode that scores every item, so leaving hard items
unanswered cannot raise a rank. Every user-supplied string is passed through
:func:`~sciprobe.leaderboard.validation.display_text`.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sciprobe.leaderboard.intervals import CI_SUFFIX, NA, headline_interval
from sciprobe.leaderboard.records import DEFAULT_PROMPT_SET, ResultRecord, short_fingerprint
from sciprobe.leaderboard.reference import LABEL as REFERENCE_LABEL
from sciprobe.leaderboard.reference import display_name
from sciprobe.leaderboard.validation import display_text
from sciprobe.numbers import count, finite_number

#: the mode value meaning "each task's ranked mode" (``TaskSpec.ranked_mode``); the dropdown labels it "ranked"
DEFAULT_MODE = "default"
RANKED_LABEL = "ranked"
ROW_COLUMN = "Row"
#: "model", or "reference baseline" on a reference baseline's row (never ranked; the Model column says it too)
TYPE_COLUMN, MODEL_TYPE = "Type", "model"
NO_OWNER = "—"
#: Shown after the scores, so the numbers are visible without scrolling; ``Model`` comes first and is pinned.
IDENTITY_COLUMNS = ["Family", "Benchmark", "Version", "Revision", "Dataset", "Cutoff", "Judges", "Prompts",
                    "Knowledge cutoff", "Contamination-free", "Submitter"]


@dataclass(frozen=True)
class TaskColumn:
    """One task as the tables show it."""

    ref: str              # "idrbench:ipi"
    name: str             # "ipi"
    headline: str         # the metric this column shows: "macro_f1"
    modes: tuple[str, ...]
    primary: bool = True  # the task's headline (carries the coverage); False: one of its extra_columns
    ranked_mode: str = ""  # the mode the default view ranks by (TaskSpec.ranked_mode)

    def score_header(self, overview: bool) -> str:
        return f"{self.ref} {self.headline}" if overview else f"{self.name} {self.headline}"

    def ci_header(self, overview: bool = False) -> str:
        """The column beside the score with its 95% interval (text; the score column stays a sortable number)."""
        return f"{self.score_header(overview)} {CI_SUFFIX}"

    def coverage_header(self, overview: bool = False) -> str:
        return f"{self.ref} coverage" if overview else f"{self.name} coverage"

    def mode_for(self, mode: str) -> str:
        """The mode a cell of this column shows for the view ``mode``."""
        return (self.ranked_mode or self.modes[0]) if mode == DEFAULT_MODE else mode


def task_columns(benchmarks: Sequence[str] | None = None) -> list[TaskColumn]:
    """The registered tasks (of ``benchmarks``, default all), in declaration order."""
    from sciprobe.benchmarks import benchmark_names, get_benchmark

    out = []
    for bench in benchmarks or benchmark_names():
        for name, task in get_benchmark(bench).tasks.items():
            out.append(TaskColumn(f"{bench}:{name}", name, task.headline, tuple(task.modes),
                                  ranked_mode=task.ranked_mode))
            out.extend(TaskColumn(f"{bench}:{name}", name, metric, tuple(task.modes), primary=False,
                                  ranked_mode=task.ranked_mode) for metric in task.extra_columns)
    return out


def mode_choices(columns: Sequence[TaskColumn]) -> list[tuple[str, str]]:
    """(label, value) pairs of the mode dropdown: "ranked" (each task's ranked mode), then every mode."""
    modes: list[str] = []
    for column in columns:
        modes.extend(m for m in column.modes if m not in modes)
    return [(RANKED_LABEL, DEFAULT_MODE), *((m, m) for m in modes)]


def ranking_note(columns: Sequence[TaskColumn]) -> str:
    """What the default view ranks by, per task (shown on every leaderboard tab)."""
    seen: dict[str, list[str]] = {}
    for column in columns:
        if column.primary:
            seen.setdefault(column.mode_for(DEFAULT_MODE), []).append(column.ref)
    parts = [f"**{mode}** ({', '.join(refs)})" for mode, refs in seen.items()]
    return ("Ranked by each task's headline in a mode that scores every item, so leaving hard items unanswered "
            "cannot raise a rank: " + "; ".join(parts) + ". Only complete results are shown (no partial or "
            "incomplete run); coverage `scored/total` is next to every score.")


def baselines_note(results: Iterable[ResultRecord], benchmark: str | None = None,
                   notes: Sequence[str] = ()) -> str:
    """What a tab says about its reference rows: which baselines they are, which of their cells are n/a because
    a mode cannot be scored on this data, and ``notes`` (baselines not computed here, and why)."""
    from sciprobe.leaderboard.reference import unscored_modes

    shown = [r for r in results if r.is_reference and is_complete(r) and benchmark in (None, r.benchmark)]
    described: dict[str, str] = {}
    for result in shown:
        described.setdefault(str(result.reference_baseline.get("name")),
                             str(result.reference_baseline.get("description") or ""))
    if benchmark is None:
        text = ("**Reference baselines** of every benchmark (non-LLM predictors such as random or majority) are rows "
                f"of Type *{REFERENCE_LABEL}*, listed after the models and never ranked with them.")
    elif described:
        items = "; ".join(f"**{display_text(name, 80)}**: {display_text(desc, 300)}"
                          for name, desc in described.items())
        text = (f"**Reference baselines** (rows of Type *{REFERENCE_LABEL}*, after the models, never ranked, owned by "
                f"nobody): {items}.")
    else:
        text = "**Reference baselines:** none on this tab yet."
    unscored = unscored_modes(shown)
    if unscored:
        text += (" n/a (a mode the baseline cannot be scored in on this data, never 0): "
                 + "; ".join(display_text(line, 200) for line in unscored) + ".")
    if notes:
        text += " Notes: " + "; ".join(display_text(note, 300) for note in notes) + "."
    return text


def is_complete(result: ResultRecord) -> bool:
    """Only complete results are shown and ranked (sciprobe.evidence): a stored record that says it is partial or
    incomplete (an older store, a hand-edited repo file) is left out."""
    from sciprobe.evidence import COMPLETE, result_status

    provenance = result.provenance if isinstance(result.provenance, dict) else {}
    return result_status(provenance) == COMPLETE


def coverage_text(cov: Any) -> str:
    """``scored/total`` from a coverage block; ``?`` for a count that is no count."""
    cov = cov if isinstance(cov, dict) else {}
    n_scored, n_items = count(cov.get("n_scored")), count(cov.get("n_items"))
    return f"{'?' if n_scored is None else n_scored}/{'?' if n_items is None else n_items}"


def score_value(value: Any) -> float | None:
    """A stored score as the tables show it (stored numbers came from outside once: never trusted to be sane)."""
    number = finite_number(value)
    return None if number is None else round(number, 4)


def _cell(result: ResultRecord, mode: str, metric: str,
          column: TaskColumn | None = None) -> tuple[float | None, str, str]:
    """The column's metric (never the result's own headline: one column, one metric), the coverage and the
    metric's 95% interval (``n/a`` when the result has none for it)."""
    if mode == DEFAULT_MODE:
        chosen = column.mode_for(mode) if column is not None else result.default_mode
    else:
        chosen = mode
    report = result.scores.get(chosen)
    if not isinstance(report, dict):
        return None, "", NA
    return score_value(report.get(metric)), coverage_text(report.get("coverage")), headline_interval(report, metric)


def _contamination(results: Iterable[ResultRecord]) -> str:
    """yes only when every cell is contamination-free by the registry; no when any cell is not; unverified when
    only a submitter's claim speaks for some cell; else unknown."""
    labels = {r.contamination_label for r in results}
    if labels == {"yes"}:
        return "yes"
    for label in ("no", "unverified"):
        if label in labels:
            return label
    return "unknown"


def group_rows(results: Iterable[ResultRecord]) -> dict[str, dict[str, ResultRecord]]:
    """row id -> task ref -> result (the latest result per cell wins)."""
    rows: dict[str, dict[str, ResultRecord]] = {}
    for result in sorted(results, key=lambda r: r.created_time):
        rows.setdefault(result.row_id, {})[result.task] = result
    return rows


def row_label(cells: dict[str, ResultRecord]) -> str:
    first = next(iter(cells.values()))
    judges = ",".join(first.judge_ids) or "no judge"
    fingerprint = short_fingerprint(first.dataset_fingerprint)
    prompts = "" if first.prompt_set == DEFAULT_PROMPT_SET else f" · {first.prompt_set} prompts"
    return (f"{display_name(first)} · {first.benchmark} v{first.benchmark_version} · "
            f"cutoff {first.cutoff or 'none'} · "
            f"{judges} · data {first.revision}" + ("" if first.revision.endswith(fingerprint) else f" ({fingerprint})")
            + prompts)


def leaderboard_frame(results: Sequence[ResultRecord], columns: Sequence[TaskColumn], *, overview: bool = False,
                      mode: str = DEFAULT_MODE, families: Sequence[str] | None = None,
                      contamination_free_only: bool = False, query: str = "") -> Any:
    """The table for one tab (``overview`` = all benchmarks, one score column per task)."""
    import pandas as pd

    refs = {c.ref for c in columns}
    records = []
    for row_id, cells in group_rows(r for r in results if r.task in refs and is_complete(r)).items():
        record = identity_cells(next(iter(cells.values())), cells.values())
        scored, total = 0, 0
        for column in columns:
            result = cells.get(column.ref)
            value, coverage, ci = _cell(result, mode, column.headline, column) if result else (None, "", "")
            record[column.score_header(overview)] = value
            record[column.ci_header(overview)] = ci
            if not column.primary:
                continue
            record[column.coverage_header(overview)] = coverage
            if overview and result and coverage:
                n_scored, _, n_items = coverage.partition("/")
                scored += int(n_scored) if n_scored.isdigit() else 0
                total += int(n_items) if n_items.isdigit() else 0
        if overview:
            record["Coverage"] = f"{scored}/{total}" if total else ""
        record[ROW_COLUMN] = row_id
        records.append(record)
    headers = ["Model"]
    for column in columns:
        headers += [column.score_header(overview), column.ci_header(overview)]
        if column.primary:
            headers.append(column.coverage_header(overview))
    headers += (["Coverage"] if overview else []) + IDENTITY_COLUMNS + [TYPE_COLUMN, ROW_COLUMN]
    frame = pd.DataFrame(records, columns=headers)
    models = frame[TYPE_COLUMN] == MODEL_TYPE  # the filters choose models; reference rows always stay
    if families:
        frame = frame[~models | frame["Family"].isin([display_text(f, 40) for f in families])]
    if contamination_free_only:
        frame = frame[~models | (frame["Contamination-free"] == "yes")]
    if query and query.strip():
        needle = query.strip().lower()
        frame = frame[~models | frame["Model"].str.lower().str.contains(needle, regex=False)]
    frame = ranked_order(frame, [c.score_header(overview) for c in columns][:1])
    # Drop task columns nobody has scored yet (keep the first), so wide benchmarks stay readable.
    unscored = [c for c in columns[1:] if frame.empty or frame[c.score_header(overview)].isna().all()]
    drop = [c.score_header(overview) for c in unscored] + [c.ci_header(overview) for c in unscored]
    drop += [c.coverage_header(overview) for c in unscored if c.primary]
    return frame.drop(columns=drop).reset_index(drop=True)


def model_rows(frame: Any) -> Any:
    """The model rows of a table (every table has the ``Type`` column)."""
    return frame[frame[TYPE_COLUMN] == MODEL_TYPE]


def reference_rows(frame: Any) -> Any:
    """The reference baseline rows of a table."""
    return frame[frame[TYPE_COLUMN] != MODEL_TYPE]


def identity_cells(first: ResultRecord, cells: Iterable[ResultRecord]) -> dict[str, Any]:
    """The Model and identity columns of one row (a reference row: marked, no owner, no model cutoff)."""
    reference = first.is_reference
    return {
        "Model": display_text(display_name(first)),
        "Family": NO_OWNER if reference else display_text(first.model_family, 40),
        "Benchmark": first.benchmark, "Version": first.benchmark_version, "Cutoff": first.cutoff or "none",
        "Judges": display_text(", ".join(first.judge_ids) or "none", 80),
        "Dataset": short_fingerprint(first.dataset_fingerprint), "Revision": display_text(first.revision, 40),
        "Prompts": first.prompt_set, "Knowledge cutoff": NA if reference else first.cutoff_label,
        "Contamination-free": NA if reference else _contamination(cells),
        "Submitter": NO_OWNER if reference else display_text(first.user, 40),
        TYPE_COLUMN: REFERENCE_LABEL if reference else MODEL_TYPE,
    }


def prompt_set_rank(name: str) -> int:
    """Where a prompt set's rows are listed: sciprobe's, upstream's, modified upstream templates, anything else."""
    from sciprobe.upstream import RECORDED_PROMPT_SETS

    return RECORDED_PROMPT_SETS.index(name) if name in RECORDED_PROMPT_SETS else len(RECORDED_PROMPT_SETS)


def ranked_order(frame: Any, score_cols: Sequence[str]) -> Any:
    """Models first, by score, each prompt set ranked on its own (sciprobe's prompts first, then upstream's, then
    modified upstream templates); the reference rows last, never among the models (sorted by score among
    themselves)."""
    if frame.empty:
        return frame
    frame = frame.assign(_reference=(frame[TYPE_COLUMN] != MODEL_TYPE).astype(int),
                         _prompts=frame["Prompts"].map(prompt_set_rank).astype(int))
    keys = ["_reference", "_prompts", *score_cols, "Model"]
    ascending = [True, True, *(False for _ in score_cols), True]
    return frame.sort_values(keys, ascending=ascending, na_position="last").drop(columns=["_reference", "_prompts"])


def families_of(results: Iterable[ResultRecord]) -> list[str]:
    return sorted({r.model_family for r in results if r.model_family})


def row_provenance(results: Sequence[ResultRecord], row_id: str, task: str | None = None) -> dict[str, Any]:
    """The provenance of a row (every task cell) or of one cell (``task``)."""
    from sciprobe.leaderboard.store import provenance_view

    cells = group_rows(r for r in results if is_complete(r)).get(row_id)
    if not cells:
        return {"error": f"no leaderboard row {row_id!r}"}
    if task:
        if task not in cells:
            return {"error": f"row {row_id} has no result for {task}"}
        return provenance_view(cells[task])
    return {"row_id": row_id, "row": row_label(cells), "cells": {ref: provenance_view(r) for ref, r in cells.items()}}


def _to_date(value: str | None) -> dt.date | None:
    if not value:
        return None
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        return None


def cutoff_plot(results: Sequence[ResultRecord], columns: Sequence[TaskColumn], mode: str = DEFAULT_MODE):
    """Headline score against the model's knowledge cutoff, one marker series per task."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=100, layout="constrained")
    plotted = 0
    for column in columns:
        points = []
        for cells_of_row in group_rows(r for r in results if is_complete(r)).values():
            result = cells_of_row.get(column.ref)
            date = _to_date(result.model_cutoff) if result else None
            value = _cell(result, mode, column.headline, column)[0] if result else None
            if date is not None and value is not None:
                points.append((date, value, result.model_name))
        if points:
            ax.scatter([p[0] for p in points], [p[1] for p in points], label=column.score_header(True), s=40)
            for date, value, name in points:
                ax.annotate(name.rsplit("/", 1)[-1][:24], (date, value), fontsize=7, xytext=(4, 3),
                            textcoords="offset points")
            plotted += len(points)
    values = [c.get_offsets()[:, 1] for c in ax.collections]
    if values and all(0 <= v <= 1 for arr in values for v in arr):
        ax.set_ylim(-0.02, 1.05)
    if not plotted:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "Score vs knowledge cutoff\n\nno results with a known model cutoff yet", ha="center",
                va="center", fontsize=10, color="0.35", transform=ax.transAxes)
        return fig
    ax.margins(x=0.12)
    ax.set_xlabel("model knowledge cutoff")
    ax.set_ylabel(f"headline score ({mode})")
    ax.set_title("Score vs knowledge cutoff", fontsize=10)
    ax.grid(alpha=0.3)
    if plotted:
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=3, frameon=False)
        fig.autofmt_xdate()
    return fig


def task_bars(results: Sequence[ResultRecord], columns: Sequence[TaskColumn], mode: str = DEFAULT_MODE,
              top: int = 8):
    """Grouped bars: the headline score of each task for the best ``top`` model rows (reference rows are not
    ranked, so they get no bars)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import numpy as np

    frame = model_rows(leaderboard_frame(results, columns, mode=mode))
    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=100, layout="constrained")
    score_cols = [c for c in (col.score_header(False) for col in columns) if c in frame.columns]
    score_cols = [c for c in score_cols if not frame[c].isna().all()] if not frame.empty else []
    if frame.empty or not score_cols:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "Per-task headline scores\n\nno results yet: submit predictions in the Submit tab",
                ha="center", va="center", fontsize=10, color="0.35", transform=ax.transAxes)
        return fig
    frame = frame.head(top)
    x = np.arange(len(score_cols))
    width = 0.8 / max(len(frame), 1)
    for i, (_, row) in enumerate(frame.iterrows()):
        # a cell with no number gets no bar (never a bar of height 0: n/a is not a score of zero)
        cells = [(k, float(row[c])) for k, c in enumerate(score_cols)
                 if row[c] is not None and not (isinstance(row[c], float) and math.isnan(row[c]))]
        ax.bar([x[k] + i * width - 0.4 + width / 2 for k, _ in cells], [v for _, v in cells], width,
               label=f"{row['Model']} ({row['Dataset']})")
    ax.set_xticks(x, [c.replace(" ", "\n", 1) for c in score_cols], fontsize=8)
    ax.set_ylabel(f"score ({mode})")
    ax.set_ylim(0, 1.05 if frame[score_cols].max(numeric_only=True).max() <= 1 else None)
    ax.set_title("Per-task headline scores", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    return fig
