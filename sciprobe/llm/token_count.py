"""Prompt tokens of a chat request, for plans (``--dry-run``), without importing litellm for the providers
whose calls never go through it (:data:`sciprobe.llm.price_table.TABLE_PROVIDERS`).

litellm's ``token_counter`` method for those models: tiktoken's ``cl100k_base`` (the encoding file litellm
bundles, so offline) over every string field of every message, plus OpenAI's chat framing of 3 tokens per
message, 1 per ``name`` and 3 priming the reply. Short messages count the same; on IDRBench IPI prompts
(~2.5k characters) this counts 0.2-1% fewer tokens than litellm, whose counter extrapolates long texts and
picks ``o200k_base`` for ``gpt-4o`` names: close enough for a cost estimate.

Cost: ``import litellm`` is ~4 s of CPU (issue 28); tiktoken parses its 100k-line encoding file in ~0.1 s,
a good part of a dry run, so the parsed encoding is kept in ``$SCIPROBE_HOME/cache`` (marshal, ~10 ms to
read), keyed by the tiktoken version and the encoding file; a damaged copy is parsed again.
"""

from __future__ import annotations

import functools
import importlib.util
import marshal
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_TOKENS_PER_MESSAGE, _TOKENS_PER_NAME, _REPLY_PRIMING = 3, 1, 3
_ENCODING = "cl100k_base"


def _bundled_tokenizers() -> Path | None:
    spec = importlib.util.find_spec("litellm")  # finds the package without running it
    for location in (spec.submodule_search_locations or []) if spec else []:
        bundled = Path(location) / "litellm_core_utils" / "tokenizers"
        if bundled.is_dir():
            return bundled
    return None


def _cache_file(tiktoken_version: str, bundled: Path | None) -> Path:
    """Where the parsed encoding is kept: named by the tiktoken version and the bundled files' names and sizes."""
    import hashlib

    from sciprobe.core.paths import sciprobe_home

    files = sorted(f"{p.name}:{p.stat().st_size}" for p in bundled.iterdir() if p.is_file()) if bundled else []
    digest = hashlib.sha256("|".join([tiktoken_version, *files]).encode()).hexdigest()[:16]
    return sciprobe_home() / "cache" / f"tiktoken-{_ENCODING}-{digest}.marshal"


def _read_params(path: Path) -> dict[str, Any] | None:
    try:
        params = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    keys = {"name", "pat_str", "mergeable_ranks", "special_tokens"}
    return params if isinstance(params, dict) and set(params) == keys else None


def _write_params(path: Path, params: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "wb") as out:
            out.write(marshal.dumps(params))
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's owner-only mode would lock others out of a shared home
        os.replace(tmp, path)
    except OSError:  # a read-only home: parse the file every time, as tiktoken does
        return


@functools.lru_cache(maxsize=1)
def _encoding() -> Any:
    bundled = _bundled_tokenizers()
    if bundled is not None:
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(bundled))  # litellm sets the same on import
    import tiktoken

    cache = _cache_file(tiktoken.__version__, bundled)
    params = _read_params(cache)
    if params is None:
        from tiktoken_ext.openai_public import ENCODING_CONSTRUCTORS

        params = dict(ENCODING_CONSTRUCTORS[_ENCODING]())
        _write_params(cache, params)
    return tiktoken.Encoding(**params)


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
