"""Gradio Space for the `topic_trend` metric (hand-built: `launch_gradio_widget` is broken on gradio >= 4).

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


def score(predictions, references, history, mode, history_papers, forecast_papers):
    """Score JSON lists of predicted/observed forecast counts against history counts."""
    try:
        return get_metric().compute(predictions=_parse(predictions, "predictions"),
                                    references=_parse(references, "references"),
                                    history=_parse(history, "history"), mode=mode,
                                    history_papers=int(history_papers) if history_papers else None,
                                    forecast_papers=int(forecast_papers) if forecast_papers else None)
    except ValueError as exc:
        raise gr.Error(str(exc)) from None


def build_demo():
    """Build the interface (no launch)."""
    return gr.Interface(
        fn=score,
        inputs=[
            gr.Code(value="[12, 30, 5]", language="json", label="predictions (forecast counts per unit)"),
            gr.Code(value="[10, 35, 4]", language="json", label="references (observed forecast counts)"),
            gr.Code(value="[15, 20, 6]", language="json", label="history counts per unit"),
            gr.Dropdown(["official", "paper"], value="official", label="mode"),
            gr.Number(value=None, label="history_papers (paper mode)"),
            gr.Number(value=None, label="forecast_papers (paper mode)"),
        ],
        outputs=gr.JSON(label="Scores"),
        title="topic_trend",
        description="Δ-share R², Pearson, Spearman and MAE of topic-growth forecasts (PreScience T6/T7).",
        flagging_mode="never",
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
