"""Evaluate a model on benchmark tasks: load (and cutoff-filter) the data, run, score every mode, write results.

Used by ``sciprobe evaluate`` and ``sciprobe demo``; the same functions serve the Python API.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import Any

from sciprobe.benchmarks import resolve_task
from sciprobe.build import BUILD_INFO_FILE, build_benchmark, dataset_fingerprint
from sciprobe.cutoffs import CutoffReport, filter_dataset
from sciprobe.declaration import Benchmark, TaskSpec
from sciprobe.errors import SciprobeError
from sciprobe.paths import sample_build_dir
from sciprobe.results import RunInfo, TaskResult, write_run
from sciprobe.scoring.report import ScoreReport


def sample_dataset_dir(benchmark: Benchmark) -> Path:
    """The bundled sample, built once per sample version into ``$SCIPROBE_HOME/datasets``."""
    if benchmark.sample_source is None:
        raise SciprobeError(f"{benchmark.name} has no bundled sample; pass --data DIR_OR_HUB_ID")
    out = sample_build_dir(benchmark)
    if not (out / BUILD_INFO_FILE).is_file():
        build_benchmark(benchmark, benchmark.sample_source, out, overwrite=True)
    return out


@dataclass
class TaskData:
    rows: list[dict[str, Any]]
    fewshot: list[dict[str, Any]]
    fingerprint: str
    source: str
    cutoff: dict[str, Any]


def load_task_data(benchmark: Benchmark, task: TaskSpec, data: str | None, *, cutoff: dt.date | None = None,
                   cutoff_source: str = "none", limit: int | None = None, revision: str | None = None) -> TaskData:
    """Rows of the task's config (test split), cutoff-filtered with Arrow compute, then limited."""
    import datasets

    location = Path(data) if data else sample_dataset_dir(benchmark)
    local = location.exists()
    if data and not local and "/" not in data:
        raise SciprobeError(f"dataset {data!r} is neither a folder nor a hub id (owner/name)")
    target = str(location) if local else data
    try:
        dd = datasets.load_dataset(target, task.config, revision=None if local else revision)
    except ValueError as exc:
        raise SciprobeError(f"cannot load config {task.config!r} from {target}: {str(exc).splitlines()[0]}") from None
    if "test" not in dd:
        raise SciprobeError(f"{target} config {task.config!r} has no test split")
    test = dd["test"]
    kept = filter_dataset(test, cutoff)
    report = CutoffReport(cutoff.isoformat() if cutoff else None, cutoff_source, len(test), len(kept)).as_dict()
    if len(kept) == 0:
        raise SciprobeError(f"cutoff {report['cutoff']} leaves no items in {benchmark.name}:{task.config}")
    if limit is not None:
        kept = kept.select(range(min(limit, len(kept))))
    fewshot = dd[task.fewshot_split].to_list() if task.fewshot_split and task.fewshot_split in dd else []
    if task.num_fewshot and len(fewshot) < task.num_fewshot:
        raise SciprobeError(f"{target} config {task.config!r} has {len(fewshot)} few-shot examples, "
                            f"task {task.name} needs {task.num_fewshot}")
    fingerprint = dataset_fingerprint(location) if local else f"hub:{data}@{revision or 'main'}:{test._fingerprint}"
    return TaskData(kept.to_list(), fewshot, fingerprint, target, report)


@dataclass
class EvaluationRequest:
    tasks: list[str]
    model: str
    data: str | None = None
    limit: int | None = None
    cutoff: dt.date | None = None
    cutoff_source: str = "none"
    judge: str | None = None
    modes: Sequence[str] | None = None
    # {ref: {"modes": [...], "limit": N}}; runner options too: sgibench:idea_generation {"judges": [specs],
    # "judge_params", "judge_attempts"}, sgibench:dry_experiment {"timeout_s", "workers"}
    per_task: dict[str, dict[str, Any]] = field(default_factory=dict)
    output_dir: Path = Path("results")
    generation: dict[str, Any] = field(default_factory=dict)
    use_cache: bool = True
    revision: str | None = None
    allow_unsandboxed: bool = False  # run model-written code even when the sandbox is unavailable (unsafe)
    max_calls: int | None = None     # requests to providers, retries included, over every model and judge
    max_cost: float | None = None    # USD over every model and judge (sciprobe.llm.ledger)
    meter: bool = False              # print the live cost/progress line on stderr


