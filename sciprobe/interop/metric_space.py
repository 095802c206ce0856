"""Shared pieces of the metric Spaces (`metrics/*/app.py`).

`evaluate.utils.launch_gradio_widget` is broken on gradio >= 4 (it uses the removed `gr.inputs` API), so every
metric folder builds its Gradio interface by hand; this module holds what those apps have in common: loading the
metric module next to the app (once), parsing JSON text inputs, turning `ValueError` into `gr.Error`, and the
`gr.Interface` frame. gradio and evaluate are imported lazily so importing :mod:`sciprobe` stays light.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from typing import Any

_METRICS: dict[tuple[str, str | None], Any] = {}


def app_dir(app_file: str) -> str:
    """The folder of an app file (pass ``__file__``): the metric module sits next to it."""
    return os.path.dirname(os.path.abspath(app_file))


def load_metric(here: str, config: str | None = None) -> Any:
    """``evaluate.load`` the metric module in folder `here` (one config of it, if given), once per process."""
    key = (here, config)
    if key not in _METRICS:
        import evaluate

        _METRICS[key] = evaluate.load(here) if config is None else evaluate.load(here, config)
    return _METRICS[key]


def json_arg(text: str | None, name: str, *, required: bool | None = None) -> Any:
    """Parse the JSON text of input `name`; invalid JSON raises ``gr.Error``.

    ``required=None`` parses the text as given (blank text is invalid JSON). Otherwise blank text (after
    stripping) raises ``gr.Error("<name> is empty.")`` when `required` is true and gives ``None`` when false.
    """
    import gradio as gr

    if required is None:
        text = text or ""
    else:
        text = (text or "").strip()
        if not text:
            if required:
                raise gr.Error(f"{name} is empty.")
            return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise gr.Error(f"{name} is not valid JSON: {exc}") from None


@contextlib.contextmanager
def gradio_errors(first_line: bool = False) -> Iterator[None]:
    """Re-raise any ``ValueError`` (``gr.Error`` included) in the block as ``gr.Error(str(exc))``; with
    `first_line`, only the first line of the message is kept."""
    try:
        yield
    except ValueError as exc:
        import gradio as gr

        message = str(exc).splitlines()[0] if first_line else str(exc)
        raise gr.Error(message) from None


def metric_interface(score_fn: Callable[..., Any], inputs: list[Any], title: str, description: str,
                     examples: list[list[Any]] | None = None) -> Any:
    """The ``gr.Interface`` of a metric Space (no launch): `inputs` feed `score_fn`, its dict is shown as JSON."""
    import gradio as gr

    extra = {} if examples is None else {"examples": examples}
    return gr.Interface(
        fn=score_fn,
        inputs=inputs,
        outputs=gr.JSON(label="Scores"),
        title=title,
        description=description,
        flagging_mode="never",
        **extra,
    )
