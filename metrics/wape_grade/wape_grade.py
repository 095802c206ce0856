# SPDX-License-Identifier: Apache-2.0
"""SciTaste-Bench Scheme 2 (WAPE, grade A-F, 0-100 score) as an `evaluate` module.

A thin declaration over :func:`sciprobe.benchmarks.scitaste.scoring.wape.wape_grade` (spec ``scitaste.md`` §4.2, §4.4,
§6.2);
all arithmetic lives in ``sciprobe``.
"""

import datasets
import evaluate

from sciprobe.interop.metric_module import metric_info
from sciprobe.benchmarks.scitaste.scoring.wape import wape_grade

_DESCRIPTION = """\
Weighted absolute percentage error of predicted vs gold scores on a 0-100 scale, WAPE = sum|p - g| / sum g
(in percent), its SciTaste-Bench letter grade (A < 5 %, B 5-10 %, C 10-20 %, D 20-30 %, E 30-50 %, F >= 50 %)
and a 0-100 score interpolated linearly between documented knots inside each band. The grade bands are the
paper's; the knots are a reconstruction (preset "scitaste-v1-reconstructed": 0->100, 5->90, 10->75, 20->60,
30->40, 50->20, 100->0) that reproduces the paper's 13.1 % -> 70.4 (grade C); pass `knots=` to change them.
A prediction of None or NaN is a failed item: dropped as in the paper (`failure_policy="drop"`) or scored as 0
(`"zero"`), and always counted. With `groups` (e.g. disciplines) the per-group breakdown and the macro average
of the group scores are returned beside the pooled headline.
"""

_KWARGS_DESCRIPTION = """
Computes SciTaste-Bench Scheme 2 over predicted and gold ATI totals.
Args:
    predictions (`list` of `float`): predicted scores in [0, 100]; None/NaN marks a failed answer.
    references (`list` of `float`): gold scores in [0, 100] (NaN, negative or > 100 raise; so does a zero sum).
    groups (`list` of `str`, optional): one group label per item (e.g. discipline) for the breakdown.
    knots (`str` or `list` of [wape_pct, score], default "scitaste-v1-reconstructed"): the score mapping.
    failure_policy (`str`, default "drop"): "drop" (paper: failures excluded) or "zero" (strict: failures = 0).
    out_of_range (`str`, default "error"): predictions outside [0, 100] raise ("error") or are clipped ("clip").
Returns:
    mode (`str`): "paper" (failures dropped) or "strict" (failures scored as 0).
    wape (`float`): fraction; wape_pct (`float`): percent. NaN when nothing could be scored.
    score (`float`): 0-100 via the knots; grade (`str`): A-F. Both None when nothing could be scored.
    mae (`float`), bias (`float`, mean p - g; positive = over-rating), n_clipped (`int`).
    by_group (`dict`), macro_score (`float`), macro_wape_pct (`float`), n_groups_scored (`int`): with groups.
    n_items, n_scored, n_failed (`int`), failure_rate (`float`): coverage.
Examples:

    The paper's Table 9 physics point: WAPE 13.1 % -> 70.35 (printed 70.4), grade C.

    >>> wape_grade = evaluate.load("metrics/wape_grade")
    >>> results = wape_grade.compute(predictions=[86.9], references=[100.0])
    >>> print(round(results["wape_pct"], 2), round(results["score"], 2), results["grade"])
    13.1 70.35 C

    Two disciplines, one failed answer (None) dropped and reported:

    >>> results = wape_grade.compute(
    ...     predictions=[68, 60, 35, 75, 58, 40, None], references=[72, 55, 38, 61, 44, 27, 50],
    ...     groups=["physics"] * 3 + ["biology"] * 4)
    >>> print(round(results["wape_pct"], 3), round(results["score"], 2), results["grade"], results["n_failed"])
    17.845 63.23 C 1
    >>> print(round(results["by_group"]["physics"]["score"], 2), results["by_group"]["biology"]["grade"])
    83.18 E
    >>> print(round(results["macro_score"], 2))
    61.06

    Strict variant: the failed answer counts as a prediction of 0.

    >>> results = wape_grade.compute(predictions=[68, 60, 35, 75, 58, 40, None],
    ...                              references=[72, 55, 38, 61, 44, 27, 50], failure_policy="zero")
    >>> print(results["mode"], round(results["wape_pct"], 2), results["grade"])
    strict 29.68 D
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class WapeGrade(evaluate.Metric):
    """SciTaste-Bench Scheme 2: WAPE, grade and reconstructed 0-100 score with coverage."""

    def _info(self):
        return metric_info("scitaste", _DESCRIPTION, _KWARGS_DESCRIPTION,
                           datasets.Features({"predictions": datasets.Value("float64"),
                                              "references": datasets.Value("float64")}),
                           reference_urls=["https://huggingface.co/datasets/skylenage/SciTaste-benchmark"])

    def _compute(self, predictions, references, groups=None, knots="scitaste-v1-reconstructed",
                 failure_policy="drop", out_of_range="error"):
        report = wape_grade(
            predictions,
            references,
            groups=groups,
            knots=knots,
            failure_policy=failure_policy,
            out_of_range=out_of_range,
        )
        return report.flat()
