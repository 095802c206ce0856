# SPDX-License-Identifier: Apache-2.0
"""SGI-Bench scores (SGI-Score and its five components) as one `evaluate` module with one config per
component plus `overall`.

A thin declaration over :mod:`sciprobe.benchmarks.sgibench.scoring` (spec ``sgibench.md`` §3, §3.6, §8, §9); all
arithmetic
lives in ``sciprobe``. Every config takes ``mode="official"`` (SGI-Bench@8268d43, quirks included) or
``mode="paper"`` (the paper's definitions).
"""

import json

import datasets
import evaluate

from sciprobe.core.errors import SciprobeError
from sciprobe.interop.metric_module import metric_info
from sciprobe.benchmarks.sgibench.scoring import deep_research
from sciprobe.benchmarks.sgibench.scoring import dry_experiment
from sciprobe.benchmarks.sgibench.scoring import idea
from sciprobe.benchmarks.sgibench.scoring import overall
from sciprobe.benchmarks.sgibench.scoring import reasoning
from sciprobe.benchmarks.sgibench.scoring import wet_experiment

_DESCRIPTION = """\
SGI-Bench scores. Configs: `deep_research` (Exact Match; last <answer> block), `idea_generation` (objective
terms with all-MiniLM-L6-v2 plus judge-panel votes), `dry_experiment` (PassAll@1/3/5, AET, SER from execution
results), `wet_experiment` (sequence similarity, parameter accuracy, final, and the soft scores soft_ss / soft_pa /
soft_final of SGI-Bench@3854aa9), `experimental_reasoning`
(multiple-choice accuracy; first \\boxed{X}) and `overall` (the SGI-Score: mean of the five component scores).
`mode="official"` reproduces the upstream scoring code, quirks included, and also reports what upstream would
have dropped; `mode="paper"` implements the paper's definitions. Failed items count as failures (score 0) and
every result carries its coverage (n_items, n_scored, n_failed).
"""

_KWARGS_DESCRIPTION = """
Computes one SGI-Bench component (or the SGI-Score) for the module's config.
Args:
    predictions: per item, by config --
        deep_research / wet_experiment / experimental_reasoning / idea_generation (`str`): the model response
            (None or "" ... a failed generation is passed as None);
        dry_experiment (`list` of `dict`): the unit-test runs of the item, each {stdout, stderr, returncode,
            wall_time, timed_out}; an empty list = the item was not run;
        overall (`float`): a component score on 0-100.
    references: per item, by config --
        deep_research (`str`): the reference answer; wet_experiment (`str`): the reference protocol;
        experimental_reasoning (`int`): the 0-based option index; idea_generation (`str`): the dataset row as
        JSON; dry_experiment (`list` of `str`): the reference outputs of the unit tests;
        overall (`str`): the component name (deep_research, idea_generation, dry_experiment, wet_experiment,
        experimental_reasoning).
    mode (`str`, default "official"): "official" or "paper".
    parsed_answers (`list` of `str`, optional, deep_research): LLM re-formatted answers (second EM candidate).
    votes (`list` of `dict`, optional, idea_generation): per item {"generated": {dim: n}, "cast": {dim: n}}.
    judge (`callable`, optional, dry_experiment): messages -> text, the output-equivalence judge.
    judge_outputs (`list` of `str`, optional): raw judge replies per item -- deep_research: the step judge
        (adds `step_level_accuracy`); experimental_reasoning: the reasoning-validity judge (adds `rv`). None
        marks a failed judge call (scored 0, counted in `judge_n_failed`).
    rel_tol (`float`, default 1e-6): numeric tolerance of paper mode (deep_research, wet, dry).
    coverage (`list` of `dict`, optional, overall): per component {n_items, n_scored, n_failed}.
Returns:
    mode (`str`), the component's numbers (e.g. exact_match, ss/pa/final and soft_ss/soft_pa/soft_final,
    passall_at_5, mca, sgi_score),
    per-item details, official-only `*_upstream` / `n_upstream_dropped`, and n_items, n_scored, n_failed,
    failure_rate.
Examples:

    Deep research: the last <answer> block, raw string equality (official) vs normalised (paper):

    >>> dr = evaluate.load("metrics/sgi_score", "deep_research")
    >>> preds = ["<answer>12</answer> ... <answer>46</answer>", "<answer>3.73,no peak</answer>", None]
    >>> refs = ["46", "3.73, no peak", "7"]
    >>> official = dr.compute(predictions=preds, references=refs)
    >>> print(round(official["exact_match"], 2), official["exact_match_upstream"], official["n_failed"])
    33.33 50.0 1
    >>> print(round(dr.compute(predictions=preds, references=refs, mode="paper")["exact_match"], 2))
    66.67

    Experimental reasoning: the first \\boxed{X} counts officially, the last (lenient) one in paper mode:

    >>> er = evaluate.load("metrics/sgi_score", "experimental_reasoning")
    >>> preds = ["\\\\boxed{A} or rather \\\\boxed{B}", "\\\\boxed{\\\\text{C}}"]
    >>> print(er.compute(predictions=preds, references=[1, 2])["mca"])
    0.0
    >>> print(er.compute(predictions=preds, references=[1, 2], mode="paper")["mca"])
    100.0

    Overall: components are rounded to two decimals before the mean (Gemini-3-Pro, Table 5):

    >>> sgi = evaluate.load("metrics/sgi_score", "overall")
    >>> print(sgi.compute(predictions=[18.48, 39.68, 36.64, 32.45, 41.92],
    ...                   references=["deep_research", "idea_generation", "dry_experiment",
    ...                               "wet_experiment", "experimental_reasoning"])["sgi_score"])
    33.83
"""

