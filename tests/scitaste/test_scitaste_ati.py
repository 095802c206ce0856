"""Academic Taste Index functions (spec scitaste.md §1.6, §1.7, §6.1): composite, A/B-F/G mappings and the
least-squares weight solve with the two published weights as checks."""

from __future__ import annotations

import numpy as np
import pytest

from sciprobe.benchmarks.scitaste import ati
from sciprobe.benchmarks.scitaste.synthetic import FIXTURE_WEIGHTS, release_records
from sciprobe.core.errors import SciprobeError
from sciprobe.benchmarks.scitaste.scoring.composite import DIMENSIONS, KNOWN_WEIGHTS


def test_known_weights_are_the_published_ratios() -> None:
    assert KNOWN_WEIGHTS["citation_impact"] == pytest.approx(37.99 / 128.86) == pytest.approx(0.294816, abs=1e-6)
    assert KNOWN_WEIGHTS["journal_impact"] == pytest.approx(19.73 / 128.86) == pytest.approx(0.153112, abs=1e-6)


def test_ati_total_is_the_weighted_sum() -> None:
    dims = {d: 10.0 * (i + 1) for i, d in enumerate(DIMENSIONS)}
    w = [0.1, 0.1, 0.1, 0.1, 0.2, 0.2, 0.2]
    expected = sum(wi * v for wi, v in zip(w, dims.values()))
    assert ati.ati_total([dims], w)[0] == pytest.approx(expected)
    assert ati.ati_total([list(dims.values())], dict(zip(DIMENSIONS, w)))[0] == pytest.approx(expected)
    with pytest.raises(SciprobeError, match=r"\[0, 100\]"):
        ati.ati_total([[120, 0, 0, 0, 0, 0, 0]], w)


def test_solve_weights_recovers_the_fixture_weights_from_released_gold() -> None:
    records = release_records(n_selected=50, n_backup=0)["selected"]  # 300 papers, 2-decimal rounding
    solve = ati.solve_weights([r["dimension_scores"] for r in records], [r["innovation_score"] for r in records])
    assert solve.rank == 7 and solve.n_papers == 300 and solve.exact
    assert sum(solve.weights.values()) == pytest.approx(1.0, abs=1e-12)
    for key, value in FIXTURE_WEIGHTS.items():
        assert solve.weights[key] == pytest.approx(value, abs=2e-4)
    assert solve.checks_pass()  # solved A and G agree with the paper's 29.5 % and 15.3 %
    assert solve.max_abs_residual <= 0.006  # the rounding of the released totals


def test_solve_weights_flags_a_gold_that_contradicts_the_known_weights() -> None:
    rng = np.random.default_rng(5)
    dims = rng.uniform(0, 100, (40, 7))
    other = np.array([0.1, 0.2, 0.1, 0.1, 0.2, 0.1, 0.2])
    solve = ati.solve_weights(dims, dims @ other)
    assert solve.exact and not solve.checks_pass()
    assert solve.known_weight_errors["citation_impact"] == pytest.approx(0.1 - KNOWN_WEIGHTS["citation_impact"])


def test_solve_weights_bad_input() -> None:
    with pytest.raises(SciprobeError, match="at least 7 papers"):
        ati.solve_weights(np.ones((3, 7)), [1, 2, 3])
    with pytest.raises(SciprobeError, match="seven dimension scores"):
        ati.solve_weights(np.ones((8, 6)), np.ones(8))
    degenerate = ati.solve_weights(np.ones((10, 7)) * 50, np.full(10, 50.0))
    assert degenerate.rank == 1 and not degenerate.exact


def test_citation_score_blends_log_and_strictly_below_percentile() -> None:
    c = [0, 10, 100, 1000]
    pct = [0.0, 25.0, 50.0, 75.0]  # share of the population strictly below
    log = [100 * np.log1p(x) / np.log1p(1000) for x in c]
    assert np.allclose(ati.citation_score(c, log_weight=0.0), pct)
    assert np.allclose(ati.citation_score(c, log_weight=1.0), log)
    assert np.allclose(ati.citation_score(c), 0.5 * np.array(pct) + 0.5 * np.array(log))
    tied = ati.citation_score([5, 5, 5], log_weight=0.0)
    assert np.allclose(tied, 0.0)  # nobody is strictly below a tie
    with pytest.raises(SciprobeError):
        ati.citation_score([-1, 3])


def test_mean_rank_percentile_formulas() -> None:
    assert np.allclose(ati.mean_rank_percentile([3, 1, 2]), [100, 0, 50])
    assert np.allclose(ati.mean_rank_percentile([3, 1, 2], "r/n"), [100, 100 / 3, 200 / 3])
    assert np.allclose(ati.mean_rank_percentile([1, 1, 2]), [25, 25, 100])  # ties averaged
    with pytest.raises(SciprobeError, match="rank_formula"):
        ati.mean_rank_percentile([1, 2], "z")


def test_pca_rank_score_orientation_imputation_and_ranks() -> None:
    rng = np.random.default_rng(2)
    latent = rng.normal(size=200)
    features = np.column_stack([latent + rng.normal(0, 0.3, 200), 2 * latent + rng.normal(0, 0.3, 200)])
    scores = ati.pca_rank_score(features)
    assert scores.min() == 0 and scores.max() == 100
    assert np.corrcoef(scores, latent)[0, 1] > 0.9  # sign flipped to agree with the variables
    flipped = ati.pca_rank_score(-features)
    assert np.corrcoef(flipped, -latent)[0, 1] > 0.9
    with_missing = features.copy()
    with_missing[0, 1] = np.nan
    assert np.isfinite(ati.pca_rank_score(with_missing)).all()
    all_missing = np.column_stack([features[:, 0], np.full(200, np.nan)])  # column with no value -> 0
    assert np.allclose(ati.pca_rank_score(all_missing), ati.mean_rank_percentile(features[:, 0]))


def test_journal_impact_blend_and_quartile_points() -> None:
    g = ati.journal_impact([1.0, 5.0, float("nan")], ["Q1", "Q3", None], [1, "zone 2", ""])
    # IF percentile among observed: 0 and 100; JCR Q1 100, Q3 50; CAS 1 -> 100, 2 -> 75
    assert np.allclose(g, [0.7 * 0 + 0.15 * 100 + 0.15 * 100, 0.7 * 100 + 0.15 * 50 + 0.15 * 75, 0.0])
    assert [ati.quartile_points(q) for q in ("Q1", "Q2", 3, "4", None)] == [100, 75, 50, 25, 0]
    with pytest.raises(SciprobeError, match="1-4"):
        ati.quartile_points("Q5")
