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
shown (:mod:`sciprobe.results.evidence`: never a partial or incomplete one). By default (:data:`DEFAULT_MODE`, shown as
"ranked") each task is ranked by its ``TaskSpec.ranked_mode``: a mode that scores every item, so leaving hard items
unanswered cannot raise a rank. Every user-supplied string is passed through
:func:`~sciprobe.leaderboard.validation.display_text`.

What is shown and how it is grouped is the evidence gate's decision (:func:`sciprobe.results.evidence.rank_verdict`,
asked
by :func:`is_shown`, :func:`is_rankable` and :func:`rank_group`): a result after a temporal cutoff is ranked only
among results with the same cutoff (column ``Cutoff``), after the full-data rows; a ``--limit`` sample is a row of
Type "sample (not ranked)", after every ranked model row, in name order; a coverage cell is shown against the
dataset (``20/31 (cutoff)``, ``8/16 (limit)``). The overview has one row per model (owner, prompt
set, cutoff): its rows of the different benchmarks side by side, their data named per benchmark; a second row of
one benchmark (another revision, judge set or version) makes a second overview row, never a mixed cell. Every score
is shown with its metric's declared precision (:func:`sciprobe.scoring.ranges.display_decimals`,
:func:`display_frame`).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sciprobe.results.evidence import SAMPLE_GROUP, coverage_counts, rank_group, rank_verdict
from sciprobe.leaderboard.intervals import CI_SUFFIX, NA, headline_interval
from sciprobe.leaderboard.records import DEFAULT_PROMPT_SET, ResultRecord, identity_key, short_fingerprint
from sciprobe.leaderboard.reference import LABEL as REFERENCE_LABEL
from sciprobe.leaderboard.reference import display_name
from sciprobe.leaderboard.validation import display_text
from sciprobe.core.numbers import finite_number

#: the mode value meaning "each task's ranked mode" (``TaskSpec.ranked_mode``); the dropdown labels it "ranked"
DEFAULT_MODE = "default"
RANKED_LABEL = "ranked"
ROW_COLUMN = "Row"
#: joins the benchmark rows an overview row is made of, in its ``Row`` id
ROW_JOIN = "+"
#: a hidden sort key: the results a row is ranked among (sciprobe.results.evidence.rank_group)
GROUP_KEY = "_group"
#: "model", "reference baseline" on a reference baseline's row (never ranked; the Model column says it too) or
#: "sample (not ranked)" on a row of ``--limit`` samples (sciprobe.results.evidence: shown, never ranked)
TYPE_COLUMN, MODEL_TYPE, SAMPLE_TYPE = "Type", "model", "sample (not ranked)"
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
    decimals: int = 3     # the metric's declared display precision (sciprobe.scoring.ranges)

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
    from sciprobe.core.registry import benchmark_names, get_benchmark
    from sciprobe.scoring.ranges import display_decimals

    out = []
    for bench in benchmarks or benchmark_names():
        for name, task in get_benchmark(bench).tasks.items():
            out.append(TaskColumn(f"{bench}:{name}", name, task.headline, tuple(task.modes),
                                  ranked_mode=task.ranked_mode, decimals=display_decimals(task.metric, task.headline)))
            out.extend(TaskColumn(f"{bench}:{name}", name, metric, tuple(task.modes), primary=False,
                                  ranked_mode=task.ranked_mode, decimals=display_decimals(task.metric, metric))
                       for metric in task.extra_columns)
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
            "cannot raise a rank: " + "; ".join(parts) + ". Only complete results on every item of the pinned data "
            "are ranked (no partial or incomplete run is shown); results after a temporal cutoff are ranked only "
            "among results with the same cutoff (column *Cutoff*), after the full-data rows; a `--limit` sample is "
            f"a row of Type *{SAMPLE_TYPE}*, after them. Coverage `scored/total` (against the whole dataset) is "
            "next to every score.")


def baselines_note(results: Iterable[ResultRecord], benchmark: str | None = None,
                   notes: Sequence[str] = ()) -> str:
    """What a tab says about its reference rows: which baselines they are, which of their cells are n/a because
    a mode cannot be scored on this data, and ``notes`` (baselines not computed here, and why)."""
    from sciprobe.leaderboard.reference import unscored_modes

    shown = [r for r in results if r.is_reference and is_shown(r) and benchmark in (None, r.benchmark)]
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


