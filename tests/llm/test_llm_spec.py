"""ModelSpec: the one string that names a model and how to call it (CLI, configs, provenance)."""

from __future__ import annotations

import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.llm.spec import PLACEHOLDER_API_KEY, ModelSpec


def test_parse_name_only_uses_defaults():
    spec = ModelSpec.parse("openai/gpt-4o-mini")
    assert spec.model_id == "openai/gpt-4o-mini"
    assert spec.provider == "openai"
    assert (spec.base_url, spec.api_key, spec.concurrency) == (None, None, 8)
    assert spec.default_params() == {}


def test_parse_all_keys_with_types():
    spec = ModelSpec.parse(
        " openai/judge , base_url=http://127.0.0.1:9/v1, api_key_env=JUDGE_KEY, concurrency=16, timeout=12.5,"
        "max_retries=2, temperature=0, max_tokens=64, top_p=0.9"
    )
    assert spec.name == "openai/judge"
    assert spec.base_url == "http://127.0.0.1:9/v1"
    assert spec.api_key_env == "JUDGE_KEY"
    assert spec.concurrency == 16 and isinstance(spec.concurrency, int)
    assert spec.timeout == 12.5
    assert spec.max_retries == 2
    assert spec.default_params() == {"temperature": 0.0, "max_tokens": 64, "top_p": 0.9}


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("openai/x,colour=blue", "unknown key 'colour'"),
        ("openai/x,concurrency=many", "concurrency must be an integer"),
        ("openai/x,timeout=soon", "timeout must be a finite number"),
        ("openai/x,timeout=nan", "timeout must be a finite number"),
        ("openai/x,rpm=inf", "rpm must be a finite number"),
        ("openai/x,max_response_mb=0", "max_response_mb must be in (0, 4096]"),
        ("openai/x,max_response_mb=1e9", "max_response_mb must be in (0, 4096]"),
        ("openai/x,temperature", "expected key=value"),
        ("openai/x,max_tokens=", "empty value"),
        ("openai/x,concurrency=2,concurrency=3", "given twice"),
        ("openai/x,concurrency=0", "concurrency must be >= 1"),
        ("openai/x,top_p=1.5", "top_p must be in (0, 1]"),
        ("openai/x,api_key=a,api_key_env=B", "not both"),
        ("", "empty model spec"),
        ("temperature=0", "must start with a model name"),
        ("local/llama70b", "unknown local model"),
        ("local/smollm2,base_url=http://x", "runs in-process"),
    ],
)
def test_parse_errors_are_one_line_sciprobe_errors(text, fragment):
    with pytest.raises(SciprobeError) as info:
        ModelSpec.parse(text)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message
    assert isinstance(info.value, ValueError)  # CLI and evaluate users catch ValueError


def test_unknown_key_error_lists_the_known_keys():
    with pytest.raises(SciprobeError, match="known: api_key, api_key_env, base_url, concurrency"):
        ModelSpec.parse("openai/x,retries=3")


@pytest.mark.parametrize(
    "name, provider",
    [
        ("local/smollm2", "local"),
        ("openai/gpt-4o-mini", "openai"),
        ("anthropic/claude-3-5-haiku-latest", "anthropic"),
        ("hosted_vllm/meta-llama/Llama-3-8B", "hosted_vllm"),
        ("gpt-4o", "openai"),
        ("o3-mini", "openai"),
        ("claude-3-opus", "anthropic"),
        ("gemini-1.5-pro", "gemini"),
        ("my-custom-thing", "unknown"),
    ],
)
def test_provider_detection(name, provider):
    assert ModelSpec.parse(name).provider == provider


@pytest.mark.parametrize(
    "name, reasoning",
    [
        ("openai/o1", True),
        ("openai/o1-mini", True),
        ("o3-mini", True),
        ("openai/o4-mini-2025-04-16", True),
        ("openai/gpt-5", True),
        ("openai/gpt-5-mini", True),
        ("deepseek/deepseek-reasoner", True),
        ("anthropic/claude-3-7-sonnet-thinking", True),
        ("gemini/gemini-2.0-flash-thinking-exp", True),
        ("openai/gpt-4o", False),
        ("openai/gpt-4o-mini", False),
        ("deepseek/deepseek-chat", False),
        ("openai/omni-judge", False),
        ("local/smollm2", False),
    ],
)
def test_reasoning_model_rule(name, reasoning):
    assert ModelSpec.parse(name).is_reasoning_model is reasoning


