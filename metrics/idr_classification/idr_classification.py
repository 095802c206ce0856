# SPDX-License-Identifier: Apache-2.0
"""IDRBench Yes/No classification metric (IPI, I3 Set 1, I3 Set 2) as an `evaluate` module.

A thin declaration over :func:`sciprobe.scoring.classification.binary_classification`
(spec ``idrbench.md`` §5.1 and §9.2); all arithmetic lives in ``sciprobe``.
"""

import datasets
import evaluate

from sciprobe.interop.metric_module import metric_info
from sciprobe.scoring.classification import binary_classification

_DESCRIPTION = """\
Scores Yes/No answers of the IDRBench classification tasks: IPI (is this paper interdisciplinary?) and I3
(do these two cited papers form the integration of an interdisciplinary paper?). The headline number is
macro-F1; positive-class F1, negative-class F1, TPR, TNR, accuracy and balanced accuracy are reported beside it
together with how many answers could not be parsed.

Two modes, both computed by scikit-learn. `official` reproduces the released scoring code
(irllm-framework@aa621e4): unparsable answers are dropped, then its metrics dict is computed (macro-F1 =
`f1_score(average="macro", zero_division=0)`, confusion matrix, per-class and weighted F1, G-mean, ROC-AUC on
hard labels); where one class is left the released code gives no metrics and official mode gives no number
(`None`, with `no_score_reason`). `strict` keeps unparsable answers in the denominator, scores each one as
wrong (or as a "No" answer with `failure_policy="no"`) and averages F1 over both classes.
An empty string in `predictions` marks an answer that could not be parsed.
"""

_KWARGS_DESCRIPTION = """
Computes IDRBench macro-F1 and companion rates for Yes/No answers.
Args:
    predictions (`list` of `str`): one parsed answer per item: "yes" or "no" (case-insensitive). Use the empty
        string "" for an answer that could not be parsed (`None` is not reliably accepted by `evaluate`'s type
        check, so the empty string is the documented marker).
    references (`list` of `str`): gold labels, "yes" or "no".
    mode (`str`, default "official"): "official" drops unparsable answers (irllm-framework@aa621e4);
        "strict" keeps them and scores them by `failure_policy`.
    failure_policy (`str`, default "wrong"): strict mode only. "wrong" counts an unparsable answer as the
        opposite of the gold label; "no" counts it as a "No" answer.
    positive (`str`, default "yes"): the class that `positive_f1` and `tpr` refer to.
Returns:
    mode (`str`): "official" or "strict".
    failure_policy (`str`): "drop" in official mode, else the policy used.
    macro_f1 (`float` or None): official: scikit-learn macro-F1, None where the released code has no metrics
        (one class left after the drop); strict: mean of F1(no) and F1(yes).
    confusion_matrix, size, precision, recall, f1_score_0, f1_score_1, weighted_f1_score, gmean_f1_score, auc:
        official mode only, the released code's metrics dict (precision/recall of "yes").
    no_score_reason (`str`): official mode only, why there is no number.
    positive_f1 (`float`): F1 of the positive class. The paper's "random 0.176" baseline is this number.
    negative_f1 (`float`): F1 of the other class.
    tpr (`float`): recall of the positive class. tnr (`float`): recall of the other class.
    accuracy (`float`), balanced_accuracy (`float`): over the scored items.
    n_parsed (`int`), parse_failure_rate (`float`): parsed answers and the share that failed.
    n_items (`int`), n_scored (`int`), n_failed (`int`), failure_rate (`float`): coverage; in official mode
        n_scored excludes the unparsable answers.
Examples:

    Official mode drops the unparsable third answer:

    >>> idr_classification = evaluate.load("metrics/idr_classification")
    >>> results = idr_classification.compute(
    ...     predictions=["yes", "no", "", "Yes"], references=["yes", "yes", "no", "no"])
    >>> print(results["mode"], results["macro_f1"], results["n_scored"], results["n_failed"])
    official 0.25 3 1

    Strict mode keeps it and counts it as wrong (here: "yes" for a "no" item):

    >>> results = idr_classification.compute(
    ...     predictions=["yes", "no", "", "Yes"], references=["yes", "yes", "no", "no"],
    ...     mode="strict", failure_policy="wrong")
    >>> print(results["mode"], results["macro_f1"], results["accuracy"], results["n_scored"])
    strict 0.2 0.25 4

    When only one label survives the drop, the released code gives no metrics, so official mode has no number:

    >>> results = idr_classification.compute(
    ...     predictions=["yes", "yes", ""], references=["yes", "yes", "no"])
    >>> print(results["macro_f1"], results["positive_f1"], results["parse_failure_rate"])
    None None 0.3333333333333333
    >>> results = idr_classification.compute(
    ...     predictions=["yes", "yes", ""], references=["yes", "yes", "no"], mode="strict")
    >>> print(results["macro_f1"], results["positive_f1"], results["negative_f1"])
    0.4 0.8 0.0
"""

UNPARSED = ""


def _to_label(value):
    """Map the documented unparsable marker ("" or whitespace) to None; leave everything else to sciprobe."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return value


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class IdrClassification(evaluate.Metric):
    """IDRBench Yes/No macro-F1 with official (drop) and strict (keep failures) modes."""

    def _info(self):
        return metric_info("idrbench", _DESCRIPTION, _KWARGS_DESCRIPTION,
                           datasets.Features({"predictions": datasets.Value("string"),
                                              "references": datasets.Value("string")}),
                           codebase_urls=["https://github.com/project-ai4science/irllm-framework",
                                          "https://github.com/project-ai4science/idrbench-framework"],
                           reference_urls=["https://arxiv.org/abs/2507.15736",
                                           "https://scikit-learn.org/stable/modules/generated/sklearn.metrics.f1_score.html"])

    def _compute(self, predictions, references, mode="official", failure_policy="wrong", positive="yes"):
        report = binary_classification(
            [_to_label(p) for p in predictions],
            list(references),
            mode=mode,
            failure_policy=failure_policy,
            positive=positive,
        )
        return report.flat(failure_policy=report.params["failure_policy"])