def _provenance(result: ResultRecord) -> dict[str, Any]:
    return result.provenance if isinstance(result.provenance, dict) else {}


def is_shown(result: ResultRecord) -> bool:
    """Whether a stored result is shown: the evidence gate's verdict (sciprobe.results.evidence). A record that says
    it is
    partial or incomplete (an older store, a hand-edited repo file) is left out; the pinned items were checked when
    it entered the store."""
    return rank_verdict(_provenance(result)).shown


def is_rankable(result: ResultRecord) -> bool:
    """Whether a stored result is ranked (the evidence gate's verdict): shown, and not a ``--limit`` sample."""
    return rank_verdict(_provenance(result)).rankable


def coverage_text(cov: Any, provenance: Any = None) -> str:
    """``scored/total`` from a coverage block, against the dataset (``20/31 (cutoff)``; sciprobe.results.evidence);
    ``?``
    for a count that is no count."""
    from sciprobe.results.evidence import coverage_text as against_dataset

    return against_dataset(cov, provenance)


def score_value(value: Any, decimals: int = 4) -> float | None:
    """A stored score as the tables show it, rounded to ``decimals`` (stored numbers came from outside once: never
    trusted to be sane)."""
    number = finite_number(value)
    return None if number is None else round(number, decimals)


def _cell(result: ResultRecord, mode: str, metric: str,
          column: TaskColumn | None = None) -> tuple[float | None, str, str]:
    """The column's metric (never the result's own headline: one column, one metric), the coverage and the
    metric's 95% interval (``n/a`` when the result has none for it), at the column's declared precision."""
    if mode == DEFAULT_MODE:
        chosen = column.mode_for(mode) if column is not None else result.default_mode
    else:
        chosen = mode
    report = result.scores.get(chosen)
    if not isinstance(report, dict):
        return None, "", NA
    decimals = column.decimals if column is not None else None
    return (score_value(report.get(metric), 4 if decimals is None else decimals),
            coverage_text(report.get("coverage"), _provenance(result)), headline_interval(report, metric, decimals))


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


def overview_rows(rows: dict[str, dict[str, ResultRecord]]) -> dict[str, dict[str, ResultRecord]]:
    """The overview's rows from :func:`group_rows`' (one per benchmark): one per model, owner, prompt set, rank
    group and reference flag, with its rows of the different benchmarks side by side (row id: theirs joined by
    :data:`ROW_JOIN`). A model with two rows of one benchmark (another data revision, judge set or benchmark
    version) gets one overview row per such row, newest first, so no cell ever mixes them."""
    models: dict[tuple[Any, ...], dict[str, list[tuple[str, dict[str, ResultRecord]]]]] = {}
    for row_id, cells in rows.items():
        first = next(iter(cells.values()))
        key = (identity_key(first.model_name), identity_key(first.user), first.prompt_set,
               rank_group(_provenance(first)), first.is_reference)
        models.setdefault(key, {}).setdefault(first.benchmark, []).append((row_id, cells))
    out: dict[str, dict[str, ResultRecord]] = {}
    for per_benchmark in models.values():
        for entries in per_benchmark.values():
            entries.sort(key=lambda entry: max(r.created_time for r in entry[1].values()), reverse=True)
        for depth in range(max(len(entries) for entries in per_benchmark.values())):
            parts = [entries[depth] for entries in per_benchmark.values() if len(entries) > depth]
            out[ROW_JOIN.join(sorted(row_id for row_id, _ in parts))] = {
                ref: result for _, cells in parts for ref, result in cells.items()}
    return out


