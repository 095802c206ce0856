"""Golden cases for sciprobe.scoring (spec idrbench.md §5.1, §5.2, §9.2, §9.9).

Each file in tests/cases/ is a list of {name, kwargs, predictions, references, expected | expected_error}
(optional "function"); expected values were computed by hand (the derivation is in each case's "comment").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.classification import binary_classification, subject_set_f1
from sciprobe.scoring.ranking import ranking_metrics
from sciprobe.scoring.score_report import ScoreReport

from golden import load_cases


FUNCTIONS: dict[str, Callable[..., ScoreReport]] = {
    "idr_classification": binary_classification,
    "ranking": ranking_metrics,
    "subject_set_f1": subject_set_f1,
}


def _load_cases() -> list[Any]:
    params = []
    for stem in ("idr_classification", "ranking"):
        for case in load_cases(stem):
            params.append(pytest.param(stem, case, id=f"{stem}:{case['name']}"))
    return params


def flat(report: ScoreReport) -> dict[str, Any]:
    return {"mode": report.mode, **report.values, **report.coverage.as_dict()}


def assert_matches(actual: dict[str, Any], expected: dict[str, Any]) -> None:
    if "confusion_matrix" in actual and isinstance(actual["confusion_matrix"], list):
        actual = {**actual, "confusion_matrix_flat": [x for row in actual["confusion_matrix"] for x in row]}
    for key, want in expected.items():
        assert key in actual, f"missing key {key!r}"
        got = actual[key]
        if want is None:
            assert got is None, f"{key}: expected None (no number), got {got!r}"
        elif want == "nan":
            assert isinstance(got, float) and math.isnan(got), f"{key}: expected NaN, got {got!r}"
        elif isinstance(want, str):
            assert got == want, f"{key}: expected {want!r}, got {got!r}"
        elif isinstance(want, list):
            assert got == pytest.approx(want, abs=1e-12), f"{key}: expected {want}, got {got}"
        else:
            assert got == pytest.approx(want, abs=1e-12), f"{key}: expected {want}, got {got}"


def test_case_files_are_well_formed() -> None:
    params = _load_cases()
    cases = [p.values[1] for p in params]
    names = [c["name"] for c in cases]
    ids = [p.id for p in params]
    assert len(ids) == len(set(ids)), "case names must be unique within a file"
    for case in cases:
        assert ("expected" in case) != ("expected_error" in case), case["name"]
        assert {"name", "kwargs", "predictions", "references"} <= set(case), case["name"]
    # the brief's required coverage: ties, multi-relevant ties, drop vs strict, sklearn single-label edge
    for required in ("tie_alphabetical_official", "tie_expected_rank_single_relevant",
                     "expected_rank_two_relevant_in_one_tie", "official_drops_unparsable",
                     "strict_failure_counts_as_wrong", "official_single_label_sklearn_edge"):
        assert required in names


@pytest.mark.parametrize(("stem", "case"), _load_cases())
def test_golden_case(stem: str, case: dict[str, Any]) -> None:
    fn = FUNCTIONS[case.get("function", stem)]
    if "expected_error" in case:
        with pytest.raises(SciprobeError) as excinfo:
            fn(case["predictions"], case["references"], **case["kwargs"])
        message = str(excinfo.value)
        assert case["expected_error"] in message
        assert "\n" not in message, "errors must be one clear line"
        assert isinstance(excinfo.value, ValueError)
        return
    report = fn(case["predictions"], case["references"], **case["kwargs"])
    assert isinstance(report, ScoreReport)
    assert_matches(flat(report), case["expected"])
