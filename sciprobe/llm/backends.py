"""Backends behind :class:`~sciprobe.llm.client.LLMClient`: the remote (litellm) one lives here.

A backend receives deduplicated, uncached jobs and reports each completion through ``on_result`` as soon
as it exists, so the client can cache it before the batch ends (a killed run loses no paid call).
Per-item failures become ``Completion(text=None, error=...)``; only :class:`FatalBackendError` (bad
credentials) aborts the batch, because every later call would fail the same way.

litellm is imported on first use, never at import time (it costs ~2.5 s and probes the network unless
``LITELLM_LOCAL_MODEL_COST_MAP`` is set).
"""

from __future__ import annotations

import asyncio
import email.utils
import gc
import json
import os
import random
import re
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sciprobe.errors import SciprobeError
from sciprobe.llm import loop as client_loop
from sciprobe.llm.ledger import skipped_completion
from sciprobe.llm.pacing import Pacer, estimate_tokens
from sciprobe.llm.replicas import Replica, ReplicaGate, ReplicaPool
from sciprobe.llm.response_cap import capped_response_class, too_large_in
from sciprobe.llm.spec import ModelSpec
from sciprobe.llm.types import Completion, Request
from sciprobe.llm.usage import UsageReport, finite_number, read_usage, short_repr

#: Phrases of provider 429s that mean "out of credit", not "too fast" (OpenAI, Azure, Anthropic wording).
_QUOTA_MARKERS = ("insufficient_quota", "exceeded your current quota", "quota exceeded", "billing",
                  "credit balance is too low")

_SURROGATE = re.compile("[\ud800-\udfff]")

#: Longest wait honoured from a Retry-After header: a provider asking for an hour would stall the whole run.
MAX_RETRY_AFTER_S = 120.0


@dataclass(frozen=True)
class Job:
    """One unique uncached request: ``key`` is its cache key, ``request`` carries the effective params."""

    key: str
    request: Request


ResultCallback = Callable[[Job, Completion], None]
#: Asked right before each request goes out: None to send it, or why not (the run's budget is spent).
AdmitFn = Callable[[], "str | None"]


class Backend(Protocol):
    async def run(self, jobs: Sequence[Job], on_result: ResultCallback, admit: AdmitFn | None = None) -> None: ...


class FatalBackendError(SciprobeError):
    """Raised for errors that doom every call of the batch (authentication, permission)."""


class QuotaExhausted(FatalBackendError):
    """The provider's quota is spent (``insufficient_quota``): no call of this model will be answered. A run
    stops here and writes what it has, marked incomplete (sciprobe.evaluation)."""


_FROZEN = False


def import_litellm() -> Any:
    """Import litellm offline and quietly (its cost map download and 'Give Feedback' banners are noise).

    Then, once per process, move the objects alive at that point out of the cyclic GC's reach
    (``gc.freeze``). litellm + pydantic + openai leave ~400k long-lived objects tracked; every full
    collection walks them all (~0.2 s on the 2-core dev box, i.e. every in-flight call stalls), and litellm's
    per-call allocations trigger one every ~600 calls. Frozen objects are still freed by reference
    counting; only cycles among them would outlive their use, and module-level state lives forever anyway.
    Measured in bench/judge_throughput.py: full-GC time per 640 calls 280 ms -> 60 ms.
    """
    global _FROZEN
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    if not _FROZEN:
        _FROZEN = True
        _skip_litellm_pricing_of_our_calls()
        gc.collect()
        gc.freeze()
    return litellm


#: Metadata key of the calls sciprobe prices itself (:class:`Pricer`): litellm's own pricing is skipped for them.
OWN_PRICING = "sciprobe_prices_from_token_counts"


