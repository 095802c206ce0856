"""The *Breakdowns* tab of the Space: pick a task, a mode and a breakdown; see every row's score per group with
its 95% interval and coverage (:mod:`~sciprobe.leaderboard.breakdowns`). Built inside ``app.build_app``'s Blocks;
gradio is imported by the caller."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sciprobe.leaderboard import breakdowns, tables


class BreakdownView:
    """The tab's logic without gradio: choices and the table for the service's tasks and stored results."""

    def __init__(self, service: Any) -> None:
        self.service = service
        self.columns = {c.ref: c for c in breakdowns.breakdown_columns(service.all_columns)}

    def task_choices(self) -> list[str]:
        return list(self.columns)

    def first_task(self) -> str | None:
        return next(iter(self.columns), None)

    def mode_choices(self, task: str | None) -> list[tuple[str, str]]:
        column = self.columns.get(task or "")
        return tables.mode_choices([column]) if column else [(tables.RANKED_LABEL, tables.DEFAULT_MODE)]

    def breakdown_choices(self, task: str | None) -> list[tuple[str, str]]:
        return breakdowns.breakdowns_of(task) if task in self.columns else []

    def first_breakdown(self, task: str | None) -> str | None:
        choices = self.breakdown_choices(task)
        return choices[0][1] if choices else None

    def table(self, task: str | None, mode: str | None, breakdown: str | None):
        column = self.columns.get(task or "")
        if column is None:
            import pandas as pd

            return pd.DataFrame(columns=["Model", breakdowns.ALL_ITEMS])
        chosen = breakdown if breakdown in {name for _, name in self.breakdown_choices(task)} \
            else self.first_breakdown(task)
        return breakdowns.breakdown_frame(self.service.results(), column, mode or tables.DEFAULT_MODE, chosen or "")

    def note(self, task: str | None, mode: str | None, breakdown: str | None, frame: Any = None) -> str:
        column = self.columns.get(task or "")
        groups = (frame if frame is not None else self.table(task, mode, breakdown)).attrs.get("groups")
        return breakdowns.breakdown_note(column, mode or tables.DEFAULT_MODE, breakdown or self.first_breakdown(task)
                                         or "", groups)

    def view(self, task: str | None, mode: str | None, breakdown: str | None) -> list[Any]:
        """[note, table] for the current choices, derived once per version of the results."""
        def compute() -> tuple[str, Any]:
            frame = self.table(task, mode, breakdown)
            return self.note(task, mode, breakdown, frame), frame

        note, frame = self.service.derived(("breakdown", task, mode, breakdown), compute)
        return [note, frame.copy()]


@dataclass
class BreakdownTab:
    """The tab's components (the app's refresh re-renders ``table`` from the current choices)."""

    task: Any
    mode: Any
    breakdown: Any
    note: Any
    table: Any
    view: BreakdownView

    def refresh(self, task: str | None, mode: str | None, breakdown: str | None) -> list[Any]:
        return self.view.view(task, mode, breakdown)


def build_breakdown_tab(gr: Any, service: Any, banner: Any) -> BreakdownTab:
    """The tab's components and events (inside an open ``gr.Blocks``)."""
    view = BreakdownView(service)
    task0 = view.first_task()
    with gr.Tab("Breakdowns", id="tab-breakdowns"):
        banner("breakdowns")
        with gr.Row():
            task = gr.Dropdown(view.task_choices(), value=task0, label="Task", scale=2, elem_id="breakdown-task")
            mode = gr.Dropdown(view.mode_choices(task0), value=tables.DEFAULT_MODE, label="Mode", scale=1,
                               min_width=140, elem_id="breakdown-mode")
            by = gr.Dropdown(view.breakdown_choices(task0), value=view.first_breakdown(task0), label="Breakdown",
                             scale=1, min_width=180, elem_id="breakdown-by")
        first_note, first_frame = view.view(task0, tables.DEFAULT_MODE, view.first_breakdown(task0))
        note = gr.Markdown(first_note, elem_classes=["sp-note"], elem_id="breakdown-note")
        table = gr.Dataframe(first_frame, datatype="auto",
                             interactive=False, show_search="search", pinned_columns=1, max_height=420, wrap=False,
                             label="Per-group scores", buttons=["copy", "fullscreen"], elem_id="table-breakdowns",
                             elem_classes=["sp-pinned"])

        def on_task(task_value: str | None):
            first = view.first_breakdown(task_value)
            return (gr.update(choices=view.mode_choices(task_value), value=tables.DEFAULT_MODE),
                    gr.update(choices=view.breakdown_choices(task_value), value=first),
                    *view.view(task_value, tables.DEFAULT_MODE, first))

        task.change(on_task, inputs=task, outputs=[mode, by, note, table], api_name="breakdown_task")
        gr.on([mode.change, by.change], view.view, inputs=[task, mode, by], outputs=[note, table],
              api_name="breakdown")
    return BreakdownTab(task, mode, by, note, table, view)


__all__ = ["BreakdownTab", "BreakdownView", "build_breakdown_tab"]