def _score_all(task: TaskSpec, records: list[dict], modes: Sequence[str]) -> dict[str, ScoreReport]:
    return {mode: task.score(records, mode) for mode in modes}


def make_client(model: str, use_cache: bool = True, ledger: Any = None) -> Any:
    from sciprobe.llm.cache import ResponseCache, default_cache_path
    from sciprobe.llm.client import LLMClient

    return LLMClient(model, cache=ResponseCache(default_cache_path()) if use_cache else None, ledger=ledger)


@dataclass
class RunContext:
    """What a task runner gets: the task, its loaded rows, the request, the evaluated model's client, the
    effective generation parameters, the modes to score and the provenance shared by every result."""

    ref: str
    task: TaskSpec
    data: TaskData
    request: EvaluationRequest
    client: Any
    params: dict[str, Any]
    modes: list[str]
    base: dict[str, Any]
    judge_factory: Callable[[str], Any] | None = None  # set by the planner (sciprobe.plan)
    dry_run: bool = False  # planning: runners skip work that costs no model call (code execution)
    judge_log: list[str] | None = None  # every judge model a runner built (the run's judge_ids)

    @property
    def options(self) -> dict[str, Any]:
        """Per-task options from ``request.per_task[ref]`` (e.g. ``judges``, ``timeout_s``)."""
        return dict(self.request.per_task.get(self.ref, {}))

    def judge_specs(self) -> list[str]:
        """The judge panel: ``per_task[ref]["judges"]``, else ``--judge`` split on ``;`` (one spec or several)."""
        from sciprobe.llm.spec import split_specs

        return list(self.options.get("judges") or split_specs(self.request.judge))

    def judge_client(self, spec: str) -> Any:
        """A judge's client for this run: shares the evaluated model's response cache (and, in a run with a
        budget, its ledger). Runners build every judge through here."""
        if self.judge_factory is not None:
            return self.judge_factory(spec)
        from sciprobe.llm.client import LLMClient

        judge = LLMClient(spec, cache=getattr(self.client, "cache", None), ledger=getattr(self.client, "ledger", None))
        if self.judge_log is not None and judge.model_id not in self.judge_log:
            self.judge_log.append(judge.model_id)
        return judge

    def result(self, records: list[dict], phash: str, n_calls: int, **extra: Any) -> TaskResult:
        """One result scored in every requested mode."""
        return TaskResult(self.ref, self.task.num_fewshot, _score_all(self.task, records, self.modes), records,
                          {**self.base, "prompt_hash": phash, "n_calls": n_calls, **extra}, self.task.headline,
                          default_mode=self.modes[0])


def _run_single_call(ctx: RunContext) -> list[TaskResult]:
    from sciprobe.runners.single_call import run_single_call

    records, phash, n_calls = run_single_call(ctx.task, ctx.data.rows, ctx.data.fewshot, ctx.client, ctx.params)
    return [ctx.result(records, phash, n_calls)]


def _run_swiss(ctx: RunContext) -> list[TaskResult]:
    """I2R plays one tournament per requested mode (their pairings differ)."""
    from sciprobe.runners.i2r import run_i2r

    results = []
    for mode in ctx.modes:
        records, phash, n_calls = run_i2r(ctx.data.rows, ctx.client, ctx.params, mode=mode)
        results.append(TaskResult(ctx.ref if mode == ctx.modes[0] else f"{ctx.ref}:{mode}", 0,
                                  {mode: ctx.task.score(records, mode)}, records,
                                  {**ctx.base, "prompt_hash": phash, "n_calls": n_calls, "mode": mode},
                                  ctx.task.headline, default_mode=mode))
    return results


