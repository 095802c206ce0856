"""Gradio Space for the `text_similarity` metric (hand-built: `launch_gradio_widget` is broken on gradio >= 4).

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


def score(predictions, references, use_bertscore):
    """Score JSON lists of generated and gold texts."""
    metrics = ["rougeL", "bertscore"] if use_bertscore else ["rougeL"]
    with gradio_errors():
        return load_metric(HERE).compute(predictions=json_arg(predictions, "predictions"),
                                         references=json_arg(references, "references"), metrics=metrics)


def build_demo():
    """Build the interface (no launch)."""
    return metric_interface(
        score,
        inputs=[
            gr.Code(value='["Sparse experts for retrieval. We route queries to experts."]', language="json",
                    label="predictions (title + abstract)"),
            gr.Code(value='["Mixture of sparse experts for dense retrieval. Queries are routed."]',
                    language="json", label="references (gold title + abstract)"),
            gr.Checkbox(value=False, label="also BERTScore (bundled MiniLM, offline)"),
        ],
        title="text_similarity",
        description="ROUGE-L (identical to rouge-score with stemming) and BERTScore for PreScience T1.",
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
