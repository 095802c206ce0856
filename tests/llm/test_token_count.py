"""Plan token counts without litellm (issue 28): the same count as litellm's counter on short chat messages,
and the parsed encoding kept in SCIPROBE_HOME (a damaged copy is parsed again)."""

from __future__ import annotations

import pytest

from sciprobe.llm import token_count

MESSAGES = [
    [{"role": "user", "content": "Hello there, how are you? <|endoftext|> ünïcode"}],
    [{"role": "system", "content": "You judge."}, {"role": "user", "content": "A b c. " * 40, "name": "bob"}],
]


@pytest.fixture
def fresh_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIPROBE_HOME", str(tmp_path))
    token_count._encoding.cache_clear()
    yield tmp_path
    token_count._encoding.cache_clear()


def test_counts_match_litellm_on_short_messages(fresh_home):
    pytest.importorskip("tiktoken")
    from sciprobe.llm.backends import import_litellm

    litellm = import_litellm()
    for messages in MESSAGES:
        for model in ("openai/gpt-4o-mini", "hosted_vllm/my-model"):
            assert token_count.chat_prompt_tokens(messages) == litellm.token_counter(model=model, messages=messages)


def test_the_parsed_encoding_is_cached_and_a_damaged_copy_is_parsed_again(fresh_home):
    pytest.importorskip("tiktoken")
    first = [token_count.chat_prompt_tokens(m) for m in MESSAGES]
    (cached,) = (fresh_home / "cache").glob("tiktoken-*.marshal")
    token_count._encoding.cache_clear()
    assert [token_count.chat_prompt_tokens(m) for m in MESSAGES] == first  # read back from the cache
    cached.write_bytes(b"\x00not marshal")
    token_count._encoding.cache_clear()
    assert [token_count.chat_prompt_tokens(m) for m in MESSAGES] == first
    assert len(cached.read_bytes()) > 1000  # written again, whole
