"""Judged SGI-Bench metrics next to the deterministic headline (shared/spec/sgibench.md §3.1 SLA, §3.5 RV,
§3.8, §8 "failure accounting").

The runners in :mod:`sciprobe.benchmarks.sgibench.judged_runners` ask the judges and store their raw replies in the
records (``<prefix>_replies``: ``{judge id: reply or None}`` as JSON text, plus ``judge_ids``); the scorers call
:func:`merge_judged` to add the judged metric to the deterministic report, so scoring stays a pure function of
the records and a rescore never calls a judge.

Keys added to the report (``<key>`` = ``step_level_accuracy`` or ``rv``, ``<p>`` = ``sla`` or ``rv``):

- ``<key>``: mean over the panel of each judge's score (one judge: that judge's score); ``None`` when no judge
  ran, with a note saying the judged metric was not computed;
- ``<key>_upstream`` (official mode): the same over the items upstream would have kept;
- ``<p>_n_items`` / ``<p>_n_scored`` / ``<p>_n_failed``: judge verdicts asked for (items x judges), parsed, and
  failed (no model response, judge call error, unparsable reply: each scores 0 and is counted);
- ``<key>_by_judge`` and ``<p>_coverage_by_judge``: per judge.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sciprobe.scoring.score_report import ScoreReport


def _decode(value: Any) -> dict[str, Any]:
    if not value:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return dict(value) if isinstance(value, Mapping) else {}


def judge_ids_of(records: Sequence[Mapping[str, Any]]) -> list[str]:
    for record in records:
        ids = record.get("judge_ids")
        if isinstance(ids, str):
            try:
                ids = json.loads(ids)
            except ValueError:
                ids = None
        if ids:
            return [str(i) for i in ids]
    return []


def merge_judged(report: ScoreReport, records: Sequence[Mapping[str, Any]], mode: str, *, key: str, prefix: str,
                 name: str, score: Callable[[Sequence[str | None], str], ScoreReport]) -> ScoreReport:
    """Add the judged metric ``key`` (scored by ``score(judge_outputs, mode)``) to ``report`` in place."""
    judges = judge_ids_of(records)
    if not judges:
        report.values[key] = None
        report.notes.append(f"judged metrics not computed: {name} needs a judge (`sciprobe evaluate ... --judge "
                            f"SPEC`); only the deterministic metrics are reported")
        return report
    by_judge: dict[str, ScoreReport] = {}
    for judge in judges:
        outputs = [_decode(r.get(f"{prefix}_replies")).get(judge) for r in records]
        by_judge[judge] = score(outputs, mode)
    n = len(by_judge)
    report.values[key] = sum(float(s.values[key]) for s in by_judge.values()) / n
    if mode == "official":
        report.values[f"{key}_upstream"] = sum(float(s.values.get(f"{key}_upstream", s.values[key]))
                                               for s in by_judge.values()) / n
    report.values[f"{prefix}_n_items"] = sum(s.coverage.n_items for s in by_judge.values())
    report.values[f"{prefix}_n_scored"] = sum(s.coverage.n_scored for s in by_judge.values())
    report.values[f"{prefix}_n_failed"] = sum(s.coverage.n_failed for s in by_judge.values())
    report.values[f"{key}_by_judge"] = {j: s.values[key] for j, s in by_judge.items()}
    report.values[f"{prefix}_coverage_by_judge"] = {j: s.coverage.as_dict() for j, s in by_judge.items()}
    report.values[f"{prefix}_per_item"] = [sum(s.values["per_item"][i] for s in by_judge.values()) / n
                                           for i in range(len(records))]
    report.params[f"{prefix}_judges"] = judges
    failed = report.values[f"{prefix}_n_failed"]
    report.notes.append(f"{name} judged by {', '.join(judges)} ({'mean over the panel; ' if n > 1 else ''}"
                        f"{failed} of {report.values[f'{prefix}_n_items']} verdicts failed and score 0); not part "
                        "of the SGI-Score; judge-based numbers are not comparable across judges")
    return report


def merge_images(report: ScoreReport, records: Sequence[Mapping[str, Any]]) -> ScoreReport:
    """Say how the item images reached the model (``images_policy`` in the records, set by the evaluate runner;
    records from a predictions file carry none and get no image keys)."""
    policies = {r.get("images_policy") for r in records if r.get("images_policy")}
    if not policies:
        return report
    dropped = [r for r in records if r.get("images_dropped")]
    missing = sum(int(r.get("n_images_missing") or 0) for r in records)
    report.values["images_dropped"] = bool(dropped)
    report.values["n_items_images_dropped"] = len(dropped)
    report.values["n_images_missing"] = missing
    report.params["images_policy"] = sorted(policies)
    if dropped:
        report.notes.append(f"images_dropped: {len(dropped)} of {len(records)} items were asked without their "
                            "images (text-only model: a placeholder line per image replaced them); this MCA is "
                            "not comparable with a multimodal run")
    if missing:
        report.notes.append(f"{missing} item images were missing or unreadable and were not sent")
    rv_dropped = sum(1 for r in records if r.get("rv_images_dropped"))
    if rv_dropped:
        report.values["rv_n_items_images_dropped"] = rv_dropped
        report.notes.append(f"images_dropped (judge): the reasoning-validity judge is text-only and saw "
                            f"{rv_dropped} items without their images")
    return report
