# SPDX-License-Identifier: Apache-2.0
"""SciTaste-Bench Scheme 1 (correlation + dimension-accuracy composite) as an `evaluate` module.

A thin declaration over :func:`sciprobe.benchmarks.scitaste.scoring.composite.scitaste_composite` (spec
``scitaste.md`` §4.1,
§6.3, §6.4, §6.7); all arithmetic lives in ``sciprobe``. The sub-score mappings are a reconstruction.
"""

import datasets
import evaluate

from sciprobe.interop.metric_module import metric_info
from sciprobe.benchmarks.scitaste.scoring.composite import scitaste_composite

_DESCRIPTION = """\
SciTaste-Bench Scheme 1 over rows [total, A, B, C, D, E, F, G] (the ATI composite and the seven dimension
scores citation_impact, knowledge_breadth, semantic_novelty, disruptiveness, conceptual_innovation,
team_collaboration, journal_impact; all 0-100). Final = 0.15 s_spearman + 0.10 s_pearson + 0.15 s_error +
0.10 s_bias (Part A, on the total) + 0.30 s_dim_spearman + 0.20 s_dim_mae (Part B, weighted by the ATI
dimension weights); classes >= 80 excellent, >= 60 moderate, >= 40 poor, < 40 unusable. The paper gives the
sub-weights and classes but not how a statistic becomes a 0-100 sub-score: this module implements a documented
reconstruction ("scitaste-v1-placeholder": 100 * max(0, correlation); 100 - error; undefined correlations
score 0 and are listed). The B-F dimension weights are not published: pass `weights`, otherwise a placeholder
(known A 0.2948 and G 0.1531, equal B-F) is used and reported. A prediction row with any None/NaN is a failed
item: dropped (paper) and counted.
"""

_KWARGS_DESCRIPTION = """
Computes SciTaste-Bench Scheme 1 (reconstructed sub-score mapping).
Args:
    predictions (`list` of `list` of `float`): per item [total, A..G] in [0, 100]; None/NaN marks a failed answer.
    references (`list` of `list` of `float`): gold [total, A..G] in [0, 100].
    weights (`dict` or `list` of 7 `float`, optional): ATI dimension weights (A..G), >= 0, summing to 1.
    mae_share (`float`, default 0.5): share of MAE (vs RMSE) in the error sub-score.
    failure_policy (`str`, default "drop"): "drop" (paper) or "zero" (failed rows scored as 0).
    out_of_range (`str`, default "error"): predictions outside [0, 100] raise ("error") or are clipped ("clip").
Returns:
    mode (`str`): "reconstructed" or "reconstructed-strict".
    final (`float`), class (`str`), part_a (`float`), part_b (`float`) (parts on their own 0-100 scale),
    subscores (`dict`), spearman, pearson (`float` or None when undefined), mae, mse, rmse, bias (`float`),
    dim_spearman (`dict`, None when undefined), dim_mae (`dict`), weighted_dim_spearman, weighted_dim_mae,
    undefined_correlations (`list`), weights (`dict`), weights_source ("given" or "placeholder"),
    composite_consistency_mae (`float`, mean |reported total - weights . reported dims|), n_clipped,
    n_items, n_scored, n_failed (`int`), failure_rate (`float`).
Examples:

    Predictions that track the gold ranks exactly but over-rate by 5 points:

    >>> scitaste_composite = evaluate.load("metrics/scitaste_composite")
    >>> gold = [[60, 70, 50, 40, 30, 20, 10, 90], [40, 20, 30, 60, 50, 40, 80, 10], [80, 90, 70, 50, 60, 70, 40, 80]]
    >>> pred = [[v + 5 for v in row] for row in gold]
    >>> results = scitaste_composite.compute(predictions=pred, references=gold)
    >>> print(results["spearman"], results["mae"], results["bias"], results["subscores"]["error"])
    1.0 5.0 5.0 95.0
    >>> print(round(results["final"], 2), results["class"], results["weights_source"])
    97.75 excellent placeholder

    A constant prediction has no defined correlation: it scores 0 and is listed, never NaN.

    >>> flat = [[50.0] * 8] * 3
    >>> results = scitaste_composite.compute(predictions=flat, references=gold)
    >>> print(results["spearman"], results["subscores"]["spearman"], "spearman" in results["undefined_correlations"])
    None 0.0 True

    A failed answer (None) is dropped and counted:

    >>> results = scitaste_composite.compute(predictions=[pred[0], [None] * 8, pred[2]], references=gold)
    >>> print(results["n_scored"], results["n_failed"], results["mae"])
    2 1 5.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class ScitasteComposite(evaluate.Metric):
    """SciTaste-Bench Scheme 1 with a documented, parameterised sub-score reconstruction."""

    def _info(self):
        return metric_info("scitaste", _DESCRIPTION, _KWARGS_DESCRIPTION,
                           datasets.Features({"predictions": datasets.Sequence(datasets.Value("float64"), length=8),
                                             "references": datasets.Sequence(datasets.Value("float64"), length=8)}),
                           reference_urls=["https://huggingface.co/datasets/skylenage/SciTaste-benchmark"])

    def _compute(self, predictions, references, weights=None, mae_share=0.5, failure_policy="drop",
                 out_of_range="error"):
        report = scitaste_composite(
            predictions,
            references,
            weights=weights,
            mae_share=mae_share,
            failure_policy=failure_policy,
            out_of_range=out_of_range,
        )
        return report.flat()
