"""Item statistics (sciprobe.scoring.item_scores) reproduce the scorers they stand for, weights act as item
multiplicities, and the bootstrap is seeded, clustered and percentile-based (sciprobe.scoring.bootstrap)."""

from __future__ import annotations

import numpy as np
import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.bootstrap import BootstrapSettings, bootstrap, interval, mcnemar, paired_bootstrap_p, units_of
from sciprobe.scoring.classification import binary_classification
from sciprobe.scoring.item_scores import (ItemScores, binary_f1_items, delta_share_r2_items, evaluate_statistic,
                                          mean_items, wape_items)
from sciprobe.benchmarks.prescience.scoring.topic_trend import topic_trend
from sciprobe.benchmarks.scitaste.scoring.wape import resolve_knots, wape_grade


def _labels(rng: np.random.Generator, n: int, p_none: float) -> tuple[list[str], list[str | None]]:
    gold = [str(x) for x in rng.choice(["yes", "no"], size=n, p=[0.2, 0.8])]
    pred: list[str | None] = [str(x) for x in rng.choice(["yes", "no"], size=n)]
    for i in np.flatnonzero(rng.random(n) < p_none):
        pred[i] = None
    return gold, pred


@pytest.mark.parametrize("seed", range(6))
def test_binary_macro_f1_is_the_classification_scorer(seed) -> None:
    rng = np.random.default_rng(seed)
    gold, pred = _labels(rng, 40, 0.2)
    failed = [p is None for p in pred]
    official = binary_classification(pred, gold, mode="official").values["macro_f1"]
    items = binary_f1_items([g == "yes" for g in gold], [None if p is None else p == "yes" for p in pred], failed,
                            official=True)
    assert items.value() == pytest.approx(official, abs=1e-12)
    strict = binary_classification(pred, gold, mode="strict").values["macro_f1"]
    imputed = [(g != "yes") if p is None else p == "yes" for g, p in zip(gold, pred)]
    assert binary_f1_items([g == "yes" for g in gold], imputed, failed, official=False).value() == \
        pytest.approx(strict, abs=1e-12)


def test_official_macro_f1_has_no_number_with_one_class_left() -> None:
    gold, pred = ["no", "no", "yes"], ["no", "no", None]
    assert binary_classification(pred, gold, mode="official").values["macro_f1"] is None
    items = binary_f1_items([False, False, True], [False, False, None], [False, False, True], official=True)
    assert np.isnan(items.value())
    assert items.scored().tolist() == [True, True, False]


def test_integer_weights_are_repeated_items() -> None:
    rng = np.random.default_rng(3)
    gold, pred = _labels(rng, 25, 0.1)
    items = binary_f1_items([g == "yes" for g in gold], [None if p is None else p == "yes" for p in pred],
                            [p is None for p in pred], official=False)
    weights = rng.integers(0, 4, size=25)
    repeated = [i for i, w in enumerate(weights) for _ in range(w)]
    expected = binary_classification([pred[i] if pred[i] else ("no" if gold[i] == "yes" else "yes")
                                      for i in repeated], [gold[i] for i in repeated], mode="strict")
    got = evaluate_statistic(items.statistic, items.arrays(), weights[None, :].astype(float), items.params)[0]
    assert got == pytest.approx(expected.values["macro_f1"], abs=1e-12)


def test_mean_skips_unscored_items_and_scales() -> None:
    items = mean_items([1, 0, None, 1], [False, False, True, False], scale=100.0)
    assert items.value() == pytest.approx(200 / 3)
    assert items.paired_test() == "mcnemar"
    assert mean_items([0.5, 0.25], [False, False]).paired_test() == "paired_bootstrap"
    assert mean_items([1, 0], [False, False], test="wilcoxon").paired_test() == "wilcoxon"


@pytest.mark.parametrize("policy", ["drop", "zero"])
def test_wape_score_is_scheme_2(policy) -> None:
    rng = np.random.default_rng(1)
    gold = rng.uniform(10, 90, 30)
    pred: list[float | None] = list(rng.uniform(0, 100, 30))
    pred[3] = pred[17] = None
    report = wape_grade(pred, gold, failure_policy=policy)
    column = [(0.0 if policy == "zero" else None) if p is None else p for p in pred]
    items = wape_items(column, list(gold), [p is None for p in pred], resolve_knots("scitaste-v1-reconstructed"))
    assert items.value() == pytest.approx(report.values["score"], abs=1e-9)


