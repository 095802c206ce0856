"""Evaluate a model on benchmark tasks: run every task (:mod:`sciprobe.run.task_runner`), score it in every mode,
write the results, within the run's budget.

Used by ``sciprobe evaluate`` and ``sciprobe demo``; the same functions serve the Python API. Data loading lives
in :mod:`sciprobe.data.task_data`, one task's run in :mod:`sciprobe.run.task_runner` (both re-exported here).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sciprobe.core.registry import resolve_task
from sciprobe.core.errors import SciprobeError
from sciprobe.llm.backends import QuotaExhausted
from sciprobe.results.write import RunInfo, TaskResult, write_run
from sciprobe.data.task_data import TaskData, load_task_data, sample_dataset_dir
from sciprobe.run.task_runner import (
    EvaluationRequest, RunContext, check_prompt_sets, make_client, run_task, spec_label)

__all__ = ["EvaluationRequest", "RunContext", "TaskData", "check_keys", "check_priced", "evaluate", "load_task_data",
           "make_client", "run_task", "sample_dataset_dir", "spec_label", "split_judges"]


def split_judges(request: EvaluationRequest) -> list[str]:
    """Every judge spec a request names: ``--judge`` (``;``-separated) and per-task ``judges``."""
    from sciprobe.llm.spec import split_specs

    specs = split_specs(request.judge)
    for options in request.per_task.values():
        specs.extend(s for s in options.get("judges", []) if s not in specs)
    return specs


def check_priced(specs: Sequence[Any]) -> None:
    """``--max-cost`` is only enforceable when litellm prices every model the run calls."""
    from sciprobe.llm.backends import unit_prices
    from sciprobe.llm.spec import ModelSpec

    for text in specs:
        spec = text if isinstance(text, ModelSpec) else ModelSpec.parse(text)
        if not spec.is_local and unit_prices(spec.name) is None:
            raise SciprobeError(f"--max-cost cannot be enforced: litellm has no price for {spec.name}; "
                                "use --max-calls instead")


def check_keys(specs: Sequence[Any]) -> None:
    """Every remote model in ``specs`` has a key to send (a missing one is a user error, not hours of retries:
    sciprobe.llm.backends.check_credentials). The judges are checked before the run starts, since their calls come
    after the model's; the model's own client checks before its first request, after the arguments are."""
    from sciprobe.llm.backends import check_credentials
    from sciprobe.llm.spec import ModelSpec

    for text in specs:
        spec = text if isinstance(text, ModelSpec) else ModelSpec.parse(text)
        if not spec.is_local:
            check_credentials(spec)


def _planned_calls(request: EvaluationRequest) -> int | None:
    """Calls the plan expects (the meter's denominator and ETA); None when no meter or planning fails."""
    if not request.meter:
        return None
    from sciprobe.run.plan import plan_run

    try:
        return plan_run(request).calls
    except Exception:  # noqa: BLE001 - the meter then runs without an ETA; the run itself must not fail here
        return None


def incomplete_block(results: Sequence[TaskResult], ledger: Any, not_run: Sequence[str],
                     stopped: str | None = None) -> dict[str, Any] | None:
    """The results file's ``sciprobe.incomplete``, or None for a complete run: why the run is incomplete (a cap,
    an exhausted quota, calls that got no answer), the calls skipped, the tasks not run or cut short and, per
    task, how many items got no answer and why (:mod:`sciprobe.results.evidence`)."""
    from sciprobe.results.evidence import describe_failures

    failures = {r.key: r.provenance["call_failures"] for r in results if r.provenance.get("call_failures")}
    if not (ledger.exhausted or stopped or failures):
        return None
    reasons = [reason for reason in (ledger.stop_reason if ledger.exhausted else None, stopped) if reason]
    if failures:
        n = sum(f["n"] for f in failures.values())
        kinds: dict[str, int] = {}
        for summary in failures.values():
            for kind, count in summary["kinds"].items():
                kinds[kind] = kinds.get(kind, 0) + count
        total = sum(f["n_items"] for f in failures.values())
        reasons.append("calls failed: " + describe_failures({"n": n, "n_items": total, "kinds": kinds}))
    return {"reason": "; ".join(reasons), "skipped_calls": ledger.skipped, "tasks_not_run": list(not_run),
            "tasks_partial": [r.key for r in results if r.provenance.get("incomplete")],
            "call_failures": failures}


def evaluate(request: EvaluationRequest, client: Any | None = None) -> tuple[Path, list[TaskResult]]:
    """Run every task, score it, write the results; with a cap (``max_calls``/``max_cost``) that is reached,
    the tasks run so far are written as a result marked incomplete (``sciprobe.incomplete``) and the rest
    are listed as not run."""
    from sciprobe.llm.ledger import Budget, RunLedger

    for ref in request.tasks:
        resolve_task(ref)  # fail on a typo before any model call
    check_prompt_sets(request)  # and on a refused template
    check_keys(split_judges(request))
    budget = Budget(request.max_calls, request.max_cost)
    if budget.max_cost_usd is not None:
        check_priced([request.model, *split_judges(request)])
    ledger = getattr(client, "ledger", None) or RunLedger(budget, meter=request.meter,
                                                          planned_calls=_planned_calls(request))
    if client is None:
        from sciprobe.core.executors import get_executor

        client = make_client(request.model, request.use_cache, ledger, executor=get_executor(request.executor))
    if getattr(client, "ledger", None) is None:
        client.ledger = ledger
    run = RunInfo(model_id=client.model_id, generation_parameters=dict(request.generation))
    judge_log: list[str] = []  # model ids of every judge a runner built, in order
    results: list[TaskResult] = []
    not_run: list[str] = []
    stopped: str | None = None  # why no further task ran (a provider's quota ran out)
    for ref in request.tasks:
        if ledger.exhausted or stopped:
            not_run.append(ref)
            continue
        skipped_before = ledger.skipped
        try:
            task_results = run_task(ref, request, client, judge_log=judge_log)
        except QuotaExhausted as exc:  # every later call would fail the same way: stop as a cap stops a run
            stopped = str(exc)
            not_run.append(ref)
            continue
        if ledger.skipped > skipped_before:
            for result in task_results:
                result.provenance["incomplete"] = ledger.stop_reason
        results.extend(task_results)
    ledger.finish()
    run.ledger = ledger.as_dict()
    run.incomplete = incomplete_block(results, ledger, not_run, stopped)
    run.judge_ids = judge_log
    run.usage = client.stats.as_dict()
    run.param_adjustments = list(getattr(client, "param_adjustments", []))
    return write_run(request.output_dir, run, results), results

