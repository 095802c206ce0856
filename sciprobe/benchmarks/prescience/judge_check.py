"""LACER's judge check (``sciprobe judge-check`` on ``prescience:contribution_generation``): the stored judges'
scores are the run's ``lacer_official`` (parsed from the replies the run received and cached); another judge
re-judges the stored (gold, generation) pairs with the run's own judge prompt, checked by its SHA-256 so that
only the judge changes (PreScience Table 9 swaps the judge, not the prompt)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.run.judge_check import JudgeView


def _maybe_json(value: Any) -> Any:
    import json

    return json.loads(value) if isinstance(value, str) and value[:1] in "{[" else value


def _label(score: float) -> str:
    # LACER's scale is whole numbers 1..10: a score is its own category for Cohen's kappa
    return f"{score:g}"


class LacerCheck:
    """Scores (1-10), labels (the score itself) and no position swap: LACER judges one pair at a time."""

    scale = "LACER score (1-10)"

    def original(self, records: Sequence[Mapping[str, Any]], provenance: Mapping[str, Any]) -> list[JudgeView]:
        from sciprobe.leaderboard.agreement import lacer_scores_from_records

        table = lacer_scores_from_records(records)
        return [JudgeView(judge, scores, {i: _label(s) for i, s in scores.items()}) for judge, scores in table.items()]

    def rejudge(self, records: Sequence[Mapping[str, Any]], provenance: Mapping[str, Any], client: Any,
                options: Mapping[str, Any]) -> JudgeView:
        from sciprobe.benchmarks.prescience.lacer_judge import judge_pairs, load_template

        template = load_template(options.get("lacer_template"), upstream_dir=options.get("upstream_dir"))
        stored = provenance.get("lacer_template_sha256")
        if stored and stored != template.sha256:
            raise SciprobeError(
                f"the run was judged with another LACER prompt (sha256 {str(stored)[:12]}... from "
                f"{provenance.get('lacer_template_source')}) than the one found ({template.sha256[:12]}... from "
                f"{template.source}): pass the same one (--lacer-template FILE or --upstream-dir DIR), or the check "
                "would confound the judge with the prompt")
        # an item whose generation call got no answer has no response to judge (an unparsable one is judged as
        # empty text, as the run did)
        judged = [r for r in records if r.get("response") is not None]
        if not judged:
            raise SciprobeError("the run has no stored generation to re-judge")
        ids = [str(_maybe_json(r["id"])) for r in judged]
        run = judge_pairs(ids, [_maybe_json(r.get("prediction")) for r in judged],
                          [_maybe_json(r["gold"]) for r in judged], [client], template, desc="judge-check")
        per_item = run.per_judge[client.model_id]["official"].values["per_item"]
        scores = {i: float(s) for i, s in zip(ids, per_item) if s is not None}
        return JudgeView(client.model_id, scores, {i: _label(s) for i, s in scores.items()},
                         n_failed=len(ids) - len(scores))


LACER_CHECK = LacerCheck()