def _skip_litellm_pricing_of_our_calls() -> None:
    """litellm prices every response inside ``acompletion`` (``Logging.response_cost_calculator``, for its
    logging integrations and ``_hidden_params``): ~0.8 ms of CPU a call, a fifth of its overhead
    (bench/judge_throughput.py). sciprobe uses neither and prices answers once from token counts, so calls
    marked ``metadata[OWN_PRICING]`` skip that step; any other litellm call in the process (lighteval's, a
    user's) is priced as before. Checked against litellm 1.108 (constraints.txt); without that method the
    wrapper is simply not installed."""
    try:
        from litellm.litellm_core_utils.litellm_logging import Logging
    except ImportError:
        return
    original = getattr(Logging, "response_cost_calculator", None)
    if original is None or getattr(original, "sciprobe_wrapper", False):
        return

    def response_cost_calculator(self: Any, *args: Any, **kwargs: Any) -> Any:
        metadata = (getattr(self, "litellm_params", None) or {}).get("metadata")
        if isinstance(metadata, dict) and metadata.get(OWN_PRICING):
            return None
        return original(self, *args, **kwargs)

    response_cost_calculator.sciprobe_wrapper = True  # type: ignore[attr-defined]
    Logging.response_cost_calculator = response_cost_calculator
    if getattr(Logging, "_response_cost_calculator", None) is original:
        Logging._response_cost_calculator = response_cost_calculator


def unit_prices(model: str) -> tuple[float, float] | None:
    """USD per prompt token and per completion token from litellm's bundled price table (no network); None
    when the model is not in it: unknown, never free. Probed with a small call so that long-context price
    tiers (e.g. above 200k prompt tokens) do not apply."""
    litellm = import_litellm()
    probe = 1_000
    try:
        prompt, _ = litellm.cost_per_token(model=model, prompt_tokens=probe, completion_tokens=0)
        _, completion = litellm.cost_per_token(model=model, prompt_tokens=0, completion_tokens=probe)
    except Exception:  # noqa: BLE001 - litellm raises for unmapped models
        return None
    return float(prompt) / probe, float(completion) / probe


class Pricer:
    """The cost of one answer from its token counts: the model's unit prices are looked up once, instead of
    litellm's per-call cost accounting in the hot path. Beyond the model's smallest long-context tier
    (``*_above_<N>k_tokens`` in litellm's table) the price of that one call comes from litellm, exactly.
    Cached-prompt discounts are not applied: a cost cap errs on the safe side."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.prices = unit_prices(model)
        self.flat_up_to = _flat_price_limit(model) if self.prices is not None else None

    def cost(self, usage: UsageReport) -> float | None:
        """USD, or None: an unpriced model, or no usable usage report (unknown, never a made-up 0)."""
        if self.prices is None or usage.problem is not None:
            return None
        if self.flat_up_to is not None and usage.prompt_tokens > self.flat_up_to:
            litellm = import_litellm()
            try:
                prompt, completion = litellm.cost_per_token(model=self.model, prompt_tokens=usage.prompt_tokens,
                                                            completion_tokens=usage.completion_tokens)
            except Exception:  # noqa: BLE001 - litellm raises for unmapped models
                return None
            return float(prompt) + float(completion)
        return usage.prompt_tokens * self.prices[0] + usage.completion_tokens * self.prices[1]


def _flat_price_limit(model: str) -> int | None:
    """Prompt tokens up to which the model's price is flat (its smallest ``above_<N>k_tokens`` tier), or None."""
    litellm = import_litellm()
    try:
        info = litellm.get_model_info(model=model)
    except Exception:  # noqa: BLE001 - not in the table: unit_prices said so already
        return None
    tiers = [int(m.group(1)) * 1000 for key in info for m in [re.search(r"above_(\d+)k_tokens", key)] if m]
    return min(tiers) if tiers else None


def error_text(exc: BaseException) -> str:
    """``<ExceptionType>: first line of message`` — what a failed item records."""
    message = clean_text(" ".join(str(exc).split()))
    if len(message) > 300:
        message = message[:297] + "..."
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def tool_calls_of(message: Any) -> list[dict[str, Any]]:
    """The tool calls of a litellm assistant message as plain OpenAI-format dicts (``[]`` when none).

    ``{"id", "type": "function", "function": {"name", "arguments"}}`` with ``arguments`` kept as the JSON
    string the model wrote (it may be invalid JSON; the caller decides what that means). Entries without a
    ``function`` object (a broken server's junk) are skipped.
    """
    calls = (message.get("tool_calls") if isinstance(message, dict) else getattr(message, "tool_calls", None)) or []
    if not isinstance(calls, (list, tuple)):  # a server's junk: no usable calls
        return []
    out: list[dict[str, Any]] = []
    for call in calls:
        get = call.get if isinstance(call, dict) else (lambda k, c=call: getattr(c, k, None))
        function = get("function")
        if function is None or isinstance(function, (str, int, float, list)):  # not a call: skipped
            continue
        fget = function.get if isinstance(function, dict) else (lambda k, f=function: getattr(f, k, None))
        arguments = fget("arguments")
        out.append({"id": clean_text(str(get("id") or f"call_{len(out)}")),
                    "type": clean_text(str(get("type") or "function")),
                    "function": {"name": clean_text(str(fget("name") or "")),
                                 "arguments": clean_text(arguments if isinstance(arguments, str)
                                                         else json.dumps(arguments or {}))}})
    return out


