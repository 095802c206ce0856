"""The breakdown view: one task, one mode, one way of grouping its items (discipline, question type, team size
...), one row per leaderboard row with the score of every group, its 95% interval and its coverage (pure: results
in, pandas out).

The numbers are the results files' own breakdown blocks (``scores[MODE]["breakdowns"]``, ``docs/results.md``),
stored with each result; nothing is recomputed here. A group appears only where a result has items in it: a
group column exists when some row has the group, and a row without it leaves the cell empty — absent, never 0. A
group whose score is undefined (e.g. official macro-F1 on a group of one class) is an empty score with ``n/a`` as
its interval and its coverage beside it. Complete results only; reference rows after the models, as in every
table (:func:`~sciprobe.leaderboard.tables.ranked_order`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from sciprobe.leaderboard.intervals import CI_SUFFIX, headline_interval, interval_text
from sciprobe.leaderboard.records import ResultRecord
from sciprobe.leaderboard.tables import (
    DEFAULT_MODE,
    IDENTITY_COLUMNS,
    ROW_COLUMN,
    TYPE_COLUMN,
    TaskColumn,
    coverage_text,
    group_rows,
    identity_cells,
    is_shown,
    ranked_order,
    score_value,
)
from sciprobe.leaderboard.validation import display_text
from sciprobe.core.numbers import count

ALL_ITEMS = "All items"
#: a results file with more groups than this (outside input) shows the first ones only
MAX_GROUPS = 100
HEADER_CHARS = 20  # with " 95% CI" a header still fits the width gradio gives a column
SHOWN_IDENTITY = ["Benchmark", "Version", "Revision", "Dataset", "Prompts", "Submitter"]


def breakdowns_of(ref: str) -> list[tuple[str, str]]:
    """(title, name) of every breakdown ``ref``'s declaration has (``TaskSpec.breakdowns``)."""
    from sciprobe.core.registry import resolve_task

    return [(b.title or b.name, b.name) for b in resolve_task(ref)[1].breakdowns]


def breakdown_columns(columns: Sequence[TaskColumn]) -> list[TaskColumn]:
    """The tasks (headline columns) that declare breakdowns, in table order."""
    return [c for c in columns if c.primary and breakdowns_of(c.ref)]


def _groups(report: Any, breakdown: str) -> dict[str, Mapping[str, Any]]:
    """A stored report's groups of ``breakdown`` ({} when it has none, or a block of the wrong shape)."""
    block = report.get("breakdowns") if isinstance(report, Mapping) else None
    entry = block.get(breakdown) if isinstance(block, Mapping) else None
    groups = entry.get("groups") if isinstance(entry, Mapping) else None
    if not isinstance(groups, Mapping):
        return {}
    return {str(label): group for label, group in groups.items()
            if isinstance(group, Mapping) and count(group.get("n_items"))}  # a group of no items is absent


def _natural(label: str) -> tuple:
    """Groups in reading order: numbers by value (team size 1, 2, 3-4, 5-9, 10+), then text; ``unknown`` last."""
    match = re.match(r"\s*(\d+)", label)
    return (label == "unknown", int(match.group(1)) if match else float("inf"), label.casefold())


def _header(label: str, taken: set[str]) -> str:
    """A group's column header: the label, shortened (a discipline can be 60 characters and each group has three
    columns), never the name of another column."""
    short = label if len(label) <= HEADER_CHARS else label[:HEADER_CHARS - 1].rstrip() + "…"
    text = display_text(short, HEADER_CHARS + 8)
    fixed = {"Model", ALL_ITEMS, ROW_COLUMN, TYPE_COLUMN, *IDENTITY_COLUMNS}
    header, n = text, 1
    while header in fixed or header in taken:
        n += 1
        header = f"{text} ({n})"
    taken.add(header)
    return header


def breakdown_frame(results: Sequence[ResultRecord], column: TaskColumn, mode: str = DEFAULT_MODE,
                    breakdown: str = "") -> Any:
    """The table of the breakdown view (see the module docstring). Per group three columns: the score (headed by
    the group's label, shortened), ``<label> 95% CI`` and ``<label> coverage``; ``frame.attrs["groups"]`` maps each
    group label to its header, in column order."""
    import pandas as pd

    chosen = column.mode_for(mode or DEFAULT_MODE)
    records, labels, taken = [], {}, set()
    for row_id, cells in group_rows(r for r in results if r.task == column.ref and is_shown(r)).items():
        result = cells[column.ref]
        report = result.scores.get(chosen)
        report = report if isinstance(report, Mapping) else {}
        record = identity_cells(result, [result])
        places = column.decimals  # the metric's declared precision, as in the leaderboard tables
        record.update({ALL_ITEMS: score_value(report.get(column.headline), places),
                       f"{ALL_ITEMS} {CI_SUFFIX}": headline_interval(report, column.headline, places),
                       f"{ALL_ITEMS} coverage": coverage_text(report.get("coverage"), result.provenance)
                       if report else ""})
        for label, group in _groups(report, breakdown).items():
            header = labels[label] if label in labels else labels.setdefault(label, _header(label, taken))
            record[header] = score_value(group.get("score"), places)
            record[f"{header} {CI_SUFFIX}"] = interval_text(group.get("ci_low"), group.get("ci_high"),
                                                            decimals=places)
            record[f"{header} coverage"] = coverage_text(group)
        record[ROW_COLUMN] = row_id
        records.append(record)
    headers = ["Model", ALL_ITEMS, f"{ALL_ITEMS} {CI_SUFFIX}", f"{ALL_ITEMS} coverage"]
    for label in sorted(labels, key=_natural)[:MAX_GROUPS]:
        headers += [labels[label], f"{labels[label]} {CI_SUFFIX}", f"{labels[label]} coverage"]
    headers += SHOWN_IDENTITY + [TYPE_COLUMN, ROW_COLUMN]
    frame = ranked_order(pd.DataFrame(records, columns=headers), [ALL_ITEMS]).reset_index(drop=True)
    frame.attrs["groups"] = {label: labels[label] for label in sorted(labels, key=_natural)[:MAX_GROUPS]}
    return frame


def breakdown_note(column: TaskColumn | None, mode: str, breakdown: str,
                   groups: Mapping[str, str] | None = None) -> str:
    """The lines above the table: what is shown, and the full name of every group whose header is shortened
    (``groups``: a breakdown frame's ``attrs["groups"]``)."""
    if column is None:
        return "No task on this leaderboard declares breakdowns."
    titles = dict((name, title) for title, name in breakdowns_of(column.ref))
    text = (f"**{column.ref}** · {column.headline} in mode **{column.mode_for(mode or DEFAULT_MODE)}** by "
            f"**{titles.get(breakdown, breakdown)}**: per group the score, its 95% interval and its coverage "
            "(scored/total). A group a row has no items in is left empty, never 0; `n/a`: no number or no interval "
            "for that group. Reference baselines are listed after the models.")
    shortened = [(header, label) for label, header in (groups or {}).items() if header != display_text(label)]
    if shortened:
        text += " Groups: " + "; ".join(f"*{header}* = {display_text(label, 200)}" for header, label in shortened)
    return text


__all__ = ["ALL_ITEMS", "breakdown_columns", "breakdown_frame", "breakdown_note", "breakdowns_of"]
