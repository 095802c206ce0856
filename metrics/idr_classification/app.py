"""Gradio Space for the `idr_classification` metric.

`evaluate.utils.launch_gradio_widget` is broken on gradio >= 4 (it uses the removed `gr.inputs` API), so the
interface is built by hand here. Importing this file builds `demo` without launching it; `python app.py`
(what a Space runs) launches it. The metric is loaded lazily on the first request.
"""

import gradio as gr

from sciprobe.interop.metric_space import app_dir, gradio_errors, load_metric, metric_interface

HERE = app_dir(__file__)


def _cell(value):
    if value is None:
        return ""
    text = str(value).strip()
    return "" if text.lower() in ("nan", "none") else text


def score(table, mode, failure_policy, positive):
    """Score a two-column table (predictions, references); an empty prediction cell = unparsable answer."""
    rows = [row for row in (table or []) if any(_cell(c) for c in row)]
    if not rows:
        raise gr.Error("Enter at least one row of predictions and references.")
    predictions = [_cell(row[0]) for row in rows]
    references = [_cell(row[1]) if len(row) > 1 else "" for row in rows]
    with gradio_errors():
        return load_metric(HERE).compute(
            predictions=predictions,
            references=references,
            mode=mode,
            failure_policy=failure_policy,
            positive=positive,
        )


def build_demo():
    """Build the interface (no launch)."""
    return metric_interface(
        score,
        inputs=[
            gr.Dataframe(
                value=[["yes", "yes"], ["no", "yes"], ["", "no"], ["yes", "no"]],
                headers=["predictions", "references"],
                datatype=["str", "str"],
                type="array",
                label="Answers (leave a prediction empty when it could not be parsed)",
            ),
            gr.Dropdown(["official", "strict"], value="official", label="mode"),
            gr.Dropdown(["wrong", "no"], value="wrong", label="failure_policy (strict mode)"),
            gr.Dropdown(["yes", "no"], value="yes", label="positive class"),
        ],
        title="idr_classification",
        description=(
            "IDRBench Yes/No macro-F1 (IPI, I3). Official mode drops unparsable answers like the released "
            "code; strict mode keeps them and counts them as wrong or as 'No'."
        ),
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