def _rows_of(results: Iterable[ResultRecord], row_id: str) -> dict[str, ResultRecord] | None:
    """The cells of a (benchmark or overview) row id among the shown results; None when it is not one."""
    rows = group_rows(r for r in results if is_shown(r))
    parts = row_id.split(ROW_JOIN)
    if not all(part in rows for part in parts):
        return None
    return {ref: result for part in parts for ref, result in rows[part].items()}


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
    rows = group_rows(r for r in results if r.task in refs and is_shown(r))
    for row_id, cells in (overview_rows(rows) if overview else rows).items():
        first = next(iter(cells.values()))
        record = identity_cells(first, cells.values())
        scored, total, kinds = 0, 0, set()
        for column in columns:
            result = cells.get(column.ref)
            value, coverage, ci = _cell(result, mode, column.headline, column) if result else (None, "", "")
            record[column.score_header(overview)] = value
            record[column.ci_header(overview)] = ci
            if not column.primary:
                continue
            record[column.coverage_header(overview)] = coverage
            report = result.scores.get(column.mode_for(mode)) if result and coverage else None
            if overview and isinstance(report, dict):
                n_scored, n_total, kind = coverage_counts(report.get("coverage"), _provenance(result))
                scored, total = scored + (n_scored or 0), total + (n_total or 0)
                kinds.update([kind] if kind else [])
        if overview:
            record["Coverage"] = (f"{scored}/{total}" + (f" ({', '.join(sorted(kinds))})" if kinds else "")
                                  if total else "")
        record[ROW_COLUMN] = row_id
        record[GROUP_KEY] = rank_group(_provenance(first))
        records.append(record)
    headers = ["Model"]
    for column in columns:
        headers += [column.score_header(overview), column.ci_header(overview)]
        if column.primary:
            headers.append(column.coverage_header(overview))
    headers += (["Coverage"] if overview else []) + IDENTITY_COLUMNS + [TYPE_COLUMN, ROW_COLUMN, GROUP_KEY]
    frame = pd.DataFrame(records, columns=headers)
    models = frame[TYPE_COLUMN] != REFERENCE_LABEL  # the filters choose models; reference rows always stay
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
    return frame.drop(columns=[*drop, GROUP_KEY]).reset_index(drop=True)


def display_frame(frame: Any, columns: Sequence[TaskColumn], *, overview: bool = False) -> Any:
    """A table as the Space shows it: a pandas Styler that writes every score with its metric's declared number
    of decimals (``0.000``, ``0.385``, ``72.39``; gradio shows its display values and still sorts the numbers);
    a cell with no number stays empty."""
    formats = {c.score_header(overview): f"{{:.{c.decimals}f}}" for c in columns
               if c.score_header(overview) in frame.columns}
    return frame.style.format(formats, na_rep="")


def model_rows(frame: Any) -> Any:
    """The ranked model rows of a table (every table has the ``Type`` column)."""
    return frame[frame[TYPE_COLUMN] == MODEL_TYPE]


def sample_rows(frame: Any) -> Any:
    """The rows of ``--limit`` samples (shown, never ranked)."""
    return frame[frame[TYPE_COLUMN] == SAMPLE_TYPE]


def reference_rows(frame: Any) -> Any:
    """The reference baseline rows of a table."""
    return frame[frame[TYPE_COLUMN] == REFERENCE_LABEL]


def identity_cells(first: ResultRecord, cells: Iterable[ResultRecord]) -> dict[str, Any]:
    """The Model and identity columns of one row (a reference row: marked, no owner, no model cutoff). An overview
    row spanning several benchmarks names each benchmark's version, data and revision (``idrbench 1.0.0;
    sgibench 1.0.0``)."""
    cells = list(cells)
    reference = first.is_reference
    per_benchmark: dict[str, ResultRecord] = {}
    for cell in sorted([first, *cells], key=lambda c: c.benchmark):
        per_benchmark.setdefault(cell.benchmark, cell)
    several = len(per_benchmark) > 1

    def each(value: Any, limit: int) -> str:
        parts = [(f"{bench} " if several else "") + str(value(cell)) for bench, cell in per_benchmark.items()]
        return display_text("; ".join(parts), limit * len(per_benchmark))

    judges = sorted({j for cell in per_benchmark.values() for j in cell.judge_ids})
    return {
        "Model": display_text(display_name(first)),
        "Family": NO_OWNER if reference else display_text(first.model_family, 40),
        "Benchmark": ", ".join(per_benchmark), "Version": each(lambda c: c.benchmark_version, 60),
        "Cutoff": first.cutoff or "none",
        "Judges": display_text(", ".join(judges) or "none", 80 * len(per_benchmark)),
        "Dataset": each(lambda c: short_fingerprint(c.dataset_fingerprint), 60),
        "Revision": each(lambda c: c.revision, 60),
        "Prompts": first.prompt_set, "Knowledge cutoff": NA if reference else first.cutoff_label,
        "Contamination-free": NA if reference else _contamination(cells),
        "Submitter": NO_OWNER if reference else display_text(first.user, 40),
        TYPE_COLUMN: REFERENCE_LABEL if reference else (SAMPLE_TYPE if rank_group(_provenance(first)) == SAMPLE_GROUP
                                                        else MODEL_TYPE),
    }


