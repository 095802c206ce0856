"""SGI-Bench's pinned upstream (``InternScience/SGI-Bench@8268d43``) and its model-facing prompts for
``--prompts upstream`` (spec ``sgibench.md`` §4.1).

Each task's ``step_*_get_answer.py`` holds a module-level literal that upstream appends to (or puts before) the
item's question: ``output_requirements`` (deep research, dry and wet experiments: ``question +
output_requirements``), ``example`` (idea generation: ``question`` + ``"\\n\\n### Example:\\n```json\\n"`` +
``json.dumps(example, indent=4)`` + ``"\\n```"``) and ``CONTEXT`` (experimental reasoning: ``CONTEXT``, then
``Question:`` and the lettered ``Options:`` blocks, as :func:`sciprobe.benchmarks.sgibench.prompts.reasoning_text`
lays them out). Upstream's ``LLM``/``VLM`` wrappers send a generic system role line, the same line sciprobe's own
prompts send (:data:`sciprobe.benchmarks.sgibench.prompts.SYSTEM`). The files are fetched at run time
(:mod:`sciprobe.run.upstream`) and read with :mod:`ast`, never executed or stored here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sciprobe.core.declaration import Upstream
from sciprobe.core.errors import SciprobeError

DEEP_RESEARCH_PATH = "evaluation/task_1_deep_research/step_1_get_answer.py"
IDEA_PATH = "evaluation/task_2_idea_generation/step_1_get_answer.py"
DRY_PATH = "evaluation/task_3_dry_experiment/step_2_get_answer.py"
WET_PATH = "evaluation/task_3_wet_experiment/step_1_get_answer.py"
REASONING_PATH = "evaluation/task_4_experimental_reasoning/step_1_get_answer.py"

# The answer-level deep-research judge (``llm_judge``) came after the pinned commit; sciprobe's ``llm_judge``
# metric follows this later commit (its ``step_2_score.py``), SGI-Score still uses exact match.
ANSWER_JUDGE_COMMIT = "5d562f64b7e811e7cc3da7b22c0a24fd6678dfca"
# Likewise the soft wet-experiment scores (``soft_ss``, ``soft_pa``, ``soft_final``): ``compare_exp_steps_soft`` of
# this later commit; SGI-Score still uses the strict ``final``.
WET_SOFT_COMMIT = "3854aa98c945e401c053d2770e1dc826c37ecf42"

UPSTREAM = Upstream(
    repo="InternScience/SGI-Bench", commit="8268d4349bff7c193eaa93ffb47418f402f9be2a",
    prompt_files={
        DEEP_RESEARCH_PATH: "f8c2412ee01fddcc1d6731a93838b8ec8d7fee5655c72e1eb6a9e521dbab5183",
        IDEA_PATH: "1f71d9b4509165b1449ea3f110d8eaedab76e9825f7c7d75be18d0593a228794",
        DRY_PATH: "a745c2d4d5d1d08aea07b5c2a8551a05d7e65f8a78c8c2fdbccc9066d4cd69b2",
        WET_PATH: "10a20d19e9d9edb8d82eb0974e42d0dc56768719000f9398c0f11bf4a58af283",
        REASONING_PATH: "f0bb0e8ebf913913d5b3c0d4c15353c990a32e09890f32c804496c8acadf1710",
    },
    note=f"deep research `llm_judge` (answer-level judge): InternScience/SGI-Bench@{ANSWER_JUDGE_COMMIT[:7]}; "
         f"wet experiment soft scores `soft_ss`, `soft_pa`, `soft_final`: "
         f"InternScience/SGI-Bench@{WET_SOFT_COMMIT[:7]}")

Messages = list[dict[str, Any]]


def _messages(user: str) -> Messages:
    from sciprobe.benchmarks.sgibench.prompts import SYSTEM

    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def _appended(texts: Any, path: str) -> dict[str, Callable[..., Messages]]:
    requirements = texts.constant(path, "output_requirements")

    def build(row: Mapping[str, Any], examples: Sequence[Mapping] = ()) -> Messages:
        return _messages(row["question"] + requirements)

    return {"build_messages": build}


def deep_research_prompts(texts: Any) -> dict:
    return _appended(texts, DEEP_RESEARCH_PATH)


def dry_prompts(texts: Any) -> dict:
    return _appended(texts, DRY_PATH)


def wet_prompts(texts: Any) -> dict:
    return _appended(texts, WET_PATH)


def idea_prompts(texts: Any) -> dict:
    try:
        example = json.dumps(texts.constant(IDEA_PATH, "example", dict), indent=4)
    except (TypeError, ValueError, RecursionError) as exc:  # a literal JSON cannot hold (a set, bytes, deep nesting)
        raise SciprobeError(f"{UPSTREAM.label}:{IDEA_PATH}: example is not JSON ({type(exc).__name__})") from None

    def build(row: Mapping[str, Any], examples: Sequence[Mapping] = ()) -> Messages:
        return _messages(row["question"] + f"\n\n### Example:\n```json\n{example}\n```")

    return {"build_messages": build}


def reasoning_prompts(texts: Any) -> dict:
    from sciprobe.benchmarks.sgibench.prompts import reasoning_text

    context = texts.constant(REASONING_PATH, "CONTEXT")

    def text(row: Mapping[str, Any]) -> str:
        return reasoning_text(row, instructions=context)

    def build(row: Mapping[str, Any], examples: Sequence[Mapping] = ()) -> Messages:
        return _messages(text(row))

    return {"build_messages": build, "reasoning_text": text}
