"""Prompt tokens of a chat request, for plans (``--dry-run``), without importing litellm for the providers
whose calls never go through it (:data:`sciprobe.llm.price_table.TABLE_PROVIDERS`).

litellm's ``token_counter`` method for those models: tiktoken's ``cl100k_base`` (the encoding file litellm
bundles, so offline) over every string field of every message, plus OpenAI's chat framing of 3 tokens per
message, 1 per ``name`` and 3 priming the reply. Short messages count the same; on IDRBench IPI prompts
(~2.5k characters) this counts 0.2-1% fewer tokens than litellm, whose counter extrapolates long texts and
picks ``o200k_base`` for ``gpt-4o`` names: close enough for a cost estimate, and said so in the plan's docs. Loading the encoding costs ~0.14 s of CPU once;
``import litellm`` ~4 s (issue 28).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_TOKENS_PER_MESSAGE, _TOKENS_PER_NAME, _REPLY_PRIMING = 3, 1, 3


@functools.lru_cache(maxsize=1)
def _encoding() -> Any:
    spec = importlib.util.find_spec("litellm")
    for location in (spec.submodule_search_locations or []) if spec else []:
        bundled = Path(location) / "litellm_core_utils" / "tokenizers"
        if bundled.is_dir():
            os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(bundled))  # litellm sets the same on import
            break
    import tiktoken

    return tiktoken.get_encoding("cl100k_base")


def chat_prompt_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """Prompt tokens of ``messages`` as an OpenAI chat model counts them (cl100k_base)."""
    encoding = _encoding()
    total = _REPLY_PRIMING
    for message in messages:
        total += _TOKENS_PER_MESSAGE
        for key, value in message.items():
            if isinstance(value, str):
                total += len(encoding.encode(value, disallowed_special=()))
            if key == "name":
                total += _TOKENS_PER_NAME
    return total
