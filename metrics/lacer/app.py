"""Gradio Space for the `lacer` metric: re-scores stored judge replies (hand-built: `launch_gradio_widget` is
broken on gradio >= 4). Importing this file builds `demo` without launching it; `python app.py` launches it.
"""

import json
import os
import tempfile

import gradio as gr

from sciprobe.interop.metric_space import app_dir, gradio_errors, load_metric, metric_interface

HERE = app_dir(__file__)


def score(predictions, references, replies, template, mode):
    """Re-score stored judge replies for JSON lists of generated and gold {title, abstract}."""
    with gradio_errors():
        path = os.path.join(tempfile.mkdtemp(), "template.txt")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(template)
        return load_metric(HERE).compute(predictions=json.loads(predictions), references=json.loads(references),
                                         replies=json.loads(replies), template_path=path,
                                         judge_id="stored replies", mode=mode)


def build_demo():
    """Build the interface (no launch)."""
    return metric_interface(
        score,
        inputs=[
            gr.Code(value='[{"title": "A", "abstract": "a"}]', language="json", label="predictions"),
            gr.Code(value='[{"title": "A", "abstract": "a"}]', language="json", label="references"),
            gr.Code(value='["Reasoning: same.\\nScore: 9"]', language="json", label="stored judge replies"),
            gr.Textbox(value="{{reference_title}}\n{{reference_abstract}}\n{{generation_title}}\n"
                             "{{generation_abstract}}", lines=6, label="LACER template (paste the E.5 file)"),
            gr.Dropdown(["official", "corrected"], value="official", label="mode"),
        ],
        title="lacer",
        description="LACER judge scores (PreScience T1) from stored judge replies; official and corrected parsing.",
    )


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
