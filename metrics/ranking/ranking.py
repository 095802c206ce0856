# SPDX-License-Identifier: Apache-2.0
"""Ranking metric (MRR, nDCG@k, hits@k, recall@k, R-precision) as an `evaluate` module.

Shared by IDRBench I2R and PreScience. A thin declaration over
:func:`sciprobe.scoring.ranking.ranking_metrics` (spec ``idrbench.md`` §5.2 and §9.9,
``prescience.md`` pitfall 9); all arithmetic lives in ``sciprobe``.
"""

import datasets
import evaluate

from sciprobe.interop.metric_module import metric_info
from sciprobe.scoring.ranking import ranking_metrics

_NDCG_CITATION = """\
@article{jarvelin2002cumulated,
  title   = {Cumulated Gain-Based Evaluation of {IR} Techniques},
  author  = {J{\\"a}rvelin, Kalervo and Kek{\\"a}l{\\"a}inen, Jaana},
  journal = {ACM Transactions on Information Systems},
  volume  = {20},
  number  = {4},
  pages   = {422--446},
  year    = {2002}
}
"""

_DESCRIPTION = """\
Scores ranked candidate lists against sets of relevant ids with binary relevance: mean reciprocal rank (the
IDRBench I2R headline number), nDCG@k with a log2 discount and an ideal ranking of min(k, #relevant) items,
hits@k, recall@k and R-precision, plus the per-query reciprocal ranks needed for paired significance tests.

Candidates with equal scores can be ordered three ways (`tie_policy`): "as_given" scores the list order;
"alphabetical" re-sorts by (score descending, id ascending), the IDRBench I2R ordering rule where ids are paper
titles (its MRR equals the official one for unique titles; the official nDCG@10 and duplicate titles are handled
by the I2R task's official mode, not here); "expected_rank" returns the exact expectation of every metric when the
order inside each group of equal scores is uniformly random.
"""

_KWARGS_DESCRIPTION = """
Computes ranking metrics over queries.
Args:
    predictions (`list` of `list` of `str`): per query, candidate ids in ranked order, best first. Ids must be
        unique within a list.
    references (`list` of `list` of `str`, or `list` of `str`): per query, the relevant ids (a single string
        is one relevant id). Each query needs at least one relevant id.
    scores (`list` of `list` of `float`, optional): per query, one score per candidate, aligned with
        `predictions` (higher is better). Required by "alphabetical" and "expected_rank".
    tie_policy (`str`, default "as_given"): "as_given", "alphabetical" (IDRBench I2R ordering) or
        "expected_rank" (exact expectation over random orderings of tied candidates).
    k_values (`list` of `int`, default [1, 3, 5, 10]): cut-offs for ndcg@k, hits@k and recall@k.
    require_relevant_in_candidates (`bool`, default False): raise if a relevant id is not among a query's
        candidates.
Returns:
    mode (`str`): the tie policy used.
    mrr (`float`): mean reciprocal rank; a query with no relevant candidate ranked contributes 0.
    per_query_rr (`list` of `float`): reciprocal rank of every query, in input order.
    r_precision (`float`): mean share of relevant ids among the top-#relevant candidates.
    ndcg@k, hits@k, recall@k (`float`): means over queries for every k in `k_values`.
    n_queries, n_items, n_scored, n_failed (`int`), failure_rate (`float`): coverage.
Examples:

    Two queries; the first relevant item is at rank 2 and rank 1:

    >>> ranking = evaluate.load("metrics/ranking")
    >>> results = ranking.compute(
    ...     predictions=[["p1", "p2", "p3"], ["q1", "q2", "q3"]],
    ...     references=[["p2"], ["q1", "q3"]],
    ...     k_values=[1, 3])
    >>> print(results["mrr"], results["per_query_rr"], results["hits@1"], results["recall@3"])
    0.75 [0.5, 1.0] 0.5 1.0
    >>> print(round(results["ndcg@3"], 4))
    0.7753

    Final tournament standings with a tie on points; gold title "Beta":

    >>> standings = [["Beta", "Alpha", "Gamma"]]
    >>> points = [[5.0, 5.0, 3.0]]
    >>> official = ranking.compute(predictions=standings, references=["Beta"], scores=points,
    ...                            tie_policy="alphabetical")
    >>> corrected = ranking.compute(predictions=standings, references=["Beta"], scores=points,
    ...                             tie_policy="expected_rank")
    >>> print(official["mrr"], corrected["mrr"])
    0.5 0.75
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Ranking(evaluate.Metric):
    """Binary-relevance ranking metrics with explicit tie policies."""

    def _info(self):
        ranked = datasets.Sequence(datasets.Value("string"))
        return metric_info("idrbench", _DESCRIPTION, _KWARGS_DESCRIPTION,
                           [datasets.Features({"predictions": ranked, "references": ranked}),
                            datasets.Features({"predictions": ranked, "references": datasets.Value("string")})],
                           codebase_urls=["https://github.com/project-ai4science/irllm-framework"],
                           reference_urls=["https://arxiv.org/abs/2507.15736",
                                           "https://en.wikipedia.org/wiki/Discounted_cumulative_gain"],
                           extra_citation=_NDCG_CITATION)

    def _compute(
        self,
        predictions,
        references,
        scores=None,
        tie_policy="as_given",
        k_values=(1, 3, 5, 10),
        require_relevant_in_candidates=False,
    ):
        report = ranking_metrics(
            predictions,
            references,
            scores=scores,
            tie_policy=tie_policy,
            k_values=k_values,
            require_relevant_in_candidates=require_relevant_in_candidates,
        )
        return report.flat()
