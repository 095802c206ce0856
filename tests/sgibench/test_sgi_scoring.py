"""Golden cases for sciprobe.benchmarks.sgibench.scoring (spec sgibench.md §3, §8): tests/cases/sgi_*.json.

Each case names a ``function``, its ``kwargs`` and either ``expected`` (a subset of the flattened report:
mode, values, coverage; nested dicts and lists of dicts are compared key by key) or ``expected_error``.
Idea cases carry an ``embeddings`` table (text -> vector) so cosines can be derived by hand; dry cases may
name a fake ``judge``. Expected values were computed by hand; the derivation is in each case's comment.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.score_report import ScoreReport
from sciprobe.benchmarks.sgibench.scoring import (
    deep_research,
    dry_experiment,
    idea,
    overall,
    reasoning,
    wet_experiment,
)

from golden import load_cases

FILES = ("sgi_deep_research", "sgi_wet_experiment", "sgi_reasoning", "sgi_dry_experiment", "sgi_idea", "sgi_overall")
FUNCTIONS = {
    "exact_match": deep_research.exact_match,
    "step_level_accuracy": deep_research.step_level_accuracy,
    "wet_experiment_scores": wet_experiment.wet_experiment_scores,
    "multiple_choice_accuracy": reasoning.multiple_choice_accuracy,
    "reasoning_validity": reasoning.reasoning_validity,
    "dry_experiment_scores": dry_experiment.dry_experiment_scores,
    "idea_generation_scores": idea.idea_generation_scores,
    "graph_similarity": idea.graph_similarity,
    "sgi_score": overall.sgi_score,
}


class TableEmbedder:
    """Deterministic embeddings from a lookup table; unknown texts are an error (the case is incomplete)."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def encode(self, texts: list[str], normalize_embeddings: bool = False) -> np.ndarray:
        missing = [t for t in texts if t not in self.table]
        assert not missing, f"case lacks embeddings for {missing}"
        out = np.array([self.table[t] for t in texts], dtype=float)
        if normalize_embeddings:  # as SentenceTransformer.encode: unit rows, a zero row stays zero
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out = out / np.where(norms == 0, 1, norms)
        return out


def _raises(messages: Any) -> str:
    raise RuntimeError("judge unavailable")


FAKE_JUDGES = {
    "always_correct": lambda messages: 'Sure. {"judgment": "correct", "reason": "same numbers"}',
    "garbage": lambda messages: "I think they are probably the same?",
    "raises": _raises,
}


def _cases() -> list[Any]:
    params = []
    for stem in FILES:
        for case in load_cases(stem):
            params.append(pytest.param(case, id=f"{stem}:{case['name']}"))
    return params


def _flat(result: Any) -> dict[str, Any]:
    if isinstance(result, ScoreReport):
        return {"mode": result.mode, **result.values, **result.coverage.as_dict()}
    return {"value": result}


def assert_subset(actual: Any, expected: Any, path: str = "") -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected a mapping, got {actual!r}"
        for key, want in expected.items():
            assert key in actual, f"{path}: missing key {key!r}"
            assert_subset(actual[key], want, f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{path}: {actual!r} vs {expected!r}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_subset(a, e, f"{path}[{i}]")
    elif isinstance(expected, float):
        assert actual is not None and math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-9), \
            f"{path}: expected {expected}, got {actual}"
    else:
        assert actual == expected, f"{path}: expected {expected!r}, got {actual!r}"


def test_case_files_cover_the_quirks() -> None:
    names = {p.id for p in _cases()}
    assert len(names) == len(_cases())
    for required in ("sgi_deep_research:official_last_answer_block", "sgi_deep_research:paper_numeric_and_case",
                     "sgi_wet_experiment:official_lexicographic_ss", "sgi_wet_experiment:paper_kendall_ss",
                     "sgi_wet_experiment:official_value_blind",
                     "sgi_wet_experiment:official_single_line_call_swallows_next_step",
                     "sgi_wet_experiment:official_soft_inserted_step_keeps_credit",
                     "sgi_wet_experiment:paper_soft_value_aware",
                     "sgi_reasoning:official_first_box", "sgi_dry_experiment:official_quirks_stderr_timeout_exit",
                     "sgi_idea:official_objective_gates_and_quirks", "sgi_overall:official_rounds_components_first"):
        assert required in names
    for param in _cases():
        case = param.values[0]
        assert ("expected" in case) != ("expected_error" in case), case["name"]


