"""Gradio Space for the `sgi_score` metric.

`evaluate.utils.launch_gradio_widget` is broken on gradio >= 4 (it uses the removed `gr.inputs` API), so the
interface is built by hand here. Importing this file builds `demo` without launching it; `python app.py`
(what a Space runs) launches it. Each config is loaded lazily on its first request.
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
CONFIGS = ["deep_research", "wet_experiment", "experimental_reasoning", "dry_experiment", "idea_generation",
           "overall"]

EXAMPLE_PREDICTIONS = '["<answer>12</answer> then <answer>46</answer>", "<answer>3.73,no peak</answer>"]'
EXAMPLE_REFERENCES = '["46", "3.73, no peak"]'


def _parse_json(text, name):
    value = json_arg(text, name, required=True)
    if not isinstance(value, list):
        raise gr.Error(f"{name} must be a JSON list.")
    return value


def score(config, predictions, references, mode):
    """Score JSON lists for one config; per-item details are dropped from the display."""
    with gradio_errors():
        result = load_metric(HERE, config).compute(predictions=_parse_json(predictions, "predictions"),
                                                   references=_parse_json(references, "references"), mode=mode)
    return {k: v for k, v in result.items() if k != "per_item"}


def build_demo():
    """Build the interface (no launch)."""
    return metric_interface(
        score,
        inputs=[
            gr.Dropdown(CONFIGS, value="deep_research", label="config"),
            gr.Code(value=EXAMPLE_PREDICTIONS, language="json", label="predictions (JSON list)"),
            gr.Code(value=EXAMPLE_REFERENCES, language="json", label="references (JSON list)"),
            gr.Radio(["official", "paper"], value="official", label="mode"),
        ],
        title="sgi_score",
        description=("SGI-Bench component scores and the SGI-Score. 'official' reproduces the upstream scoring "
                     "code (quirks included); 'paper' implements the paper's definitions."),
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
