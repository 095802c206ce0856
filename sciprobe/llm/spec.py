"""Model specs: ``NAME[,key=value...]``, one string that names a model and how to call it.

The same string is accepted on the CLI, in configs and by :class:`~sciprobe.llm.client.LLMClient`, so a run
is reproducible from its provenance record. ``NAME`` is ``local/smollm2`` (the bundled model) or any litellm
model string (``openai/gpt-4o-mini``, ``anthropic/claude-3-5-haiku-latest``, ``hosted_vllm/my-model``).

    ModelSpec.parse("openai/judge,base_url=http://127.0.0.1:8000/v1,api_key_env=JUDGE_KEY,concurrency=16")

Replicas: ``base_url=URL1|URL2|...`` names several servers of one model (e.g. ``vllm serve`` on N machines); calls
are spread over them and a failing one is taken out for a while (:mod:`sciprobe.llm.replicas`). It is one
logical model: one cache identity (the set of URLs, in any order), one budget, one line in the results.
``concurrency``, ``rpm`` and ``tpm`` apply per replica.

Nothing here imports litellm: parsing must stay cheap and offline.
"""

from __future__ import annotations

import math
import os
import re
import urllib.parse
from dataclasses import dataclass, field, fields
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.llm.response_cap import DEFAULT_MAX_RESPONSE_MB

LOCAL_PREFIX = "local/"
LOCAL_MODEL_NAMES = ("smollm2",)

#: Placeholder key sent to a custom ``base_url`` when no key is configured (vLLM/TGI accept any key).
PLACEHOLDER_API_KEY = "sk-sciprobe-no-key"

GENERATION_KEYS = ("temperature", "max_tokens", "top_p")
_INT_KEYS = frozenset({"concurrency", "max_retries", "max_tokens"})
_FLOAT_KEYS = frozenset({"timeout", "temperature", "top_p", "rpm", "tpm", "max_response_mb"})
_STR_KEYS = frozenset({"base_url", "api_key", "api_key_env", "transport"})
#: auto (the default: see ModelSpec.resolved_transport), litellm (any provider, through litellm's translation) or
#: http (a direct POST to an OpenAI-compatible base_url: sciprobe.llm.http_backend)
TRANSPORTS = ("auto", "litellm", "http")
#: Providers whose base_url speaks OpenAI's chat API as is: ``transport=auto`` posts to them directly.
DIRECT_PROVIDERS = frozenset({"openai", "hosted_vllm"})
_KNOWN_KEYS = _INT_KEYS | _FLOAT_KEYS | _STR_KEYS

# o1/o3/o4 and gpt-5 (OpenAI), deepseek-reasoner and "*-thinking" variants reject sampling parameters
# (OpenAI: "Unsupported parameter: 'temperature'"), so one judge spec would fail every call.
_REASONING_RE = re.compile(r"^(?:o[134](?:$|[-.:_])|gpt-5|deepseek-reasoner$)|-thinking(?:$|[-.:_])")
_SAMPLING_KEYS = ("temperature", "top_p")