def clean_text(text: str) -> str:
    """``text`` storable as UTF-8: a lone surrogate (JSON ``"\\ud800"`` decodes to one) becomes U+FFFD instead
    of failing the cache write, the details file and every later reader."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def _header(headers: Any, name: str) -> str | None:
    try:
        value = headers.get(name)
    except (AttributeError, TypeError):  # not a mapping: no hint
        return None
    return None if value is None else str(value)


class HttpStatusError(Exception):
    """A non-200 answer on the direct HTTP transport (:mod:`sciprobe.llm.http_backend`). Raise it through
    :func:`http_status_error`, whose subclasses carry litellm's names, so a failure reads the same in the
    details whichever transport produced it."""

    def __init__(self, status: int, message: str, headers: Any) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers


class TransportError(Exception):
    """No usable answer on the direct HTTP transport: timeout, dropped connection, truncated or non-JSON body."""


_STATUS_NAMES = {400: "BadRequestError", 401: "AuthenticationError", 403: "PermissionDeniedError",
                 404: "NotFoundError", 408: "Timeout", 422: "UnprocessableEntityError", 429: "RateLimitError",
                 500: "InternalServerError", 502: "BadGatewayError", 503: "ServiceUnavailableError"}
_STATUS_CLASSES: dict[str, type[HttpStatusError]] = {}


def http_status_error(status: int, message: str, headers: Any) -> HttpStatusError:
    name = _STATUS_NAMES.get(status, "APIError")
    cls = _STATUS_CLASSES.get(name)
    if cls is None:
        cls = _STATUS_CLASSES[name] = type(name, (HttpStatusError,), {"__module__": __name__})
    return cls(status, message, headers)


class MalformedResponse(Exception):
    """A 200 answer whose JSON does not have the shape of a chat completion."""


class Timeout(TransportError):
    """No answer within the spec's ``timeout``."""


class APIConnectionError(TransportError):
    """The connection failed or the body was cut short or unreadable."""


def retry_after_seconds(exc: BaseException) -> float | None:
    """Seconds requested by a ``retry-after-ms`` / ``Retry-After`` response header on ``exc``, if any.

    litellm keeps provider headers on ``litellm_response_headers``; its rebuilt ``exc.response`` drops
    them (checked with 1.108.14), so both places are looked at. Retry-After may be seconds or an HTTP date.
    """
    response = getattr(exc, "response", None)
    for headers in (getattr(exc, "litellm_response_headers", None), getattr(response, "headers", None),
                    getattr(exc, "headers", None)):
        if not headers:
            continue
        ms = finite_number(_header(headers, "retry-after-ms"))
        if ms is not None:
            return max(0.0, ms / 1000.0)
        value = _header(headers, "retry-after")
        if value is None:
            continue
        seconds = finite_number(value)
        if seconds is not None:
            return max(0.0, seconds)
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, OverflowError):
            continue
        return max(0.0, when.timestamp() - time.time())
    return None


