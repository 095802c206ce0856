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
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sciprobe.core.errors import SciprobeError
from sciprobe.llm import loop as client_loop
from sciprobe.llm.ledger import skipped_completion
from sciprobe.llm.pacing import Pacer, estimate_tokens
from sciprobe.llm.replicas import Replica, ReplicaGate, ReplicaPool
from sciprobe.llm.response_cap import capped_response_class, redirected_in, too_large_in
from sciprobe.llm.spec import DIRECT_PROVIDERS, ModelSpec
from sciprobe.llm.types import Completion, Request
from sciprobe.llm.usage import UsageReport, finite_number, read_usage, short_repr

#: Phrases of provider 429s that mean "out of credit", not "too fast" (OpenAI, Azure, Anthropic wording).
_QUOTA_MARKERS = ("insufficient_quota", "exceeded your current quota", "quota exceeded", "billing",
                  "credit balance is too low")

#: Phrases of errors that mean "no usable credentials", whatever status they come with: litellm reports a missing
#: OpenAI key as an InternalServerError ("Missing credentials"), some providers and proxies answer a bad key with
#: 400 or 500. Every later call would fail the same way.
_AUTH_MARKERS = ("missing credentials", "api_key client option must be set", "incorrect api key",
                 "invalid api key", "invalid_api_key", "api key not valid", "invalid x-api-key",
                 "no api key provided")

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
    stops here and writes what it has, marked incomplete (sciprobe.run.evaluation)."""


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
    tiers (e.g. above 200k prompt tokens) do not apply. OpenAI-compatible specs are read from the same table
    without importing litellm (:mod:`sciprobe.llm.price_table`)."""
    from sciprobe.llm import price_table

    if price_table.priced_here(model):
        return price_table.table_unit_prices(model)
    litellm = import_litellm()
    probe = 1_000
    try:
        prompt, _ = litellm.cost_per_token(model=model, prompt_tokens=probe, completion_tokens=0)
        _, completion = litellm.cost_per_token(model=model, prompt_tokens=0, completion_tokens=probe)
    except Exception:  # noqa: BLE001 - litellm raises for unmapped models
        return None
    return float(prompt) / probe, float(completion) / probe


def missing_key_variables(spec: ModelSpec) -> list[str]:
    """The environment variables one of which must hold the key of ``spec``'s provider, when none is set; ``[]``
    when the spec brings its own key (``api_key``, ``api_key_env``), names a server (``base_url``: a vLLM or
    proxy may need none) or its provider authenticates otherwise (cloud credentials files: Bedrock, Vertex).
    From litellm's own table (``validate_environment``: environment lookups only, no call)."""
    if spec.is_local or spec.api_key is not None or spec.api_key_env is not None or spec.base_url:
        return []
    try:
        report = import_litellm().validate_environment(model=spec.name)
    except Exception:  # noqa: BLE001 - litellm cannot tell: the first call will
        return []
    missing = report.get("missing_keys") if isinstance(report, dict) else None
    names = [k for k in missing or [] if isinstance(k, str) and k.endswith("_API_KEY")]
    return [] if any(os.environ.get(k) for k in names) else names


def check_credentials(spec: ModelSpec) -> None:
    """A user error (one line, before any call) when ``spec`` has no key to send: every call would fail, and
    litellm reports a missing OpenAI key as a retryable InternalServerError."""
    spec.resolve_api_key()  # api_key_env naming an unset variable
    names = missing_key_variables(spec)
    if names:
        raise SciprobeError(f"{spec.name} needs an API key: set {' or '.join(names)}, or give the spec "
                            "api_key_env=VARIABLE (the variable that holds the key)")


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
    from sciprobe.llm import price_table

    if price_table.priced_here(model):
        return price_table.table_flat_price_limit(model)
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


#: finish_reasons with which a message may rightly carry no text: the token limit was reached (a reasoning model
#: can spend it all thinking) or the provider's content filter withheld the text.
EMPTY_FINISH_REASONS = ("length", "content_filter")


def field_of(obj: Any, name: str) -> Any:
    """``name`` of a JSON object (the direct transport) or of litellm's response objects; None when absent."""
    if isinstance(obj, dict):
        return obj.get(name)
    if not _is_object(obj):
        return None
    return getattr(obj, name, None)


def _is_object(value: Any) -> bool:
    return value is not None and not isinstance(value, (str, bytes, int, float, bool, list, tuple))


@dataclass(frozen=True)
class Answer:
    """What a well-formed chat completion says: its text and tool calls, or (``empty_because``) why it is the
    model's answer with neither."""

    text: str | None
    tool_calls: list[dict[str, Any]]
    finish_reason: Any
    empty_because: str | None = None


