"""Answer the evaluated model's requests from a submitted predictions file, so a task's real runner (LLM judges,
code execution, agent loops) can score a leaderboard submission or ``sciprobe score`` input.

    client = ReplayClient({"item-1": "raw model text", "item-2": None}, model_id="org/model", task_ref="bench:task")
    run_task(ref, EvaluationRequest(..., judge=JUDGE), client)   # the runner's judges are real LLMClients

The client has the part of :class:`sciprobe.llm.client.LLMClient` the runners use for the evaluated model:
``model_id``, ``complete_many(requests, desc=None)`` / ``acomplete_many``, ``stats``, ``param_adjustments`` and the
``cache`` / ``ledger`` attributes that :meth:`sciprobe.run.task_runner.RunContext.judge_client` hands on to the judges.
It has no ``spec``: runners that look at the model spec (``getattr(client, "spec", None)``) see a remote model.

Rules, per request (keyed by :attr:`sciprobe.llm.types.Request.item_id`, the item's id):

- the submitted raw ``response`` text comes back as a successful :class:`Completion` (never "cached", no tokens);
- an item without a prediction -> a failed completion ``"no prediction for item X"`` (a call that got no answer:
  ``sciprobe score`` refuses such files unless ``--partial``, which leaves those items out before the runner
  asks); a ``null`` response -> an *empty* completion ``"empty prediction (null) for item X"``
  (``Completion.empty``: the model answered nothing, scored as an unparsable answer);
- a request without an item id, or a second request for an item with *different* messages (an agent's second
  turn) -> :class:`~sciprobe.core.errors.SciprobeError`: the predictions file holds one answer per item, so such a
  task cannot be scored from it. The same messages asked again get the same answer.

Replayed answers are not provider calls: they are neither cached nor accounted in the ledger.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.llm.types import (
    Completion,
    Request,
    UsageStats,
    canonical_json,
    sha256_hex,
)


class MultiTurnTask(SciprobeError):
    """The runner asked the model more than once per item (with different messages)."""


class ReplayClient:
    """The evaluated model, answered from submitted predictions (``{item id: response text or None}``)."""

    def __init__(self, responses: Mapping[str, str | None], model_id: str = "submitted", *,
                 task_ref: str = "this task", cache: Any = None, ledger: Any = None) -> None:
        self.responses = {str(k): v for k, v in responses.items()}
        self.model_id = model_id
        self.task_ref = task_ref
        self.cache = cache      # not used for replayed answers; judges built from this client share it
        self.ledger = ledger    # idem: the judges' budget
        self.stats = UsageStats()
        self.param_adjustments: list[str] = []
        self.asked: dict[str, str] = {}  # item id -> sha256 of the first messages asked for it
        self.missing: list[str] = []      # items asked for without a prediction (in order, once each)
        self._lock = threading.Lock()

    def _answer(self, request: Request) -> Completion:
        item = request.item_id
        if item is None:
            raise SciprobeError(f"task {self.task_ref}: the runner asked the model without an item id; "
                                "it cannot be scored from a predictions file")
        item = str(item)
        messages = sha256_hex(canonical_json([dict(m) for m in request.messages]))
        request_hash = sha256_hex(canonical_json({"model": self.model_id, "item": item, "messages": messages}))
        with self._lock:
            first = self.asked.setdefault(item, messages)
            if first != messages:
                raise MultiTurnTask(f"task {self.task_ref} needs several model turns per item (item {item!r} was "
                                    "asked twice with different messages); it cannot be scored from a predictions "
                                    "file")
            if item not in self.responses:
                if item not in self.missing:
                    self.missing.append(item)
                completion = Completion(None, f"no prediction for item {item}", attempts=0,
                                        request_hash=request_hash, model=self.model_id)
            elif self.responses[item] is None:
                completion = Completion(None, f"empty prediction (null) for item {item}", attempts=0,
                                        request_hash=request_hash, model=self.model_id, empty=True)
            else:
                completion = Completion(str(self.responses[item]), attempts=0, request_hash=request_hash,
                                        model=self.model_id)
            self.stats.add(completion)
        return completion

    def complete_many(self, requests: Sequence[Request], desc: str | None = None) -> list[Completion]:
        """One completion per request, in input order (``desc`` is accepted for interface parity)."""
        return [self._answer(r) for r in requests]

    async def acomplete_many(self, requests: Sequence[Request], desc: str | None = None) -> list[Completion]:
        return self.complete_many(requests, desc=desc)

    async def acomplete(self, request: Request) -> Completion:
        return (await self.acomplete_many([request]))[0]

    def complete(self, request: Request) -> Completion:
        return self.complete_many([request])[0]

    def summary(self) -> dict[str, Any]:
        """What the replay did, for provenance."""
        with self._lock:
            return {"items_asked": len(self.asked), "answered": self.stats.calls - self.stats.failed,
                    "failed": self.stats.failed, "missing": list(self.missing[:20]), "n_missing": len(self.missing)}

    def __repr__(self) -> str:
        return f"ReplayClient({self.model_id!r}, {len(self.responses)} predictions)"


__all__ = ["MultiTurnTask", "ReplayClient"]
