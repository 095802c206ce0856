"""Hostile answers (tests/cases/llm_hostile_responses.json) through the real client on both transports, served by
the loopback stub's hand-made replies: whatever a server sends, the run goes on, each answer is a success, a
success of unknown cost, or a recorded failure naming the reason, and ``--max-cost`` is never disarmed."""

from __future__ import annotations

import json
import math
import tracemalloc

import pytest
from multidict import CIMultiDict

from sciprobe.llm.backends import MAX_RETRY_AFTER_S, RetryPolicy
from sciprobe.llm.cache import ResponseCache
from sciprobe.llm.client import LLMClient
from sciprobe.llm.ledger import Budget, RunLedger
from sciprobe.testing.stub_bodies import DEFAULT_USAGE, RawReply, raw_completion
from sciprobe.testing.stub_server import StubServer
from sciprobe.llm.types import Completion, Request
from sciprobe.llm.usage import MAX_TOKENS_PER_CALL

from golden import CASES_DIR

CASES = json.loads((CASES_DIR / "llm_hostile_responses.json").read_text())["cases"]
ANSWER_CASES = [c for c in CASES if c["class"] != "retry_after"]
USAGE_CASES = [c for c in CASES if c["class"] == "usage"]
HEADER_CASES = [c for c in CASES if c["class"] == "retry_after"]
TRANSPORTS = ["litellm", "http"]
CONTENT = "hostile answer"


def test_every_class_has_cases():
    classes = {c["class"] for c in CASES}
    assert classes == {"usage", "shape", "text", "size", "retry_after"}
    assert all(sum(c["class"] == k for c in CASES) >= 3 for k in classes)
    assert len({c["name"] for c in CASES}) == len(CASES)


def reply_for(case: dict) -> RawReply:
    if "body" in case:
        body = case["body"].encode()
    elif "nest" in case:
        body = b"[" * case["nest"] + b"]" * case["nest"]
    else:
        body = raw_completion(CONTENT, usage=case.get("usage", DEFAULT_USAGE), choices=case.get("choices"),
                              model="gpt-4o-mini")
    return RawReply(body, status=case.get("status", 200), encoding=case.get("encoding"),
                    pad_bytes=int(case.get("pad_mb", 0) * (1 << 20)), content_length=case.get("content_length"),
                    chunked=case.get("chunked", False), endless=case.get("endless", False))


def client_for(server: StubServer, transport: str, extra: str = "", **kw) -> LLMClient:
    # gpt-4o-mini is in litellm's price table: a usable report is priced, so "unknown" means distrusted
    spec = f"openai/gpt-4o-mini,base_url={server.base_url},api_key=sk-x,transport={transport},timeout=60"
    retries = "" if "max_retries=" in extra else ",max_retries=0"
    return LLMClient(spec + retries + extra, backoff_base_s=0.01, **kw)


def expected(case: dict, transport: str) -> str:
    return case["expect"].get(transport, case["expect"]["default"])