def read_answer(response: Any) -> Answer:
    """The first choice of a chat completion: a parsed JSON object or litellm's response object.

    A well-formed answer has string ``content`` (``""`` too: the model's empty text, a parse failure downstream)
    or at least one tool call. A message with null content and no tool call is the model's empty answer only when
    it says why: a ``refusal``, a ``finish_reason`` of ``length`` or ``content_filter``, or reasoning text without
    a final answer (scored as an unparsable answer). Anything else raises :class:`MalformedResponse`: no choices, a
    choice or message that is not an object, content of another type (a number, an object), tool calls that are
    no calls, or no content and nothing to explain it (litellm reads a missing ``content`` as null, so a
    missing and a null content read the same on both transports).
    """
    choices = field_of(response, "choices")
    if not isinstance(choices, (list, tuple)) or not choices:
        raise MalformedResponse(f"no choices (choices={short_repr(choices)})")
    choice = choices[0]
    message = field_of(choice, "message")
    if not _is_object(choice) or not _is_object(message):
        raise MalformedResponse(f"choices[0] has no message object ({short_repr(choice)})")
    finish_reason = field_of(choice, "finish_reason")
    content = field_of(message, "content")
    if content is not None and not isinstance(content, str):
        raise MalformedResponse(f"message content is {type(content).__name__} {short_repr(content)}, not text")
    calls = tool_calls_of(message)
    raw_calls = field_of(message, "tool_calls")
    if not calls and raw_calls is not None and not (isinstance(raw_calls, (list, tuple)) and not raw_calls):
        raise MalformedResponse(f"tool_calls holds no call ({short_repr(raw_calls)})")
    if content is not None or calls:
        return Answer(content, calls, finish_reason)
    reason = _why_empty(message, finish_reason)
    if reason is None:
        raise MalformedResponse(f"no message content and nothing to explain it (finish_reason="
                                f"{short_repr(finish_reason)})")
    return Answer(None, [], finish_reason, reason)


def _why_empty(message: Any, finish_reason: Any) -> str | None:
    """Why a message without content or tool calls is still the model's answer, or None when nothing says so."""
    refusal = field_of(message, "refusal")
    if isinstance(refusal, str) and refusal.strip():
        return f"the model refused: {short_repr(clean_text(refusal), 120)}"
    if isinstance(finish_reason, str) and finish_reason in EMPTY_FINISH_REASONS:
        return f"no message content (finish_reason={finish_reason!r})"
    reasoning = field_of(message, "reasoning_content") or field_of(message, "reasoning")
    if isinstance(reasoning, str) and reasoning.strip():
        return f"reasoning without a final answer (finish_reason={short_repr(finish_reason)})"
    return None


_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*(?:Error|Exception)): ?(.*)$")
#: litellm's wording (1.108: convert_dict_to_response.py) for a 200 JSON object that is no chat completion. Bodies
#: that are no JSON object (an HTML page, a list) keep litellm's InternalServerError: its message does not tell them
#: apart. Both are failed calls, retried.
_LITELLM_MALFORMED = ("invalid response object", "that is not a list")


def litellm_malformed(exc: BaseException) -> MalformedResponse | None:
    """litellm's InternalServerError for a 200 body that is no chat completion, as :class:`MalformedResponse`
    (the direct transport's name), without the answer's text (litellm's message embeds the whole body)."""
    message = str(exc)
    lowered = message.lower()
    if not any(marker in lowered for marker in _LITELLM_MALFORMED):
        return None
    if "invalid response object" in lowered:  # a traceback, then received_args=<the answer>
        head = message.split("received_args=", 1)[0]
        lines = [m for m in (_EXCEPTION_LINE.match(line.strip()) for line in head.splitlines()) if m]
        what = f"{lines[-1].group(1)}: {lines[-1].group(2)}".strip() if lines else "Invalid response object"
    else:
        what = message.rsplit("Exception - ", 1)[-1].split("Received:", 1)[0].split("Raw keys:", 1)[0].strip()
    what = " ".join(what.split())
    return MalformedResponse("litellm cannot read the answer as a chat completion ("
                             + (what if len(what) <= 120 else what[:117] + "...") + ")")


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
    """A 200 answer that is not a chat completion (:func:`read_answer`): no choice, no message, content of the
    wrong type or missing without a reason. The server's fault, not the model's answer: retried (on another
    replica when there is one) like a 5xx, and never scored."""


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