@pytest.mark.parametrize("mode", ["official", "paper"])
def test_delta_share_r2_is_the_topic_trend_scorer(mode) -> None:
    rng = np.random.default_rng(7)
    gold, history = rng.integers(0, 50, 20).astype(float), rng.integers(1, 50, 20).astype(float)
    pred: list[float | None] = list(rng.integers(0, 60, 20).astype(float))
    pred[4] = None
    papers = {"history_papers": 300, "forecast_papers": 350} if mode == "paper" else {}
    report = topic_trend(pred, gold, history, mode=mode, **papers)
    items = delta_share_r2_items([0.0 if p is None else p for p in pred], list(gold), list(history),
                                 [p is None for p in pred], **report.params)
    assert items.value() == pytest.approx(report.values["delta_share_r2"], abs=1e-9)


def test_item_scores_round_trip_and_checks() -> None:
    items = binary_f1_items([True, False], [None, False], [True, False], official=True)
    again = ItemScores.from_json(items.as_json())
    assert again.columns == {"gold": [1.0, 0.0], "pred": [None, 0.0]} and again.params == {"labels": "official"}
    with pytest.raises(SciprobeError, match="unknown item statistic"):
        ItemScores("median", {"value": [1]}, [False])
    with pytest.raises(SciprobeError, match="differ in length"):
        ItemScores("mean", {"value": [1, 2]}, [False])


# ---------------------------------------------------------------- bootstrap

def _mean_fn(values: np.ndarray):
    return lambda w: (w @ values) / w.sum(axis=1)


def test_bootstrap_is_seeded() -> None:
    values = np.arange(50, dtype=float)
    unit, n = units_of(None, 50)
    first = bootstrap(_mean_fn(values), unit, n, BootstrapSettings(200, seed=4))
    again = bootstrap(_mean_fn(values), unit, n, BootstrapSettings(200, seed=4))
    other = bootstrap(_mean_fn(values), unit, n, BootstrapSettings(200, seed=5))
    assert first.shape == (200, 1) and np.array_equal(first, again) and not np.array_equal(first, other)


def test_clusters_move_together() -> None:
    values = np.array([0.0, 1.0, 0.0, 1.0])
    unit, n = units_of(["a", "a", "a", "a"], 4)  # one cluster: every resample is the whole set
    assert n == 1
    samples = bootstrap(_mean_fn(values), unit, n, BootstrapSettings(100))
    assert np.all(samples == 0.5)
    unit, n = units_of(["a", None, "b", ""], 4)  # no label: an item is its own unit
    assert n == 4 and unit.tolist() == [0, 1, 2, 3]
    unit, n = units_of(["p1", "p1", "p2", "p1"], 4)
    assert n == 2 and unit.tolist() == [0, 0, 1, 0]


def test_interval_is_the_percentile_interval_of_finite_samples() -> None:
    samples = np.concatenate([np.arange(101, dtype=float), [np.nan, np.nan]])
    low, high, n = interval(samples, 0.9)
    assert (low, high, n) == (pytest.approx(5.0), pytest.approx(95.0), 101)
    assert interval(np.array([np.nan]), 0.95) == (None, None, 0)


def test_mcnemar_counts_discordant_pairs() -> None:
    test = mcnemar([1, 1, 1, 0, 1], [0, 0, 0, 0, 1])
    assert (test["only_a_correct"], test["only_b_correct"], test["n"]) == (3, 0, 5)
    assert test["p_value"] == pytest.approx(0.25)  # exact two-sided binomial, 3 of 3
    assert mcnemar([1, 0], [1, 0])["p_value"] == 1.0


def test_paired_bootstrap_p() -> None:
    assert paired_bootstrap_p(np.array([0.1, 0.2, 0.3, 0.4])) == 0.0
    assert paired_bootstrap_p(np.array([-1.0, 1.0, -1.0, 1.0])) == 1.0
    assert paired_bootstrap_p(np.array([np.nan])) is None