_RUN = {"stdout": datasets.Value("string"), "stderr": datasets.Value("string"),
        "returncode": datasets.Value("int64"), "wall_time": datasets.Value("float64"),
        "timed_out": datasets.Value("bool")}

_FEATURES = {
    "deep_research": {"predictions": datasets.Value("string"), "references": datasets.Value("string")},
    "idea_generation": {"predictions": datasets.Value("string"), "references": datasets.Value("string")},
    "dry_experiment": {"predictions": datasets.List(_RUN), "references": datasets.List(datasets.Value("string"))},
    "wet_experiment": {"predictions": datasets.Value("string"), "references": datasets.Value("string")},
    "experimental_reasoning": {"predictions": datasets.Value("string"), "references": datasets.Value("int64")},
    "overall": {"predictions": datasets.Value("float64"), "references": datasets.Value("string")},
}


def _runs(item):
    """evaluate hands a Sequence of structs back as a dict of lists or a list of dicts."""
    if isinstance(item, dict):
        keys = list(item)
        return [dict(zip(keys, values)) for values in zip(*(item[k] for k in keys))]
    return list(item or [])


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SgiScore(evaluate.Metric):
    """SGI-Bench component scores and the SGI-Score, official and paper modes."""

    def _info(self):
        # evaluate calls _info() while loading: a missing or unknown config fails there, not at compute time
        name = self.config_name
        if name not in _FEATURES:
            given = "no config" if name in (None, "default") else f"unknown config {name!r}"
            raise SciprobeError(f"sgi_score needs a config ({given}): evaluate.load(\"metrics/sgi_score\", CONFIG) "
                                f"with CONFIG one of {', '.join(_FEATURES)}")
        return metric_info("sgibench", _DESCRIPTION, _KWARGS_DESCRIPTION,
                           datasets.Features(_FEATURES[name]),
                           codebase_urls=["https://github.com/InternScience/SGI-Bench"],
                           reference_urls=["https://arxiv.org/abs/2512.16969",
                                           "https://huggingface.co/collections/InternScience/sgi-bench"])

    def _enforce_nested_string_type(self, schema, obj):
        # A failed generation is passed as None; evaluate only type-checks the first item, so a leading None
        # would otherwise be rejected although the Arrow column accepts nulls.
        if obj is None:
            return None
        return super()._enforce_nested_string_type(schema, obj)

    def _compute(self, predictions, references, mode="official", parsed_answers=None, votes=None, judge=None,
                 judge_outputs=None, rel_tol=1e-6, coverage=None):
        config = self.config_name
        if config not in _FEATURES:
            raise SciprobeError(f"unknown sgi_score config {config!r}; use one of {', '.join(_FEATURES)}")
        if config == "deep_research":
            report = deep_research.exact_match(predictions, references, parsed_answers=parsed_answers, mode=mode,
                                               rel_tol=rel_tol)
        elif config == "wet_experiment":
            report = wet_experiment.wet_experiment_scores(predictions, references, mode=mode, rel_tol=rel_tol)
        elif config == "experimental_reasoning":
            report = reasoning.multiple_choice_accuracy(predictions, references, mode=mode)
        elif config == "dry_experiment":
            runs = [_runs(p) or None for p in predictions]
            report = dry_experiment.dry_experiment_scores(runs, [list(r) for r in references], mode=mode,
                                                          judge=judge, rel_tol=rel_tol)
        elif config == "idea_generation":
            try:
                rows = [json.loads(r) for r in references]
            except (TypeError, ValueError):
                raise SciprobeError("idea_generation references must be dataset rows encoded as JSON") from None
            report = idea.idea_generation_scores(predictions, rows, votes=votes, mode=mode)
        else:
            covers = coverage or [None] * len(predictions)
            components = {name: ({"score": score, "coverage": cov} if cov else score)
                          for score, name, cov in zip(predictions, references, covers)}
            report = overall.sgi_score(components, mode=mode)
        result = report.flat()
        if judge_outputs is not None and config in ("deep_research", "experimental_reasoning"):
            if len(judge_outputs) != len(predictions):
                raise SciprobeError(f"judge_outputs has {len(judge_outputs)} items for {len(predictions)} predictions")
            if config == "deep_research":
                judged = deep_research.step_level_accuracy(judge_outputs, mode=mode)
                keys = ("step_level_accuracy", "step_level_accuracy_upstream")
            else:
                judged = reasoning.reasoning_validity(judge_outputs, mode=mode)
                keys = ("rv", "rv_upstream")
            result.update({k: judged.values[k] for k in keys if k in judged.values})
            result["judge_per_item"] = judged.values["per_item"]
            result["judge_n_failed"] = judged.coverage.n_failed
        return result