@pytest.mark.parametrize("case", _cases())
def test_golden_case(case: dict[str, Any]) -> None:
    fn = FUNCTIONS[case["function"]]
    kwargs = dict(case["kwargs"])
    if "embeddings" in case:
        kwargs["embedder"] = TableEmbedder(case["embeddings"])
    if "judge" in case:
        kwargs["judge"] = FAKE_JUDGES[case["judge"]]
    if "expected_error" in case:
        with pytest.raises(SciprobeError) as excinfo:
            fn(**kwargs)
        assert case["expected_error"] in str(excinfo.value)
        assert "\n" not in str(excinfo.value)
        return
    assert_subset(_flat(fn(**kwargs)), case["expected"], case["name"])


@pytest.mark.parametrize("mode", ["official", "paper"])
def test_paper_and_official_share_coverage(mode: str) -> None:
    report = deep_research.exact_match(["<answer>1</answer>", None], ["1", "2"], mode=mode)
    assert (report.coverage.n_items, report.coverage.n_scored, report.coverage.n_failed) == (2, 1, 1)
    assert ("exact_match_upstream" in report.values) == (mode == "official")


def test_by_group_reproduces_a_per_discipline_cell() -> None:
    """Table 17, GPT-4.1 / Claude-Opus-4.1 Chemistry: 1 of 5 items -> 20.00; Astronomy 7 of 16 -> 43.75."""
    per_item = [1, 0, 0, 0, 0] + [1] * 7 + [0] * 9
    groups = ["chemistry"] * 5 + ["astronomy"] * 16
    out = overall.by_group(per_item, groups)
    assert list(out) == ["astronomy", "chemistry"]
    assert out["chemistry"] == {"score": 20.0, "n": 5} and out["astronomy"]["score"] == 43.75
    with pytest.raises(SciprobeError, match="differ in length"):
        overall.by_group([1], [])


class CountingEmbedder:
    """Stands in for the default embedder: a deterministic vector per text, every encoded text counted."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts: list[str], normalize_embeddings: bool = False) -> np.ndarray:
        self.encoded += list(texts)
        rows = [[(hash(t) >> s) % 97 + 1.0 for s in (0, 8, 16, 24)] for t in texts]
        out = np.array(rows, dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True) if normalize_embeddings else out


@pytest.mark.parametrize("mode", ["official", "paper"])
def test_idea_objective_terms_are_embedded_once_per_answer(mode, monkeypatch):
    """A bootstrap over the items (lighteval's stderr) rescoring a resample embeds nothing again and gives each
    item the terms of the full computation."""
    monkeypatch.setattr(idea, "_TERMS", {})
    fake = CountingEmbedder()
    monkeypatch.setattr(idea, "default_embedder", lambda: fake)
    row = {"idx": "r1", "core_idea": "a graph over stations", "implementation_steps": "{'1': 'collect', '2': 'train'}",
           "implementation_order": ["1-2"], "data": "records", "evaluation_metrics": "{'recall': 'found'}",
           "expected_outcome": "more events", "related_work": "{'A': 'template matching', 'B': 'deep pickers'}",
           "existing_solutions": "{'S': 'single-station detectors'}",
           "related_work_test": "{'A': 'template matching'}", "keywords": ["seismic", "graph network"]}
    answers = ['{"Idea": "Use a graph network over seismic stations. It locates events.", '
               '"ImplementationSteps": {"1": "collect", "2": "train"}, "ImplementationOrder": ["1-2"]}',
               '{"Idea": "Template matching with deep features for seismic detection."}']
    rows = [{**row, "idx": f"r{i}"} for i in range(len(answers))]
    full = idea.idea_generation_scores(answers, rows, mode=mode)
    encoded = len(fake.encoded)
    assert encoded > 0 and full.coverage.n_failed == 0
    again = idea.idea_generation_scores([answers[1], answers[0], answers[1]], [rows[1], rows[0], rows[1]], mode=mode)
    assert len(fake.encoded) == encoded
    objective = [item["objective"] for item in full.values["per_item"]]
    assert [item["objective"] for item in again.values["per_item"]] == [objective[1], objective[0], objective[1]]
    own = CountingEmbedder()  # a caller's own embedder is always used
    idea.idea_generation_scores(answers[:1], rows[:1], mode=mode, embedder=own)
    assert own.encoded
