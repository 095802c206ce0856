"""The SGI-Bench idea panel's judge check (``sciprobe judge-check`` on ``sgibench:idea_generation``).

The panel's judges vote pairwise, twice per item (the reference idea as A, then swapped), on each dimension. A
judge's item score is the share of its votes the generated idea won; its labels are its final verdicts per
``item|swapped|dimension`` (both read by :func:`sciprobe.leaderboard.agreement.idea_votes_from_records`, the
reader the leaderboard uses); its position-swap pairs are the two verdicts of one item and dimension. The other
judge is asked the same two questions per stored idea, with the run's judge parameters and attempts, through
the run's own vote collector (the records keep each item's row, so no data is needed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sciprobe.run.judge_check import JudgeView


def _maybe_json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) and value[:1] in "{[" else value


def _views(records: Sequence[Mapping[str, Any]]) -> list[JudgeView]:
    from sciprobe.leaderboard.agreement import idea_votes_from_records

    shares, verdicts = idea_votes_from_records(records)
    views = []
    for judge in sorted(shares):
        labels = verdicts.get(judge, {})
        swaps: dict[str, dict[str, str | None]] = {}
        for key, winner in labels.items():
            item, swapped, dim = key.rsplit("|", 2)
            swaps.setdefault(f"{item}|{dim}", {"original": None, "swapped": None})[
                "swapped" if swapped == "1" else "original"] = winner
        views.append(JudgeView(judge, dict(shares[judge]), dict(labels), swaps))
    return views


class IdeaPanelCheck:
    scale = "share of pairwise votes won by the generated idea (0-1)"

    def original(self, records: Sequence[Mapping[str, Any]], provenance: Mapping[str, Any]) -> list[JudgeView]:
        return _views(records)

    def rejudge(self, records: Sequence[Mapping[str, Any]], provenance: Mapping[str, Any], client: Any,
                options: Mapping[str, Any]) -> JudgeView:
        from sciprobe.benchmarks.sgibench.idea_runner import DEFAULT_ATTEMPTS, collect_panel_votes

        rows = [_maybe_json(r.get("row")) or {} for r in records]
        responses = [r.get("response") if r.get("error") is None else None for r in records]
        _, logs, _ = collect_panel_votes(rows, responses, [(client.model_id, client)],
                                         params=provenance.get("judge_params"),
                                         max_attempts=int(provenance.get("judge_attempts") or DEFAULT_ATTEMPTS))
        judged = [{"id": r.get("id"), "judge_calls": log} for r, log in zip(records, logs)]
        view = next((v for v in _views(judged) if v.judge == client.model_id), JudgeView(client.model_id, {}))
        view.n_failed = sum(1 for log in logs for call in log if call.get("verdict") is None)
        return view


IDEA_PANEL_CHECK = IdeaPanelCheck()


# ------------------------------------------------------------------ deep research: the answer-level llm_judge
def _rows_by_id(records: Sequence[Mapping[str, Any]], options: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The run's rows, by the records' ids, from ``--data`` (the records keep answers, not questions)."""
    from sciprobe.core.registry import resolve_task
    from sciprobe.core.errors import SciprobeError
    from sciprobe.data.task_data import load_task_data

    benchmark, task = resolve_task(str(options["task_key"]).split("|", 1)[0])
    rows = {str(r["id"]): r for r in load_task_data(benchmark, task, options.get("data")).rows}
    missing = [str(r.get("id")) for r in records if str(r.get("id")) not in rows]
    if missing:
        raise SciprobeError(f"{len(missing)} of the run's items (e.g. {missing[0]!r}) are not in the data "
                            f"{options.get('data') or 'sample'}: pass the run's own with --data")
    return [rows[str(r["id"])] for r in records]


