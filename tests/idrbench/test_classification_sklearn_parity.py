"""The numpy metrics of sciprobe.scoring.classification equal scikit-learn's and scipy's own, value for value,
over every (gold, prediction) confusion matrix of 2 to 8 items (the official code calls sklearn; sciprobe
computes the same formulas without importing it: issue 28). Eight items already give every pattern of empty and
non-empty cells, with unequal counts in each; 12 items (1,365 matrices) took 16 s for nothing more."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from sciprobe.scoring.classification import binary_classification, official_metrics

sklearn_metrics = pytest.importorskip("sklearn.metrics")
scipy_stats = pytest.importorskip("scipy.stats")


def _samples(max_items: int = 8):
    """One (gold, pred) sample per confusion matrix [[tn, fp], [fn, tp]] with 2..max_items items."""
    for n in range(2, max_items + 1):
        for tn, fp, fn in itertools.product(range(n + 1), repeat=3):
            tp = n - tn - fp - fn
            if tp < 0:
                continue
            gold = [False] * (tn + fp) + [True] * (fn + tp)
            pred = [False] * tn + [True] * fp + [False] * fn + [True] * tp
            yield np.array(gold), np.array(pred)


def _sklearn_official(t: np.ndarray, p: np.ndarray) -> dict:
    m = sklearn_metrics
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f1 = m.f1_score(t, p, average=None, zero_division=0)
        return {"confusion_matrix": m.confusion_matrix(t, p).tolist(), "accuracy": m.accuracy_score(t, p),
                "precision": m.precision_score(t, p, zero_division=0), "recall": m.recall_score(t, p, zero_division=0),
                "f1_score_0": f1[0], "f1_score_1": f1[1],
                "macro_f1": m.f1_score(t, p, average="macro", zero_division=0),
                "weighted_f1_score": m.f1_score(t, p, average="weighted", zero_division=0),
                "gmean_f1_score": scipy_stats.gmean(f1),
                "auc": m.roc_auc_score(t, p) if np.unique(t).size > 1 else None}


def _same(ours, theirs) -> bool:
    if ours is None or theirs is None:
        return ours is None and theirs is None
    if isinstance(ours, list):
        return ours == theirs
    return math.isclose(float(ours), float(theirs), rel_tol=1e-12, abs_tol=1e-15)


def test_official_metrics_equal_sklearn_on_every_small_confusion_matrix():
    checked = 0
    for t, p in _samples():
        ours, _ = official_metrics(t, p)
        if len(set(t.tolist()) | set(p.tolist())) < 2:
            assert ours is None  # upstream's 1x1 confusion matrix: no metrics
            continue
        theirs = _sklearn_official(t, p)
        for key, value in theirs.items():
            assert _same(ours[key], value), (key, t.tolist(), p.tolist(), ours[key], value)
        checked += 1
    assert checked > 400


def test_strict_mode_values_equal_sklearn():
    m = sklearn_metrics
    for t, p in _samples(8):
        values = binary_classification(p.tolist(), t.tolist(), mode="strict").values
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            both = [False, True]
            expected = {"macro_f1": m.f1_score(t, p, labels=both, average="macro", zero_division=0),
                        "accuracy": m.accuracy_score(t, p), "balanced_accuracy": m.balanced_accuracy_score(t, p),
                        "tpr": m.recall_score(t, p, labels=both, average=None, zero_division=0)[1],
                        "negative_f1": m.f1_score(t, p, labels=both, average=None, zero_division=0)[0]}
        for key, value in expected.items():
            assert _same(values[key], value), (key, t.tolist(), p.tolist(), values[key], value)