def _run_sgi_dry(ctx: RunContext) -> list[TaskResult]:
    from sciprobe.runners.sandbox import SandboxLimits
    from sciprobe.runners.sgi_dry import run_sgi_dry

    opts = ctx.options
    specs = ctx.judge_specs()  # one output-equivalence judge: the first of a panel
    judge = ctx.judge_client(specs[0]) if specs else None
    timeout = float(opts.get("timeout_s", SandboxLimits().wall_s))
    records, phash, n_calls, extra = run_sgi_dry(
        ctx.data.rows, ctx.client, ctx.params, build_messages=ctx.task.build_messages, modes=ctx.modes,
        judge_client=judge, allow_unsandboxed=ctx.request.allow_unsandboxed,
        limits=SandboxLimits(wall_s=timeout, cpu_s=timeout), workers=opts.get("workers"), plan_only=ctx.dry_run)
    if ctx.dry_run and judge is not None:
        extra["plan_notes"] = ["dry-experiment judge: asked only where exact comparison fails (at most "
                               "5 per item and mode); not counted"]
    if len(specs) > 1:
        extra.setdefault("notes", []).append(f"dry experiment uses one judge: {specs[0]} (of {len(specs)})")
    if judge is not None:
        extra["judge_usage"] = judge.stats.as_dict()
        extra["judge_param_adjustments"] = list(judge.param_adjustments)
    return [ctx.result(records, phash, n_calls, **extra)]


def _run_sgi_idea(ctx: RunContext) -> list[TaskResult]:
    from sciprobe.runners.sgi_idea import DEFAULT_ATTEMPTS, run_sgi_idea

    opts = ctx.options
    specs = ctx.judge_specs()
    judges = []
    for spec in specs:
        judge = ctx.judge_client(spec)
        judges.append((judge.model_id, judge))
    records, phash, n_calls, extra = run_sgi_idea(
        ctx.data.rows, ctx.client, ctx.params, build_messages=ctx.task.build_messages, judges=judges,
        judge_params=opts.get("judge_params"), max_attempts=int(opts.get("judge_attempts", DEFAULT_ATTEMPTS)))
    return [ctx.result(records, phash, n_calls, **extra)]


def _run_sgi_deep_research(ctx: RunContext) -> list[TaskResult]:
    from sciprobe.runners.sgi_judged import run_deep_research

    return run_deep_research(ctx)


def _run_sgi_reasoning(ctx: RunContext) -> list[TaskResult]:
    from sciprobe.runners.sgi_judged import run_reasoning

    return run_reasoning(ctx)


def _run_prescience_contribution(ctx: RunContext) -> list[TaskResult]:
    from sciprobe.benchmarks.prescience.contribution import run_contribution_task

    return run_contribution_task(ctx)


def _run_scitaste_agent(ctx: RunContext) -> list[TaskResult]:
    """SciTaste-Bench tool/search modes (DimAgent-v3 loop, native web search); skipped modes return []."""
    from sciprobe.benchmarks.scitaste.agent import run_agent_task

    return run_agent_task(ctx)


#: ``TaskSpec.runner`` -> how the task is run (None: the generic one-call-per-item runner).
RUNNERS: dict[str | None, Callable[[RunContext], list[TaskResult]]] = {
    None: _run_single_call,
    "swiss": _run_swiss,
    "sandbox": _run_sgi_dry,
    "sgi_deep_research": _run_sgi_deep_research,
    "sgi_reasoning": _run_sgi_reasoning,
    "idea_panel": _run_sgi_idea,
    "prescience_contribution": _run_prescience_contribution,
    "scitaste_agent": _run_scitaste_agent,
}


def _spec_label(spec: str | None) -> str | None:
    """A model spec as recorded in provenance: never with a literal api_key."""
    if spec is None:
        return None
    from sciprobe.llm.spec import ModelSpec

    try:
        return ModelSpec.parse(spec).to_string()
    except (SciprobeError, ValueError):  # a bad spec fails later, where the client is built
        return spec.split(",")[0]


