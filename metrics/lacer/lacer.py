# SPDX-License-Identifier: Apache-2.0
"""LACER (LLM-judge similarity of generated and gold title + abstract, 1–10) as an `evaluate` module.

PreScience T1 contribution generation (spec ``prescience.md`` §3). A thin declaration over
:func:`sciprobe.benchmarks.prescience.scoring.lacer.lacer`; the judge prompt is upstream's (template and system
message) read from a
local copy of the pinned commit (``upstream_dir``), or a user-supplied template file sent with sciprobe's own
system message (``template_path``).
"""

import datasets
import evaluate

from sciprobe.interop.metric_module import metric_info
from sciprobe.benchmarks.prescience.scoring.lacer import LacerTemplate
from sciprobe.benchmarks.prescience.scoring.lacer import lacer

_DESCRIPTION = """\
LACER asks an LLM judge to rate, on a calibrated 1-10 scale, how similar a generated title + abstract is to the
gold paper, with five lattices of exemplars in the prompt (PreScience, Appendix E.5). Upstream's judge messages
(its template and `lacer_score.py`'s system message) are read from `upstream_dir`, a local copy of
allenai/prescience at the pinned commit; `template_path` instead names another template, sent with sciprobe's own
system message. The judge is a callable `messages -> reply`, or stored `replies` are re-scored without calling a
judge. Official mode: first `Score:` match, no clamping; corrected mode: last
`Score:` match (a whole number token) clamped to [1, 10]. In both modes a reply without a score is a failure,
left out of the mean and counted in `n_failed`. Judge id and prompt hashes are returned for provenance; scores
from different judges are not comparable.
"""

_KWARGS_DESCRIPTION = """
Computes LACER.
Args:
    predictions (`list` of `dict`): generated {"title", "abstract"}.
    references (`list` of `dict`): gold {"title", "abstract"}.
    upstream_dir (`str`): a local copy of allenai/prescience at the pinned commit: upstream's template and
        system message (sha256-checked against the pins; a differing copy is reported in `prompt_warnings`).
    template_path (`str`): instead, another judge template (placeholders {{reference_title}},
        {{reference_abstract}}, {{generation_title}}, {{generation_abstract}}, each exactly once).
    judge_id (`str`): judge model and version, recorded with the scores.
    judge (`callable`, optional): messages -> reply text; required unless `replies` is given.
    replies (`list` of `str`, optional): stored judge replies to re-score.
    mode (`str`, default "official"): "official" or "corrected".
Returns:
    lacer (`float`), ci95_low, ci95_high (`float`), per_item (`list`), judge_id, template_sha256,
    system_prompt_sha256 (`str`), prompt_warnings (`list`), n_items, n_scored, n_failed (`int`),
    failure_rate (`float`).
Examples:

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.txt")
    >>> _ = open(path, "w").write("{{reference_title}} {{reference_abstract}} / "
    ...                           "{{generation_title}} {{generation_abstract}}")
    >>> metric = evaluate.load("metrics/lacer")
    >>> gold = [{"title": "A", "abstract": "a"}, {"title": "B", "abstract": "b"}]
    >>> gens = [{"title": "A2", "abstract": "a"}, {"title": "C", "abstract": "c"}]
    >>> results = metric.compute(predictions=gens, references=gold, template_path=path, judge_id="stored",
    ...                          replies=["Reasoning: close.\\nScore: 8", "Reasoning: unsure."])
    >>> print(results["lacer"], results["n_failed"])
    8.0 1
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Lacer(evaluate.Metric):
    """LLM-judge similarity on the LACER 1-10 scale."""

    def _info(self):
        paper = {"title": datasets.Value("string"), "abstract": datasets.Value("string")}
        return metric_info("prescience", _DESCRIPTION, _KWARGS_DESCRIPTION,
                           datasets.Features({"predictions": paper, "references": paper}),
                           codebase_urls=["https://github.com/allenai/prescience"],
                           reference_urls=["https://arxiv.org/abs/2602.20459"])

    def _compute(self, predictions, references, template_path=None, judge_id=None, judge=None, replies=None,
                 mode="official", upstream_dir=None):
        if (template_path is None) == (upstream_dir is None):
            raise ValueError("lacer needs upstream_dir=<a copy of allenai/prescience at the pinned commit> or "
                             "template_path=<another LACER judge template file>, one of the two")
        if judge is None and replies is None:
            raise ValueError("lacer needs a judge callable or stored replies")
        if upstream_dir is not None:
            from sciprobe.benchmarks.prescience.lacer_judge import official_template

            template = official_template(upstream_dir=upstream_dir, option=None)
        else:
            template = LacerTemplate.from_path(template_path)
        report = lacer(list(predictions), list(references), judge=judge, template=template,
                       judge_id=judge_id or "", mode=mode, replies=replies)
        values = {k: v for k, v in report.values.items() if k not in ("raw_replies", "judge_errors")}
        return {"mode": report.mode, **values, "judge_id": report.params["judge_id"],
                "template_sha256": report.params["template_sha256"],
                "system_prompt_sha256": report.params["system_prompt_sha256"],
                "prompt_warnings": list(template.warnings), **report.coverage.as_dict()}
