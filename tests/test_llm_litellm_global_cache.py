"""Our client works in a process where lighteval has set litellm's global cache (it does so at import)."""

import litellm

from sciprobe.llm.client import LLMClient
from sciprobe.llm.stub_server import StubServer
from sciprobe.llm.types import Request


def test_client_ignores_a_global_litellm_cache(tmp_path, monkeypatch):
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
