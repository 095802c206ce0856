"""PreScience's pinned upstream (``allenai/prescience@47384ed``) and its model-facing prompt for
``--prompts upstream`` (spec ``prescience.md`` §2 T1, §3).

Upstream's GPT/Claude generation baselines (``task_followup_prediction/generate/baseline_gpt_parallel.py``) send
the file ``templates/prediction_system.prompt`` as the system message, read as is, and a user message that lists
the key references as ``Background Paper {i}:\\nTitle: ...\\nAbstract: ...\\n\\n``
(``dataset.format_background_papers``, trailing blank line kept). The file is fetched at run time
(:mod:`sciprobe.run.upstream`), never stored here. The other tasks have no model-facing template upstream (their
baselines are not prompts). The LACER judge's template and its system message (``lacer_score.py``'s
``SYSTEM_PROMPT``) are pinned here too, as judge files (:mod:`sciprobe.benchmarks.prescience.lacer_judge` reads them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sciprobe.core.declaration import Upstream

CONTRIBUTION_SYSTEM_PATH = "task_followup_prediction/templates/prediction_system.prompt"
LACER_TEMPLATE_PATH = "task_followup_prediction/evaluate/templates/lacer_scoring_prompt_percentile50.110.txt"
LACER_TEMPLATE_SHA256 = "9bedc92dcd151c1d9dd120847c626e7302ce3fb1d706f97ff464a675af2db4dc"
#: the LACER scoring script: its module-level ``SYSTEM_PROMPT`` literal is the judge's system message
LACER_SCORE_PATH = "task_followup_prediction/evaluate/lacer_score.py"
LACER_SCORE_SHA256 = "ea5e20f43c9888ba5529f83b9f6bbe1f39d0f50c646fc6d0d50d8ac2746d2e17"

UPSTREAM = Upstream(
    repo="allenai/prescience", commit="47384ed79c48cfef610f30af12ba883f2a0093cb",
    prompt_files={CONTRIBUTION_SYSTEM_PATH: "298e410111b238ea75410c42b71fef179475d4332c67c55e010f784a9cd01a26"},
    judge_files={LACER_TEMPLATE_PATH: LACER_TEMPLATE_SHA256, LACER_SCORE_PATH: LACER_SCORE_SHA256})


def background_papers(references: Sequence[Mapping[str, Any]]) -> str:
    """The user message of upstream's generation baselines: every key reference, each block ending in a blank
    line (the last one too)."""
    return "".join(f"Background Paper {i}:\nTitle: {ref.get('title') or ''}\nAbstract: {ref.get('abstract') or ''}\n\n"
                   for i, ref in enumerate(references, 1))


def contribution_prompts(texts: Any) -> dict[str, Callable[..., list[dict[str, str]]]]:
    system = texts.text(CONTRIBUTION_SYSTEM_PATH)

    def build(row: Mapping[str, Any], examples: Sequence[Mapping] = ()) -> list[dict[str, str]]:
        return [{"role": "system", "content": system},
                {"role": "user", "content": background_papers(row["references"])}]

    return {"build_messages": build}