class AnswerJudgeCheck:
    """``llm_judge``: a 0/1 verdict on each answer whose exact match is 0 (only those were asked); label = the
    verdict. Read as the official mode reads it."""

    scale = "answer-level judge verdict (0/1)"

    def original(self, records: Sequence[Mapping[str, Any]], provenance: Mapping[str, Any]) -> list[JudgeView]:
        from sciprobe.benchmarks.sgibench.judged import _decode, judge_ids_of
        from sciprobe.benchmarks.sgibench.scoring.deep_research import parse_answer_verdict

        views = []
        for judge in judge_ids_of(records):
            scores = {}
            for record in records:
                verdict = parse_answer_verdict(_decode(record.get("answer_judge_replies")).get(judge))
                if verdict is not None:
                    scores[str(record["id"])] = float(verdict)
            views.append(JudgeView(judge, scores, {i: f"{s:g}" for i, s in scores.items()}))
        return views

    def rejudge(self, records: Sequence[Mapping[str, Any]], provenance: Mapping[str, Any], client: Any,
                options: Mapping[str, Any]) -> JudgeView:
        from sciprobe.benchmarks.sgibench.judged_runners import JUDGE_PARAMS, answer_judge_requests, ask
        from sciprobe.benchmarks.sgibench.scoring.deep_research import parse_answer_verdict

        rows = _rows_by_id(records, options)
        responses = [r.get("response") if r.get("error") is None else None for r in records]
        messages = answer_judge_requests(rows, records, responses)
        ids = [str(r["id"]) for r in records]
        texts, _ = ask(client, messages, ids, provenance.get("judge_params") or JUDGE_PARAMS, "judge-check")
        scores, failed = {}, 0
        for item, message, text in zip(ids, messages, texts):
            verdict = parse_answer_verdict(text) if message is not None else None
            if verdict is not None:
                scores[item] = float(verdict)
            failed += message is not None and verdict is None
        return JudgeView(client.model_id, scores, {i: f"{s:g}" for i, s in scores.items()}, n_failed=failed)


ANSWER_JUDGE_CHECK = AnswerJudgeCheck()


# ------------------------------------------------------------------ experimental reasoning: reasoning validity
class ReasoningValidityCheck:
    """RV: the judge's 0-10 rating of the reasoning, read as the official mode reads it (item score /10); label =
    the rating. The judge gets the question as the model saw it (sciprobe's wording) and the item's images."""

    scale = "reasoning validity (0-1)"

    def original(self, records: Sequence[Mapping[str, Any]], provenance: Mapping[str, Any]) -> list[JudgeView]:
        from sciprobe.benchmarks.sgibench.judged import _decode, judge_ids_of
        from sciprobe.benchmarks.sgibench.scoring.reasoning import parse_rv_score

        views = []
        for judge in judge_ids_of(records):
            scores = {}
            for record in records:
                score = parse_rv_score(_decode(record.get("rv_replies")).get(judge))
                if score is not None:
                    scores[str(record["id"])] = score
            views.append(JudgeView(judge, scores, {i: f"{s:g}" for i, s in scores.items()}))
        return views

    def rejudge(self, records: Sequence[Mapping[str, Any]], provenance: Mapping[str, Any], client: Any,
                options: Mapping[str, Any]) -> JudgeView:
        from sciprobe.benchmarks.sgibench.judged_runners import JUDGE_PARAMS, ask, rv_judge_requests
        from sciprobe.benchmarks.sgibench.prompts import reasoning_text
        from sciprobe.core.errors import SciprobeError
        from sciprobe.benchmarks.sgibench.scoring.reasoning import parse_rv_score
        from sciprobe.run.upstream import recorded_prompt_set

        if recorded_prompt_set(provenance) != "sciprobe":
            # the judge saw the question in upstream's wording: rebuilding it is not done here yet
            raise SciprobeError(f"{options.get('task_key')}: the run used the {recorded_prompt_set(provenance)!r} "
                                "prompt set; judge-check re-asks the RV judge only for runs with sciprobe's prompts")
        rows = _rows_by_id(records, options)
        responses = [r.get("response") if r.get("error") is None else None for r in records]
        messages, _ = rv_judge_requests(rows, responses, reasoning_text, client)
        ids = [str(r["id"]) for r in records]
        texts, _ = ask(client, messages, ids, provenance.get("judge_params") or JUDGE_PARAMS, "judge-check")
        scores, failed = {}, 0
        for item, message, text in zip(ids, messages, texts):
            score = parse_rv_score(text) if message is not None else None
            if score is not None:
                scores[item] = score
            failed += message is not None and score is None
        return JudgeView(client.model_id, scores, {i: f"{s:g}" for i, s in scores.items()}, n_failed=failed)


RV_CHECK = ReasoningValidityCheck()
