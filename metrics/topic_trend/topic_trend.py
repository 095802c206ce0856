# SPDX-License-Identifier: Apache-2.0
"""Topic-trend forecast metrics (Δ-share R², Pearson, Spearman, MAE) as an `evaluate` module.

PreScience T6/T7 (spec ``prescience.md`` §2 T6/T7, pitfall 11). A thin declaration over
:func:`sciprobe.benchmarks.prescience.scoring.topic_trend.topic_trend`; all arithmetic lives in ``sciprobe``.
"""

import datasets
import evaluate

from sciprobe.interop.metric_module import metric_info
from sciprobe.benchmarks.prescience.scoring.topic_trend import topic_trend

_DESCRIPTION = """\
Scores forecasts of how many papers each unit (a topic, or a topic pair) will have in the forecast period,
through the change of the unit's share: Δs = s_forecast − s_history. Official mode (PreScience evaluator):
label-mass shares (count / sum over units, predictions clipped at 0, uniform fallback). Paper mode: per-paper
fractions (count / number of papers of the period). Reports delta_share, share and absolute blocks, each with
R² (sklearn definition), Pearson, Spearman and MAE.
"""

_KWARGS_DESCRIPTION = """
Computes topic-trend metrics over units.
Args:
    predictions (`list` of `float`): predicted forecast-period counts per unit; None = missing (scored as 0).
    references (`list` of `float`): observed forecast-period counts per unit (non-negative).
    history (`list` of `float`): history-period counts per unit (non-negative), same order.
    mode (`str`, default "official"): "official" (label-mass shares) or "paper" (per-paper fractions).
    history_papers, forecast_papers (`int`): number of papers of each period; required by mode="paper".
Returns:
    delta_share_r2, delta_share_pearson, delta_share_spearman, delta_share_mae (`float`): the headline block.
    share_* and absolute_* (`float`): the same metrics on shares and on raw counts.
    n_units, n_items, n_scored, n_failed (`int`), failure_rate (`float`): coverage.
Examples:

    >>> metric = evaluate.load("metrics/topic_trend")
    >>> results = metric.compute(predictions=[10, 30], references=[5, 15], history=[10, 10])
    >>> print(results["delta_share_r2"], results["delta_share_mae"])
    1.0 0.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TopicTrend(evaluate.Metric):
    """Δ-share metrics for topic and topic-pair growth forecasts."""

    def _info(self):
        return metric_info("prescience", _DESCRIPTION, _KWARGS_DESCRIPTION,
                           datasets.Features({"predictions": datasets.Value("float64"),
                                              "references": datasets.Value("float64")}),
                           codebase_urls=["https://github.com/allenai/prescience"],
                           reference_urls=["https://arxiv.org/abs/2602.20459"])

    def _compute(self, predictions, references, history=None, mode="official", history_papers=None,
                 forecast_papers=None):
        if history is None:
            raise ValueError("topic_trend needs history=[history-period count per unit]")
        report = topic_trend(list(predictions), list(references), list(history), mode=mode,
                             history_papers=history_papers, forecast_papers=forecast_papers)
        return report.flat()
