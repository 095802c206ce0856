"""The direct transport for OpenAI-compatible servers: the default for ``openai/`` and ``hosted_vllm/`` specs with
a ``base_url`` (``transport=auto``, see :attr:`~sciprobe.llm.spec.ModelSpec.resolved_transport`), or forced with
``transport=http``.

vLLM, TGI, llama.cpp, LM Studio, proxies and the loopback stub all speak ``POST {base_url}/chat/completions``.
For them litellm adds ~3-5 ms of CPU per call (request building, response objects, pricing, logging), which
caps one process at a few hundred calls/s and makes a busy machine miss the network bound; this backend
posts the JSON itself over one aiohttp session and parses the reply as a plain dict (~0.3 ms a call,
bench/judge_throughput.py, bench/item_cpu.py). Everything else is
:class:`~sciprobe.llm.backends.RemoteBackend`'s: the concurrency bound, pacing, the run's budget, retries
with Retry-After, fail-fast on 401/403 and exhausted quota, pricing from token counts, the response cap, the
reading of an answer (:func:`~sciprobe.llm.backends.read_answer`), and the replicas of ``base_url=URL1|URL2``
(:mod:`sciprobe.llm.replicas`). Redirects are never followed (:class:`~sciprobe.llm.response_cap.Redirected`).

It sends exactly the request params it is given (no per-provider renaming as litellm does), so it is for
servers that take OpenAI's parameters as they are; reasoning models stay on litellm under ``auto``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.llm.backends import (APIConnectionError, Job, MalformedResponse, RemoteBackend, Timeout, _LoopState,
                                   http_status_error)
from sciprobe.llm.replicas import Replica
from sciprobe.llm.response_cap import read_capped, refuse_redirect
from sciprobe.llm.spec import ModelSpec
from sciprobe.llm.usage import bounded_int


class HttpBackend(RemoteBackend):
    persistent_loop = True  # our own session: kept open between batches (sciprobe.llm.loop)

    def __init__(self, spec: ModelSpec, backoff_base_s: float = 0.5) -> None:
        if not spec.base_url:
            raise SciprobeError(f"{spec.name}: transport=http needs base_url (an OpenAI-compatible server)")
        super().__init__(spec, backoff_base_s=backoff_base_s)
        self.http_bound = True  # our own session, whatever litellm's provider table says
        #: POST targets, one per replica of ``base_url=URL1|URL2`` (sciprobe.llm.replicas picks one per attempt)
        self.endpoints = {url: url.rstrip("/") + "/chat/completions" for url in spec.base_urls}
        # "openai/gpt-4o-mini" -> "gpt-4o-mini": the name the server knows, as litellm would send it
        self.wire_model = spec.name.split("/", 1)[1] if "/" in spec.name else spec.name
        self._headers = {"Content-Type": "application/json"}
        if self._api_key:
            self._headers["Authorization"] = f"Bearer {self._api_key}"

    def _session_options(self) -> dict[str, Any]:
        return {}  # aiohttp decodes (in bounded steps); read_capped counts what it yields

    async def _send(self, job: Job, state: _LoopState, replica: Replica) -> Any:
        import aiohttp

        body = {"model": self.wire_model, "messages": [dict(m) for m in job.request.messages], **job.request.params}
        try:
            # allow_redirects=False: an answer comes from the replica it was sent to, or the call failed there
            async with state.session.post(self.endpoints[replica.url], data=json.dumps(body), headers=self._headers,
                                          timeout=aiohttp.ClientTimeout(total=self.spec.timeout),
                                          allow_redirects=False) as response:
                refuse_redirect(response.status, response.headers)
                raw = await read_capped(response, self.spec.max_response_bytes)
                if response.status != 200:
                    raise http_status_error(response.status, _error_message(raw), response.headers.copy())
        except asyncio.TimeoutError:
            raise Timeout(f"request timed out after {self.spec.timeout:g} s") from None
        except aiohttp.ClientError as exc:
            raise APIConnectionError(f"{type(exc).__name__}: {exc}") from None
        try:
            payload = json.loads(raw, parse_int=bounded_int)
        except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
            raise APIConnectionError(f"non-JSON body ({len(raw)} bytes): {raw[:80]!r}") from None
        if not isinstance(payload, dict):
            raise MalformedResponse(f"the body is JSON {type(payload).__name__}, not a chat completion")
        return payload


def _error_message(raw: bytes) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the start of the body."""
    try:
        payload = json.loads(raw, parse_int=bounded_int)
        error = payload.get("error") if isinstance(payload, dict) else None
        if isinstance(error, dict):
            parts = [str(error.get("message") or ""), str(error.get("code") or error.get("type") or "")]
            return " ".join(p for p in parts if p).strip() or raw[:200].decode("utf-8", "replace")
    except (ValueError, RecursionError):
        pass
    return raw[:200].decode("utf-8", "replace")
