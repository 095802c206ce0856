"""The papers' published numbers on the Space: rows labelled *reported in the paper (Table N)* (pure: published
numbers in, a pandas frame and its HTML out; no gradio).

Each benchmark tab shows, under its leaderboard, one row per model and paper table with the numbers that table
prints for the tab's task columns (the same metric as the column; comparable numbers on the whole test set only,
:func:`sciprobe.results.published.reported_numbers`). They are a table of their own, like a reference: never ranked,
owned by
nobody (no submitter, no family), never in the plots, and each row links to its source (the paper, else the
benchmark's homepage). ``sciprobe paper BENCH`` lists every number, the ones marked not comparable included.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from sciprobe.leaderboard.tables import NO_OWNER, TYPE_COLUMN, TaskColumn
from sciprobe.leaderboard.validation import display_text

__all__ = ["SOURCE_COLUMN", "reported_frame", "reported_html", "reported_note"]

SOURCE_COLUMN = "Source"


def _rows(benchmark: str, columns: Sequence[TaskColumn]) -> dict[tuple[str, str], dict[str, Any]]:
    from sciprobe.results.published import published_file, reported_label, reported_numbers, source_url

    metrics = {(c.name, c.headline): c.score_header(False) for c in columns}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for number in reported_numbers(benchmark):
        header = metrics.get((number.task or "", number.metric))
        if header is None:
            continue
        row = rows.setdefault((number.model, number.source.table), {
            "Model": display_text(number.model), TYPE_COLUMN: reported_label(number), "Submitter": NO_OWNER,
            "_href": source_url(number),
            SOURCE_COLUMN: f"{published_file(benchmark).paper.version}, {number.source.table}"})
        row.setdefault(header, number.printed)  # as printed: the paper's precision and markers
    return rows


def reported_frame(benchmark: str, columns: Sequence[TaskColumn]) -> Any:
    """One row per (model, paper table): the printed value under each task column it reports, in the paper's
    order (no score sort: these rows are never ranked). Hidden ``_href``: the row's source link."""
    import pandas as pd

    rows = list(_rows(benchmark, columns).values())
    headers = [c.score_header(False) for c in columns]
    used = [h for h in dict.fromkeys(headers) if any(h in row for row in rows)]
    return pd.DataFrame(rows, columns=["Model", *used, TYPE_COLUMN, "Submitter", SOURCE_COLUMN, "_href"]).fillna("")


def reported_html(benchmark: str, columns: Sequence[TaskColumn]) -> str:
    """:func:`reported_frame` as an HTML table (every cell escaped; the source cell a link)."""
    frame = reported_frame(benchmark, columns)
    if frame.empty:
        return "<p class=sp-note>The paper reports no number for these task columns.</p>"
    shown = [c for c in frame.columns if c != "_href"]
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in shown)
    body = []
    for _, row in frame.iterrows():
        cells = []
        for column in shown:
            text = html.escape(str(row[column]))
            if column == SOURCE_COLUMN and row["_href"]:
                text = f"<a href=\"{html.escape(row['_href'])}\" target=\"_blank\" rel=\"noopener\">{text}</a>"
            cells.append(f"<td>{text}</td>")
        body.append(f"<tr class=sp-reported>{''.join(cells)}</tr>")
    return f"<table class=sp-reported-table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def reported_note(benchmark: str) -> str:
    """The line above the rows: what they are and are not."""
    from sciprobe.results.published import published_file

    try:
        paper = published_file(benchmark).paper
    except Exception:  # noqa: BLE001 - a benchmark without published numbers only loses this note
        return "**Reported in the paper:** no published numbers for this benchmark."
    return (f"**Reported in the paper** — *{display_text(paper.title, 200)}* ({display_text(paper.version, 80)}): "
            "the numbers its tables print for these columns, as printed. Rows of Type *reported in the paper "
            "(Table N)*: not submissions, never ranked, owned by nobody; each links to its source. A mark after a "
            "value (such as `*`) is the paper's own (`sciprobe paper BENCH` says what it means). "
            "`sciprobe compare RESULTS --paper` says whether a run reproduces them.")
