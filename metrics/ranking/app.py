"""Gradio Space for the `ranking` metric.

`evaluate.utils.launch_gradio_widget` is broken on gradio >= 4 (it uses the removed `gr.inputs` API), so the
interface is built by hand here. Importing this file builds `demo` without launching it; `python app.py`
(what a Space runs) launches it. The metric is loaded lazily on the first request.
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

EXAMPLE_PREDICTIONS = '[["Beta", "Alpha", "Gamma"], ["q1", "q2", "q3"]]'
EXAMPLE_REFERENCES = '[["Beta"], ["q1", "q3"]]'
EXAMPLE_SCORES = "[[5, 5, 3], [3, 2, 1]]"


def _parse_k_values(text):
    try:
        return [int(part) for part in (text or "").replace(" ", "").split(",") if part]
    except ValueError:
        raise gr.Error("k_values must be comma-separated integers, e.g. 1,3,5,10") from None


def score(predictions, references, scores, tie_policy, k_values):
    """Score JSON lists of ranked ids against JSON lists of relevant ids."""
    kwargs = {
        "predictions": json_arg(predictions, "predictions", required=True),
        "references": json_arg(references, "references", required=True),
        "scores": json_arg(scores, "scores", required=False),
        "tie_policy": tie_policy,
        "k_values": _parse_k_values(k_values) or [1, 3, 5, 10],
    }
    with gradio_errors():
        return load_metric(HERE).compute(**kwargs)


def build_demo():
    """Build the interface (no launch)."""
    return metric_interface(
        score,
        inputs=[
            gr.Code(value=EXAMPLE_PREDICTIONS, language="json", label="predictions: ranked ids per query"),
            gr.Code(value=EXAMPLE_REFERENCES, language="json", label="references: relevant ids per query"),
            gr.Code(value=EXAMPLE_SCORES, language="json", label="scores per candidate (optional)"),
            gr.Dropdown(["as_given", "alphabetical", "expected_rank"], value="alphabetical", label="tie_policy"),
            gr.Textbox(value="1,3,5,10", label="k_values"),
        ],
        title="ranking",
        description=(
            "MRR, nDCG@k, hits@k, recall@k and R-precision with explicit tie policies. 'alphabetical' is the "
            "official IDRBench I2R rule; 'expected_rank' averages exactly over random orders of tied candidates."
        ),
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
