"""Gradio Space for the `scitaste_composite` metric.

`evaluate.utils.launch_gradio_widget` is broken on gradio >= 4 (it uses the removed `gr.inputs` API), so the
interface is built by hand here. Importing this file builds `demo` without launching it; `python app.py`
(what a Space runs) launches it. The metric is loaded lazily on the first request.
"""

import json

import gradio as gr

from sciprobe.interop.metric_space import app_dir, gradio_errors, load_metric, metric_interface

HERE = app_dir(__file__)
EXAMPLE_PREDICTIONS = ("[[65, 75, 55, 45, 35, 25, 15, 95], [45, 25, 35, 65, 55, 45, 85, 15], "
                       "[85, 95, 75, 55, 65, 75, 45, 85]]")
EXAMPLE_REFERENCES = ("[[60, 70, 50, 40, 30, 20, 10, 90], [40, 20, 30, 60, 50, 40, 80, 10], "
                      "[80, 90, 70, 50, 60, 70, 40, 80]]")


def _json(text, what):
    try:
        return json.loads(text)
    except (TypeError, json.JSONDecodeError):
        raise gr.Error(f"{what} is not valid JSON") from None


def score(predictions, references, weights, mae_share, failure_policy):
    """Rows [total, A..G] as JSON; `null` in a prediction row marks a failed answer; weights JSON optional."""
    preds = _json(predictions, "predictions")
    refs = _json(references, "references")
    w = _json(weights, "weights") if weights and weights.strip() else None
    if not preds:
        raise gr.Error("Enter at least one prediction row.")
    with gradio_errors(first_line=True):
        return load_metric(HERE).compute(predictions=preds, references=refs, weights=w,
                                         mae_share=float(mae_share), failure_policy=failure_policy)


def build_demo():
    """Build the interface (no launch)."""
    return metric_interface(
        score,
        inputs=[
            gr.Textbox(value=EXAMPLE_PREDICTIONS, lines=4, label="predictions: JSON rows [total, A..G]"),
            gr.Textbox(value=EXAMPLE_REFERENCES, lines=4, label="references: JSON rows [total, A..G]"),
            gr.Textbox(value="", label="weights: JSON (7 numbers A..G or a dict); empty = placeholder"),
            gr.Slider(0.0, 1.0, value=0.5, step=0.05, label="mae_share (MAE vs RMSE in the error sub-score)"),
            gr.Dropdown(["drop", "zero"], value="drop", label="failure_policy"),
        ],
        title="scitaste_composite",
        description=("SciTaste-Bench Scheme 1 (15/10/15/10/30/20, classes 80/60/40). The sub-score mapping is a "
                     "documented reconstruction; undefined correlations score 0 and are listed."),
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
