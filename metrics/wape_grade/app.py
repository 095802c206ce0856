"""Gradio Space for the `wape_grade` metric.

`evaluate.utils.launch_gradio_widget` is broken on gradio >= 4 (it uses the removed `gr.inputs` API), so the
interface is built by hand here. Importing this file builds `demo` without launching it; `python app.py`
(what a Space runs) launches it. The metric is loaded lazily on the first request.
"""

import json

import gradio as gr

from sciprobe.interop.metric_space import app_dir, gradio_errors, load_metric, metric_interface

HERE = app_dir(__file__)
EXAMPLE_TABLE = [["68", "72", "physics"], ["60", "55", "physics"], ["35", "38", "physics"],
                 ["75", "61", "biology"], ["58", "44", "biology"], ["", "27", "biology"]]


def _cell(value):
    text = "" if value is None else str(value).strip()
    return "" if text.lower() in ("nan", "none") else text


def _number(text, what, row):
    try:
        return float(text)
    except ValueError:
        raise gr.Error(f"row {row + 1}: {what} {text!r} is not a number") from None


def score(table, failure_policy, knots_json):
    """Score a table (prediction, reference, group); an empty prediction cell = a failed answer."""
    rows = [row for row in (table or []) if any(_cell(c) for c in row)]
    if not rows:
        raise gr.Error("Enter at least one row of predictions and references.")
    predictions, references, groups = [], [], []
    for i, row in enumerate(rows):
        cells = [_cell(c) for c in row] + ["", "", ""]
        predictions.append(_number(cells[0], "prediction", i) if cells[0] else None)
        references.append(_number(cells[1], "reference", i))
        groups.append(cells[2] or "all")
    knots = "scitaste-v1-reconstructed"
    if knots_json and knots_json.strip():
        try:
            knots = json.loads(knots_json)
        except json.JSONDecodeError:
            raise gr.Error("knots must be JSON, e.g. [[0, 100], [5, 90], [100, 0]]") from None
    with gradio_errors():
        return load_metric(HERE).compute(predictions=predictions, references=references, groups=groups,
                                         failure_policy=failure_policy, knots=knots)


def build_demo():
    """Build the interface (no launch)."""
    return metric_interface(
        score,
        inputs=[
            gr.Dataframe(value=EXAMPLE_TABLE, headers=["prediction", "reference", "group"],
                         datatype=["str", "str", "str"], type="array",
                         label="Scores 0-100 (leave a prediction empty when the answer failed)"),
            gr.Dropdown(["drop", "zero"], value="drop", label="failure_policy"),
            gr.Textbox(value="", label="knots (JSON [[wape_pct, score], ...]; empty = scitaste-v1-reconstructed)"),
        ],
        title="wape_grade",
        description=("SciTaste-Bench Scheme 2: WAPE = sum|p-g| / sum g, grade A-F (paper bands) and a 0-100 score "
                     "from reconstructed piecewise-linear knots; failures dropped and counted."),
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
