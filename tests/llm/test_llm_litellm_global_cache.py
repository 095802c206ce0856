"""Our client works in a process where lighteval has set litellm's global cache (it does so at import)."""

import pytest

from sciprobe.llm.client import LLMClient
from sciprobe.testing.stub_server import StubServer
from sciprobe.llm.types import Request


@pytest.fixture
def litellm():
    import litellm  # here, not at collection: ~3 s of every worker's start

    return litellm


def test_client_ignores_a_global_litellm_cache(tmp_path, monkeypatch, litellm):
    from litellm.caching.caching import Cache

    monkeypatch.setattr(litellm, "cache", Cache(type="disk", disk_cache_dir=str(tmp_path / "litellm-cache")))
    with StubServer(reply=lambda body: "pong") as server:
        client = LLMClient(f"openai/stub,base_url={server.base_url},api_key=sk-test,transport=litellm")
        requests = [Request.of([{"role": "user", "content": "ping"}], {"temperature": 0})]
        first = client.complete_many(requests)
        second = LLMClient(f"openai/stub,base_url={server.base_url},api_key=sk-test,transport=litellm").complete_many(
            requests)
        assert [c.text for c in first + second] == ["pong", "pong"]
        assert server.count == 2  # no litellm cache in between (sciprobe's own cache is off here)


def test_a_global_litellm_cache_stores_nothing_and_cannot_fail_an_answer(tmp_path, monkeypatch, litellm):
    """caching=False alone still lets litellm serialize and store every answer: a lone surrogate in the text
    then failed the call (seen when lighteval was imported earlier in the same process)."""
    from litellm.caching.caching import Cache

    disk = tmp_path / "litellm-cache"
    monkeypatch.setattr(litellm, "cache", Cache(type="disk", disk_cache_dir=str(disk)))
    bodies = []

    def reply(body):
        bodies.append(body)
        return "a\ud800b"

    with StubServer(reply=reply) as server:
        client = LLMClient(f"openai/stub,base_url={server.base_url},api_key=sk-test,transport=litellm")
        [out] = client.complete_many([Request.of([{"role": "user", "content": "ping"}])])
    assert out.ok and out.text == "a\ufffdb", out.error
    assert _stored_entries(disk) == 0
    assert "cache" not in bodies[0] and "caching" not in bodies[0]  # litellm's own controls stay local


def _stored_entries(disk) -> int:
    import diskcache

    with diskcache.Cache(str(disk)) as stored:
        return len(stored)


def test_litellm_on_another_loop_leaves_no_pending_task_noise(caplog, litellm):
    """litellm's logging worker follows the last loop it was called from; the one it leaves behind on the client
    loop (sciprobe.llm.loop) is collected quietly."""
    import asyncio
    import gc
    import logging

    with StubServer(reply=lambda body: "pong") as server:
        client = LLMClient(f"openai/stub,base_url={server.base_url},api_key=sk-test,transport=litellm")
        ask = [Request.of([{"role": "user", "content": "ping"}])]
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            assert client.complete_many(ask)[0].text == "pong"  # the worker starts on the client loop
            asyncio.run(litellm.acompletion(model="openai/stub", api_base=server.base_url, api_key="sk-test",
                                            messages=[{"role": "user", "content": "elsewhere"}], caching=False))
            assert client.complete_many(ask + [Request.of([{"role": "user", "content": "again"}])])[1].text == "pong"
            gc.collect()
    assert not [r for r in caplog.records if "Task was destroyed" in r.getMessage()]
