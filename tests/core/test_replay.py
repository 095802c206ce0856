"""sciprobe.run.replay.ReplayClient: the evaluated model answered from a predictions file (item order, missing and
null items, multi-turn refusal), and score_file's runner path refusing to run without a judge."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.llm.types import Request
from sciprobe.run.replay import MultiTurnTask, ReplayClient


def _req(item: str | None, text: str = "question") -> Request:
    return Request.of([{"role": "user", "content": f"{text} {item}"}], {"temperature": 0.0}, item_id=item)


def test_answers_follow_the_request_order_not_the_file_order() -> None:
    client = ReplayClient({"b": "answer b", "a": "answer a", "c": "answer c"}, "org/model", task_ref="x:y")
    out = client.complete_many([_req("c"), _req("a"), _req("b")], desc="ignored")
    assert [c.text for c in out] == ["answer c", "answer a", "answer b"]
    assert all(c.ok and not c.cached and c.model == "org/model" for c in out)
    assert len({c.request_hash for c in out}) == 3
    assert client.stats.calls == 3 and client.stats.failed == 0 and client.model_id == "org/model"
    assert not hasattr(client, "spec")  # runners that look at the spec see a remote model


def test_missing_and_null_items_are_recorded_failures() -> None:
    client = ReplayClient({"a": "fine", "n": None}, "m")
    ok, missing, null = client.complete_many([_req("a"), _req("zz"), _req("n")])
    assert ok.ok and ok.text == "fine"
    assert not missing.ok and missing.text is None and missing.error == "no prediction for item zz"
    assert not null.ok and "null" in null.error and "n" in null.error
    summary = client.summary()
    assert summary["missing"] == ["zz"] and summary["n_missing"] == 1 and summary["failed"] == 2
    assert client.stats.failed == 2


def test_same_messages_twice_get_the_same_answer() -> None:
    client = ReplayClient({"a": "once"}, "m")
    first = client.complete_many([_req("a")])[0]
    again = client.complete_many([_req("a"), _req("a")])
    assert [c.text for c in again] == ["once", "once"] and again[0].request_hash == first.request_hash


def test_a_second_turn_for_an_item_is_refused() -> None:
    client = ReplayClient({"a": "round one"}, "m", task_ref="scitaste:dimagent_v3")
    client.complete_many([_req("a", "round 1")])
    with pytest.raises(MultiTurnTask, match="scitaste:dimagent_v3 needs several model turns per item") as info:
        client.complete_many([_req("a", "round 2 with tool results")])
    assert isinstance(info.value, SciprobeError) and "cannot be scored from a predictions file" in str(info.value)
    assert "\n" not in str(info.value)


def test_a_request_without_item_id_is_refused() -> None:
    with pytest.raises(SciprobeError, match="without an item id"):
        ReplayClient({"a": "x"}, "m", task_ref="t:t").complete_many([_req(None)])


def test_async_interface() -> None:
    client = ReplayClient({"a": "A", "b": "B"}, "m")
    out = asyncio.run(client.acomplete_many([_req("b"), _req("a")]))
    assert [c.text for c in out] == ["B", "A"]
    assert asyncio.run(client.acomplete(_req("a"))).text == "A"


def test_judges_built_by_the_run_context_share_cache_and_ledger() -> None:
    """RunContext.judge_client (no judge_factory) hands the replay client's cache and ledger to the judges."""
    from sciprobe.run.evaluation import EvaluationRequest, RunContext
    from sciprobe.llm.ledger import Budget, RunLedger

    ledger, cache = RunLedger(Budget(max_calls=3)), object()
    client = ReplayClient({}, "m", cache=cache, ledger=ledger)
    ctx = RunContext("t:t", None, None, EvaluationRequest(tasks=[], model="m"), client, {}, [], {})
    judge = ctx.judge_client("openai/judge,base_url=http://127.0.0.1:9/v1,api_key=x")
    assert judge.ledger is ledger and judge.cache is cache


def test_score_file_needs_a_judge_for_runner_tasks(tmp_path: Path) -> None:
    from sciprobe.run.score_predictions import JudgeRequired, score_file

    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"id": "9900000130", "response": "Title: t\nAbstract: a"}) + "\n")
    with pytest.raises(JudgeRequired) as info:
        score_file("prescience:contribution_generation", preds, output_dir=tmp_path / "o")
    message = str(info.value)
    assert "\n" not in message and "--judge" in message and "prescience:contribution_generation" in message
    assert not (tmp_path / "o").exists()


def test_agent_loop_tasks_are_refused_before_anything_runs(tmp_path: Path) -> None:
    """SciTaste agent modes: the replayed answer carries no tool calls, so the loop would silently run one turn;
    refused in score_file and at submission time (nothing stored)."""
    from sciprobe.leaderboard.validation import (
        SubmissionError,
        task_ref_error,
        validate_model_info,
        validate_submission,
    )
    from sciprobe.run.score_predictions import score_file

    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"id": "x", "response": "Score: 7"}) + "\n")
    with pytest.raises(MultiTurnTask, match="scitaste:dimagent_v3 runs a tool-using agent loop"):
        score_file("scitaste:dimagent_v3", preds, judge="openai/j,base_url=http://127.0.0.1:9/v1,api_key=x",
                   output_dir=tmp_path / "o")
    assert "cannot be scored from a predictions file" in task_ref_error("scitaste:native_search")
    assert task_ref_error("scitaste:pure_qa") is None and task_ref_error("prescience:contribution_generation") is None
    with pytest.raises(SubmissionError, match="agent loop"):
        validate_submission("scitaste:dimagent_v3", preds, validate_model_info("org/m"), data=None)
