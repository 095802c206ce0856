"""``sciprobe evaluate --dry-run``: what a run would cost, before it spends anything.

The plan runs each task's real runner with *plan clients*: an :class:`~sciprobe.llm.client.LLMClient`
whose backend sends nothing. Every request is looked up in the response cache (its canonical request hash,
as a real run looks it up): one found there is counted as ``cached`` (free) and answered from it; any other
request is counted as a ``call`` (priced), with its prompt tokens counted by a local tokenizer (litellm's; for
OpenAI-compatible specs the same tiktoken count without importing litellm: :mod:`sciprobe.llm.token_count`) and its
completion tokens taken as ``max_tokens`` (or :data:`ASSUMED_COMPLETION_TOKENS` when no limit is set, said so
in the plan), and answered with an empty placeholder so the runner can go on to the next stage (tournament
rounds, judges). A request the run asks again after it was planned as a call (a duplicate in one batch, or the
same pairing in a later tournament round) is a ``repeat``: free in a real run (the first answer is cached), but
never reported as cached, so an empty cache always plans ``cached 0``. So the counts follow the runners' own
logic (tournaments, judge panels, position swaps) instead of a second description of it that could drift.

What a plan cannot know: a request repeated because an earlier answer did not parse (judge re-asks) is
counted apart as ``reasks``, an upper bound on retries; transport retries (429, 5xx) are not counted;
stages that depend on what the model answers are estimated from placeholder answers (the Swiss
tournament's late rounds can pair fewer players; a dry-experiment judge is asked only where exact
comparison fails: counted as its upper bound; I2R's modes share the comparisons they agree on, and the plan
notes the upper bound where their winner rules diverge). Prices come from litellm's bundled price table (no
network; read without importing litellm for OpenAI-compatible specs: :mod:`sciprobe.llm.price_table`); a
model it does not know is priced ``unknown``, never 0. A plan scores nothing and loads a local build's Parquet
files with pyarrow alone: it costs 2-2.6x the CPU of a bare ``import pyarrow.parquet, json``
(bench/evaluate_fixed_cost.py).
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sciprobe.llm.backends import AdmitFn, Job, ResultCallback, import_litellm, unit_prices
from sciprobe.llm.client import LLMClient
from sciprobe.llm.types import Completion

#: Completion tokens assumed per call when the request sets no ``max_tokens``.
ASSUMED_COMPLETION_TOKENS = 512


@dataclass
class Tally:
    """Planned calls of one model (the evaluated one or a judge) in one task."""

    model: str
    role: str
    calls: int = 0       # requests the run would send (priced)
    cached: int = 0      # distinct requests already in the response cache (free)
    repeats: int = 0     # requests asked again within the run, answered by its own first answer (free)
    reasks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    assumed_completion: bool = False
    local: bool = False
    _seen: set[str] = field(default_factory=set, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def cost(self) -> float | None:
        if self.local or self.calls == 0:
            return 0.0
        # per-token prices, not the price of one call this size: the tokens are summed over many calls
        prices = unit_prices(self.model)
        if prices is None:  # not in the price table: unknown, not free
            return None
        return self.prompt_tokens * prices[0] + self.completion_tokens * prices[1]

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "role": self.role, "calls": self.calls, "cached": self.cached,
                "repeats": self.repeats, "reasks": self.reasks, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "completion_tokens_assumed": self.assumed_completion,
                "cost_usd": self.cost()}


def _prompt_tokens(model: str, messages: Sequence[dict[str, Any]]) -> int:
    from sciprobe.llm import price_table

    if price_table.priced_here(model):  # an OpenAI-compatible model: counted as litellm would, without it
        from sciprobe.llm.token_count import chat_prompt_tokens

        try:
            return chat_prompt_tokens(messages)
        except (ImportError, OSError, ValueError):  # no tiktoken or no encoding file: 4 characters a token
            return sum(len(str(m.get("content", ""))) for m in messages) // 4 + 1
    litellm = import_litellm()
    try:
        return int(litellm.token_counter(model=model, messages=[dict(m) for m in messages]))
    except Exception:  # noqa: BLE001 - a tokenizer litellm cannot load offline: 4 characters a token
        return sum(len(str(m.get("content", ""))) for m in messages) // 4 + 1


class _PlanBackend:
    """Counts what would be sent and answers with an empty placeholder; never sends."""

    def __init__(self, tally: Tally, default_max_tokens: int | None, *, cached: bool, reasking: bool) -> None:
        self.tally = tally
        self.repeats = 0  # requests seen in an earlier batch of this plan (not cache hits)
        self.default_max_tokens = default_max_tokens
        self.cached = cached        # a real run would have stored earlier answers, so repeats are free
        self.reasking = reasking    # a deliberate uncached re-ask (sgi idea judges): repeats are re-asks

    async def run(self, jobs: Sequence[Job], on_result: ResultCallback, admit: AdmitFn | None = None) -> None:
        for job in jobs:
            tally = self.tally
            with tally._lock:
                if job.key in tally._seen and self.reasking:
                    tally.reasks += 1  # the same request again: a re-ask after an unparsable answer
                elif job.key in tally._seen and self.cached:
                    self.repeats += 1  # asked in an earlier batch: the real run finds its own answer cached
                else:
                    tally._seen.add(job.key)
                    tally.calls += 1
                    tally.prompt_tokens += _prompt_tokens(tally.model, job.request.messages)
                    limit = job.request.params.get("max_tokens") or self.default_max_tokens
                    if not limit:
                        tally.assumed_completion = True
                    tally.completion_tokens += int(limit or ASSUMED_COMPLETION_TOKENS)
            on_result(job, Completion(text="", request_hash=job.key, model=tally.model))


class _ReadOnlyCache:
    """The real response cache for reading; a plan writes nothing. Remembers which keys it found (``hits``,
    distinct), so the plan reports what the cache really holds."""

    def __init__(self, cache: Any) -> None:
        self._cache = cache
        self.hits: set[str] = set()
        self._lock = threading.Lock()

    def get(self, key: str) -> Completion | None:
        found = self._cache.get(key) if self._cache is not None else None
        if found is not None:
            with self._lock:
                self.hits.add(key)
        return found

    def put(self, key: str, completion: Completion) -> bool:
        return False

    def __contains__(self, key: object) -> bool:
        return self._cache is not None and key in self._cache


class PlanClient(LLMClient):
    """An LLMClient that plans instead of calling: see the module docstring."""

    def __init__(self, spec: str, cache: Any, role: str, tally: Tally | None = None, *, use_cache: bool = True,
                 reasking: bool = False) -> None:
        self._role = role
        self._tally = tally
        self._use_cache = use_cache
        self._reasking = reasking
        self._twins: list[PlanClient] = []
        self._lookups = _ReadOnlyCache(cache) if use_cache else None
        super().__init__(spec, cache=self._lookups)

    def _make_backend(self, backoff_base_s: float) -> Any:
        if self._tally is None:
            self._tally = Tally(self.spec.name, self._role, local=self.spec.is_local)
        return _PlanBackend(self._tally, self.spec.max_tokens, cached=self._use_cache, reasking=self._reasking)

    @property
    def tally(self) -> Tally:
        """The tally, with the response-cache hits (``cached``) and the requests answered without a call that
        are not cache hits (``repeats``: in-batch duplicates, which the client sends once, and requests of an
        earlier batch) added in."""
        assert self._tally is not None
        hits = len(self._lookups.hits) if self._lookups is not None else 0
        # every position answered without a call (cache hits, their in-batch duplicates, duplicates of a call)
        answered_without_call = self.stats.cached + sum(t.stats.cached for t in self._twins)
        backends = [c._backend for c in (self, *self._twins) if isinstance(c._backend, _PlanBackend)]
        self._tally.cached = hits
        self._tally.repeats = sum(b.repeats for b in backends) + answered_without_call - hits
        return self._tally

    def without_cache(self) -> PlanClient:
        twin = PlanClient(self.spec.to_string(), None, self._role, tally=self._tally, use_cache=False,
                          reasking=True)
        twin.spec = self.spec
        self._twins.append(twin)
        return twin


@dataclass
class TaskPlan:
    task: str
    items: int
    total_items: int
    cutoff: dict[str, Any]
    tallies: list[Tally]
    notes: list[str]

    @property
    def calls(self) -> int:
        return sum(t.calls for t in self.tallies)

    def as_dict(self) -> dict[str, Any]:
        return {"task": self.task, "items": self.items, "items_before_cutoff": self.total_items,
                "cutoff": self.cutoff, "calls": self.calls, "by_model": [t.as_dict() for t in self.tallies],
                "notes": self.notes}


@dataclass
class RunPlan:
    tasks: list[TaskPlan]

    @property
    def calls(self) -> int:
        return sum(t.calls for t in self.tasks)

    def totals(self) -> list[dict[str, Any]]:
        """Per role and model, summed over tasks; cost None when the model is unpriced."""
        return [t.as_dict() for t in merge_tallies(t for task in self.tasks for t in task.tallies)]

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "tasks": [t.as_dict() for t in self.tasks], "totals": self.totals()}


def plan_run(request: Any) -> RunPlan:
    """Plan every task of an :class:`~sciprobe.run.task_runner.EvaluationRequest` without calling any model."""
    from sciprobe.core.registry import resolve_task
    from sciprobe.llm.cache import ResponseCache, default_cache_path
    from sciprobe.run.task_runner import check_prompt_sets, run_task, runner_of

    for ref in request.tasks:
        resolve_task(ref)
    check_prompt_sets(request)
    cache = ResponseCache(default_cache_path()) if request.use_cache else None
    plans = []
    for ref in request.tasks:
        _, task = resolve_task(ref)
        client = PlanClient(request.model, cache, "model", use_cache=request.use_cache)
        judges: list[PlanClient] = []

        def judge_factory(spec: str, _judges: list[PlanClient] = judges) -> PlanClient:
            judge = PlanClient(spec, cache, "judge", use_cache=request.use_cache)
            _judges.append(judge)
            return judge

        planned = dataclasses.replace(copy.copy(request), tasks=[ref])
        results = run_task(ref, planned, client, judge_factory=judge_factory, dry_run=True)
        cutoff = results[0].provenance.get("cutoff", {}) if results else {}
        items = max((len(r.records) for r in results), default=0)
        tallies = [client.tally, *merge_tallies(judge.tally for judge in judges)]
        notes = list(dict.fromkeys(n for r in results for n in r.provenance.get("plan_notes", [])))
        if any(t.assumed_completion for t in tallies):
            notes.append(f"no max_tokens set: {ASSUMED_COMPLETION_TOKENS} completion tokens assumed per call")
        if any(t.reasks for t in tallies):
            notes.append("reasks: identical requests a runner repeats when an answer does not parse "
                         "(an upper bound; a real run usually needs few)")
        notes.extend(runner_of(task).plan_notes(task))
        plans.append(TaskPlan(ref, items, int(cutoff.get("n_items_before", items)), cutoff, tallies, notes))
    return RunPlan(plans)


def merge_tallies(tallies: Iterable[Tally]) -> list[Tally]:
    """One tally per (role, model): a runner may build a judge's client more than once, and totals span tasks."""
    merged: dict[tuple[str, str], Tally] = {}
    for tally in tallies:
        into = merged.get((tally.role, tally.model))
        if into is None:
            merged[(tally.role, tally.model)] = dataclasses.replace(tally)
            continue
        for key in ("calls", "cached", "repeats", "reasks", "prompt_tokens", "completion_tokens"):
            setattr(into, key, getattr(into, key) + getattr(tally, key))
        into.assumed_completion |= tally.assumed_completion
    return list(merged.values())


