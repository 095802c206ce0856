"""One LLM client for every model sciprobe calls: litellm providers, OpenAI-compatible servers posted to directly
(``transport=auto``/``http``: :mod:`sciprobe.llm.http_backend`) and the bundled local model.

    client = LLMClient("openai/gpt-4o-mini,concurrency=16", cache=ResponseCache(default_cache_path()))
    completions = client.complete_many([Request.of([{"role": "user", "content": "2+2?"}])], desc="judge")

What the client guarantees, whatever the backend:

- results come back in input order, one per request; a failed item is ``Completion(text=None,
  error="<ExceptionType>: message")`` and never raises — except bad credentials, which raise
  :class:`~sciprobe.core.errors.SciprobeError` at once (every other call would fail the same way);
- read-through cache: a hit makes no call; identical requests within a batch are sent once; each success
  is stored the moment it arrives, failures never;
- the cache key is built from the *effective* params (spec defaults + request params, minus what the model
  rejects), and every such adjustment is listed in ``param_adjustments`` for provenance;
- ``stats`` accumulates calls, cache hits, failures, retries, tokens and cost across batches, and for a spec
  with replicas (``base_url=URL1|URL2``: one logical model, one cache key whichever replica answers) what each
  replica answered, failed and how often it was cooled down (:mod:`sciprobe.llm.replicas`);
- with a :class:`~sciprobe.llm.ledger.RunLedger` (shared by every client of a run), each request is admitted
  against the run's caps right before it is sent; refused ones come back ``skipped`` (never cached), so a
  capped run stops within one batch of its limit and a rerun resumes from the cache.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Sequence
from typing import Any

from sciprobe.llm import loop as client_loop
from sciprobe.llm.backends import Backend, Job, RemoteBackend
from sciprobe.llm.cache import ResponseCache, request_key
from sciprobe.llm.ledger import RunLedger
from sciprobe.llm.spec import ModelSpec
from sciprobe.llm.types import Completion, Request, UsageStats


class LLMClient:
    """Batched, cached, concurrency-bounded chat completions for one model spec."""

    def __init__(
        self,
        spec: ModelSpec | str,
        cache: ResponseCache | None = None,
        concurrency: int | None = None,
        max_retries: int | None = None,
        *,
        backoff_base_s: float = 0.5,
        ledger: RunLedger | None = None,
        executor: Any = None,
    ) -> None:
        parsed = ModelSpec.parse(spec) if isinstance(spec, str) else spec
        overrides: dict[str, Any] = {}
        if concurrency is not None:
            overrides["concurrency"] = concurrency
        if max_retries is not None:
            overrides["max_retries"] = max_retries
        self.spec: ModelSpec = dataclasses.replace(parsed, **overrides) if overrides else parsed
        self.cache = cache
        self.ledger = ledger
        self.executor = executor  # sciprobe.core.executors: where the bundled model generates (None: here)
        self.model_id: str = self.spec.model_id
        #: "local", "http" or "litellm": the transport this client really uses (provenance)
        self.transport: str = "local" if self.spec.is_local else self.spec.resolved_transport
        self.stats = UsageStats()
        self.param_adjustments: list[str] = []
        self._adjustment_seen: set[str] = set()
        self._lock = threading.Lock()  # stats/adjustments may be touched from several event loops
        self._backoff_base_s = backoff_base_s
        self._backend: Backend = self._make_backend(backoff_base_s)

    def _make_backend(self, backoff_base_s: float) -> Backend:
        if self.spec.is_local:
            # imported here so that remote-only runs never pay for torch/transformers
            from sciprobe.llm.local import LocalBackend

            return LocalBackend(self.spec, executor=self.executor)
        if self.spec.resolved_transport == "http":
            from sciprobe.llm.http_backend import HttpBackend

            return HttpBackend(self.spec, backoff_base_s=backoff_base_s)
        return RemoteBackend(self.spec, backoff_base_s=backoff_base_s)

    # -- keys --------------------------------------------------------------------------------------
    def prepare(self, request: Request) -> tuple[str, Request]:
        """The cache key and the request as it will be sent (effective params); records adjustments."""
        params, adjustments = self.spec.effective_params(request.params)
        with self._lock:
            for line in adjustments:
                if line not in self._adjustment_seen:
                    self._adjustment_seen.add(line)
                    self.param_adjustments.append(line)
        effective = Request(request.messages, params, request.item_id)
        return request_key(self.model_id, self.spec.cache_base_url, effective), effective

    def _record_replicas(self) -> None:
        """What each replica of ``base_url=URL1|URL2`` did so far, into ``stats.replicas`` (provenance)."""
        pool = getattr(self._backend, "replicas", None)
        if pool is not None:
            report = pool.report()
            with self._lock:
                self.stats.replicas = report

    def _record(self, completion: Completion) -> None:
        with self._lock:
            self.stats.add(completion)

    def without_cache(self) -> LLMClient:
        """A client for the same model and run (same ledger) that neither reads nor writes the cache: for a
        deliberate re-ask of an identical request."""
        return LLMClient(self.spec, cache=None, ledger=self.ledger, backoff_base_s=self._backoff_base_s,
                         executor=self.executor)

    # -- async API ---------------------------------------------------------------------------------
    async def acomplete(self, request: Request) -> Completion:
        return (await self.acomplete_many([request]))[0]

    async def acomplete_many(self, requests: Sequence[Request], desc: str | None = None) -> list[Completion]:
        prepared = [self.prepare(r) for r in requests]
        slots: dict[str, list[int]] = {}  # key -> input positions asking for it
        for index, (key, _) in enumerate(prepared):
            slots.setdefault(key, []).append(index)
        results: list[Completion | None] = [None] * len(prepared)
        progress = _progress(len(prepared), desc)
        jobs: list[Job] = []
        try:
            for key, positions in slots.items():
                hit = self.cache.get(key) if self.cache is not None else None
                if hit is None:
                    jobs.append(Job(key, prepared[positions[0]][1]))
                    continue
                self._fill(results, positions, hit, first_is_copy=True)
                progress.update(len(positions))

            def on_result(job: Job, completion: Completion) -> None:
                if self.cache is not None:
                    self.cache.put(job.key, completion)  # now, not at batch end: a crash loses nothing
                positions = slots[job.key]
                self._fill(results, positions, completion, first_is_copy=False)
                progress.update(len(positions))

            if jobs:
                await self._backend.run(jobs, on_result, self.ledger.admit if self.ledger is not None else None)
        finally:
            progress.close()
            self._record_replicas()
        missing = [i for i, r in enumerate(results) if r is None]
        if missing:  # a backend contract violation, not a user error
            raise RuntimeError(f"backend returned no result for {len(missing)} request(s)")
        return [r for r in results if r is not None]

    def _fill(self, results: list[Completion | None], positions: list[int], completion: Completion,
              first_is_copy: bool) -> None:
        """Put ``completion`` at every position; repeats of a successful answer count as cache hits."""
        for n, position in enumerate(positions):
            if n == 0 and not first_is_copy:
                item = completion
            elif n == 0 or not completion.ok:
                item = dataclasses.replace(completion)
            else:
                item = dataclasses.replace(completion, cached=True, attempts=0, latency_s=0.0)
            results[position] = item
            self._record(item)
            if self.ledger is not None:
                self.ledger.record(item)

    # -- sync API ----------------------------------------------------------------------------------
    def complete_many(self, requests: Sequence[Request], desc: str | None = None) -> list[Completion]:
        """Synchronous :meth:`acomplete_many`; safe from any thread, inside Jupyter's running loop too. Backends
        that allow it run on the process's client loop (:mod:`sciprobe.llm.loop`: connections stay open between
        batches); litellm batches get a loop of their own."""
        coro = self.acomplete_many(requests, desc=desc)
        if getattr(self._backend, "persistent_loop", False):
            return client_loop.run(coro)
        return client_loop.run_fresh(coro)

    def __repr__(self) -> str:
        return f"LLMClient({self.spec.to_string()!r})"


class _NoProgress:
    def update(self, n: int = 1) -> None:
        return

    def close(self) -> None:
        return


def _progress(total: int, desc: str | None) -> Any:
    """A tqdm bar when ``desc`` is given and stderr is a terminal (tqdm is not even imported otherwise: a
    non-interactive run, a CI log or a dry run shows no bar)."""
    if desc is None or not getattr(sys.stderr, "isatty", lambda: False)():
        return _NoProgress()
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="req", disable=None, leave=False)