def test_effective_params_request_overrides_spec_defaults():
    spec = ModelSpec.parse("openai/gpt-4o-mini,temperature=0.7,max_tokens=100")
    params, adjustments = spec.effective_params({"temperature": 0.0})
    assert params == {"temperature": 0.0, "max_tokens": 100}
    assert adjustments == []


def test_reasoning_model_drops_sampling_params_and_says_so():
    spec = ModelSpec.parse("openai/o3-mini,temperature=0.2,max_tokens=50")
    params, adjustments = spec.effective_params({"top_p": 0.5})
    assert params == {"max_tokens": 50}
    assert len(adjustments) == 2
    assert any("dropped temperature=0.2" in a for a in adjustments)
    assert any("dropped top_p=0.5" in a for a in adjustments)


def test_api_key_resolution(monkeypatch):
    assert ModelSpec.parse("openai/x,api_key=sk-literal").resolve_api_key() == "sk-literal"
    monkeypatch.setenv("SCIPROBE_TEST_KEY", "sk-from-env")
    assert ModelSpec.parse("openai/x,api_key_env=SCIPROBE_TEST_KEY").resolve_api_key() == "sk-from-env"
    monkeypatch.delenv("SCIPROBE_TEST_KEY")
    with pytest.raises(SciprobeError, match="SCIPROBE_TEST_KEY"):
        ModelSpec.parse("openai/x,api_key_env=SCIPROBE_TEST_KEY").resolve_api_key()
    # provider default (litellm reads OPENAI_API_KEY itself) vs custom endpoint (never forward that key)
    assert ModelSpec.parse("openai/gpt-4o").resolve_api_key() is None
    assert ModelSpec.parse("openai/x,base_url=http://127.0.0.1:1/v1").resolve_api_key() == PLACEHOLDER_API_KEY


def test_literal_api_key_never_printed():
    spec = ModelSpec.parse("openai/x,api_key=sk-very-secret,concurrency=4")
    assert "sk-very-secret" not in repr(spec)
    assert "sk-very-secret" not in spec.to_string()
    assert spec.to_string() == "openai/x,concurrency=4"
    assert ModelSpec.parse(spec.to_string()).concurrency == 4


@pytest.mark.parametrize(
    "text, transport",
    [
        # an OpenAI-compatible server: posted to directly (litellm would send the same body, at ~10x the CPU)
        ("openai/judge,base_url=http://127.0.0.1:9/v1", "http"),
        ("hosted_vllm/meta-llama/Llama-3-8B,base_url=http://gpu:8000/v1", "http"),
        # what needs litellm's translation keeps it: providers' own endpoints, other providers, reasoning models
        ("openai/gpt-4o-mini", "litellm"),
        ("anthropic/claude-3-5-haiku-latest,base_url=http://proxy/v1", "litellm"),
        ("openai/o3-mini,base_url=http://127.0.0.1:9/v1", "litellm"),
        ("openai/gpt-5-mini,base_url=http://127.0.0.1:9/v1", "litellm"),
        ("gpt-4o,base_url=http://127.0.0.1:9/v1", "http"),  # a bare OpenAI name: litellm routes it as openai/
        # an explicit choice always wins
        ("openai/judge,base_url=http://127.0.0.1:9/v1,transport=litellm", "litellm"),
        ("openai/o3-mini,base_url=http://127.0.0.1:9/v1,transport=http", "http"),
        ("anthropic/claude-3-5-haiku-latest,base_url=http://proxy/v1,transport=http", "http"),
    ],
)
def test_auto_transport_posts_directly_only_where_litellm_translates_nothing(text, transport):
    spec = ModelSpec.parse(text)
    assert spec.resolved_transport == transport
    assert ("transport=" in spec.to_string()) == ("transport=" in text)  # auto is the default: not printed


def test_transport_http_needs_a_base_url():
    with pytest.raises(SciprobeError, match="transport=http needs base_url"):
        ModelSpec.parse("openai/gpt-4o-mini,transport=http")
    with pytest.raises(SciprobeError, match="transport must be one of auto, litellm, http"):
        ModelSpec.parse("openai/gpt-4o-mini,transport=grpc")
