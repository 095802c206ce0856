"""Gradio Space for the `text_similarity` metric (hand-built: `launch_gradio_widget` is broken on gradio >= 4).

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


def score(predictions, references, use_bertscore):
    """Score JSON lists of generated and gold texts."""
    metrics = ["rougeL", "bertscore"] if use_bertscore else ["rougeL"]
    try:
        return get_metric().compute(predictions=_parse(predictions, "predictions"),
                                    references=_parse(references, "references"), metrics=metrics)
    except ValueError as exc:
        raise gr.Error(str(exc)) from None


def build_demo():
    """Build the interface (no launch)."""
    return gr.Interface(
        fn=score,
        inputs=[
            gr.Code(value='["Sparse experts for retrieval. We route queries to experts."]', language="json",
                    label="predictions (title + abstract)"),
            gr.Code(value='["Mixture of sparse experts for dense retrieval. Queries are routed."]',
                    language="json", label="references (gold title + abstract)"),
            gr.Checkbox(value=False, label="also BERTScore (bundled MiniLM, offline)"),
        ],
        outputs=gr.JSON(label="Scores"),
        title="text_similarity",
        description="ROUGE-L (identical to rouge-score with stemming) and BERTScore for PreScience T1.",
        flagging_mode="never",
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
