"""IDRBench's pinned upstream (``project-ai4science/irllm-framework@aa621e4``) and its model-facing prompts for
``--prompts upstream`` (spec ``idrbench.md`` §4).

Every template is a module-level string of upstream ``utils.py``, filled with ``%`` as upstream fills it:
``prompt_exp_1`` / ``prompt_exp_1_fewshot`` (IPI: title, abstract; the five examples live inside the few-shot
template), ``prompt_exp_2`` / ``prompt_exp_2_fewshot`` (I3: the two sides, one ``Title: %s; Abstract: %s`` line per
paper, joined by newlines), ``prompt_exp_3`` (an I2R comparison: main paper, Paper 1, Paper 2). The system message
is ``sys_prompt_critical`` (the default ``critical: True``) or ``sys_prompt``, sent with role ``system`` (upstream
sends it as a user turn only to o1 models). The file is fetched at run time (:mod:`sciprobe.run.upstream`) and read
with :mod:`ast`, never executed or stored here. Upstream sends the release text as is (``pd.read_json`` of the
release files): ``--prompts upstream`` builds the bundled sample with ``--raw-whitespace`` itself, and says on
stderr and in provenance when ``--data`` was built with the default whitespace normalisation (then the messages
are not upstream's byte for byte).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sciprobe.core.declaration import Upstream
from sciprobe.core.errors import SciprobeError

PROMPTS_PATH = "utils.py"
UPSTREAM = Upstream(
    repo="project-ai4science/irllm-framework", commit="aa621e46dc5f1d85e6b20952c2acee3a59c44e65",
    prompt_files={PROMPTS_PATH: "ef74bd5e23a6a61c9c8c083f900e18f9306a595af0aba74de7ea48325cd7a9be"},
    release_text_options={"normalize_whitespace": False},
    release_text_build="sciprobe build idrbench --raw-whitespace")

Messages = list[dict[str, str]]


def _fill(template: str, values: tuple[str, ...], name: str) -> str:
    try:
        return template % values
    except (TypeError, ValueError) as exc:
        raise SciprobeError(f"upstream template {name} does not take {len(values)} values ({exc})") from None


def _template(texts: Any, name: str, n_values: int) -> str:
    """The template ``name``, checked now to take ``n_values`` values: a bad one fails before any model call."""
    template = texts.constant(PROMPTS_PATH, name)
    _fill(template, ("",) * n_values, name)
    return template


def _side(papers: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join("Title: %s; Abstract: %s" % (p["title"], p["abstract"]) for p in papers)


def _systems(texts: Any) -> dict[bool, str]:
    return {True: texts.constant(PROMPTS_PATH, "sys_prompt_critical"),
            False: texts.constant(PROMPTS_PATH, "sys_prompt")}


def _classification(texts: Any, name: str, values: Callable[[Mapping[str, Any]], tuple[str, ...]]) -> dict:
    template, systems = _template(texts, name, 2), _systems(texts)

    def build(row: Mapping[str, Any], examples: Sequence[Mapping] = (), critical: bool = True) -> Messages:
        return [{"role": "system", "content": systems[critical]},
                {"role": "user", "content": _fill(template, values(row), name)}]

    return {"build_messages": build}


def ipi_prompts(texts: Any) -> dict:
    return _classification(texts, "prompt_exp_1", lambda row: (row["title"], row["abstract"]))


def ipi_fewshot_prompts(texts: Any) -> dict:
    return _classification(texts, "prompt_exp_1_fewshot", lambda row: (row["title"], row["abstract"]))


def i3_prompts(texts: Any) -> dict:
    return _classification(texts, "prompt_exp_2", lambda row: (_side(row["side_b"]), _side(row["side_c"])))


def i3_fewshot_prompts(texts: Any) -> dict:
    return _classification(texts, "prompt_exp_2_fewshot", lambda row: (_side(row["side_b"]), _side(row["side_c"])))


def i2r_prompts(texts: Any) -> dict:
    template, systems = _template(texts, "prompt_exp_3", 6), _systems(texts)

    def comparison(seed: Mapping, paper_1: Mapping, paper_2: Mapping, critical: bool = True) -> Messages:
        values = (seed["title"], seed["abstract"], paper_1["title"], paper_1["abstract"], paper_2["title"],
                  paper_2["abstract"])
        return [{"role": "system", "content": systems[critical]},
                {"role": "user", "content": _fill(template, values, "prompt_exp_3")}]

    return {"comparison_messages": comparison}
