"""SGI-Bench prompts in sciprobe's own wording (shared/spec/sgibench.md §3 "Generation settings", §4.1).

Only what the official parsers read follows upstream exactly: the ``<answer>`` tags (deep research, wet and
dry experiments), the step layout of a protocol (``var = <Action>(``, one ``key=value`` per line, ``)`` alone on
its line), ``\\boxed{X}`` (reasoning) and the JSON keys of an idea. The system message is the plain assistant
role upstream uses; images of reasoning items are sent before the text (the lighteval card puts them in
``Doc.images``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Row = Mapping[str, Any]
SYSTEM = "You are a helpful assistant."

DEEP_RESEARCH_INSTRUCTIONS = (
    "You may reason step by step before answering. Give the final answer, formatted exactly as the question "
    "asks (units, rounding, separators), between <answer> and </answer>. For example:\n"
    "Step 1. Identify the quantity that is needed.\nStep 2. Compute it.\n<answer>2.50</answer>"
)

WET_EXAMPLE = (
    "culture = <Grow bacterial culture>(\n"
    '    strain="E. coli K-12",\n'
    '    medium="LB broth"\n'
    ")\n"
    "lysate = <Lyse cells>(\n"
    "    cells=culture,\n"
    '    buffer="lysis buffer"\n'
    ")"
)
WET_INSTRUCTIONS = (
    "Put the final protocol between <answer> and </answer>. Write one block per step: the line "
    "`result = <Action name>(`, then one `parameter=value` per line, then a line holding only `)`. Use only "
    "actions from the action pool, spelled exactly as there, and pass earlier results by their variable "
    "names. For example:\n<answer>\n" + WET_EXAMPLE + "\n</answer>"
)

REASONING_INSTRUCTIONS = (
    "Answer the multiple-choice question about the images. Think it through step by step, consider every "
    "option (they are labelled A, B, C, ...), and choose the single best one. Write your reasoning, then the "
    "letter of your choice alone inside \\boxed{}, for example \\boxed{C}."
)

IDEA_EXAMPLE = {
    "Idea": "A concise paragraph (roughly 300-700 characters) stating the core method, why it addresses the "
            "stated limitation, and what makes it new.",
    "ImplementationSteps": {"1": "Collect and clean the data.", "2": "Build the baseline.",
                            "3": "Implement the proposed model.", "4": "Train and tune it.",
                            "5": "Evaluate against the baselines."},
    "ImplementationOrder": ["1-2", "1-3", "3-4", "2-5", "4-5"],
    "Dataset": "Which data are used, their size and how they are split.",
    "EvaluationMetrics": {"Metric A": "what it measures", "Metric B": "what it measures"},
    "ExpectedOutcome": "The measurable result you expect and why it matters.",
}
IDEA_INSTRUCTIONS = (
    "Reply with one JSON object in a ```json code block with exactly these keys: Idea, ImplementationSteps "
    "(numbered steps), ImplementationOrder (edges \"i-j\" meaning step i comes before step j), Dataset, "
    "EvaluationMetrics (name: description) and ExpectedOutcome. Shape (replace the placeholder text):\n"
    "```json\n" + json.dumps(IDEA_EXAMPLE, indent=2) + "\n```"
)

DRY_INSTRUCTIONS = (
    "Complete the functions whose bodies are missing. Put your code between <answer> and </answer>; write each "
    "missing function in full, as a top-level `def` with the same name and signature. Only those functions are "
    "inserted into the program, so put any import you need inside the function bodies. For example:\n"
    "<answer>\ndef mean_of(values):\n    import statistics\n    return statistics.fmean(values)\n</answer>"
)


def _messages(user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def deep_research_messages(row: Row, examples: Sequence[Row] = ()) -> list[dict[str, str]]:
    return _messages(f"{row['question']}\n\n{DEEP_RESEARCH_INSTRUCTIONS}")


def wet_experiment_messages(row: Row, examples: Sequence[Row] = ()) -> list[dict[str, str]]:
    return _messages(f"{row['question']}\n\n{WET_INSTRUCTIONS}")


def reasoning_text(row: Row, instructions: str = REASONING_INSTRUCTIONS) -> str:
    """The text part of a reasoning prompt (the images travel separately, before it): the instructions, then
    the question and the lettered options in upstream's layout."""
    options = "".join(f"{chr(65 + i)}. {option}\n" for i, option in enumerate(row["options"]))
    return f"{instructions}\n\nQuestion:\n{row['question']}\n\nOptions:\n{options}"


def reasoning_messages(row: Row, examples: Sequence[Row] = ()) -> list[dict[str, str]]:
    """Text only (the lighteval card and ``sciprobe score`` read this); ``sciprobe evaluate`` sends
    :func:`reasoning_multimodal_messages` or :func:`reasoning_placeholder_messages` instead."""
    return _messages(reasoning_text(row))


# What a text-only model reads where an image would be (our own wording; decision documented in the dataset
# and metric cards: images are never dropped silently, the record and the score notes say ``images_dropped``).
IMAGE_PLACEHOLDER = "[Image {k} of {n} is not shown: this model receives text only.]"


def reasoning_multimodal_messages(row: Row, image_parts: Sequence[Mapping[str, Any]],
                                  text_of: Callable[[Row], str] = reasoning_text) -> list[dict[str, Any]]:
    """OpenAI content parts: the images (``image_url`` data URLs) first, then the text, as upstream sends them."""
    content: list[dict[str, Any]] = [dict(part) for part in image_parts]
    content.append({"type": "text", "text": text_of(row)})
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": content}]


def reasoning_placeholder_messages(row: Row, n_images: int,
                                   text_of: Callable[[Row], str] = reasoning_text) -> list[dict[str, str]]:
    """The text-only variant: one placeholder line per image, then the text."""
    lines = [IMAGE_PLACEHOLDER.format(k=k, n=n_images) for k in range(1, n_images + 1)]
    return _messages("\n".join([*lines, "", text_of(row)]) if lines else text_of(row))


def idea_messages(row: Row, examples: Sequence[Row] = ()) -> list[dict[str, str]]:
    return _messages(f"{row['question']}\n\n{IDEA_INSTRUCTIONS}")


def dry_messages(row: Row, examples: Sequence[Row] = ()) -> list[dict[str, str]]:
    return _messages(f"{row['question']}\n\n{DRY_INSTRUCTIONS}")
