"""Gradio Space for the `citation_forecast` metric (hand-built: `launch_gradio_widget` is broken on gradio >= 4).

Importing this file builds `demo` without launching it; `python app.py` launches it.
"""

import json
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


def _parse(text, name):
    try:
        return json.loads(text or "")
    except json.JSONDecodeError as exc:
        raise gr.Error(f"{name} is not valid JSON: {exc}") from None


def score(predictions, references, missing):
    """Score JSON lists of predicted and observed citation counts."""
    try:
        return get_metric().compute(predictions=_parse(predictions, "predictions"),
                                    references=_parse(references, "references"), missing=missing)
    except ValueError as exc:
        raise gr.Error(str(exc)) from None


def build_demo():
    """Build the interface (no launch)."""
    return gr.Interface(
        fn=score,
        inputs=[
            gr.Code(value="[1, 2, 3, null]", language="json", label="predictions (counts; null = missing)"),
            gr.Code(value="[1, 2, 4, 7]", language="json", label="references (observed counts)"),
            gr.Dropdown(["exclude", "zero"], value="exclude", label="missing predictions"),
        ],
        outputs=gr.JSON(label="Scores"),
        title="citation_forecast",
        description="MAE, R², Pearson, Spearman and log1p MAE/Pearson of citation-count forecasts (PreScience T4).",
        flagging_mode="never",
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
