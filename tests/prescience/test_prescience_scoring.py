"""PreScience scoring: golden cases, cross-checks against sklearn/scipy and the shared ranking code, padding,
prediction files, and every non-generation task scored end to end offline with its baseline (spec
prescience.md §2, §9, pitfalls 9–12)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.prescience import offline_scoring as ev
from sciprobe.benchmarks.prescience.scoring.ranking_tasks import score_rankings
from sciprobe.benchmarks.prescience.synthetic import CorpusConfig, write_corpus
from sciprobe.core.errors import SciprobeError
from sciprobe.benchmarks.prescience.scoring.forecast import citation_forecast
from sciprobe.scoring.ranking import ranking_metrics
from sciprobe.benchmarks.prescience.scoring.topic_trend import topic_trend

from golden import load_cases

CASES = load_cases("prescience_scoring")


def _call(case: dict):
    kwargs = dict(case["kwargs"])
    fn = case["function"]
    if fn == "citation_forecast":
        return citation_forecast(case["predictions"], case["references"], **kwargs)
    if fn == "topic_trend":
        history = kwargs.pop("history")
        return topic_trend(case["predictions"], case["references"], history, **kwargs)
    return score_rankings(case["predictions"], case["references"], **kwargs)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_golden_case(case):
    if "expected_error" in case:
        with pytest.raises(SciprobeError, match=case["expected_error"]):
            _call(case)
        return
    report = _call(case)
    flat = {**report.values, **report.coverage.as_dict()}
    for key, expected in case["expected"].items():
        if expected is None:
            assert flat[key] is None, key
        else:
            assert flat[key] == pytest.approx(expected, abs=1e-12), key


def test_citation_metrics_match_sklearn_and_scipy():
    from sklearn.metrics import r2_score

    rng = np.random.default_rng(0)
    gold = rng.poisson(4, size=300).astype(float)
    pred = np.clip(gold + rng.normal(0, 3, size=300), -1, None)
    values = citation_forecast(pred.tolist(), gold.tolist()).values
    assert values["r2"] == pytest.approx(r2_score(gold, pred))
    assert values["mae"] == pytest.approx(np.mean(np.abs(gold - pred)))
    assert values["pearson"] == pytest.approx(stats.pearsonr(gold, pred)[0])
    assert values["spearman"] == pytest.approx(stats.spearmanr(gold, pred)[0])
    expected_log1p = stats.pearsonr(np.log1p(gold), np.log1p(np.clip(pred, 0, None)))[0]
    assert values["log1p_pearson"] == pytest.approx(expected_log1p)


def test_topic_trend_official_matches_upstream_formula():
    from sklearn.metrics import r2_score

    rng = np.random.default_rng(1)
    hist, gold = rng.integers(0, 50, 40), rng.integers(0, 60, 40)
    pred = gold + rng.normal(0, 5, 40)
    values = topic_trend(pred.tolist(), gold.tolist(), hist.tolist()).values
    clipped = np.clip(pred, 0, None)
    d_gt = gold / gold.sum() - hist / hist.sum()
    d_pred = clipped / clipped.sum() - hist / hist.sum()
    assert values["delta_share_r2"] == pytest.approx(r2_score(d_gt, d_pred))
    assert values["delta_share_pearson"] == pytest.approx(stats.pearsonr(d_gt, d_pred)[0])
    assert values["delta_share_spearman"] == pytest.approx(stats.spearmanr(d_gt, d_pred)[0])
    # the per-paper definition differs from the label-mass one on multilabel data
    paper = topic_trend(pred.tolist(), gold.tolist(), hist.tolist(), mode="paper",
                        history_papers=int(hist.sum() * 0.6), forecast_papers=int(gold.sum() * 0.6)).values
    assert paper["delta_share_mae"] != pytest.approx(values["delta_share_mae"])


def test_ranking_adapter_equals_shared_code_when_the_variants_agree():
    rng = np.random.default_rng(2)
    universe = [f"p{i}" for i in range(300)]
    preds, golds = [], []
    for _ in range(30):
        gold = rng.choice(universe, size=int(rng.integers(1, 10)), replace=False).tolist()
        pred = rng.permutation(universe)[:int(rng.integers(len(gold), 200))].tolist()
        preds.append(pred)
        golds.append(gold)
    shared = ranking_metrics(preds, golds, k_values=[1000]).values
    for variant in ("calculate_ndcg", "ndcg_at_k"):
        mine = score_rankings(preds, golds, variant=variant, pad=False).values
        assert mine["ndcg@1000"] == pytest.approx(shared["ndcg@1000"])
        assert mine["r_precision"] == pytest.approx(shared["r_precision"])


def test_padding_is_deterministic_and_uses_the_pool_only():
    pool = [f"c{i}" for i in range(5000)]
    a = score_rankings([["c1"], ["c2"]], [["c3"], ["c9"]], variant="ndcg_at_k", pools=[pool, pool], seed=5)
    b = score_rankings([["c1"], ["c2"]], [["c3"], ["c9"]], variant="ndcg_at_k", pools=[pool, pool], seed=5)
    assert a.values == b.values and a.values["n_padded"] == 2 * 999
    from sciprobe.benchmarks.prescience.scoring.ranking_tasks import clean_ranking

    padded, dropped, n = clean_ranking(["c1", "ghost"], pool, k=1000, unknown="drop", pad=True, seed=5, query=0)
    assert len(padded) == 1000 == len(set(padded)) and set(padded) <= set(pool)
    assert padded[0] == "c1" and dropped == 1 and n == 999


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ps-score")
    write_corpus(out, CorpusConfig(n_papers=3000, seed=5))
    return out


@pytest.mark.parametrize("task", ev.SCORED_TASKS)
def test_every_task_scores_end_to_end_with_its_baseline(release, task):
    data = ev.TaskData(release, task)
    preds = data.baseline_predictions()
    report = data.score(preds)
    assert report.coverage.n_items == len(data.instances) and report.coverage.n_failed == 0
    headline = get_benchmark("prescience").task(task).headline
    value = report.values[headline]
    assert value is not None and math.isfinite(value)
    if task in ev.RANKING_TASKS:
        # the baseline beats a seeded random ranking of the same pool
        rand = data.score({k: [] for k in preds}, mode="strict")
        assert value > rand.values["ndcg@1000"]
        assert rand.values["n_padded"] > 0


def test_contribution_generation_scores_offline(release):
    data = ev.TaskData(release, "contribution_generation")
    baseline = data.score(data.baseline_predictions())  # a random influential reference as the "generation"
    gold = data.score({r["corpus_id"]: {"title": r["title"], "abstract": r["abstract"]} for r in data.instances})
    assert gold.values["rougeL"] == 1.0 and 0 < baseline.values["rougeL"] < 1
    missing = data.score({})
    assert missing.values["rougeL"] == 0.0 and missing.coverage.n_failed == len(data.instances)
    with pytest.raises(SciprobeError, match="must be"):
        data.score({data.instances[0]["corpus_id"]: "just a string"})


def test_baseline_ranking_ids_are_all_pre_target(release):
    data = ev.TaskData(release, "prior_work_selection")
    preds = data.baseline_predictions()
    for row in data.instances[:60]:
        assert all(data.index.date_of(c) < row["date"] for c in preds[row["corpus_id"]])


def test_citation_mean_baseline_has_zero_r2_spread(release):
    data = ev.TaskData(release, "citation_prediction")
    preds = data.baseline_predictions("mean")
    assert len(set(preds.values())) == 1
    report = data.score(preds)
    assert report.values["pearson"] is None and report.notes  # constant forecast: correlation undefined, noted


def test_prediction_files(release, tmp_path):
    data = ev.TaskData(release, "prior_work_selection")
    preds = data.baseline_predictions()
    path = tmp_path / "preds.jsonl"
    with open(path, "w") as fh:
        for key, value in list(preds.items())[:-1]:  # one instance without a prediction
            fh.write(json.dumps({"id": key, "prediction": value}) + "\n")
    report = ev.score_prediction_file(release, "prior_work_selection", path)
    assert report.coverage.n_failed == 1
    with open(path, "a") as fh:
        fh.write(json.dumps({"id": next(iter(preds)), "prediction": []}) + "\n")
    with pytest.raises(SciprobeError, match="duplicate prediction"):
        ev.read_predictions(path)
    with pytest.raises(SciprobeError, match="not instances of this task"):
        data.score({"no-such-paper": ["x"]})
    with pytest.raises(SciprobeError, match="not scored from prediction files"):
        ev.TaskData(release, "no_such_task")


def test_unknown_ids_in_a_prediction_are_dropped_or_rejected(release):
    data = ev.TaskData(release, "future_combination")
    row = data.instances[0]
    future = data.index.window(row["date"], "2026-01-01")["corpus_id"].to_pylist()[:3]
    preds = {row["corpus_id"]: ["hallucinated-id", *future, *row["gold_corpus_ids"]]}
    report = data.score(preds)
    assert report.values["n_unknown_dropped"] == 1 + len(future)  # same-day and later papers are not candidates
    with pytest.raises(SciprobeError, match="not in the candidate pool"):
        data.score(preds, unknown="error")
