"""SGI-Bench idea-generation runner: generate ideas, collect the judge panel's pairwise votes
(shared/spec/sgibench.md §1.2, §3.2, §4.5, §8 "Idea generation").

- one model call per item (``task.build_messages``);
- every judge of the configurable panel votes twice per item, reference as Hypothesis A then swapped
  (:func:`sciprobe.benchmarks.sgibench.scoring.idea.pairwise_judge_messages`, parsed by ``parse_pairwise_verdict``);
  all votes of
  one judge and one attempt go out as one batch through that judge's :class:`~sciprobe.llm.client.LLMClient`
  (all judges share the evaluated model's response cache);
- a reply that does not parse is retried up to ``max_attempts`` times (upstream: 5) with the identical request.
  Through the client that would replay the cached garbage, so retry ``k`` is sent by an uncached client and
  stored in the shared cache under its own key (the request's cache key + ``:retry<k>``): the payload stays
  exactly upstream's (no provider-specific ``seed``), and a rerun replays every attempt without a new call; a
  vote still unparsed after the last attempt is lost and counted (``failed_calls``), as upstream;
- items whose answer is missing / not a JSON object, or whose reference is malformed, are not judged (votes
  None), as :func:`sciprobe.benchmarks.sgibench.scoring.idea.run_panel`.

The objective terms (all-MiniLM-L6-v2 embeddings, graph similarity) are computed by the scorer from the stored
response and row, so records can be rescored offline.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sciprobe.core.declaration import Runner
from sciprobe.results.evidence import CALL_FAILED, call_failed, error_is_call_failure, mark_call_failure

# the declaration imports this module for IDEA_PANEL: the LLM types load when it runs
if TYPE_CHECKING:
    from sciprobe.llm.types import Completion, Request, UsageStats
    from sciprobe.results.write import TaskResult
    from sciprobe.run.task_runner import RunContext

DEFAULT_ATTEMPTS = 5


def _empty_votes() -> dict[str, Any]:
    from sciprobe.benchmarks.sgibench.scoring.idea import Votes

    return Votes().as_dict()


def complete_attempt(client: Any, requests: Sequence[Request], attempt: int, desc: str,
                     retry_stats: UsageStats | None = None) -> list[Completion]:
    """Attempt 0 goes through ``client`` (read-through cache). A retry resends the identical requests without
    reading the cache entry of attempt 0, stores each success under ``<cache key>:retry<attempt>`` in the same
    cache and replays from there on the next run. Without a cache every attempt is a plain call."""
    cache = getattr(client, "cache", None)
    if attempt == 0 or cache is None:
        return client.complete_many(requests, desc=desc)
    from sciprobe.llm.client import LLMClient
    from sciprobe.llm.types import sha256_hex

    keys = [sha256_hex(f"{client.prepare(r)[0]}:retry{attempt}") for r in requests]
    out: list[Completion | None] = [cache.get(k) for k in keys]
    missing = [i for i, c in enumerate(out) if c is None]
    if missing:
        fresh = client.without_cache() if hasattr(client, "without_cache") else LLMClient(client.spec, cache=None)
        for i, completion in zip(missing, fresh.complete_many([requests[i] for i in missing], desc=desc)):
            if completion.ok:
                cache.put(keys[i], completion)
            out[i] = completion
        if retry_stats is not None:
            retry_stats.merge(fresh.stats)
    return [c for c in out if c is not None]


def collect_panel_votes(rows: Sequence[Mapping[str, Any]], responses: Sequence[str | None],
                        judges: Sequence[tuple[str, Any]], *, params: Mapping[str, Any] | None = None,
                        max_attempts: int = DEFAULT_ATTEMPTS, retry_stats: dict[str, UsageStats] | None = None,
                        ) -> tuple[list[dict | None], list[list[dict]], int]:
    """(votes per item or None, judge-call log per item, number of judge requests asked). ``retry_stats``
    collects, per judge, the usage of retries sent outside the judge's client."""
    retry_stats = {} if retry_stats is None else retry_stats
    from sciprobe.llm.types import Request, UsageStats
    from sciprobe.benchmarks.sgibench.scoring.idea import (
        OFFICIAL_JUDGE_PARAMS,
        format_context,
        format_idea,
        pairwise_judge_messages,
        parse_generated_idea,
        parse_pairwise_verdict,
        reference_idea,
    )

    params = dict(OFFICIAL_JUDGE_PARAMS if params is None else params)
    votes: list[dict | None] = []
    logs: list[list[dict]] = [[] for _ in rows]
    pending: list[tuple[int, int, bool, list[dict]]] = []  # (item, judge index, swapped, messages)
    for i, (row, response) in enumerate(zip(rows, responses)):
        generated, _ = parse_generated_idea(response)
        try:
            reference = reference_idea(row)
        except (ValueError, SyntaxError, KeyError, TypeError, MemoryError, RecursionError):
            reference = None
        if generated is None or not isinstance(generated, Mapping) or reference is None or not judges:
            votes.append(None)
            continue
        votes.append(_empty_votes())
        context, ref_text, gen_text = format_context(row), format_idea(reference), format_idea(generated)
        for j in range(len(judges)):
            for swapped in (False, True):
                a, b = (gen_text, ref_text) if swapped else (ref_text, gen_text)
                pending.append((i, j, swapped, pairwise_judge_messages(context, a, b)))
    n_requests = 0
    for attempt in range(max(1, max_attempts)):
        if not pending:
            break
        retry: list[tuple[int, int, bool, list[dict]]] = []
        for j, (judge_id, client) in enumerate(judges):
            mine = [p for p in pending if p[1] == j]
            if not mine:
                continue
            requests = [Request.of(m, params, item_id=str(rows[i]["id"])) for i, _, _, m in mine]
            n_requests += len(requests)
            completions = complete_attempt(client, requests, attempt, f"idea judge {judge_id} (attempt {attempt + 1})",
                                           retry_stats.setdefault(judge_id, UsageStats()))
            for (i, _, swapped, messages), completion in zip(mine, completions):
                verdict = parse_pairwise_verdict(completion.text) if completion.ok else None
                logs[i].append({"judge": judge_id, "swapped": swapped, "attempt": attempt + 1, "verdict": verdict,
                                "response": completion.text, "error": completion.error,
                                "cached": completion.cached})
                if verdict is None:
                    retry.append((i, j, swapped, messages))
                    continue
                item = votes[i]
                assert item is not None
                for dim, winner in verdict.items():
                    item["cast"][dim] += 1
                    item["generated"][dim] += int(winner == ("A" if swapped else "B"))
        pending = retry
    for i, _, _, _ in pending:
        item = votes[i]
        assert item is not None
        item["failed_calls"] += 1
    return votes, logs, n_requests


