"""Unit prices of OpenAI-compatible models (``openai/``, ``hosted_vllm/``) read straight from the price table
litellm bundles, without importing litellm.

``import litellm`` costs ~4 s of CPU (issue 28): a run on the direct HTTP transport used it only to price its
calls and to name the provider. The table is one JSON file inside the installed litellm package; it is found
with ``importlib.util.find_spec`` (which does not execute the package) and read once per process (~40 ms).
Only the two direct providers are looked up here, where litellm's own lookup is simple: the spec's name as
is, else the name without its provider prefix when the entry belongs to that provider. Every other provider
is priced by litellm itself (:func:`sciprobe.llm.backends.unit_prices`): its call goes through litellm anyway.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

#: providers priced from the table here (the ones ``transport=auto`` posts to directly: sciprobe.llm.spec)
TABLE_PROVIDERS = frozenset({"openai", "hosted_vllm"})
_TABLE_FILE = "model_prices_and_context_window_backup.json"


def priced_here(model: str) -> bool:
    """Whether ``model`` (``provider/name``) is priced from the table without litellm."""
    return "/" in model and model.split("/", 1)[0].lower() in TABLE_PROVIDERS


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    spec = importlib.util.find_spec("litellm")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / _TABLE_FILE
        if path.is_file():
            return dict(json.loads(path.read_text(encoding="utf-8")))
    return {}  # no litellm installed: every model unpriced (unknown, never free)


def _entry(model: str) -> dict[str, Any] | None:
    table = _table()
    entry = table.get(model)
    if isinstance(entry, dict):
        return entry
    provider, _, bare = model.partition("/")
    entry = table.get(bare)
    if isinstance(entry, dict) and str(entry.get("litellm_provider", "")).lower() == provider.lower():
        return entry
    return None


def table_unit_prices(model: str) -> tuple[float, float] | None:
    """USD per prompt and per completion token, or None when the table has no price for ``model``."""
    entry = _entry(model)
    if entry is None:
        return None
    prompt, completion = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if not isinstance(prompt, (int, float)) or not isinstance(completion, (int, float)):
        return None
    return float(prompt), float(completion)


def table_flat_price_limit(model: str) -> int | None:
    """Prompt tokens up to which the price is flat: the smallest ``*_above_<N>k_tokens`` tier the entry prices
    (a tier with no price is no tier), or None."""
    entry = _entry(model) or {}
    tiers = [int(m.group(1)) * 1000 for key, value in entry.items() if value is not None
             for m in [re.search(r"above_(\d+)k_tokens", key)] if m]
    return min(tiers) if tiers else None
