"""Gradio Space for the `ranking` metric.

`evaluate.utils.launch_gradio_widget` is broken on gradio >= 4 (it uses the removed `gr.inputs` API), so the
interface is built by hand here. Importing this file builds `demo` without launching it; `python app.py`
(what a Space runs) launches it. The metric is loaded lazily on the first request.
"""

import json
import os

import evaluate
import gradio as gr

HERE = os.path.dirname(os.path.abspath(__file__))
_METRIC = None

EXAMPLE_PREDICTIONS = '[["Beta", "Alpha", "Gamma"], ["q1", "q2", "q3"]]'
EXAMPLE_REFERENCES = '[["Beta"], ["q1", "q3"]]'
EXAMPLE_SCORES = "[[5, 5, 3], [3, 2, 1]]"


def get_metric():
    """Load the metric module that sits next to this file (once)."""
    global _METRIC
    if _METRIC is None:
        _METRIC = evaluate.load(HERE)
    return _METRIC


def _parse_json(text, name, required=True):
    text = (text or "").strip()
    if not text:
        if required:
            raise gr.Error(f"{name} is empty.")
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise gr.Error(f"{name} is not valid JSON: {exc}") from None


def _parse_k_values(text):
    try:
        return [int(part) for part in (text or "").replace(" ", "").split(",") if part]
    except ValueError:
        raise gr.Error("k_values must be comma-separated integers, e.g. 1,3,5,10") from None


def score(predictions, references, scores, tie_policy, k_values):
    """Score JSON lists of ranked ids against JSON lists of relevant ids."""
    kwargs = {
        "predictions": _parse_json(predictions, "predictions"),
        "references": _parse_json(references, "references"),
        "scores": _parse_json(scores, "scores", required=False),
        "tie_policy": tie_policy,
        "k_values": _parse_k_values(k_values) or [1, 3, 5, 10],
    }
    try:
        return get_metric().compute(**kwargs)
    except ValueError as exc:
        raise gr.Error(str(exc)) from None


def build_demo():
    """Build the interface (no launch)."""
    return gr.Interface(
        fn=score,
        inputs=[
            gr.Code(value=EXAMPLE_PREDICTIONS, language="json", label="predictions: ranked ids per query"),
            gr.Code(value=EXAMPLE_REFERENCES, language="json", label="references: relevant ids per query"),
            gr.Code(value=EXAMPLE_SCORES, language="json", label="scores per candidate (optional)"),
            gr.Dropdown(["as_given", "alphabetical", "expected_rank"], value="alphabetical", label="tie_policy"),
            gr.Textbox(value="1,3,5,10", label="k_values"),
        ],
        outputs=gr.JSON(label="Scores"),
        title="ranking",
        description=(
            "MRR, nDCG@k, hits@k, recall@k and R-precision with explicit tie policies. 'alphabetical' is the "
            "official IDRBench I2R rule; 'expected_rank' averages exactly over random orders of tied candidates."
        ),
        flagging_mode="never",
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
