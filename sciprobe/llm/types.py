"""Value types shared by the LLM client, its backends, the cache and the runners."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from sciprobe.llm.usage import known_cost


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Request:
    """One chat completion request. ``params`` are generation parameters (temperature, max_tokens, ...).

    ``item_id`` only labels the request in logs and details; it is not part of the cache key, so the same
    prompt asked for two items is answered (and paid for) once.
    """

    messages: tuple[dict[str, str], ...]
    params: dict[str, Any] = field(default_factory=dict)
    item_id: str | None = None

    @staticmethod
    def of(messages: list[dict[str, str]], params: dict[str, Any] | None = None,
           item_id: str | None = None) -> "Request":
        return Request(tuple(dict(m) for m in messages), dict(params or {}), item_id)


@dataclass
class Completion:
    """The outcome of one request: text, or an error string; never both missing."""

    text: str | None
    error: str | None = None
    cached: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    attempts: int = 1
    request_hash: str = ""
    model: str = ""
    skipped: bool = False  # never sent: the run's budget was spent (see sciprobe.llm.ledger)
    # The model answered with nothing (a reply without content, a null prediction in a submitted file): not ok,
    # but an answer all the same, scored as an unparsable one; a failure with ``empty`` False got no answer
    # at all (sciprobe.results.evidence: such items are left out of every score and make the run incomplete).
    empty: bool = False
    # The assistant message's tool calls, OpenAI chat format ([{"id", "type": "function", "function": {"name",
    # "arguments": "<json string>"}}]), when the request offered ``tools`` in its params and the model called
    # some. A message with tool calls and no text is a success.
    tool_calls: list[dict[str, Any]] | None = None
    # Why the answer's token counts are unusable (missing, negative, absurd: sciprobe.llm.usage); its cost is
    # then unknown (None), which a --max-cost run refuses to spend past.
    usage_problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and (self.text is not None or bool(self.tool_calls))


@dataclass
class UsageStats:
    """Running totals for a client: what a run cost and how much came from the cache."""

    calls: int = 0
    cached: int = 0
    failed: int = 0
    skipped: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown_calls: int = 0
    usage_problems: int = 0  # answers whose usage report was missing or invalid (counted in cost_unknown_calls)
    # base_url=URL1|URL2: per replica (URL without credentials) attempts answered, failed, cool-downs
    # (sciprobe.llm.replicas); empty for one server, and then left out of as_dict
    replicas: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, completion: Completion) -> None:
        self.calls += 1
        self.retries += max(0, completion.attempts - 1)
        if completion.skipped:
            self.skipped += 1
            return
        if completion.cached:
            self.cached += 1
        if not completion.ok:
            self.failed += 1
            return
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        if completion.cached:
            return
        if completion.usage_problem is not None:
            self.usage_problems += 1
        cost = known_cost(completion.cost_usd)
        if cost is None:
            self.cost_unknown_calls += 1
        else:
            self.cost_usd += cost

    def merge(self, other: UsageStats) -> None:
        """Add ``other``'s totals to these (e.g. the usage of retries sent through another client)."""
        for key, value in other.__dict__.items():
            if key == "replicas":
                for label, counts in value.items():
                    mine = self.replicas.setdefault(label, {})
                    for name, n in counts.items():
                        mine[name] = mine.get(name, 0) + n
            else:
                setattr(self, key, getattr(self, key) + value)

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        if not self.replicas:
            del out["replicas"]
        else:
            out["replicas"] = {label: dict(counts) for label, counts in self.replicas.items()}
        return out