def assert_sane_numbers(completion: Completion) -> None:
    assert completion.cost_usd is None or (math.isfinite(completion.cost_usd) and completion.cost_usd >= 0)
    assert 0 <= completion.prompt_tokens <= MAX_TOKENS_PER_CALL
    assert 0 <= completion.completion_tokens <= MAX_TOKENS_PER_CALL


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("case", ANSWER_CASES, ids=[c["name"] for c in ANSWER_CASES])
def test_hostile_answer_is_an_answer_or_a_named_failure_never_a_crash(case, transport, tmp_path):
    reply = reply_for(case)
    if not reply.endless:
        reply.payload()  # built (and compressed) before measuring the client's memory
    with StubServer(status_script=lambda body, index: reply) as server, \
            ResponseCache(tmp_path / "c.sqlite") as cache:
        client = client_for(server, transport, case.get("spec", ""), cache=cache)
        tracemalloc.start()
        try:
            [out] = client.complete_many([Request.of([{"role": "user", "content": case["name"]}])])
            peak_mb = tracemalloc.get_traced_memory()[1] / (1 << 20)
        finally:
            tracemalloc.stop()
        replay = client.complete_many([Request.of([{"role": "user", "content": case["name"]}])])[0]
        sent = server.count
    assert_sane_numbers(out)
    outcome = expected(case, transport)
    if outcome.startswith("failed:"):
        assert not out.ok and out.text is None
        assert out.error.startswith(outcome.split(":", 1)[1] + ":"), out.error
        # only the model's own empty answer is an answer; a malformed body is a call that got none
        assert out.empty == (outcome == "failed:EmptyResponse")
        assert "\n" not in out.error and len(out.error) <= 400
        assert out.attempts == case.get("attempts", 1)
        assert sent == 2 and not replay.cached  # never cached: the next run asks again
    else:
        assert out.ok, out.error
        text = case.get("text", CONTENT)
        assert out.text == text
        if "arguments" in case:
            assert out.tool_calls[0]["function"]["arguments"] == case["arguments"]
        if outcome == "priced":
            assert out.usage_problem is None and out.cost_usd is not None and out.cost_usd > 0
            tokens = case.get(f"tokens_{transport}", case.get("tokens"))
            if tokens is not None:
                assert [out.prompt_tokens, out.completion_tokens] == tokens
        else:
            assert outcome == "unknown_cost"
            assert out.cost_usd is None and out.usage_problem
            assert (out.prompt_tokens, out.completion_tokens) == (0, 0)
        # stored and replayed exactly (a lone surrogate used to fail the cache write)
        assert sent == 1 and replay.cached and replay.text == out.text and replay.tool_calls == out.tool_calls
        assert replay.cost_usd == out.cost_usd
    if "max_peak_mb" in case:  # the 200 MB bomb was never held whole (it used to take ~3 GB)
        assert peak_mb < case["max_peak_mb"], peak_mb


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("case", USAGE_CASES, ids=[c["name"] for c in USAGE_CASES])
def test_no_usage_report_disarms_max_cost(case, transport):
    reply = reply_for(case)
    ledger = RunLedger(Budget(max_cost_usd=1e-12))  # the first priced answer already spends it
    with StubServer(status_script=lambda body, index: reply) as server:
        client = client_for(server, transport, ",concurrency=1", ledger=ledger)
        out = client.complete_many([Request.of([{"role": "user", "content": f"q{i}"}]) for i in range(6)])
    assert math.isfinite(ledger.cost_usd) and ledger.cost_usd >= 0
    if expected(case, transport).startswith("failed:"):
        assert all(not c.ok for c in out) and ledger.cost_usd == 0  # failures are not spending
        return
    # a priced answer reaches the cap, an unknown cost refuses further spending: either way the run stops
    # within the calls already admitted (concurrency 1, admitted x2 into the transport)
    assert ledger.exhausted and ledger.sent <= 2
    assert sum(c.skipped for c in out) >= 4
    assert all(c.error.startswith("BudgetExhausted: max_cost=") for c in out if c.skipped)


@pytest.mark.parametrize("cost", [-5.0, float("nan"), float("-inf"), float("inf")])
def test_ledger_counts_an_impossible_cost_as_unknown(cost):
    ledger = RunLedger(Budget(max_cost_usd=1.0))
    assert ledger.admit() is None
    ledger.record(Completion(text="x", cost_usd=cost, prompt_tokens=1))
    assert ledger.cost_usd == 0 and ledger.cost_unknown == 1
    assert "cannot be enforced" in ledger.admit()


@pytest.mark.parametrize("case", HEADER_CASES, ids=[c["name"] for c in HEADER_CASES])
def test_retry_after_header_numbers_are_read_defensively(case):
    from sciprobe.llm.backends import import_litellm

    policy = RetryPolicy(max_retries=3, base_s=0.5)
    error = import_litellm().RateLimitError("slow down", llm_provider="openai", model="m")
    error.litellm_response_headers = CIMultiDict(case["headers"])  # case-insensitive, as real headers are
    delays = [policy.delay(1, error) for _ in range(20)]
    assert all(math.isfinite(d) and 0 <= d <= MAX_RETRY_AFTER_S for d in delays)
    if case["expect_delay"] == "backoff":
        assert all(0.25 <= d <= 0.5 for d in delays)  # the first attempt's jittered backoff
    else:
        assert delays == pytest.approx([case["expect_delay"]] * 20, abs=0.01)


def test_a_hostile_answer_does_not_sink_its_batch():
    hostile = {"q1": RawReply(raw_completion(CONTENT, usage='"lots"')), "q3": RawReply(b"[" * 100000 + b"]" * 100000),
               "q5": RawReply(raw_completion(CONTENT), encoding="gzip", pad_bytes=64 << 20)}

    def script(body: dict, index: int) -> RawReply | None:
        return hostile.get(body["messages"][-1]["content"])

    with StubServer(reply=lambda body: "fine", status_script=script) as server:
        client = client_for(server, "http", ",concurrency=1")
        out = client.complete_many([Request.of([{"role": "user", "content": f"q{i}"}]) for i in range(7)])
    assert [c.ok for c in out] == [True, True, True, False, True, False, True]
    assert out[1].text == CONTENT and out[1].cost_usd is None
    assert out[3].error.startswith("APIConnectionError:") and out[5].error.startswith("ResponseTooLarge:")
    assert all(c.text == "fine" for i, c in enumerate(out) if i in (0, 2, 4, 6))


def test_stub_raw_reply_refuses_what_it_cannot_send():
    with pytest.raises(ValueError, match="unknown encoding"):
        RawReply(b"x", encoding="zip")
    with pytest.raises(ValueError, match="endless"):
        RawReply(b"x", encoding="gzip", endless=True)
