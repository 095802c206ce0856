"""SGI-Bench reference baselines (``sciprobe baselines sgibench``):

- ``majority-option`` (experimental reasoning): every question answered with the option letter that is most
  often correct among the evaluated items (``\\boxed{X}``, the format both parsers read) — the floor a constant
  multiple-choice answer reaches;
- ``empty-answer`` (all five tasks): an empty reply for every item, run through the task's real runner and
  scorer (no judge): the floor of each metric, showing what a model that answers nothing is credited with.
"""

from __future__ import annotations

from collections import Counter

from sciprobe.core.declaration import Baseline, BaselineInput

TASKS = ("deep_research", "idea_generation", "dry_experiment", "wet_experiment", "experimental_reasoning")


def majority_option(given: BaselineInput) -> dict[str, dict[str, str]]:
    from sciprobe.benchmarks.sgibench.scoring.reasoning import letter_of

    counts = Counter(letter_of(int(row["answer"])) for row in given.rows)
    letter = max(sorted(counts), key=lambda k: counts[k])
    return {str(row["id"]): {"response": f"\\boxed{{{letter}}}"} for row in given.rows}


def empty_answers(given: BaselineInput) -> dict[str, dict[str, str]]:
    return {str(row["id"]): {"response": ""} for row in given.rows}


def baselines() -> list[Baseline]:
    return [
        Baseline("majority-option", "the option letter most often correct among the evaluated items, for every "
                                    "question", ("experimental_reasoning",), majority_option),
        Baseline("empty-answer", "an empty reply for every item, scored by the task's own runner (no judge)", TASKS,
                 empty_answers),
    ]
