"""LLMClient against a real loopback HTTP server, through the real litellm + OpenAI SDK stack (``transport=litellm``,
no mocks), and the same behaviour through the direct OpenAI-compatible transport (``transport=http``, what
``transport=auto`` picks for a base_url like the stub's): every test runs once per transport."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.llm.cache import ResponseCache
from sciprobe.llm.client import LLMClient
from sciprobe.testing.stub_server import StubServer
from sciprobe.llm.types import Request

from clock_support import VirtualClock


def req(content: str, **params) -> Request:
    return Request.of([{"role": "user", "content": content}], params)


def echo(body: dict) -> str:
    return "echo: " + body["messages"][-1]["content"]


@pytest.fixture
def stub():
    with StubServer(reply=echo) as server:
        yield server


@pytest.fixture
def cache(tmp_path):
    with ResponseCache(tmp_path / "responses.sqlite") as c:
        yield c


TRANSPORT = {"name": "litellm"}


@pytest.fixture(autouse=True, params=["litellm", "http"])
def transport(request):
    TRANSPORT["name"] = request.param
    yield request.param
    TRANSPORT["name"] = "litellm"


def client_for(server: StubServer, extra: str = "", model: str = "openai/gpt-4o-mini", **kw) -> LLMClient:
    wire = f",transport={TRANSPORT['name']}"
    return LLMClient(f"{model},base_url={server.base_url},api_key=sk-test{extra}{wire}", backoff_base_s=0.01, **kw)


def test_results_in_input_order_even_when_answers_arrive_out_of_order():
    def slow_first(body: dict) -> str:
        n = int(body["messages"][-1]["content"].split()[-1])
        time.sleep(0.02 * (8 - n))  # item 0 answers last
        return echo(body)

    with StubServer(reply=slow_first) as server:
        out = client_for(server).complete_many([req(f"item {i}") for i in range(8)], desc="order")
    assert [c.text for c in out] == [f"echo: item {i}" for i in range(8)]
    assert all(c.ok and not c.cached and c.attempts == 1 for c in out)


def test_cache_hit_makes_no_http_call_and_replays_exactly(stub, cache):
    requests = [req(f"q{i}", temperature=0) for i in range(3)]
    first = client_for(stub, cache=cache).complete_many(requests)
    assert stub.count == 3 and len(cache) == 3

    again_client = client_for(stub, cache=cache)  # a fresh client: the replay comes from disk
    again = again_client.complete_many(requests)
    assert stub.count == 3  # no new HTTP request
    assert all(c.cached for c in again)
    for a, b in zip(first, again):
        assert (a.text, a.prompt_tokens, a.completion_tokens, a.cost_usd, a.request_hash) == (
            b.text, b.prompt_tokens, b.completion_tokens, b.cost_usd, b.request_hash)
    assert again_client.stats.cached == 3 and again_client.stats.cost_usd == 0.0


def test_identical_requests_in_one_batch_are_sent_once(stub):
    client = client_for(stub)
    out = client.complete_many([req("same"), req("other"), req("same"), req("same")])
    assert stub.count == 2
    assert [c.text for c in out] == ["echo: same", "echo: other", "echo: same", "echo: same"]
    assert [c.cached for c in out] == [False, False, True, True]
    assert client.stats.calls == 4 and client.stats.cached == 2


def test_retries_on_503_then_succeeds_and_records_attempts(cache):
    with StubServer(reply=echo, status_script=[503, 503]) as server:
        client = client_for(server, cache=cache)
        [out] = client.complete_many([req("flaky")])
        assert server.count == 3
    assert out.ok and out.text == "echo: flaky"
    assert out.attempts == 3
    assert client.stats.retries == 2 and client.stats.failed == 0
    assert len(cache) == 1


def test_retry_after_header_is_honoured():
    clock = VirtualClock()
    with StubServer(reply=echo, status_script=[(429, {"Retry-After": "1"})]) as server:
        client = client_for(server)  # backoff base 10 ms: only the header can explain a 1 s wait
        client._backend.sleep = clock.sleep
        [out] = client.complete_many([req("throttled")])
    assert out.ok and out.attempts == 2
    assert clock.sleeps == [1.0]


def test_retries_exhausted_becomes_a_recorded_failure(cache):
    with StubServer(reply=echo, status_script=lambda body, i: 503) as server:
        client = client_for(server, ",max_retries=2", cache=cache)
        [out] = client.complete_many([req("down")])
        assert server.count == 3
    assert not out.ok and out.text is None
    assert out.error.startswith("ServiceUnavailableError: ")
    assert out.attempts == 3
    assert len(cache) == 0 and client.stats.failed == 1


def test_401_raises_sciprobe_error_at_once():
    with StubServer(reply=echo, status_script=lambda body, i: 401) as server:
        client = client_for(server, ",concurrency=1")
        with pytest.raises(SciprobeError, match="authentication failed for openai/gpt-4o-mini") as info:
            client.complete_many([req(f"q{i}") for i in range(10)])
        # not retried, and the queued calls were cancelled: at most the one already admitted behind it
        # (litellm admits 2 x concurrency calls; the HTTP bound stays at concurrency) reached the server
        assert server.count <= 2
    assert "\n" not in str(info.value)


def test_400_is_recorded_not_raised_not_retried_not_cached(cache):
    def bad_only(body: dict, index: int):
        return 400 if body["messages"][-1]["content"] == "bad" else None

    with StubServer(reply=echo, status_script=bad_only) as server:
        client = client_for(server, cache=cache)
        out = client.complete_many([req("good"), req("bad"), req("fine")])
        assert server.count == 3
        assert [c.ok for c in out] == [True, False, True]
        assert out[1].error.startswith("BadRequestError: ") and out[1].attempts == 1
        assert len(cache) == 2 and client.stats.failed == 1
        client.complete_many([req("bad")])  # a failure is retried on the next run, not replayed
        assert server.count == 4


def test_timeout_is_a_recorded_failure():
    with StubServer(reply=echo, latency_s=1.0) as server:
        client = client_for(server, ",timeout=0.2,max_retries=0")
        [out] = client.complete_many([req("slow")])
    assert not out.ok and out.error.startswith("Timeout: ")


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "hosted_vllm/served-model"])
def test_concurrency_bound_is_respected(model):
    with StubServer(reply=echo, latency_s=0.2) as server:
        client = client_for(server, ",concurrency=4", model=model)
        out = client.complete_many([req(f"q{i}") for i in range(12)])
        assert server.max_in_flight == 4  # 12 requests through 4 slots: never more at once, and all 4 used
    assert all(c.ok for c in out)


def test_concurrent_batches_on_one_client_share_the_bound():
    with StubServer(reply=echo, latency_s=0.15) as server:
        client = client_for(server, ",concurrency=3")

        async def both():
            return await asyncio.gather(
                client.acomplete_many([req(f"a{i}") for i in range(6)]),
                client.acomplete_many([req(f"b{i}") for i in range(6)]),
            )

        first, second = asyncio.run(both())
        assert server.max_in_flight == 3
    assert [c.text for c in first + second] == [f"echo: a{i}" for i in range(6)] + [f"echo: b{i}" for i in range(6)]


def test_constructor_concurrency_overrides_spec():
    with StubServer(reply=echo, latency_s=0.15) as server:
        client = client_for(server, ",concurrency=8", concurrency=2)
        client.complete_many([req(f"q{i}") for i in range(6)])
        assert server.max_in_flight == 2
    assert client.spec.concurrency == 2


def test_usage_totals_and_cost(stub):
    client = client_for(stub)
    out = client.complete_many([req("one two three"), req("four five")])
    # stub usage: whitespace tokens of the prompt and of "echo: <prompt>"
    assert [(c.prompt_tokens, c.completion_tokens) for c in out] == [(3, 4), (2, 3)]
    assert client.stats.prompt_tokens == 5 and client.stats.completion_tokens == 7
    assert all(c.cost_usd is not None and c.cost_usd > 0 for c in out)  # gpt-4o-mini is priced
    assert client.stats.cost_usd == pytest.approx(sum(c.cost_usd for c in out))
    assert client.stats.cost_unknown_calls == 0


def test_unpriced_model_cost_is_unknown_not_zero(stub):
    client = client_for(stub, model="openai/stub-judge-unpriced")
    out = client.complete_many([req("a"), req("b")])
    assert [c.cost_usd for c in out] == [None, None]
    assert client.stats.cost_unknown_calls == 2 and client.stats.cost_usd == 0.0


def test_spec_defaults_sent_and_request_params_win(stub):
    client = client_for(stub, ",temperature=0.7,max_tokens=20")
    client.complete_many([req("defaults"), req("override", temperature=0)])
    bodies = {b["messages"][-1]["content"]: b for b in stub.requests}
    assert bodies["defaults"]["temperature"] == 0.7 and bodies["defaults"]["max_tokens"] == 20
    assert bodies["override"]["temperature"] == 0 and bodies["override"]["max_tokens"] == 20
    assert client.param_adjustments == []


def test_reasoning_model_drops_temperature_and_records_it(stub):
    client = client_for(stub, ",temperature=0.3", model="openai/o3-mini")
    out = client.complete_many([req("a"), req("b", temperature=0)])
    assert all(c.ok for c in out)
    assert all("temperature" not in body for body in stub.requests)
    assert client.param_adjustments == [
        "openai/o3-mini: dropped temperature=0.3 (reasoning models reject it)",
        "openai/o3-mini: dropped temperature=0 (reasoning models reject it)",
    ]


def test_custom_base_url_never_receives_the_provider_env_key(monkeypatch, stub):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    wire = f",transport={TRANSPORT['name']}"
    LLMClient(f"openai/gpt-4o-mini,base_url={stub.base_url}{wire}").complete_many([req("x")])
    with_env_key = f"openai/gpt-4o-mini,base_url={stub.base_url},api_key_env=OPENAI_API_KEY{wire}"
    LLMClient(with_env_key).complete_many([req("y")])
    auth = [h["authorization"] for h in stub.request_headers]
    assert auth == ["Bearer sk-sciprobe-no-key", "Bearer sk-real-openai-key"]


def test_async_api_and_sync_call_inside_a_running_loop(stub):
    client = client_for(stub)

    async def main():
        single = await client.acomplete(req("async"))
        nested = client.complete_many([req("sync-in-loop")])  # e.g. from a notebook cell
        return single, nested

    single, nested = asyncio.run(main())
    assert single.text == "echo: async"
    assert nested[0].text == "echo: sync-in-loop"


def test_unroutable_model_name_fails_fast():
    with pytest.raises(SciprobeError, match="litellm cannot route model"):
        LLMClient("definitely-not-a-provider-model-xyz")


def test_empty_batch_returns_empty_list(stub):
    assert client_for(stub).complete_many([]) == []
    assert stub.count == 0



@pytest.mark.parametrize("kind", ["429", "429_bare", "500", "502", "503", "timeout", "truncated", "non_json",
                                  "slow_stream"])
def test_every_injected_fault_ends_answered_after_retries_or_as_a_named_failure(kind):
    with StubServer(reply=echo, fault_rate=1.0, fault_kinds=(kind,), fault_hang_s=1.0, fault_slow_s=0.05,
                    fault_retry_after_s=0.01) as server:
        client = client_for(server, ",max_retries=1,timeout=0.5")
        [out] = client.complete_many([req(f"fault {kind}")])
    if out.ok:  # a slow stream still delivers its answer
        assert out.text == f"echo: fault {kind}" and kind == "slow_stream"
    else:
        assert out.text is None and out.attempts == 2 and ":" in out.error, out.error
        assert server.count == 2  # one retry, then recorded: never lost, never repeated past the limit


def test_timeout_bounds_the_whole_call_even_when_the_answer_drips():
    # slow_stream drips the body over 1.5 s with short gaps: no read timeout fires, the call's deadline does
    with StubServer(reply=echo, fault_rate=1.0, fault_kinds=("slow_stream",), fault_slow_s=1.5) as server:
        client = client_for(server, ",max_retries=0,timeout=0.6")
        [out] = client.complete_many([req("drip")])
    # without a deadline over the whole call the drip would arrive whole (no read timeout fires between chunks)
    assert not out.ok and out.error.startswith("Timeout: ")


def test_batches_reuse_their_connections_and_sync_calls_work_from_any_thread(stub):
    client = client_for(stub, ",concurrency=1")
    for batch in range(3):  # e.g. the rounds of a tournament
        client.complete_many([req(f"round {batch} q{i}") for i in range(2)])
    peers = {entry["peer"] for entry in stub.log}
    # http: one kept-alive connection across the batches; litellm: a loop, hence a connection, per batch
    # (sciprobe.llm.loop says why)
    assert stub.count == 6 and len(peers) == (1 if TRANSPORT["name"] == "http" else 3)

    async def from_a_coroutine_on_the_client_loop():
        return client.complete_many([req("nested")])  # cannot block the loop it runs on: falls back, no deadlock

    from sciprobe.llm import loop

    [nested] = loop.run(from_a_coroutine_on_the_client_loop())
    with ThreadPoolExecutor(max_workers=3) as pool:  # several threads share the one client loop
        texts = list(pool.map(lambda i: client.complete_many([req(f"thread {i}")])[0].text, range(3)))
    assert nested.text == "echo: nested" and texts == [f"echo: thread {i}" for i in range(3)]


def test_each_client_keeps_its_own_bound_batch_after_batch():
    # litellm caches its provider clients per event loop, not per session: clients of one deployment must not
    # end up sharing a session (or litellm's unbounded one) on a loop that outlives a batch
    with StubServer(reply=echo, latency_s=0.1) as server:
        for concurrency in (1, 4):
            client = client_for(server, f",concurrency={concurrency}")
            for batch in range(2):
                server.reset()
                client.complete_many([req(f"c{concurrency} b{batch} q{i}") for i in range(3 * concurrency)])
                assert server.max_in_flight == concurrency, (concurrency, batch)
            del client  # a collected client's session closes; the next client's bound must not depend on it
