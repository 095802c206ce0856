"""The direct transport for OpenAI-compatible servers (``transport=http`` in a model spec).

vLLM, TGI, llama.cpp, LM Studio and the loopback stub all speak ``POST {base_url}/chat/completions``. For
them litellm adds ~2.5-3 ms of CPU per call (request building, response objects, pricing, logging), which
caps one process near 300-350 calls/s: bench/judge_throughput.py at concurrency 32 / 100 ms reaches 0.87
of the bound through litellm. This backend posts the JSON itself over one aiohttp session and parses the
reply as a plain dict; everything else is :class:`~sciprobe.llm.backends.RemoteBackend`'s: the concurrency
bound, pacing, the run's budget, retries with Retry-After, fail-fast on 401/403 and exhausted quota.

It sends exactly the request params it is given (no per-provider renaming as litellm does), so it is for
servers that take OpenAI's parameters as they are; litellm stays the default for everything.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from sciprobe.errors import SciprobeError
from sciprobe.llm.backends import (APIConnectionError, Job, RemoteBackend, Timeout, _LoopState, http_status_error,
                                   tool_calls_of, unit_prices)
from sciprobe.llm.spec import ModelSpec
from sciprobe.llm.types import Completion


class HttpBackend(RemoteBackend):
    def __init__(self, spec: ModelSpec, backoff_base_s: float = 0.5) -> None:
        if not spec.base_url:
            raise SciprobeError(f"{spec.name}: transport=http needs base_url (an OpenAI-compatible server)")
        super().__init__(spec, backoff_base_s=backoff_base_s)
        self.http_bound = True  # our own session, whatever litellm's provider table says
        self.url = spec.base_url.rstrip("/") + "/chat/completions"
        # "openai/gpt-4o-mini" -> "gpt-4o-mini": the name the server knows, as litellm would send it
        self.wire_model = spec.name.split("/", 1)[1] if "/" in spec.name else spec.name
        self._headers = {"Content-Type": "application/json"}
        if self._api_key:
            self._headers["Authorization"] = f"Bearer {self._api_key}"
        self._prices = unit_prices(spec.name)

    async def _send(self, job: Job, state: _LoopState) -> Any:
        import aiohttp

        body = {"model": self.wire_model, "messages": [dict(m) for m in job.request.messages], **job.request.params}
        try:
            async with state.session.post(self.url, data=json.dumps(body), headers=self._headers,
                                          timeout=aiohttp.ClientTimeout(total=self.spec.timeout)) as response:
                raw = await response.read()
                if response.status != 200:
                    raise http_status_error(response.status, _error_message(raw), response.headers.copy())
        except asyncio.TimeoutError:
            raise Timeout(f"request timed out after {self.spec.timeout:g} s") from None
        except aiohttp.ClientError as exc:
            raise APIConnectionError(f"{type(exc).__name__}: {exc}") from None
        try:
            payload = json.loads(raw)
        except ValueError:
            raise APIConnectionError(f"non-JSON body ({len(raw)} bytes): {raw[:80]!r}") from None
        if not isinstance(payload, dict):
            raise APIConnectionError(f"unexpected JSON body: {type(payload).__name__}")
        return payload

    def _success(self, job: Job, response: Any, attempts: int, started: float) -> Completion:
        latency = time.perf_counter() - started
        choices = response.get("choices") or []
        choice = choices[0] if choices and isinstance(choices[0], dict) else {}
        message = choice.get("message") or {}
        text = message.get("content") if isinstance(message, dict) else None
        tool_calls = tool_calls_of(message) if isinstance(message, dict) else []
        if not isinstance(text, str) and not tool_calls:
            return Completion(text=None, error=f"EmptyResponse: no message content "
                                               f"(finish_reason={choice.get('finish_reason')})",
                              attempts=attempts, latency_s=latency, request_hash=job.key, model=self.spec.name,
                              empty=True)
        usage = response.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens") or 0)
        completion_tokens = int(usage.get("completion_tokens") or 0)
        cost = None if self._prices is None else prompt_tokens * self._prices[0] + completion_tokens * self._prices[1]
        return Completion(text=text if isinstance(text, str) else None, prompt_tokens=prompt_tokens,
                          completion_tokens=completion_tokens, cost_usd=cost, latency_s=latency, attempts=attempts,
                          request_hash=job.key, model=self.spec.name, tool_calls=tool_calls or None)


def _error_message(raw: bytes) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the start of the body."""
    try:
        payload = json.loads(raw)
        error = payload.get("error") if isinstance(payload, dict) else None
        if isinstance(error, dict):
            parts = [str(error.get("message") or ""), str(error.get("code") or error.get("type") or "")]
            return " ".join(p for p in parts if p).strip() or raw[:200].decode("utf-8", "replace")
    except ValueError:
        pass
    return raw[:200].decode("utf-8", "replace")
