"""Gradio Space for the `idr_classification` metric.

`evaluate.utils.launch_gradio_widget` is broken on gradio >= 4 (it uses the removed `gr.inputs` API), so the
interface is built by hand here. Importing this file builds `demo` without launching it; `python app.py`
(what a Space runs) launches it. The metric is loaded lazily on the first request.
"""

import os

import evaluate
import gradio as gr

HERE = os.path.dirname(os.path.abspath(__file__))
_METRIC = None


def get_metric():
    """Load the metric module that sits next to this file (once)."""
    global _METRIC
    if _METRIC is None:
        _METRIC = evaluate.load(HERE)
    return _METRIC


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
    try:
        return get_metric().compute(
            predictions=predictions,
            references=references,
            mode=mode,
            failure_policy=failure_policy,
            positive=positive,
        )
    except ValueError as exc:
        raise gr.Error(str(exc)) from None


def build_demo():
    """Build the interface (no launch)."""
    return gr.Interface(
        fn=score,
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
        outputs=gr.JSON(label="Scores"),
        title="idr_classification",
        description=(
            "IDRBench Yes/No macro-F1 (IPI, I3). Official mode drops unparsable answers like the released "
            "code; strict mode keeps them and counts them as wrong or as 'No'."
        ),
        flagging_mode="never",
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
