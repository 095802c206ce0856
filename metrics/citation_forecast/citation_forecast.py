# SPDX-License-Identifier: Apache-2.0
"""Citation-count forecast metrics (MAE, R², Pearson, Spearman, log1p MAE/Pearson) as an `evaluate` module.

PreScience T4 (spec ``prescience.md`` §2 T4, pitfall 12). A thin declaration over
:func:`sciprobe.benchmarks.prescience.scoring.forecast.citation_forecast`; all arithmetic lives in ``sciprobe``.
"""

import datasets
import evaluate

from sciprobe.interop.metric_module import metric_info
from sciprobe.benchmarks.prescience.scoring.forecast import citation_forecast

_DESCRIPTION = """\
Scores forecasts of a paper's citation count (PreScience: citations in the first 12 months) against the
observed counts: MAE, R² (sklearn definition), Pearson and Spearman correlations in raw space, and MAE and
Pearson of log1p(count) with predictions clipped at 0 first. Missing predictions (None) are recorded
failures: excluded (default) or scored as 0.
"""

_KWARGS_DESCRIPTION = """
Computes citation-forecast metrics.
Args:
    predictions (`list` of `float`): predicted counts, one per paper; None marks a missing prediction.
    references (`list` of `float`): observed counts (non-negative).
    missing (`str`, default "exclude"): "exclude" drops missing predictions from the numbers (they stay in
        n_failed), "zero" scores them as 0.
Returns:
    mae, r2, pearson, spearman (`float`): raw-space metrics (a correlation over constant input is None).
    log1p_mae, log1p_pearson (`float`): metrics of log1p(count), predictions clipped at 0.
    n (`int`): items in the numbers; n_items, n_scored, n_failed (`int`), failure_rate (`float`): coverage.
Examples:

    >>> metric = evaluate.load("metrics/citation_forecast")
    >>> results = metric.compute(predictions=[1, 2, 3], references=[1, 2, 4])
    >>> print(round(results["mae"], 4), round(results["r2"], 4), results["spearman"])
    0.3333 0.7857 1.0

    A missing prediction is counted, not silently dropped:

    >>> results = metric.compute(predictions=[None, 3, 5], references=[9, 2, 5])
    >>> print(results["mae"], results["n_scored"], results["n_failed"])
    0.5 2 1
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class CitationForecast(evaluate.Metric):
    """Regression metrics for citation-count forecasts."""

    def _info(self):
        return metric_info("prescience", _DESCRIPTION, _KWARGS_DESCRIPTION,
                           datasets.Features({"predictions": datasets.Value("float64"),
                                              "references": datasets.Value("float64")}),
                           codebase_urls=["https://github.com/allenai/prescience"],
                           reference_urls=["https://arxiv.org/abs/2602.20459"])

    def _compute(self, predictions, references, missing="exclude"):
        report = citation_forecast(list(predictions), list(references), missing=missing)
        return report.flat()