def format_plan(plan: RunPlan) -> str:
    """The plan as the table ``--dry-run`` prints: ``calls`` are the requests it would send (tokens and cost are
    theirs), ``cached`` those already in the response cache, ``repeats`` those it asks again."""
    lines = ["task                                     items  model/judge                         calls  cached  "
             "repeats  reasks  tokens in/out        cost"]
    for task in plan.tasks:
        for n, tally in enumerate(task.tallies):
            cost = tally.cost()
            lines.append(f"{task.task if n == 0 else '':40} {task.items if n == 0 else '':>5}  "
                         f"{(tally.role + ' ' + tally.model)[:34]:34} {tally.calls:>6} {tally.cached:>7} "
                         f"{tally.repeats:>8} {tally.reasks:>7}  "
                         f"{tally.prompt_tokens:>9}/{tally.completion_tokens:<9} {_money(cost):>9}")
        for note in task.notes:
            lines.append(f"{'':47}note: {note}")
    lines.append("")
    lines.append("totals (calls: requests this run would send, priced; cached: found in the response cache, free; "
                 "repeats: asked again within the run, free):")
    for row in plan.totals():
        lines.append(f"  {row['role']:5} {row['model']:40} calls {row['calls']:>6}  cached {row['cached']:>6}  "
                     f"repeats {row['repeats']:>6}  tokens {row['prompt_tokens']}/{row['completion_tokens']}  "
                     f"cost {_money(row['cost_usd'])}")
    return "\n".join(lines)


def _money(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"
