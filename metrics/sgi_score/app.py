"""Gradio Space for the `sgi_score` metric.

`evaluate.utils.launch_gradio_widget` is broken on gradio >= 4 (it uses the removed `gr.inputs` API), so the
interface is built by hand here. Importing this file builds `demo` without launching it; `python app.py`
(what a Space runs) launches it. Each config is loaded lazily on its first request.
"""

import json
import os

import evaluate
import gradio as gr

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = ["deep_research", "wet_experiment", "experimental_reasoning", "dry_experiment", "idea_generation",
           "overall"]
_METRICS = {}

EXAMPLE_PREDICTIONS = '["<answer>12</answer> then <answer>46</answer>", "<answer>3.73,no peak</answer>"]'
EXAMPLE_REFERENCES = '["46", "3.73, no peak"]'


def get_metric(config):
    """Load one config of the metric module next to this file (once)."""
    if config not in _METRICS:
        _METRICS[config] = evaluate.load(HERE, config)
    return _METRICS[config]


def _parse_json(text, name):
    text = (text or "").strip()
    if not text:
        raise gr.Error(f"{name} is empty.")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise gr.Error(f"{name} is not valid JSON: {exc}") from None
    if not isinstance(value, list):
        raise gr.Error(f"{name} must be a JSON list.")
    return value


def score(config, predictions, references, mode):
    """Score JSON lists for one config; per-item details are dropped from the display."""
    try:
        result = get_metric(config).compute(predictions=_parse_json(predictions, "predictions"),
                                            references=_parse_json(references, "references"), mode=mode)
    except ValueError as exc:
        raise gr.Error(str(exc)) from None
    return {k: v for k, v in result.items() if k != "per_item"}


def build_demo():
    """Build the interface (no launch)."""
    return gr.Interface(
        fn=score,
        inputs=[
            gr.Dropdown(CONFIGS, value="deep_research", label="config"),
            gr.Code(value=EXAMPLE_PREDICTIONS, language="json", label="predictions (JSON list)"),
            gr.Code(value=EXAMPLE_REFERENCES, language="json", label="references (JSON list)"),
            gr.Radio(["official", "paper"], value="official", label="mode"),
        ],
        outputs=gr.JSON(label="Scores"),
        title="sgi_score",
        description=("SGI-Bench component scores and the SGI-Score. 'official' reproduces the upstream scoring "
                     "code (quirks included); 'paper' implements the paper's definitions."),
        flagging_mode="never",
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
