"""SGI-Bench's published release as ``sciprobe doctor`` checks it, and the paper's item counts (issue 25).

Checked against the pinned upstream code, ``InternScience/SGI-Bench@8268d43``: it has no ``load_sgi_dataset``;
every ``evaluation/task_*/step_*.py`` calls ``datasets.load_dataset("InternScience/SGI-<Name>")`` with no config
name and reads split ``test``. Fields the scripts read:

- ``SGI-WetExperiment`` (``task_3_wet_experiment/step_1_get_answer.py``, ``step_2_score.py``): ``question`` (the
  prompt, action pool included in its text), ``discipline`` (filtered by the command line's discipline list),
  ``answer`` (a protocol string parsed by ``parse_experiment_steps``); ``idx``, ``action_pool`` and
  ``direction`` are carried into the logs, never read.
- ``SGI-Reasoning`` (``task_4_experimental_reasoning/step_*.py``): ``question``, ``options`` (a list, lettered
  A, B, ... in order), ``images`` (sent to the VLM and judge), ``step_images`` (dropped from the logs), ``steps``
  (a list joined as ``1. ...`` for the judge), ``answer`` (an integer: ``chr(ord('A') + int(answer))``), ``idx``,
  ``discipline``.

Named subsets: the code at the pin reads none (no config names; its only selector is the discipline list). The
hub also lists ``SGI-*-Lite`` and ``SGI-DeepResearch-Gold`` datasets that no script at the pin loads; their
contents are unverified, so they are not read.

Counts: paper §2.4 "Data Distribution": 318 deep research, 315 idea generation, 271 dry, 68 wet and 291
experimental reasoning questions.
"""

from __future__ import annotations

from sciprobe.core.declaration import PaperCount, ReleaseFile, ReleaseLayout

#: config -> hub dataset (``InternScience/<name>``), as the pinned scripts load them
HUB_DATASETS = {
    "deep_research": "SGI-DeepResearch",
    "idea_generation": "SGI-IdeaGeneration",
    "dry_experiment": "SGI-DryExperiment",
    "wet_experiment": "SGI-WetExperiment",
    "experimental_reasoning": "SGI-Reasoning",
}
PAPER_SECTION = "SGI-Bench paper §2.4 (Data Distribution)"
PAPER_COUNTS = {"deep_research": PaperCount(318, PAPER_SECTION), "idea_generation": PaperCount(315, PAPER_SECTION),
                "dry_experiment": PaperCount(271, PAPER_SECTION), "wet_experiment": PaperCount(68, PAPER_SECTION),
                "experimental_reasoning": PaperCount(291, PAPER_SECTION)}

_S = "str"
COLUMNS = {
    "deep_research": {"idx": _S, "question": _S, "steps": "list", "answer": _S, "discipline": _S, "direction": _S,
                      "type": _S},
    "idea_generation": {**{k: _S for k in ("idx", "question", "related_work", "challenge", "limitation",
                                           "motivation", "task_objective", "existing_solutions", "core_idea",
                                           "implementation_steps", "data", "evaluation_metrics", "expected_outcome",
                                           "related_work_test", "discipline", "direction")},
                        "keywords": "list", "implementation_order": "list"},
    "dry_experiment": {**{k: _S for k in ("idx", "question", "data_code", "main_code", "incomplete_main_code",
                                          "function_type", "discipline", "direction")},
                       **{f"unit_test_{i}_{k}": _S for i in range(5) for k in ("data", "output")},
                       "incomplete_functions": "list", "runtime": "float|null"},
    "wet_experiment": {"idx": _S, "question": _S, "action_pool": _S, "answer": _S, "discipline": _S,
                       "direction": _S},
    "experimental_reasoning": {"idx": _S, "question": _S, "images": "list", "options": "list", "steps": "list",
                               "step_images": "list", "answer": "int", "image_type": _S, "discipline": _S,
                               "direction": _S, "type": _S},
}


def _hub_file(config: str, dataset: str) -> ReleaseFile:
    # a hub snapshot holds data/test-00000-of-0000N.parquet; several shards are its parts
    return ReleaseFile(f"{dataset}/data/test-00000-of-00001.parquet", (config,), COLUMNS[config],
                       parts=f"{dataset}/data/test-*.parquet")


def hub_layout(datasets: dict[str, str]) -> ReleaseLayout:
    return ReleaseLayout(
        name="the five InternScience/SGI-* hub datasets (split test), one folder each",
        files=tuple(_hub_file(config, name) for config, name in datasets.items()),
        extra_files=("README.md", "*/README.md", "*/.gitattributes"),
        note="read by evaluation/task_*/step_*.py of InternScience/SGI-Bench@8268d43 via datasets.load_dataset",
    )