def prompt_set_rank(name: str) -> int:
    """Where a prompt set's rows are listed: sciprobe's, upstream's, modified upstream templates, anything else."""
    from sciprobe.run.upstream import RECORDED_PROMPT_SETS

    return RECORDED_PROMPT_SETS.index(name) if name in RECORDED_PROMPT_SETS else len(RECORDED_PROMPT_SETS)


def ranked_order(frame: Any, score_cols: Sequence[str]) -> Any:
    """Models first, by score, each prompt set ranked on its own (sciprobe's prompts first, then upstream's, then
    modified upstream templates) and, within it, each rank group (:data:`GROUP_KEY`: the full data first, then each
    cutoff's results); then the rows of ``--limit`` samples by name (never ranked, so never ordered by score); the
    reference rows last, never among the models (sorted by score among themselves)."""
    if frame.empty:
        return frame
    group = frame[GROUP_KEY] if GROUP_KEY in frame.columns else ""
    kind = frame[TYPE_COLUMN].map({MODEL_TYPE: 0, SAMPLE_TYPE: 1}).fillna(2)
    sort = {f"_score{k}": frame[col].where(frame[TYPE_COLUMN] != SAMPLE_TYPE) for k, col in enumerate(score_cols)}
    frame = frame.assign(_kind=kind, _prompts=frame["Prompts"].map(prompt_set_rank).astype(int),
                         _rank_group=group, **sort)
    keys = ["_kind", "_prompts", "_rank_group", *sort, "Model"]
    ascending = [True, True, True, *(False for _ in sort), True]
    return frame.sort_values(keys, ascending=ascending, na_position="last").drop(
        columns=["_kind", "_prompts", "_rank_group", *sort])


def families_of(results: Iterable[ResultRecord]) -> list[str]:
    return sorted({r.model_family for r in results if r.model_family})


def row_provenance(results: Sequence[ResultRecord], row_id: str, task: str | None = None) -> dict[str, Any]:
    """The provenance of a row (every task cell) or of one cell (``task``)."""
    from sciprobe.leaderboard.store import provenance_view

    cells = _rows_of(results, row_id)
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
    from matplotlib.figure import Figure  # not pyplot: no figure manager to import, nothing left open

    fig = Figure(figsize=(7.5, 4.2), dpi=100, layout="constrained")
    ax = fig.subplots()
    plotted = 0
    ranked_rows = list(group_rows(r for r in results if is_rankable(r)).values())  # once, not once per column
    for column in columns:
        points = []
        for cells_of_row in ranked_rows:
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
    ranked, so they get no bars); room left goes to rows of ``--limit`` samples, hatched and labelled as such
    (a demo Space has nothing else)."""
    from matplotlib.figure import Figure  # not pyplot: no figure manager to import, nothing left open
    import numpy as np
    import pandas as pd

    table = leaderboard_frame(results, columns, mode=mode)
    ranked = model_rows(table).head(top)
    frame = pd.concat([ranked, sample_rows(table).head(top - len(ranked))]) if len(ranked) < top else ranked
    fig = Figure(figsize=(7.5, 4.2), dpi=100, layout="constrained")
    ax = fig.subplots()
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
        sample = row[TYPE_COLUMN] == SAMPLE_TYPE
        ax.bar([x[k] + i * width - 0.4 + width / 2 for k, _ in cells], [v for _, v in cells], width,
               label=f"{row['Model']} ({row['Dataset']})" + (" — --limit sample, not ranked" if sample else ""),
               hatch="//" if sample else None)
    ax.set_xticks(x, [c.replace(" ", "\n", 1) for c in score_cols], fontsize=8)
    ax.set_ylabel(f"score ({mode})")
    ax.set_ylim(0, 1.05 if frame[score_cols].max(numeric_only=True).max() <= 1 else None)
    ax.set_title("Per-task headline scores", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    return fig