# Model-name prefixes -> provider, for bare names litellm routes without a "provider/" prefix.
_BARE_PROVIDERS = (
    (("gpt-", "o1", "o3", "o4", "chatgpt-", "text-embedding-"), "openai"),
    (("claude",), "anthropic"),
    (("gemini",), "gemini"),
    (("deepseek",), "deepseek"),
    (("mistral", "codestral", "open-mistral"), "mistral"),
    (("command",), "cohere"),
)


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec. Generation keys are *defaults*: a request's own params win over them.

    ``concurrency`` bounds in-flight API calls (remote; per replica when ``base_url`` lists several) or is the
    generation batch size (local).
    """

    name: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)  # never printed: specs end up in logs
    api_key_env: str | None = None
    concurrency: int = 8
    timeout: float = 120.0
    max_retries: int = 5
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    rpm: float | None = None  # requests per minute this deployment allows (sciprobe.llm.pacing)
    tpm: float | None = None  # tokens per minute
    transport: str = "auto"
    max_response_mb: float = DEFAULT_MAX_RESPONSE_MB  # a larger answer is a recorded failure (response_cap)

    def __post_init__(self) -> None:
        _validate(self)

    # -- parsing -----------------------------------------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> ModelSpec:
        """Parse ``NAME[,key=value...]``; any malformed part raises a one-line :class:`SciprobeError`."""
        if not isinstance(text, str) or not text.strip():
            raise SciprobeError("empty model spec: expected NAME[,key=value...], e.g. openai/gpt-4o-mini")
        name, *parts = [p.strip() for p in text.strip().split(",")]
        if not name or "=" in name:
            raise SciprobeError(f"model spec {text!r} must start with a model name, e.g. openai/gpt-4o-mini")
        values: dict[str, Any] = {}
        for part in parts:
            key, sep, raw = part.partition("=")
            key, raw = key.strip(), raw.strip()
            if not sep or not key:
                raise SciprobeError(f"model spec {text!r}: expected key=value, got {part!r}")
            if key not in _KNOWN_KEYS:
                known = ", ".join(sorted(_KNOWN_KEYS))
                raise SciprobeError(f"model spec {text!r}: unknown key {key!r} (known: {known})")
            if key in values:
                raise SciprobeError(f"model spec {text!r}: key {key!r} given twice")
            if not raw:
                raise SciprobeError(f"model spec {text!r}: empty value for {key!r}")
            if REPLICA_SEPARATOR in raw:
                if key != "base_url":  # the value is not echoed: it may be an api_key
                    raise SciprobeError(f"model spec {name!r}: only base_url lists several values (URL1|URL2); "
                                        f"{key} has a '|'")
                raw = REPLICA_SEPARATOR.join(url.strip() for url in raw.split(REPLICA_SEPARATOR))
            values[key] = _convert(text, key, raw)
        return cls(name=name, **values)

    # -- identity ----------------------------------------------------------------------------------
    @property
    def model_id(self) -> str:
        """The model name as written: the identity used in cache keys and provenance."""
        return self.name

    @property
    def base_urls(self) -> tuple[str, ...]:
        """The servers of this model: one per replica of ``base_url=URL1|URL2``; ``()`` without a base_url."""
        return tuple(self.base_url.split(REPLICA_SEPARATOR)) if self.base_url else ()

    @property
    def cache_base_url(self) -> str | None:
        """The base_url part of cache keys: the logical model's, whichever replica answers. One URL: as written
        (keys made before replicas existed still hit); several: the sorted set (order does not matter)."""
        urls = self.base_urls
        return self.base_url if len(urls) < 2 else REPLICA_SEPARATOR.join(sorted(urls))

    @property
    def is_local(self) -> bool:
        return self.name.startswith(LOCAL_PREFIX)

    @property
    def local_name(self) -> str:
        return self.name[len(LOCAL_PREFIX):] if self.is_local else ""

    @property
    def provider(self) -> str:
        """``local``, the litellm provider prefix (``openai``, ``anthropic``...), or a guess for bare names."""
        if self.is_local:
            return "local"
        if "/" in self.name:
            return self.name.split("/", 1)[0].lower()
        lowered = self.name.lower()
        for prefixes, provider in _BARE_PROVIDERS:
            if lowered.startswith(prefixes):
                return provider
        return "unknown"

    @property
    def resolved_transport(self) -> str:
        """``http`` or ``litellm``: what ``transport=auto`` means for this spec.

        A ``base_url`` under an OpenAI-compatible provider (``openai/``, ``hosted_vllm/``: vLLM, TGI, llama.cpp,
        LM Studio, a proxy) is posted to directly: litellm sends those the same body, at ~10x the client CPU
        per call (bench/item_cpu.py). litellm stays for everything that needs its translation: other
        providers, the providers' own endpoints (no ``base_url``), and reasoning models, whose parameters it
        renames (``max_tokens`` -> ``max_completion_tokens``) and checks.
        """
        if self.transport != "auto":
            return self.transport
        direct = bool(self.base_url) and self.provider in DIRECT_PROVIDERS and not self.is_reasoning_model
        return "http" if direct else "litellm"

    @property
    def max_response_bytes(self) -> int:
        return int(self.max_response_mb * 1024 * 1024)

    @property
    def is_reasoning_model(self) -> bool:
        """o1*, o3*, o4*, gpt-5*, deepseek-reasoner and *-thinking: they reject temperature/top_p."""
        return bool(_REASONING_RE.search(self.name.rsplit("/", 1)[-1].lower()))

    # -- call parameters ---------------------------------------------------------------------------
    def default_params(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in GENERATION_KEYS if getattr(self, k) is not None}

    def effective_params(self, params: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """Spec defaults overlaid by the request's params, minus what the model rejects.

        Returns the params to send (and to key the cache on) plus one human-readable line per adjustment,
        so a run's provenance says that e.g. ``temperature=0`` was *not* applied to an o3 judge.
        """
        merged = {**self.default_params(), **params}
        adjustments: list[str] = []
        if self.is_reasoning_model:
            for key in _SAMPLING_KEYS:
                if key in merged:
                    value = merged.pop(key)
                    adjustments.append(f"{self.name}: dropped {key}={value!r} (reasoning models reject it)")
        return merged, adjustments

    def resolve_api_key(self) -> str | None:
        """The key to send: literal, from ``api_key_env``, or None (litellm reads the provider's env var).

        With a custom ``base_url`` and no configured key a placeholder is sent instead of None, because
        litellm would otherwise forward e.g. ``OPENAI_API_KEY`` to that third-party endpoint.
        """
        if self.api_key is not None:
            return self.api_key
        if self.api_key_env is not None:
            value = os.environ.get(self.api_key_env)
            if not value:
                raise SciprobeError(f"environment variable {self.api_key_env} (api_key_env of {self.name}) is not set")
            return value
        return PLACEHOLDER_API_KEY if self.base_url else None

    def to_string(self) -> str:
        """The spec back as text, without any literal api_key (safe to log and to store in provenance)."""
        parts = [self.name]
        defaults = {f.name: f.default for f in fields(self)}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("name", "api_key") or value == defaults[f.name]:
                continue
            parts.append(f"{f.name}={value}")
        return ",".join(parts)


#: Separates the replica URLs of ``base_url`` (a spec itself uses ``,`` and ``=``; a judge panel ``;``).
REPLICA_SEPARATOR = "|"

#: Separates the specs of a judge panel in one ``--judge`` value (a spec itself uses ``,`` and ``=``).
SPEC_SEPARATOR = ";"


def split_specs(text: str | None) -> list[str]:
    """``"SPEC1;SPEC2"`` -> ``["SPEC1", "SPEC2"]``; None or blank -> ``[]``."""
    return [s.strip() for s in (text or "").split(SPEC_SEPARATOR) if s.strip()]


def _convert(text: str, key: str, raw: str) -> Any:
    try:
        if key in _INT_KEYS:
            return int(raw)
        if key in _FLOAT_KEYS:
            value = float(raw)
            if not math.isfinite(value):  # nan would slip past every range check below
                raise ValueError(raw)
            return value
    except ValueError:
        kind = "an integer" if key in _INT_KEYS else "a finite number"
        raise SciprobeError(f"model spec {text!r}: {key} must be {kind}, got {raw!r}") from None
    return raw


def _has_credentials(url: str) -> bool:
    try:
        parts = urllib.parse.urlsplit(url)
        return parts.username is not None or parts.password is not None
    except ValueError:  # an unparsable URL fails where it is used, with the HTTP client's message
        return False


def _validate(spec: ModelSpec) -> None:
    if not spec.name or "," in spec.name or REPLICA_SEPARATOR in spec.name:
        raise SciprobeError(f"invalid model name {spec.name!r}")
    if spec.base_url is not None:
        urls = [url.strip() for url in spec.base_url.split(REPLICA_SEPARATOR)]
        if not all(urls):
            raise SciprobeError(f"{spec.name}: base_url has an empty URL (replicas are written URL1|URL2|...)")
        if len(set(urls)) < len(urls):
            raise SciprobeError(f"{spec.name}: base_url lists a URL twice")
        if any(_has_credentials(url) for url in urls):  # neither transport can send them; logs would show them
            raise SciprobeError(f"{spec.name}: base_url must not carry user:password; give the server's key with "
                                "api_key_env")
    for key in sorted(_FLOAT_KEYS):
        value = getattr(spec, key)
        if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value)):
            raise SciprobeError(f"{spec.name}: {key} must be a finite number, got {value!r}")
    if spec.concurrency < 1:
        raise SciprobeError(f"{spec.name}: concurrency must be >= 1, got {spec.concurrency}")
    if spec.max_retries < 0:
        raise SciprobeError(f"{spec.name}: max_retries must be >= 0, got {spec.max_retries}")
    if spec.timeout <= 0:
        raise SciprobeError(f"{spec.name}: timeout must be > 0 seconds, got {spec.timeout}")
    if spec.temperature is not None and spec.temperature < 0:
        raise SciprobeError(f"{spec.name}: temperature must be >= 0, got {spec.temperature}")
    if spec.top_p is not None and not 0 < spec.top_p <= 1:
        raise SciprobeError(f"{spec.name}: top_p must be in (0, 1], got {spec.top_p}")
    if spec.max_tokens is not None and spec.max_tokens < 1:
        raise SciprobeError(f"{spec.name}: max_tokens must be >= 1, got {spec.max_tokens}")
    if spec.transport not in TRANSPORTS:
        raise SciprobeError(f"{spec.name}: transport must be one of {', '.join(TRANSPORTS)}, got {spec.transport!r}")
    if spec.transport == "http" and not spec.base_url:
        raise SciprobeError(f"{spec.name}: transport=http needs base_url (an OpenAI-compatible server)")
    if not 0 < spec.max_response_mb <= 4096:
        raise SciprobeError(f"{spec.name}: max_response_mb must be in (0, 4096], got {spec.max_response_mb}")
    for key in ("rpm", "tpm"):
        value = getattr(spec, key)
        if value is not None and value <= 0:
            raise SciprobeError(f"{spec.name}: {key} must be > 0, got {value}")
    if spec.api_key is not None and spec.api_key_env is not None:
        raise SciprobeError(f"{spec.name}: give api_key or api_key_env, not both")
    if spec.is_local:
        if spec.local_name not in LOCAL_MODEL_NAMES:
            known = ", ".join(LOCAL_PREFIX + n for n in LOCAL_MODEL_NAMES)
            raise SciprobeError(f"unknown local model {spec.name!r} (known: {known})")
        remote_only = [k for k in ("base_url", "api_key", "api_key_env") if getattr(spec, k) is not None]
        if remote_only:
            raise SciprobeError(f"{spec.name} runs in-process: {', '.join(remote_only)} do not apply")