def run_task(ref: str, request: EvaluationRequest, client: Any, *, judge_factory: Callable[[str], Any] | None = None,
             dry_run: bool = False, judge_log: list[str] | None = None) -> list[TaskResult]:
    """Run one task reference with the runner its declaration names (:data:`RUNNERS`)."""
    benchmark, task = resolve_task(ref)
    if task.runner not in RUNNERS:
        raise SciprobeError(f"task {ref} names runner {task.runner!r}, which sciprobe does not know; "
                            f"known: {', '.join(sorted(r for r in RUNNERS if r))}")
    override = request.per_task.get(ref, {})
    modes = list(override.get("modes") or request.modes or task.modes)
    limit = override.get("limit", request.limit)
    unknown = [m for m in modes if m not in task.modes]
    if unknown:
        raise SciprobeError(f"task {ref} has no mode {unknown[0]!r}; modes: {', '.join(task.modes)}")
    data = load_task_data(benchmark, task, request.data, cutoff=request.cutoff, cutoff_source=request.cutoff_source,
                          limit=limit, revision=request.revision)
    params = {**task.generation, **request.generation}
    base = {"benchmark": benchmark.name, "benchmark_version": benchmark.version, "dataset": data.source,
            "dataset_fingerprint": data.fingerprint, "dataset_revision": request.revision,
            "prompt_version": benchmark.prompt_version, "model_id": client.model_id,
            "judge_id": _spec_label(request.judge), "generation_parameters": params, "cutoff": data.cutoff, "limit": limit}
    return RUNNERS[task.runner](RunContext(ref, task, data, request, client, params, modes, base, judge_factory,
                                           dry_run, judge_log))


def split_judges(request: EvaluationRequest) -> list[str]:
    """Every judge spec a request names: ``--judge`` (``;``-separated) and per-task ``judges``."""
    from sciprobe.llm.spec import split_specs

    specs = split_specs(request.judge)
    for options in request.per_task.values():
        specs.extend(s for s in options.get("judges", []) if s not in specs)
    return specs


def _check_priced(specs: Sequence[str]) -> None:
    """``--max-cost`` is only enforceable when litellm prices every model the run calls."""
    from sciprobe.llm.backends import unit_prices
    from sciprobe.llm.spec import ModelSpec

    for text in specs:
        spec = ModelSpec.parse(text)
        if not spec.is_local and unit_prices(spec.name) is None:
            raise SciprobeError(f"--max-cost cannot be enforced: litellm has no price for {spec.name}; "
                                "use --max-calls instead")


def _planned_calls(request: EvaluationRequest) -> int | None:
    """Calls the plan expects (the meter's denominator and ETA); None when no meter or planning fails."""
    if not request.meter:
        return None
    from sciprobe.plan import plan_run

    try:
        return plan_run(request).calls
    except Exception:  # noqa: BLE001 - the meter then runs without an ETA; the run itself must not fail here
        return None


def evaluate(request: EvaluationRequest, client: Any | None = None) -> tuple[Path, list[TaskResult]]:
    """Run every task, score it, write the results; with a cap (``max_calls``/``max_cost``) that is reached,
    the tasks run so far are written as a result marked incomplete (``sciprobe.incomplete``) and the rest
    are listed as not run."""
    from sciprobe.llm.ledger import Budget, RunLedger

    for ref in request.tasks:
        resolve_task(ref)  # fail on a typo before any model call
    budget = Budget(request.max_calls, request.max_cost)
    if budget.max_cost_usd is not None:
        _check_priced([request.model, *split_judges(request)])
    ledger = getattr(client, "ledger", None) or RunLedger(budget, meter=request.meter,
                                                          planned_calls=_planned_calls(request))
    client = client or make_client(request.model, request.use_cache, ledger)
    if getattr(client, "ledger", None) is None:
        client.ledger = ledger
    run = RunInfo(model_id=client.model_id, generation_parameters=dict(request.generation))
    judge_log: list[str] = []  # model ids of every judge a runner built, in order
    results: list[TaskResult] = []
    not_run: list[str] = []
    for ref in request.tasks:
        if ledger.exhausted:
            not_run.append(ref)
            continue
        skipped_before = ledger.skipped
        task_results = run_task(ref, request, client, judge_log=judge_log)
        if ledger.skipped > skipped_before:
            for result in task_results:
                result.provenance["incomplete"] = ledger.stop_reason
        results.extend(task_results)
    ledger.finish()
    run.ledger = ledger.as_dict()
    if ledger.exhausted:
        run.incomplete = {"reason": ledger.stop_reason, "skipped_calls": ledger.skipped, "tasks_not_run": not_run,
                          "tasks_partial": [r.key for r in results if r.provenance.get("incomplete")]}
    run.judge_ids = judge_log
    run.usage = client.stats.as_dict()
    run.param_adjustments = list(getattr(client, "param_adjustments", []))
    return write_run(request.output_dir, run, results), results

