"""The bundled SmolLM2 behind LLMClient: conversion layout, real generation, cache replay, reproducible sampling."""

from __future__ import annotations

import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.llm import local
from sciprobe.llm.cache import ResponseCache
from sciprobe.llm.client import LLMClient
from sciprobe.llm.types import Request


def ask(content: str, **params) -> Request:
    return Request.of([{"role": "user", "content": content}], params)


@pytest.mark.slow
def test_converted_directory_is_a_plain_transformers_model(local_model_dir):
    from transformers import AutoConfig, AutoTokenizer

    assert local.local_model_dir("smollm2") == local_model_dir
    assert local.is_converted(local_model_dir)
    assert (local_model_dir / "model.safetensors").is_file()
    config = AutoConfig.from_pretrained(local_model_dir, local_files_only=True)
    assert config.model_type == "llama" and not hasattr(config, "quantization_config")
    tokenizer = AutoTokenizer.from_pretrained(local_model_dir, local_files_only=True)
    assert tokenizer.chat_template and "<|im_start|>" in tokenizer.chat_template  # lighteval needs it


@pytest.mark.slow
def test_greedy_generation_then_cache_hit(local_model_dir, tmp_path):
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        client = LLMClient("local/smollm2", cache=cache)
        [first] = client.complete_many([ask("What is the capital of France?", max_tokens=24)])
        assert first.ok and first.text.strip()
        assert first.prompt_tokens > 5 and 0 < first.completion_tokens <= 24
        assert first.cost_usd == 0.0 and not first.cached and first.model == "local/smollm2"
        assert len(cache) == 1

        [again] = client.complete_many([ask("What is the capital of France?", max_tokens=24)])
        assert again.cached and again.text == first.text
        assert client.stats.calls == 2 and client.stats.cached == 1 and client.stats.cost_unknown_calls == 0


@pytest.mark.slow
def test_batched_generation_fills_every_item(local_model_dir):
    client = LLMClient("local/smollm2,concurrency=2")  # batch size 2: 3 prompts -> 2 batches
    prompts = ["Name a fruit.", "Name a colour of the sky on a clear day, in a very long and detailed answer.", "Hi!"]
    out = client.complete_many([ask(p, max_tokens=12) for p in prompts])
    assert len(out) == 3
    assert all(c.ok and c.text and c.completion_tokens <= 12 for c in out)
    assert len({c.request_hash for c in out}) == 3


@pytest.mark.slow
def test_sampling_is_seeded_by_the_request_so_replays_match(local_model_dir):
    request = ask("Write one random word.", temperature=1.0, max_tokens=12)
    a = LLMClient("local/smollm2").complete_many([request])[0]
    b = LLMClient("local/smollm2").complete_many([ask("Unrelated prompt first.", max_tokens=4), request])[1]
    assert a.ok and a.text == b.text


def test_interrupted_conversion_leaves_no_half_model(monkeypatch, tmp_path):
    monkeypatch.setenv("SCIPROBE_MODELS_DIR", str(tmp_path / "models"))

    def crash(source, out):
        (out / "model.safetensors").write_bytes(b"partial")
        raise KeyboardInterrupt  # e.g. Ctrl-C half-way through the 40 s conversion

    monkeypatch.setattr(local, "_convert", crash)
    with pytest.raises(KeyboardInterrupt):
        local.ensure_local_model("smollm2")
    assert not local.local_model_dir("smollm2").exists()
    assert list((tmp_path / "models").iterdir()) == []  # the temporary directory is gone too


def test_unknown_local_model_is_a_user_error():
    with pytest.raises(SciprobeError, match="unknown local model"):
        local.ensure_local_model("llama-70b")


def test_seed_is_a_pure_function_of_the_key():
    assert local.seed_from_key("abc") == local.seed_from_key("abc")
    assert local.seed_from_key("abc") != local.seed_from_key("abd")
    assert 0 <= local.seed_from_key("abc") < 2**32
