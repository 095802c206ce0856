"""Gradio Space for the `topic_trend` metric (hand-built: `launch_gradio_widget` is broken on gradio >= 4).

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


def score(predictions, references, history, mode, history_papers, forecast_papers):
    """Score JSON lists of predicted/observed forecast counts against history counts."""
    with gradio_errors():
        return load_metric(HERE).compute(predictions=json_arg(predictions, "predictions"),
                                         references=json_arg(references, "references"),
                                         history=json_arg(history, "history"), mode=mode,
                                         history_papers=int(history_papers) if history_papers else None,
                                         forecast_papers=int(forecast_papers) if forecast_papers else None)


def build_demo():
    """Build the interface (no launch)."""
    return metric_interface(
        score,
        inputs=[
            gr.Code(value="[12, 30, 5]", language="json", label="predictions (forecast counts per unit)"),
            gr.Code(value="[10, 35, 4]", language="json", label="references (observed forecast counts)"),
            gr.Code(value="[15, 20, 6]", language="json", label="history counts per unit"),
            gr.Dropdown(["official", "paper"], value="official", label="mode"),
            gr.Number(value=None, label="history_papers (paper mode)"),
            gr.Number(value=None, label="forecast_papers (paper mode)"),
        ],
        title="topic_trend",
        description="Δ-share R², Pearson, Spearman and MAE of topic-growth forecasts (PreScience T6/T7).",
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