class RetryPolicy:
    """Classifies litellm exceptions and computes waits: exponential backoff with full jitter."""

    def __init__(self, max_retries: int, base_s: float = 0.5, max_s: float = 30.0) -> None:
        self.max_retries = max_retries
        self.base_s = base_s
        self.max_s = max_s

    @staticmethod
    def is_fatal(exc: BaseException, litellm: Any) -> bool:
        if isinstance(exc, HttpStatusError) and exc.status in (401, 403):
            return True
        return isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)) or \
            RetryPolicy.is_quota(exc, litellm)

    @staticmethod
    def is_rate_limit(exc: BaseException, litellm: Any) -> bool:
        return isinstance(exc, litellm.RateLimitError) or (isinstance(exc, HttpStatusError) and exc.status == 429)

    @staticmethod
    def is_quota(exc: BaseException, litellm: Any) -> bool:
        """A 429 that waiting cannot cure: the account is out of credit (OpenAI ``insufficient_quota``)."""
        if not RetryPolicy.is_rate_limit(exc, litellm):
            return False
        message = str(exc).lower()
        return any(marker in message for marker in _QUOTA_MARKERS)

    @staticmethod
    def is_retryable(exc: BaseException, litellm: Any) -> bool:
        if too_large_in(exc) is not None:  # the same request gets the same body: asking again only costs
            return False
        if isinstance(exc, TransportError):
            return True
        if isinstance(exc, HttpStatusError):
            return exc.status in (408, 409, 429) or exc.status >= 500
        retryable = (
            litellm.RateLimitError,
            litellm.Timeout,
            litellm.APIConnectionError,
            litellm.InternalServerError,
            litellm.ServiceUnavailableError,
            litellm.BadGatewayError,
        )
        if isinstance(exc, retryable):
            return True
        status = getattr(exc, "status_code", None)
        return isinstance(status, int) and status >= 500

    def delay(self, attempt: int, exc: BaseException) -> float:
        hinted = retry_after_seconds(exc)
        if hinted is not None:
            return min(hinted, MAX_RETRY_AFTER_S)
        ceiling = min(self.max_s, self.base_s * (2 ** (attempt - 1)))
        return random.uniform(ceiling / 2, ceiling)


@dataclass
class _LoopState:
    """Per-event-loop resources of a backend (asyncio and aiohttp objects are bound to one loop)."""

    admission: ReplicaGate  # the request slots, per replica (sciprobe.llm.replicas)
    session: Any  # aiohttp.ClientSession | None
    users: int = 0