#: How a failed attempt is treated (:meth:`RetryPolicy.failure_class`):
#: ``transient``: the server may answer next time (5xx, 408/409/429, timeouts, dropped connections, a malformed
#: answer): retried with backoff, or at once on another replica;
#: ``server``: this server's answer that asking it again would not change (a body over the size cap, a
#: redirect): retried on a replica not yet asked for this request, never on the same server;
#: ``request``: an answer blaming the request (400, 404, 422, ...): asked once of another replica before it
#: is taken as the request's fault (one replica may serve another model, a shorter context, an old version).
TRANSIENT, SERVER_FAULT, REQUEST_FAULT = "transient", "server", "request"


class _NeverRaised(Exception):
    """No code raises it: litellm's exception classes, as the retry policy sees them when litellm is not loaded."""


class _LitellmAbsent:
    def __getattr__(self, name: str) -> type[Exception]:
        return _NeverRaised


_LITELLM_ABSENT = _LitellmAbsent()


class RetryPolicy:
    """Classifies litellm exceptions and computes waits: exponential backoff with full jitter."""

    def __init__(self, max_retries: int, base_s: float = 0.5, max_s: float = 30.0) -> None:
        self.max_retries = max_retries
        self.base_s = base_s
        self.max_s = max_s

    @staticmethod
    def is_fatal(exc: BaseException, litellm: Any) -> bool:
        """Bad or missing credentials, forbidden, quota spent: every later call would fail the same way."""
        if isinstance(exc, HttpStatusError) and exc.status in (401, 403):
            return True
        return isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)) or \
            RetryPolicy.is_quota(exc, litellm) or RetryPolicy.is_auth_message(exc)

    @staticmethod
    def is_auth_message(exc: BaseException) -> bool:
        """An error whose text says the credentials are missing or invalid, whatever its status (litellm reports a
        missing OpenAI key as InternalServerError "Missing credentials")."""
        if isinstance(exc, (MalformedResponse, TransportError)):  # a server's junk, not its verdict on the key
            return False
        message = str(exc).lower()
        return any(marker in message for marker in _AUTH_MARKERS)

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
    def failure_class(exc: BaseException, litellm: Any) -> str:
        """:data:`TRANSIENT`, :data:`SERVER_FAULT` or :data:`REQUEST_FAULT` (fatal errors are checked first)."""
        if too_large_in(exc) is not None or redirected_in(exc) is not None:
            return SERVER_FAULT
        return TRANSIENT if RetryPolicy.is_retryable(exc, litellm) else REQUEST_FAULT

    @staticmethod
    def is_retryable(exc: BaseException, litellm: Any) -> bool:
        """Whether the same server may answer if asked again (:data:`TRANSIENT`)."""
        if too_large_in(exc) is not None or redirected_in(exc) is not None:  # the same server sends the same
            return False
        if isinstance(exc, (TransportError, MalformedResponse)):
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
    retry goes to another replica when one is in service (how each failure is retried: :data:`TRANSIENT`,
    :data:`SERVER_FAULT`, :data:`REQUEST_FAULT`). Everything above applies per replica.
    """

    ADMISSION_FACTOR = 2
    SHARED_SESSION_PROVIDERS = frozenset({"openai", "hosted_vllm"})
    #: Whether complete_many may run this backend on the process's long-lived client loop (sciprobe.llm.loop):
    #: not through litellm, whose per-loop client cache would then mix up the sessions of different clients.
    persistent_loop = False

    def __init__(self, spec: ModelSpec, backoff_base_s: float = 0.5) -> None:
        self.spec = spec
        self.policy = RetryPolicy(spec.max_retries, base_s=backoff_base_s)
        self._litellm: Any = None  # imported on first use (the litellm property): ~4 s of CPU a direct run never needs
        self._api_key = spec.resolve_api_key()
        self.provider = self._check_provider()
        self._key_checked = False  # check_credentials, before the first request (not here: a client may never call)
        self.http_bound = self.provider in self.SHARED_SESSION_PROVIDERS
        #: the servers of this model (one entry without a base_url: the provider's own endpoint)
        self.replicas = ReplicaPool.for_spec(spec.name, spec.base_urls or (None,), spec.rpm, spec.tpm)
        self.pricer = Pricer(spec.name)
        self.sleep = asyncio.sleep  # the retry backoff's wait (tests record it instead of waiting)
        self.stream: Any = None  # where the first failure of each kind is announced (None: sys.stderr)
        self._announced: set[str] = set()
        self._announce_lock = threading.Lock()
        self._states: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = weakref.WeakKeyDictionary()

    @property
    def litellm(self) -> Any:
        """litellm, imported the first time a call or a lookup really goes through it."""
        if self._litellm is None:
            self._litellm = import_litellm()
        return self._litellm

    @property
    def error_classes(self) -> Any:
        """Where the retry policy finds litellm's exception classes: litellm when it is loaded, else a stand-in
        whose classes nothing raises (a run that never imported litellm cannot get a litellm exception)."""
        return self._litellm or sys.modules.get("litellm") or _LITELLM_ABSENT

    def _check_provider(self) -> str:
        """The provider litellm would route to. A direct-HTTP spec names it itself (``openai/...`` or
        ``hosted_vllm/...`` with a base_url, sciprobe.llm.spec.resolved_transport): no litellm lookup."""
        if self.spec.resolved_transport == "http" and self.spec.provider in DIRECT_PROVIDERS:
            return self.spec.provider
        try:
            _, provider, _, _ = self.litellm.get_llm_provider(model=self.spec.name, api_base=self._first_url)
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

        # litellm's own switch counts only where litellm is loaded: a direct-HTTP run never imports it for this
        loaded = self._litellm or sys.modules.get("litellm")
        trust_env = bool(getattr(loaded, "aiohttp_trust_env", False)) or os.environ.get(
            "AIOHTTP_TRUST_ENV", "").lower() in ("1", "true", "yes")
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
        if not self._key_checked and jobs:
            check_credentials(self.spec)  # a missing key: one user error before the first request, not retries
            self._key_checked = True
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
        pool = self.replicas
        started = time.perf_counter()
        tokens = estimate_tokens(job.request.messages, job.request.params) if pool.paces_tokens else 0
        attempt = 0
        replica: Replica | None = None  # where the last attempt went: a retry prefers another one
        tried: set[Replica] = set()
        # the replica whose answer blamed the request, while another one is asked (REQUEST_FAULT)
        doubted: tuple[Replica, BaseException] | None = None
        while True:
            attempt += 1
            failed_on = replica
            replica = None
            try:
                replica = await state.admission.acquire(avoid=doubted[0] if doubted else failed_on)
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
                completion = self._success(job, response, attempt, started)
            except Exception as exc:
                self._raise_if_fatal(exc)
                kind = self.policy.failure_class(exc, self.error_classes)
                if replica is not None:
                    tried.add(replica)
                will_retry = attempt <= self.policy.max_retries and self._may_retry(kind, replica, tried, doubted)
                delay = self.policy.delay(attempt, exc) if kind == TRANSIENT else 0.0
                self._note_failure(kind, exc, replica, will_retry, delay)
                self._announce(exc, kind, will_retry)
                if will_retry:
                    if kind == REQUEST_FAULT and doubted is None and replica is not None:
                        doubted = (replica, exc)
                    if kind == TRANSIENT and (replica is None or not pool.has_other_in_service(replica)):
                        await self.sleep(delay)
                    continue
                if kind == REQUEST_FAULT and doubted is not None:
                    pool.alive(doubted[0])  # two answers blame the request: neither server is at fault
                return self._failure(job, exc, attempt, started)
            pool.answered(replica)
            if doubted is not None and doubted[0] is not replica:
                pool.failed(doubted[0], doubted[1])  # another server answered what it refused: its fault
            replica.pacer.on_success()
            replica.pacer.settle(tokens, completion.prompt_tokens + completion.completion_tokens)
            return completion

    def _raise_if_fatal(self, exc: BaseException) -> None:
        """Exhausted quota and bad credentials end the batch: every later call would fail the same way."""
        if self.policy.is_quota(exc, self.error_classes):
            raise QuotaExhausted(
                f"quota exhausted for {self.spec.name} ({error_text(exc)}); waiting will not help"
            ) from exc
        if self.policy.is_fatal(exc, self.error_classes):
            raise FatalBackendError(
                f"authentication failed for {self.spec.name} ({error_text(exc)}); "
                "check the spec's api_key / api_key_env"
            ) from exc

    def _may_retry(self, kind: str, replica: Replica | None, tried: set[Replica],
                   doubted: tuple[Replica, BaseException] | None) -> bool:
        """Whether a failure of ``kind`` is worth another attempt (the attempt budget aside)."""
        if kind == TRANSIENT:
            return True
        if kind == SERVER_FAULT:  # only a server not asked yet can give another answer
            return any(r not in tried for r in self.replicas.replicas)
        # REQUEST_FAULT: a second opinion from another replica, once
        return doubted is None and replica is not None and len(self.replicas.replicas) > 1

    def _note_failure(self, kind: str, exc: BaseException, replica: Replica | None, will_retry: bool,
                      delay: float) -> None:
        """What a failed attempt says about its replica's health (sciprobe.llm.replicas)."""
        if replica is None:
            return
        pool = self.replicas
        if kind == TRANSIENT and self.policy.is_rate_limit(exc, self.error_classes):
            if will_retry:
                replica.pacer.on_rate_limited(delay)  # the whole deployment waits, not just this call
            pool.rate_limited(replica, delay)  # and its calls go to the other replicas meanwhile
        elif kind in (TRANSIENT, SERVER_FAULT):
            pool.failed(replica, exc)
        elif not will_retry:  # the request's fault: the server is alive
            pool.alive(replica)
        # else: blamed the request while another replica is asked; judged by that one's answer

    def _announce(self, exc: BaseException, kind: str, will_retry: bool) -> None:
        """One stderr line the first time a kind of failure happens in this backend, with what happens next: a
        run whose calls keep failing says so at once instead of retrying in silence."""
        text = error_text(too_large_in(exc) or redirected_in(exc) or exc)
        name = text.split(":", 1)[0]
        with self._announce_lock:
            if name in self._announced:
                return
            self._announced.add(name)
        if not will_retry:
            plan = {TRANSIENT: f"not retried (max_retries={self.policy.max_retries})",
                    SERVER_FAULT: "not retried: the same server would send the same answer",
                    REQUEST_FAULT: "not retried: the request's fault"}[kind]
        elif kind == TRANSIENT:
            plan = (f"retrying each call up to {self.policy.max_retries} times, backoff up to "
                    f"{self.policy.max_s:g} s" + (", on another replica first" if self.replicas.tracked else ""))
        else:
            plan = "asking another replica"
        print(f"warning: {self.spec.name}: a call failed ({text[:200]}); {plan}. Later failures of this kind are "
              "counted in the results, not shown.", file=self.stream or sys.stderr, flush=True)

    async def _send(self, job: Job, state: _LoopState, replica: Replica) -> Any:
        extra: dict[str, Any] = {"shared_session": state.session} if state.session is not None else {}
        try:
            return await self._acompletion(job, replica, extra)
        except self.litellm.InternalServerError as exc:
            malformed = litellm_malformed(exc)  # a 200 body that is no chat completion: named as on http
            if malformed is not None:
                raise malformed from exc
            raise

    async def _acompletion(self, job: Job, replica: Replica, extra: dict[str, Any]) -> Any:
        return await self.litellm.acompletion(
            model=self.spec.name,
            messages=[dict(m) for m in job.request.messages],
            api_base=replica.url,
            api_key=self._api_key,
            timeout=self.spec.timeout,
            max_retries=0,
            # lighteval installs a global litellm disk cache at import; its hit path crashes on a plain install
            # (and we have our own cache), so never let litellm cache our calls. caching=False only stops the
            # lookup: litellm still serializes and stores every answer (and fails on a lone surrogate) unless
            # told "no-store".
            caching=False,
            cache={"no-cache": True, "no-store": True},
            metadata={OWN_PRICING: True},  # a fresh dict: litellm writes timing into it
            **extra,
            **job.request.params,
        )

    def _failure(self, job: Job, exc: BaseException, attempts: int, started: float) -> Completion:
        return Completion(
            text=None,
            error=error_text(too_large_in(exc) or redirected_in(exc) or exc),
            attempts=attempts,
            latency_s=time.perf_counter() - started,
            request_hash=job.key,
            model=self.spec.name,
        )

    def _success(self, job: Job, response: Any, attempts: int, started: float) -> Completion:
        """The one place both transports turn an answer into a Completion (:func:`read_answer`: a body that is
        no chat completion raises :class:`MalformedResponse`): usage read defensively
        (:func:`~sciprobe.llm.usage.read_usage`), priced from token counts, text made storable."""
        latency = time.perf_counter() - started
        try:
            answer = read_answer(response)
        except MalformedResponse:
            raise
        except Exception as exc:  # noqa: BLE001 - an object that breaks on reading is no answer either
            raise MalformedResponse(error_text(exc)) from exc
        if answer.empty_because is not None:
            return Completion(text=None, error=f"EmptyResponse: {answer.empty_because}", empty=True,
                              attempts=attempts, latency_s=latency, request_hash=job.key, model=self.spec.name)
        report = read_usage(field_of(response, "usage"))
        return Completion(
            text=clean_text(answer.text) if answer.text is not None else None,
            prompt_tokens=report.prompt_tokens,
            completion_tokens=report.completion_tokens,
            cost_usd=self.pricer.cost(report),
            latency_s=latency,
            attempts=attempts,
            request_hash=job.key,
            model=self.spec.name,
            tool_calls=answer.tool_calls or None,
            usage_problem=report.problem,
        )
