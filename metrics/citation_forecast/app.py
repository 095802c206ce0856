"""Gradio Space for the `citation_forecast` metric (hand-built: `launch_gradio_widget` is broken on gradio >= 4).

Importing this file builds `demo` without launching it; `python app.py` launches it.
"""

import gradio as gr

from sciprobe.interop.metric_space import (
    app_dir,
    gradio_errors,
    json_arg,
    load_metric,
    metric_interface,
)

HERE = app_dir(__file__)


def score(predictions, references, missing):
    """Score JSON lists of predicted and observed citation counts."""
    with gradio_errors():
        return load_metric(HERE).compute(predictions=json_arg(predictions, "predictions"),
                                         references=json_arg(references, "references"), missing=missing)


def build_demo():
    """Build the interface (no launch)."""
    return metric_interface(
        score,
        inputs=[
            gr.Code(value="[1, 2, 3, null]", language="json", label="predictions (counts; null = missing)"),
            gr.Code(value="[1, 2, 4, 7]", language="json", label="references (observed counts)"),
            gr.Dropdown(["exclude", "zero"], value="exclude", label="missing predictions"),
        ],
        title="citation_forecast",
        description="MAE, R², Pearson, Spearman and log1p MAE/Pearson of citation-count forecasts (PreScience T4).",
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
