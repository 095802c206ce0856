"""paired_wilcoxon / compare_to_best (spec idrbench.md §5.3, §9.15)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.ranking import ranking_metrics
from sciprobe.scoring.significance import compare_to_best, paired_wilcoxon


def test_matches_scipy_two_sided_by_default() -> None:
    rng = np.random.default_rng(0)
    a = rng.random(60)
    b = a - rng.normal(0.05, 0.1, size=60)
    res = paired_wilcoxon(a, b)
    ref = stats.wilcoxon(a, b)
    assert res["statistic"] == pytest.approx(float(ref.statistic))
    assert res["p_value"] == pytest.approx(float(ref.pvalue))
    assert res["significant"] == (ref.pvalue < 0.05)
    assert res["alternative"] == "two-sided" and res["alpha"] == 0.05
    assert res["n"] == 60 and res["n_nonzero_differences"] == 60
    assert res["mean_difference"] == pytest.approx(float(np.mean(a - b)))


def test_clear_difference_is_significant_and_alternative_is_forwarded() -> None:
    a = [1.0, 0.5, 1.0, 1.0, 0.5, 1.0, 1.0, 0.33, 1.0, 1.0]
    b = [0.5, 0.25, 0.2, 0.1, 0.25, 0.5, 0.33, 0.25, 0.1, 0.2]
    two = paired_wilcoxon(a, b)
    assert two["significant"] is True
    assert two["p_value"] == pytest.approx(2 / 2 ** 10)  # exact: all 10 differences positive
    greater = paired_wilcoxon(a, b, alternative="greater")
    less = paired_wilcoxon(a, b, alternative="less")
    assert greater["p_value"] == pytest.approx(1 / 2 ** 10)
    assert less["p_value"] > 0.99 and less["significant"] is False
    assert paired_wilcoxon(a, b, alpha=0.001)["significant"] is False


def test_all_zero_differences_give_p_one_without_exception() -> None:
    rr = [1.0, 0.5, 0.0, 0.25]
    res = paired_wilcoxon(rr, list(rr))
    assert res == {**res, "statistic": 0.0, "p_value": 1.0, "significant": False, "n": 4,
                   "n_nonzero_differences": 0, "mean_difference": 0.0}


def test_zero_differences_are_discarded_by_default() -> None:
    a = [1.0, 1.0, 0.5, 0.5, 0.2]
    b = [1.0, 1.0, 0.25, 0.25, 0.1]
    res = paired_wilcoxon(a, b)
    assert res["n"] == 5 and res["n_nonzero_differences"] == 3
    assert res["p_value"] == pytest.approx(0.25)  # exact, 3 positive differences: 2 / 2**3
    assert res["zero_method"] == "wilcox"


def test_single_nonzero_difference_is_not_significant() -> None:
    res = paired_wilcoxon([0.5, 1.0], [0.5, 0.0])
    assert res["p_value"] == 1.0 and res["significant"] is False


@pytest.mark.parametrize("a, b, kwargs, match", [
    ([1.0, 2.0], [1.0], {}, "differ in length: 2 vs 1"),
    ([], [], {}, "at least one pair"),
    ([float("nan")], [1.0], {}, "NaN"),
    ([1.0], [1.0], {"alternative": "bigger"}, "alternative must be"),
    ([1.0], [1.0], {"alpha": 1.5}, "alpha must be"),
    (["x"], [1.0], {}, "numbers"),
])
def test_bad_input_raises(a, b, kwargs, match) -> None:
    with pytest.raises(SciprobeError, match=match):
        paired_wilcoxon(a, b, **kwargs)


def test_compare_to_best_marks_table2_style_asterisks() -> None:
    rng = np.random.default_rng(3)
    n = 80
    standings = [[f"t{j}" for j in rng.permutation(30)] for _ in range(n)]
    gold = [[s[0]] for s in standings]

    def model_rr(p_top: float, seed: int) -> list[float]:
        r = np.random.default_rng(seed)
        preds = [s if r.random() < p_top else list(r.permutation(s)) for s in standings]
        return ranking_metrics(preds, gold).values["per_query_rr"]

    per_query = {"strong": model_rr(0.8, 1), "close": model_rr(0.78, 2), "weak": model_rr(0.1, 3)}
    marks = compare_to_best(per_query)
    assert marks["strong"]["is_best"] or marks["close"]["is_best"]
    best = next(name for name, m in marks.items() if m["is_best"])
    assert marks[best]["test"] is None and marks[best]["tied_with_best"] is False
    assert marks["weak"]["tied_with_best"] is False and marks["weak"]["test"]["p_value"] < 0.05
    other = "close" if best == "strong" else "strong"
    assert marks[other]["tied_with_best"] is True
    assert marks["weak"]["mean"] == pytest.approx(np.mean(per_query["weak"]))
    with pytest.raises(SciprobeError):
        compare_to_best({})
    with pytest.raises(SciprobeError, match="differ in length"):
        compare_to_best({"a": [1.0, 0.5], "b": [0.5]})