class RemoteBackend:
    """litellm.acompletion with a concurrency bound and our own retry loop.

    The OpenAI SDK's hidden retries are disabled (``max_retries=0``) so that every attempt is counted here
    and honours our backoff; retries wait *outside* the bound so a sleeping call holds no slot.

    Where the bound sits: for providers whose litellm handler takes ``shared_session`` (checked for
    ``SHARED_SESSION_PROVIDERS``), we pass our own aiohttp session whose connector allows ``concurrency``
    connections, and admit ``ADMISSION_FACTOR`` x that many calls into litellm. In-flight HTTP requests stay
    at ``concurrency``, but litellm's ~2.5 ms of CPU per call (request building, response parsing, pricing,
    logging) runs while other requests wait on the network instead of inside the slot. bench/
    judge_throughput.py at concurrency 32 / 100 ms, CPU-isolated runs: 0.79 -> 0.88 of the bound
    (factor 4 was no better than 2). Other providers get ``concurrency`` slots around the whole call.

    Replicas (``base_url=URL1|URL2``): each attempt takes a slot on one replica (:mod:`sciprobe.llm.replicas`:
    least busy in service, per-replica slots and pacer, cool-down of failing ones) and is sent to its URL; a
    retry goes to another replica when one is in service. Everything above applies per replica.
    """

    ADMISSION_FACTOR = 2
    SHARED_SESSION_PROVIDERS = frozenset({"openai", "hosted_vllm"})
    #: Whether complete_many may run this backend on the process's long-lived client loop (sciprobe.llm.loop):
    #: not through litellm, whose per-loop client cache would then mix up the sessions of different clients.
    persistent_loop = False

    def __init__(self, spec: ModelSpec, backoff_base_s: float = 0.5) -> None:
        self.spec = spec
        self.policy = RetryPolicy(spec.max_retries, base_s=backoff_base_s)
        self._litellm = import_litellm()
        self._api_key = spec.resolve_api_key()
        self.provider = self._check_provider()
        self.http_bound = self.provider in self.SHARED_SESSION_PROVIDERS
        #: the servers of this model (one entry without a base_url: the provider's own endpoint)
        self.replicas = ReplicaPool.for_spec(spec.name, spec.base_urls or (None,), spec.rpm, spec.tpm)
        self.pricer = Pricer(spec.name)
        self.sleep = asyncio.sleep  # the retry backoff's wait (tests record it instead of waiting)
        self._states: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = weakref.WeakKeyDictionary()

    def _check_provider(self) -> str:
        try:
            _, provider, _, _ = self._litellm.get_llm_provider(model=self.spec.name, api_base=self._first_url)
        except Exception as exc:
            raise SciprobeError(
                f"litellm cannot route model {self.spec.name!r}: use provider/model, e.g. openai/gpt-4o-mini"
            ) from exc
        return str(provider)

    @property
    def _first_url(self) -> str | None:
        return self.spec.base_urls[0] if self.spec.base_url else None

    @property
    def pacer(self) -> Pacer:
        """The pacer of the (first) server: the only one unless the spec lists replicas."""
        return self.replicas.replicas[0].pacer

    def _enter_loop(self) -> _LoopState:
        """The running loop's state, created on first use; runs sharing a loop share one bound. On the shared
        client loop (sciprobe.llm.loop) the session stays open for the next batch, until this backend is
        collected or the process exits."""
        loop = asyncio.get_running_loop()
        state = self._states.get(loop)
        if state is None:
            limit = self.spec.concurrency
            session = None
            if self.http_bound:
                session = self._open_session(limit)
                limit *= self.ADMISSION_FACTOR
            state = self._states[loop] = _LoopState(ReplicaGate(self.replicas, limit), session)
            if session is not None and client_loop.is_shared(loop):
                client_loop.keep_open(session, owner=self)
        state.users += 1
        return state

    def _open_session(self, connections: int) -> Any:
        """An aiohttp session like the one litellm would build (no cookie jar, proxy env only when litellm
        is told to trust it), except that its connector allows ``connections`` connections per server (each
        replica's host:port) and its responses stop at ``max_response_mb`` decoded
        (:mod:`sciprobe.llm.response_cap`)."""
        import aiohttp

        trust_env = bool(self._litellm.aiohttp_trust_env) or os.environ.get("AIOHTTP_TRUST_ENV", "").lower() in (
            "1", "true", "yes")
        servers = len(self.replicas.replicas)
        connector = aiohttp.TCPConnector(limit=connections * servers, limit_per_host=connections, ttl_dns_cache=300)
        return aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=trust_env,
                                     **self._session_options())

    def _session_options(self) -> dict[str, Any]:
        return {"response_class": capped_response_class(self.spec.max_response_bytes)}

    async def _leave_loop(self, state: _LoopState) -> None:
        state.users -= 1
        if state.users == 0 and not client_loop.is_shared(asyncio.get_running_loop()):
            self._states.pop(asyncio.get_running_loop(), None)
            if state.session is not None:
                await state.session.close()  # before asyncio.run closes the loop: no "unclosed session"

    async def run(self, jobs: Sequence[Job], on_result: ResultCallback, admit: AdmitFn | None = None) -> None:
        aborted = asyncio.Event()
        state = self._enter_loop()

        async def one(job: Job) -> None:
            try:
                on_result(job, await self.acomplete(job, state, aborted, admit))
            except FatalBackendError:
                aborted.set()
                raise

        try:
            async with asyncio.TaskGroup() as group:  # a fatal error cancels the calls still queued
                for job in jobs:
                    group.create_task(one(job))
        except BaseExceptionGroup as group_error:
            fatal = group_error.subgroup(lambda e: isinstance(e, SciprobeError))
            if fatal is not None:
                raise fatal.exceptions[0] from None
            raise
        finally:
            await self._leave_loop(state)

    async def acomplete(self, job: Job, state: _LoopState, aborted: asyncio.Event | None = None,
                        admit: AdmitFn | None = None) -> Completion:
        litellm = self._litellm
        pool = self.replicas
        started = time.perf_counter()
        tokens = estimate_tokens(job.request.messages, job.request.params) if pool.paces_tokens else 0
        attempt = 0
        replica: Replica | None = None  # where the last attempt went: a retry prefers another one
        while True:
            attempt += 1
            failed_on = replica
            replica = None
            try:
                replica = await state.admission.acquire(avoid=failed_on)
                try:
                    # Paced inside the slot so that starts stay evenly spaced (a wait outside would let
                    # queued calls burst in together when slots free up).
                    await replica.pacer.acquire(tokens)
                    if aborted is not None and aborted.is_set():
                        # A slot freed by the failing call can wake a queued one before the TaskGroup
                        # cancels it; do not start a doomed request.
                        raise asyncio.CancelledError
                    refusal = admit() if admit is not None else None
                    if refusal is not None:
                        return skipped_completion(refusal, job.key, self.spec.name)
                    try:
                        # the spec's timeout bounds the whole call: the HTTP clients' read timeouts restart with
                        # every chunk, so a server dripping its answer could otherwise hold a slot for ever
                        async with asyncio.timeout(self.spec.timeout):
                            response = await self._send(job, state, replica)
                    except TimeoutError:
                        raise Timeout(f"request timed out after {self.spec.timeout:g} s") from None
                finally:
                    state.admission.release(replica)
            except Exception as exc:
                if self.policy.is_quota(exc, litellm):
                    raise QuotaExhausted(
                        f"quota exhausted for {self.spec.name} ({error_text(exc)}); waiting will not help"
                    ) from exc
                if self.policy.is_fatal(exc, litellm):
                    raise FatalBackendError(
                        f"authentication failed for {self.spec.name} ({error_text(exc)}); "
                        "check the spec's api_key / api_key_env"
                    ) from exc
                retryable = self.policy.is_retryable(exc, litellm)
                rate_limited = retryable and self.policy.is_rate_limit(exc, litellm)
                delay = self.policy.delay(attempt, exc) if retryable else 0.0
                will_retry = attempt <= self.policy.max_retries and retryable
                if replica is not None:
                    if rate_limited:
                        if will_retry:
                            replica.pacer.on_rate_limited(delay)  # the whole deployment waits, not just this call
                        pool.rate_limited(replica, delay)  # and its calls go to the other replicas meanwhile
                    elif retryable:
                        pool.failed(replica, exc)
                    else:  # the request's fault (400, an answer too large): the server is alive
                        pool.alive(replica)
                if will_retry:
                    if replica is None or not pool.has_other_in_service(replica):
                        await self.sleep(delay)
                    continue
                return self._failure(job, exc, attempt, started)
            try:
                completion = self._success(job, response, attempt, started)
            except Exception as exc:  # noqa: BLE001 - a body of an unexpected shape: recorded, never a crash
                pool.failed(replica, exc)
                return self._failure(job, MalformedResponse(error_text(exc)), attempt, started)
            pool.answered(replica)
            replica.pacer.on_success()
            replica.pacer.settle(tokens, completion.prompt_tokens + completion.completion_tokens)
            return completion

    async def _send(self, job: Job, state: _LoopState, replica: Replica) -> Any:
        extra: dict[str, Any] = {"shared_session": state.session} if state.session is not None else {}
        return await self._litellm.acompletion(
            model=self.spec.name,
            messages=[dict(m) for m in job.request.messages],
            api_base=replica.url,
            api_key=self._api_key,
            timeout=self.spec.timeout,
            max_retries=0,
            # lighteval installs a global litellm disk cache at import; its hit path crashes on a plain install
            # (and we have our own cache), so never let litellm cache our calls.
            caching=False,
            metadata={OWN_PRICING: True},  # a fresh dict: litellm writes timing into it
            **extra,
            **job.request.params,
        )

    def _failure(self, job: Job, exc: BaseException, attempts: int, started: float) -> Completion:
        return Completion(
            text=None,
            error=error_text(too_large_in(exc) or exc),
            attempts=attempts,
            latency_s=time.perf_counter() - started,
            request_hash=job.key,
            model=self.spec.name,
        )

    def _success(self, job: Job, response: Any, attempts: int, started: float) -> Completion:
        latency = time.perf_counter() - started
        choices = getattr(response, "choices", None)
        choice = choices[0] if choices else None
        message = getattr(choice, "message", None)
        text = getattr(message, "content", None)
        return self._completion(job, text if isinstance(text, str) else None, tool_calls_of(message),
                                getattr(choice, "finish_reason", None), getattr(response, "usage", None),
                                attempts, latency)

    def _completion(self, job: Job, text: str | None, tool_calls: list[dict[str, Any]], finish_reason: Any,
                    usage: Any, attempts: int, latency: float) -> Completion:
        """The one place both transports turn an answer into a Completion: usage read defensively
        (:func:`~sciprobe.llm.usage.read_usage`), priced from token counts, text made storable."""
        if text is None and not tool_calls:
            return Completion(text=None, error=f"EmptyResponse: no message content (finish_reason="
                                               f"{short_repr(finish_reason)})", empty=True,
                              attempts=attempts, latency_s=latency, request_hash=job.key, model=self.spec.name)
        report = read_usage(usage)
        return Completion(
            text=clean_text(text) if text is not None else None,
            prompt_tokens=report.prompt_tokens,
            completion_tokens=report.completion_tokens,
            cost_usd=self.pricer.cost(report),
            latency_s=latency,
            attempts=attempts,
            request_hash=job.key,
            model=self.spec.name,
            tool_calls=tool_calls or None,
            usage_problem=report.problem,
        )
