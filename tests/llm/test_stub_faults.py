"""The loopback stub's misbehaviour modes (fault injection, rate limits, tool calls, streaming), each checked
through the real client stack: LLMClient -> litellm -> OpenAI SDK / aiohttp -> socket -> StubServer (the litellm
transport explicitly: ``transport=auto`` would post to the stub directly; test_llm_client covers both)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from sciprobe.llm.cache import ResponseCache
from sciprobe.llm.client import LLMClient
from sciprobe.testing.stub_server import FAULT_KINDS, StubServer, TokenBucket, body_sha256, default_reply
from sciprobe.llm.types import Request

#: How the client names each fault kind once retries are exhausted (litellm's exception mapping).
EXPECTED_ERROR = {
    "429": ("RateLimitError: ", "stub injected fault 429"),
    "429_bare": ("RateLimitError: ", "stub injected fault 429_bare"),
    "500": ("InternalServerError: ", "stub injected fault 500"),
    "502": ("BadGatewayError: ", "stub injected fault 502"),
    "503": ("ServiceUnavailableError: ", "stub injected fault 503"),
    "timeout": ("Timeout: ", "timed out"),
    "truncated": ("InternalServerError: ", "Connection error"),
    "non_json": ("InternalServerError: ", "invalid response from LLM endpoint"),
    "no_content": ("MalformedResponse: ", "no message content and nothing to explain it"),
}
FAILING_KINDS = [k for k in FAULT_KINDS if k != "slow_stream"]
assert set(EXPECTED_ERROR) == set(FAILING_KINDS)

# A timeout fault holds the request well beyond the client's short timeout, so the client's timeout fires first
# even on a loaded machine. Only tests of that fault use the short timeout: elsewhere a loaded machine must not
# turn a slow but correct answer into a spurious retry.
HANG_S, SHORT_TIMEOUT_S, TIMEOUT_S = 5.0, 2.0, 10.0


def req(content: str, **params) -> Request:
    return Request.of([{"role": "user", "content": content}], params)


def echo(body: dict) -> str:
    return "echo: " + body["messages"][-1]["content"]


def client_for(server: StubServer, extra: str = "", timeout: float = TIMEOUT_S, **kw) -> LLMClient:
    spec = f"openai/stub-model,base_url={server.base_url},api_key=x,timeout={timeout},transport=litellm{extra}"
    return LLMClient(spec, backoff_base_s=0.01, **kw)


def post(url: str, body: dict) -> tuple[int, dict[str, str], bytes]:
    """A raw HTTP call, to look at what the stub sends (status, headers) without any client in between."""
    request = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


# ---- each fault kind, through the client ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_one_fault_then_success_after_a_retry(kind, tmp_path):
    with ResponseCache(tmp_path / "c.sqlite") as cache, StubServer(
            reply=echo, status_script=[kind], fault_hang_s=HANG_S, fault_slow_s=0.3) as server:
        timeout = SHORT_TIMEOUT_S if kind == "timeout" else TIMEOUT_S
        client = client_for(server, ",max_retries=2", timeout=timeout, cache=cache)
        [out] = client.complete_many([req(f"survive {kind}")])
        outcomes = [entry["outcome"] for entry in server.log]
        cached = len(cache)
    assert out.ok and out.text == f"echo: survive {kind}", out.error
    if kind == "slow_stream":  # slow, but a complete and valid answer: no retry needed
        assert outcomes == ["slow_stream"] and out.attempts == 1
    else:
        assert outcomes == [kind, "ok"] and out.attempts == 2
        assert client.stats.retries == 1
    assert cached == 1


@pytest.mark.parametrize("kind", FAILING_KINDS)
def test_persistent_fault_ends_in_a_recorded_failure_naming_the_reason(kind, tmp_path):
    with ResponseCache(tmp_path / "c.sqlite") as cache, StubServer(
            reply=echo, status_script=lambda body, index: kind, fault_hang_s=HANG_S) as server:
        timeout = SHORT_TIMEOUT_S if kind == "timeout" else TIMEOUT_S
        client = client_for(server, ",max_retries=1", timeout=timeout, cache=cache)
        out = client.complete_many([req(f"doomed {kind}"), req(f"doomed too {kind}")])
        log = server.log
        cached = len(cache)
    prefix, reason = EXPECTED_ERROR[kind]
    for completion in out:
        assert not completion.ok and completion.text is None
        assert completion.error.startswith(prefix) and reason in completion.error, completion.error
        assert completion.attempts == 2  # retried once (every kind here is transient), then given up
    assert [e["outcome"] for e in log] == [kind] * 4
    assert cached == 0 and client.stats.failed == 2


def test_timeout_fault_shorter_than_the_client_timeout_is_a_dropped_connection():
    with StubServer(reply=echo, status_script=["timeout"], fault_hang_s=0.1) as server:
        [out] = client_for(server, ",max_retries=0").complete_many([req("dropped")])
        [entry] = server.log
    assert not out.ok and out.error.startswith("InternalServerError: ") and "Connection error" in out.error
    assert entry["outcome"] == "timeout" and entry["status"] is None and entry["delivered"] is False


def test_raw_fault_responses_look_like_what_they_claim():
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with StubServer(status_script=["429", "429_bare", "502", "non_json"], fault_retry_after_s=0.25) as server:
        status, headers, _ = post(server.base_url, body)
        assert status == 429 and headers["retry-after-ms"] == "250" and headers["retry-after"] == "1"
        status, headers, _ = post(server.base_url, body)
        assert status == 429 and "retry-after" not in headers and "retry-after-ms" not in headers
        status, _, data = post(server.base_url, body)
        assert status == 502 and json.loads(data)["error"]["code"] == "502"
        status, headers, data = post(server.base_url, body)
        assert status == 200 and headers["content-type"].startswith("text/html") and data.startswith(b"<html>")
        status, _, data = post(server.base_url, body)  # script exhausted: a normal answer
        assert status == 200 and json.loads(data)["choices"][0]["message"]["content"] == default_reply(body)


def test_slow_stream_drips_the_body_over_the_configured_time():
    with StubServer(reply=echo, status_script=["slow_stream"], fault_slow_s=0.6) as server:
        [out] = client_for(server, ",max_retries=0").complete_many([req("slowly")])
        [entry] = server.log
    assert out.ok and out.text == "echo: slowly" and out.attempts == 1
    assert entry["outcome"] == "slow_stream" and entry["delivered"] is True  # dripped, then delivered whole


def test_unknown_fault_kind_is_refused():
    with pytest.raises(ValueError, match="unknown stub fault kind 'boom'"):
        StubServer(fault_rate=0.5, fault_kinds=["503", "boom"])
    with pytest.raises(ValueError, match="unknown stub fault kind"):
        StubServer(status_script=["teapot"])
    with pytest.raises(ValueError, match="fault_rate"):
        StubServer(fault_rate=1.5)


# ---- determinism, log, thread safety ---------------------------------------------------------------------------


def test_fault_draws_depend_only_on_seed_and_index():
    a = StubServer(fault_rate=0.3, fault_seed=7)
    b = StubServer(fault_rate=0.3, fault_seed=7)
    c = StubServer(fault_rate=0.3, fault_seed=8)
    draws = [a.fault_for(i) for i in range(3000)]
    assert draws == [b.fault_for(i) for i in range(3000)]
    assert draws != [c.fault_for(i) for i in range(3000)]
    faults = [d for d in draws if d is not None]
    assert 0.26 < len(faults) / len(draws) < 0.34
    assert set(faults) == set(FAULT_KINDS)  # every kind is drawn
    only = StubServer(fault_rate=1.0, fault_kinds=("500", "timeout"))
    assert {only.fault_for(i) for i in range(200)} == {"500", "timeout"}
    assert all(StubServer().fault_for(i) is None for i in range(200))


def test_log_is_complete_and_consistent_under_concurrency(tmp_path):
    kinds = ("429", "429_bare", "500", "502", "503", "truncated", "non_json")
    with StubServer(reply=echo, fault_rate=0.3, fault_kinds=kinds, fault_seed=3) as server:
        client = client_for(server, ",max_retries=8,concurrency=8")
        out = client.complete_many([req(f"q{i}") for i in range(40)])
        log, bodies = server.log, server.requests
    assert [e["index"] for e in log] == list(range(len(bodies)))
    for entry, body in zip(log, bodies):
        assert entry["sha256"] == body_sha256(body)
        # whichever thread got which index, index i gets exactly the fault drawn for i
        assert entry["outcome"] == (server.fault_for(entry["index"]) or "ok")
        if entry["outcome"] == "ok":
            assert entry["status"] == 200 and entry["delivered"] is True
    assert sum(e["outcome"] != "ok" for e in log) > 0
    assert all(c.ok for c in out), [c.error for c in out if not c.ok]
    # every request answered "ok" is one item; faulted requests were retried, so each item has one ok line
    ok_bodies = [json.dumps(b["messages"]) for b, e in zip(bodies, log) if e["outcome"] == "ok"]
    assert len(ok_bodies) == len(set(ok_bodies)) == 40
    # each faulted request cost one retry (a heavily loaded machine may add a failed attempt that never reached
    # the stub, e.g. a connect timeout, hence >=)
    assert client.stats.retries >= len(log) - 40
    assert server.outcomes()["ok"] == 40


# ---- rate-limit enforcement ------------------------------------------------------------------------------------


def test_token_bucket_arithmetic():
    now = [100.0]
    bucket = TokenBucket(rate_per_s=2.0, capacity=2, clock=lambda: now[0])
    assert bucket.take() == 0.0 and bucket.take() == 0.0
    assert bucket.take() == pytest.approx(0.5)  # empty: one token needs 1 / 2 s
    now[0] += 0.25
    assert bucket.take() == pytest.approx(0.25)
    now[0] += 0.25
    assert bucket.take() == 0.0
    now[0] += 10
    assert bucket.tokens == 0.0 and bucket.take(5) == 0.0 and bucket.tokens == pytest.approx(-3)  # oversized
    assert bucket.take() == pytest.approx(2.0)


def test_rpm_limit_answers_429_with_the_bucket_wait_and_counts_it():
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with StubServer(rpm=6, burst=2) as server:  # one request per 10 s after a burst of 2
        assert post(server.base_url, body)[0] == 200
        assert post(server.base_url, body)[0] == 200
        status, headers, data = post(server.base_url, body)
        assert status == 429 and json.loads(data)["error"]["type"] == "rate_limit_error"
        assert 9000 <= int(headers["retry-after-ms"]) <= 10001 and headers["retry-after"] == "10"
        assert server.count_429 == 1 and server.count == 3
        assert [e["outcome"] for e in server.log] == ["ok", "ok", "rate_limited"]


def test_rpm_limit_over_the_client_without_retries_fails_the_excess():
    with StubServer(reply=echo, rpm=6, burst=2) as server:  # nothing refills within the test
        out = client_for(server, ",max_retries=0,concurrency=6").complete_many([req(f"q{i}") for i in range(6)])
        assert server.count_429 == 4
    assert sum(c.ok for c in out) == 2
    assert all(c.error.startswith("RateLimitError: ") for c in out if not c.ok)


def test_rpm_limit_with_retries_paces_admissions_to_the_rate():
    rate, burst = 10.0, 1  # rpm 600
    with StubServer(reply=echo, rpm=rate * 60, burst=burst) as server:
        out = client_for(server, ",max_retries=20,concurrency=6").complete_many([req(f"q{i}") for i in range(6)])
        log = server.log
        assert server.count_429 > 0
    assert all(c.ok for c in out), [c.error for c in out if not c.ok]
    admitted = [e["arrived"] for e in log if e["outcome"] == "ok"]
    assert len(admitted) == 6
    # token-bucket invariant: n admissions need at least (n - burst) / rate seconds (small clock slack)
    assert admitted[-1] - admitted[0] >= (len(admitted) - burst) / rate - 0.02


def test_tpm_limit_counts_prompt_and_max_tokens():
    body = {"model": "m", "messages": [{"role": "user", "content": "one two three"}], "max_tokens": 15}
    with StubServer(tpm=600, tpm_burst=20) as server:  # 10 tokens/s, bucket of 20; each request costs 18
        assert post(server.base_url, body)[0] == 200
        status, headers, _ = post(server.base_url, body)
        assert status == 429 and 1000 <= int(headers["retry-after-ms"]) <= 1601  # (18 - 2) / 10 s, minus the gap
        assert server.count_429 == 1


# ---- tool calls and streaming through litellm ------------------------------------------------------------------

TOOLS = [{"type": "function", "function": {"name": "search", "description": "search papers",
                                            "parameters": {"type": "object",
                                                           "properties": {"q": {"type": "string"}}}}}]


def tool_reply(body: dict) -> dict | str:
    if body["messages"][-1]["role"] == "tool":
        return "final answer after " + body["messages"][-1]["content"]
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "search", "arguments": {"q": "interdisciplinary"}}}]}


def test_tool_call_reply_passes_through_litellm():
    from sciprobe.llm.backends import import_litellm

    litellm = import_litellm()

    async def run(url: str):
        common = {"model": "openai/stub-model", "api_base": url, "api_key": "x", "tools": TOOLS, "caching": False}
        messages = [{"role": "user", "content": "find papers"}]
        first = await litellm.acompletion(messages=messages, **common)
        call = first.choices[0].message.tool_calls[0]
        messages += [first.choices[0].message.model_dump(exclude_none=True),
                     {"role": "tool", "tool_call_id": call.id, "content": "3 hits"}]
        second = await litellm.acompletion(messages=messages, **common)
        stream = await litellm.acompletion(messages=messages[:1], stream=True, **common)
        chunks = [chunk async for chunk in stream]
        return first, second, litellm.stream_chunk_builder(chunks)

    with StubServer(reply=tool_reply) as server:
        first, second, streamed = asyncio.run(run(server.base_url))
        bodies = server.requests
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    [call] = choice.message.tool_calls
    assert (call.id, call.type, call.function.name) == ("call_1", "function", "search")
    assert json.loads(call.function.arguments) == {"q": "interdisciplinary"}  # a dict is JSON-encoded
    assert second.choices[0].message.content == "final answer after 3 hits"
    assert second.choices[0].finish_reason == "stop"
    assert bodies[0]["tools"][0]["function"]["name"] == "search"
    assert bodies[1]["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": "3 hits"}
    [streamed_call] = streamed.choices[0].message.tool_calls
    assert streamed_call.function.name == "search" and json.loads(streamed_call.function.arguments)["q"]
    assert streamed.choices[0].finish_reason == "tool_calls"


def test_tool_call_reply_fills_ids_and_honours_an_explicit_finish_reason():
    def reply(body: dict) -> dict:
        return {"content": "calling", "finish_reason": "length",
                "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}

    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    with StubServer(reply=reply) as server:
        status, _, data = post(server.base_url, body)
    choice = json.loads(data)["choices"][0]
    assert status == 200 and choice["finish_reason"] == "length"
    assert choice["message"]["role"] == "assistant" and choice["message"]["content"] == "calling"
    [call] = choice["message"]["tool_calls"]
    assert call["type"] == "function" and call["id"].startswith("call_0_")


@pytest.mark.parametrize("slow", [False, True])
def test_streamed_answer_reassembles_through_litellm(slow):
    from sciprobe.llm.backends import import_litellm

    litellm = import_litellm()
    messages = [{"role": "user", "content": "stream please " * 5}]

    async def run(url: str):
        stream = await litellm.acompletion(model="openai/stub-model", api_base=url, api_key="x", messages=messages,
                                           stream=True, stream_options={"include_usage": True}, caching=False)
        return [chunk async for chunk in stream]

    script = ["slow_stream"] if slow else None
    with StubServer(status_script=script, fault_slow_s=0.4) as server:
        chunks = asyncio.run(run(server.base_url))
        [entry] = server.log
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == default_reply({"messages": messages})
    assert len(chunks) > 3  # really streamed in pieces
    assert entry["outcome"] == ("slow_stream" if slow else "ok") and entry["delivered"] is True


# ---- the CLI ---------------------------------------------------------------------------------------------------


def test_cli_serves_with_faults_and_rate_limit():
    proc = subprocess.Popen(
        [sys.executable, "-m", "sciprobe.testing.stub_server", "--port", "0", "--fault-rate", "1",
         "--fault-kinds", "503", "--rpm", "6", "--burst", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        assert post(url, body)[0] == 503  # admitted by the limiter, then the injected fault
        assert post(url, body)[0] == 429  # over 1 request per 10 s
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    bad = subprocess.run([sys.executable, "-m", "sciprobe.testing.stub_server", "--fault-kinds", "teapot"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2 and "unknown stub fault kind 'teapot'" in bad.stderr