def run_sgi_idea(rows: Sequence[Mapping[str, Any]], client: Any, params: Mapping[str, Any], *,
                 build_messages: Callable, judges: Sequence[tuple[str, Any]] = (),
                 judge_params: Mapping[str, Any] | None = None, max_attempts: int = DEFAULT_ATTEMPTS,
                 ) -> tuple[list[dict[str, Any]], str, int, dict[str, Any]]:
    """Returns (records for ``score_idea``, prompt hash, number of model calls, provenance extras).
    ``judges`` = [(judge id, client), ...]; empty = objective terms only (``final`` is then None)."""
    from sciprobe.llm.types import Request, canonical_json, sha256_hex
    from sciprobe.benchmarks.sgibench.scoring.idea import OFFICIAL_JUDGE_PARAMS, parse_generated_idea

    judge_params = dict(OFFICIAL_JUDGE_PARAMS if judge_params is None else judge_params)
    requests = [Request.of(build_messages(row, []), dict(params), item_id=str(row["id"])) for row in rows]
    completions = client.complete_many(requests, desc="sgi idea generation") if requests else []
    responses = [c.text if c.ok else None for c in completions]
    retry_stats: dict[str, UsageStats] = {}
    votes, logs, n_judge = collect_panel_votes(rows, responses, judges, params=judge_params,
                                               max_attempts=max_attempts, retry_stats=retry_stats)
    judge_ids = [judge_id for judge_id, _ in judges]
    records = []
    for row, completion, item_votes, log in zip(rows, completions, votes, logs):
        _, path = parse_generated_idea(completion.text if completion.ok else None)
        if call_failed(completion):
            path = CALL_FAILED  # no answer is not a bad idea: left out of the score (sciprobe.results.evidence)
        records.append({
            "id": str(row["id"]),
            "row": dict(row),
            "response": completion.text,
            "error": completion.error,
            "cached": completion.cached,
            "parse_path": path,
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
            "request_hash": completion.request_hash,
            "votes": item_votes,
            "judge_ids": judge_ids,
            "judge_calls": json.dumps(log, ensure_ascii=False),
            "n_failed_votes": item_votes["failed_calls"] if item_votes else None,
        })
        last = {(entry["judge"], entry["swapped"]): entry for entry in log}  # each vote's final attempt
        unanswered_vote = next((e for e in last.values()
                                if e["verdict"] is None and error_is_call_failure(e["error"])), None)
        if unanswered_vote is not None:
            mark_call_failure(records[-1], str(unanswered_vote["error"]), f"judge {unanswered_vote['judge']}")
    provenance: dict[str, Any] = {
        "idea_judges": judge_ids, "judge_params": judge_params,
        "judge_attempts": max_attempts, "n_judge_calls": n_judge,
        "judge_usage": {jid: c.stats.as_dict() for jid, c in judges if hasattr(c, "stats")},
        "judge_retry_usage": {jid: st.as_dict() for jid, st in retry_stats.items() if st.calls},
        "judge_param_adjustments": [a for _, c in judges for a in getattr(c, "param_adjustments", [])],
        "embedding_model": "all-MiniLM-L6-v2",
    }
    if not judges:
        provenance["warnings"] = ["no judge panel configured: only the objective halves are scored (final None)"]
    return records, sha256_hex(canonical_json([list(r.messages) for r in requests])), len(requests), provenance


class IdeaPanelRunner(Runner):
    """``sgibench:idea_generation``: one idea per item, then the judge panel's position-swapped votes.
    Options (``per_task``): ``judges`` (the panel, else ``--judge``), ``judge_params``, ``judge_attempts``."""

    name = "idea_panel"
    kind = "judged"
    judge = "optional"
    judge_check = "sciprobe.benchmarks.sgibench.judge_check:IDEA_PANEL_CHECK"

    def run(self, ctx: RunContext) -> list[TaskResult]:
        opts = ctx.options
        judges = []
        for spec in ctx.judge_specs():
            judge = ctx.judge_client(spec)
            judges.append((judge.model_id, judge))
        records, phash, n_calls, extra = run_sgi_idea(
            ctx.data.rows, ctx.client, ctx.params, build_messages=ctx.task.build_messages, judges=judges,
            judge_params=opts.get("judge_params"), max_attempts=int(opts.get("judge_attempts", DEFAULT_ATTEMPTS)))
        return [ctx.result(records, phash, n_calls, **extra)]


IDEA_PANEL = IdeaPanelRunner()
