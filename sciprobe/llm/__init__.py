"""LLM access: one client for litellm providers and the bundled local model, with a persistent cache.

Public surface, by module so that importing this package stays cheap: ``sciprobe.llm.spec.ModelSpec``,
``sciprobe.llm.client.LLMClient``, ``sciprobe.llm.cache.ResponseCache``, ``sciprobe.llm.types.Request`` /
``Completion``, ``sciprobe.testing.stub_server.StubServer``. Nothing here imports litellm, torch or transformers
at import time.
"""

from sciprobe.llm.types import Completion, Request, UsageStats

__all__ = ["Completion", "Request", "UsageStats"]
