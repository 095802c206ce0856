"""LLM access: one client for litellm providers and the bundled local model, with a persistent cache.

Public surface: ``ModelSpec.parse``, ``LLMClient``, ``Request``, ``Completion``, ``ResponseCache``.
Nothing here imports litellm, torch or transformers at import time.
"""

from sciprobe.llm.types import Completion, Request, UsageStats

__all__ = ["Completion", "Request", "UsageStats"]
