"""binary_classification / sklearn_macro_f1 against scikit-learn (spec idrbench.md §5.1, §9.2)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score, recall_score, roc_auc_score

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.classification import binary_classification, normalize_label, sklearn_macro_f1, subject_set_f1


def _random_cases(n_cases: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(n_cases):
        n = int(rng.integers(1, 15))
        p_true, p_pred = rng.uniform(0, 1, size=2)
        # skewed probabilities make single-label samples (sklearn's edge case) frequent
        y_true = rng.random(n) < p_true ** 2
        y_pred = rng.random(n) < p_pred ** 2
        failed = rng.random(n) < rng.uniform(0, 0.5)
        yield y_true, y_pred, failed


def test_macro_f1_matches_sklearn_exactly_on_random_samples() -> None:
    single_label_seen = 0
    for y_true, y_pred, _ in _random_cases(1500, seed=0):
        want = f1_score(y_true.tolist(), y_pred.tolist(), average="macro", zero_division=0)
        assert sklearn_macro_f1(y_true, y_pred) == want
        both = f1_score(y_true, y_pred, labels=[False, True], average="macro", zero_division=0)
        assert sklearn_macro_f1(y_true, y_pred, labels=(False, True)) == both
        single_label_seen += np.union1d(y_true, y_pred).size == 1
    assert single_label_seen > 50, "the random cases must exercise the single-label edge case"


def test_single_label_edge_case_is_one_like_sklearn() -> None:
    for value in (True, False):
        y = [value] * 4
        assert f1_score(y, y, average="macro", zero_division=0) == 1.0
        assert sklearn_macro_f1(y, y) == 1.0
        assert sklearn_macro_f1(y, y, labels=(False, True)) == 0.5


def test_official_mode_equals_sklearn_after_dropping_failures() -> None:
    checked = no_number = 0
    for y_true, y_pred, failed in _random_cases(400, seed=1):
        preds = [None if f else ("yes" if p else "no") for p, f in zip(y_pred, failed)]
        refs = ["yes" if t else "no" for t in y_true]
        report = binary_classification(preds, refs, mode="official")
        keep = ~failed
        assert report.coverage.n_items == len(refs)
        assert report.coverage.n_failed == int(failed.sum())
        assert report.values["n_parsed"] == int(keep.sum())
        assert report.values["parse_failure_rate"] == pytest.approx(failed.mean())
        t, p = y_true[keep].tolist(), y_pred[keep].tolist()
        if len(set(t) | set(p)) < 2:  # upstream's evaluate_file fails: no number, with the reason
            assert report.values["macro_f1"] is None and report.values["auc"] is None
            assert report.values["no_score_reason"] and report.coverage.n_scored == 0
            no_number += 1
            continue
        assert report.coverage.n_scored == int(keep.sum())
        v = report.values
        assert v["macro_f1"] == f1_score(t, p, average="macro", zero_division=0)
        assert v["positive_f1"] == pytest.approx(f1_score(t, p, labels=[True], average="macro", zero_division=0))
        assert v["negative_f1"] == pytest.approx(f1_score(t, p, labels=[False], average="macro", zero_division=0))
        assert v["tpr"] == pytest.approx(recall_score(t, p, pos_label=True, zero_division=0))
        assert v["tnr"] == pytest.approx(recall_score(t, p, pos_label=False, zero_division=0))
        assert v["accuracy"] == pytest.approx(accuracy_score(t, p))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert v["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(t, p))
        if len(set(t)) == 2:  # the official code's ROC-AUC on hard predictions = balanced accuracy
            assert v["balanced_accuracy"] == pytest.approx(roc_auc_score(t, p)) == v["auc"]
        assert v["f1_score_1"] == v["positive_f1"] and v["f1_score_0"] == v["negative_f1"]
        assert v["weighted_f1_score"] == f1_score(t, p, average="weighted", zero_division=0)
        assert sum(map(sum, v["confusion_matrix"])) == v["size"] == len(t)
        checked += 1
    assert checked > 200 and no_number > 20


@pytest.mark.parametrize("policy", ["wrong", "no"])
def test_strict_mode_equals_sklearn_on_imputed_predictions(policy: str) -> None:
    for y_true, y_pred, failed in _random_cases(400, seed=2):
        preds = [None if f else bool(p) for p, f in zip(y_pred, failed)]
        report = binary_classification(preds, y_true.tolist(), mode="strict", failure_policy=policy)
        imputed = np.where(failed, ~y_true if policy == "wrong" else False, y_pred)
        assert report.coverage.n_scored == len(y_true)
        assert report.values["macro_f1"] == f1_score(y_true, imputed, labels=[False, True], average="macro",
                                                     zero_division=0)
        assert report.values["accuracy"] == pytest.approx(accuracy_score(y_true, imputed))
        assert report.params["failure_policy"] == policy


def test_dropping_failures_flatters_official_mode() -> None:
    preds = ["yes", None, "no", None]
    refs = ["yes", "yes", "no", "no"]
    official = binary_classification(preds, refs)
    strict = binary_classification(preds, refs, mode="strict")
    assert official.values["accuracy"] == 1.0 and official.values["macro_f1"] == 1.0
    assert official.values["confusion_matrix"] == [[1, 0], [0, 1]]
    assert strict.values["accuracy"] == 0.5
    # strict pred [Y, N, N, Y] vs gold [Y, Y, N, N]: F1(yes) = F1(no) = 2/4
    assert strict.values["macro_f1"] == pytest.approx(0.5)
    assert official.params["failure_policy"] == "drop"
    assert any("dropped 2" in note for note in official.notes)


def test_label_normalisation_accepts_documented_forms_only() -> None:
    for value, want in [("yes", True), (" No\n", False), ("YES", True), (True, True), (np.bool_(False), False),
                        (1, True), (0, False), (np.int64(1), True)]:
        assert normalize_label(value) is want
    assert normalize_label(None, allow_none=True) is None
    for bad in ["y", "true", "", 2, 1.0, -1, ["yes"]]:
        with pytest.raises(SciprobeError, match="unknown label"):
            normalize_label(bad, field="predictions", index=3)
    with pytest.raises(SciprobeError, match=r"predictions\[3\]"):
        normalize_label("maybe", field="predictions", index=3)


def test_numpy_inputs_and_report_shape() -> None:
    report = binary_classification(np.array([1, 0, 1]), np.array([True, False, False]), mode="strict")
    d = report.as_dict()
    assert d["metric"] == "binary_classification" and d["mode"] == "strict"
    assert set(report.values) == {"macro_f1", "positive_f1", "negative_f1", "tpr", "tnr", "accuracy",
                                  "balanced_accuracy", "n_parsed", "parse_failure_rate"}
    assert d["coverage"] == {"n_items": 3, "n_scored": 3, "n_failed": 0, "failure_rate": 0.0}
    assert report.values["accuracy"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("kwargs, match", [
    ({"mode": "lenient"}, "mode must be one of"),
    ({"positive": "true"}, "positive must be"),
    ({"failure_policy": "drop"}, "failure_policy must be one of"),
])
def test_bad_options_raise(kwargs: dict, match: str) -> None:
    with pytest.raises(SciprobeError, match=match):
        binary_classification(["yes"], ["yes"], **kwargs)


def test_sklearn_macro_f1_rejects_empty_and_mismatched() -> None:
    with pytest.raises(SciprobeError, match="empty"):
        sklearn_macro_f1([], [])
    with pytest.raises(SciprobeError, match="equally long"):
        sklearn_macro_f1([True], [True, False])


def test_subject_set_f1_normalises_and_counts_failures() -> None:
    report = subject_set_f1([["Physics"], ["  quantitative   BIOLOGY "], None],
                            [["physics"], ["Quantitative Biology", "Physics"], ["Other"]])
    assert report.values["set_f1"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert report.values["jaccard"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert report.coverage.n_failed == 1 and report.coverage.n_scored == 3
    with pytest.raises(SciprobeError, match="differ in length"):
        subject_set_f1([["a"]], [["a"], ["b"]])
    with pytest.raises(SciprobeError, match="empty"):
        subject_set_f1([], [])
