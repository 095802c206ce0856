"""Run one task: resolve it, load its rows, build the :class:`RunContext` and hand it to the task's runner.

The runner is an object on the task (:class:`sciprobe.core.declaration.Runner`); ``None`` means the generic
one-call-per-item runner. :func:`sciprobe.run.evaluation.evaluate` runs a whole request (budget, results files);
:func:`sciprobe.run.plan.plan_run` runs the same runners with planning clients.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciprobe.core.registry import canonical_ref, resolve_task
from sciprobe.core.declaration import Benchmark, TaskSpec
from sciprobe.core.errors import SciprobeError
from sciprobe.results.write import TaskResult
from sciprobe.run.runners.single_call import runner_of  # noqa: F401 - re-exported: the task's runner
from sciprobe.scoring.score_report import ScoreReport
from sciprobe.data.task_data import TaskData, load_task_data
from sciprobe.run.upstream import PromptSet, prompt_set_for

if TYPE_CHECKING:
    from sciprobe.llm.spec import ModelSpec


@dataclass
class EvaluationRequest:
    tasks: list[str]
    # the evaluated model: a spec's text is parsed once, here at the edge, and passed on as the object
    model: ModelSpec | str
    data: str | None = None
    limit: int | None = None
    cutoff: dt.date | None = None
    cutoff_source: str = "none"
    judge: str | None = None
    modes: Sequence[str] | None = None
    # {ref: {"modes": [...], "limit": N}} plus options of the task's runner (its module documents them), e.g.
    # judge panels {"judges": [specs]}, sandbox limits {"timeout_s", "workers"}
    per_task: dict[str, dict[str, Any]] = field(default_factory=dict)
    output_dir: Path = Path("results")
    generation: dict[str, Any] = field(default_factory=dict)
    use_cache: bool = True
    revision: str | None = None
    allow_unsandboxed: bool = False  # run model-written code even when the sandbox is unavailable (unsafe)
    max_calls: int | None = None     # requests to providers, retries included, over every model and judge
    max_cost: float | None = None    # USD over every model and judge (sciprobe.llm.ledger)
    meter: bool = False              # print the live cost/progress line on stderr
    # where sandboxed runs and the bundled model's generation happen: "local", "ray", "ray://HOST:PORT"
    # (sciprobe.core.executors); results are the same whichever
    executor: str = "local"
    # "sciprobe" (our own wording) or "upstream" (the pinned upstream templates, fetched at run time; per task:
    # per_task[ref]["prompts"]); upstream_dir: a local copy of the upstream files (offline)
    prompts: str = "sciprobe"
    upstream_dir: Path | None = None
    # run upstream templates that differ from the pinned sha256 (labelled "upstream-modified"); refused otherwise
    allow_modified_prompts: bool = False
    items: frozenset[str] | None = None  # only these item ids (``sciprobe score --partial``); None: every item

    def __post_init__(self) -> None:
        from sciprobe.core.executors import check_executor_name
        from sciprobe.llm.spec import ModelSpec

        self.executor = check_executor_name(self.executor)
        if isinstance(self.model, str):
            self.model = ModelSpec.parse(self.model)


def make_client(model: ModelSpec | str, use_cache: bool = True, ledger: Any = None, executor: Any = None) -> Any:
    """The evaluated model's client, with the machine's response cache; ``executor`` (:mod:`sciprobe.core.executors`)
    is where the bundled model generates (remote models ignore it)."""
    from sciprobe.llm.cache import ResponseCache, default_cache_path
    from sciprobe.llm.client import LLMClient

    return LLMClient(model, cache=ResponseCache(default_cache_path()) if use_cache else None, ledger=ledger,
                     executor=executor)


def _score_all(task: TaskSpec, records: list[dict], modes: Sequence[str]) -> dict[str, ScoreReport]:
    return {mode: task.score(records, mode) for mode in modes}


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
    judge_factory: Callable[[str], Any] | None = None  # set by the planner (sciprobe.run.plan)
    dry_run: bool = False  # planning: runners skip work that costs no model call (code execution)
    judge_log: list[str] | None = None  # every judge model a runner built (the run's judge_ids)
    prompts: PromptSet = field(default_factory=PromptSet)  # the prompt set the task runs with
    _asked: list[list[Any]] = field(default_factory=list, repr=False)  # every batch sent through ask()

    def prompt(self, key: str, ours: Callable[..., Any]) -> Callable[..., Any]:
        """A prompt builder of this run: ``ours`` (sciprobe's wording), or the upstream set's builder ``key``.
        ``build_messages`` is already the task's own (:func:`run_task` puts the upstream one on the task)."""
        return self.prompts.builder(key, ours)

    @property
    def executor(self) -> Any:
        """Where heavy work of this run happens (:mod:`sciprobe.core.executors`): hand it to the core machinery
        (``run_many(..., executor=ctx.executor)``) without looking at which one it is."""
        from sciprobe.core.executors import get_executor

        return get_executor(self.request.executor)

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

        judge = LLMClient(spec, cache=getattr(self.client, "cache", None), ledger=getattr(self.client, "ledger", None),
                          executor=getattr(self.client, "executor", None))
        if self.judge_log is not None and judge.model_id not in self.judge_log:
            self.judge_log.append(judge.model_id)
        return judge

    def ask(self, prompts: Sequence[Any], desc: str = "", *, client: Any = None,
            params: Mapping[str, Any] | None = None) -> list[Any]:
        """Send one batch and return the completions in order. ``prompts`` holds ``(row, messages)`` pairs (sent
        with ``params``, by default this run's generation parameters, identified by the row's id) or ready
        :class:`~sciprobe.llm.types.Request` objects. The evaluated model's batches count towards the result's
        ``n_calls`` and ``prompt_hash`` (:meth:`result`); a judge's (``client=ctx.judge_client(spec)``) do not.
        The client's cache answers repeats."""
        from sciprobe.llm.types import Request

        chosen = dict(self.params if params is None else params)
        requests = [p if isinstance(p, Request) else Request.of(p[1], dict(chosen), item_id=str(p[0]["id"]))
                    for p in prompts]
        if client is None:
            self._asked.append(requests)
        if not requests:
            return []
        target = self.client if client is None else client
        return list(target.complete_many(requests, desc=f"{self.task.name} {desc}".strip()))

    def record(self, row: Mapping[str, Any], completion: Any, **extra: Any) -> dict[str, Any]:
        """The full record of one item answered by ``completion``: id, the task's record fields and gold, the
        parsed answer (an unanswered call is left out of every score, never counted wrong), the raw response, its
        error, tokens and request hash, plus ``extra`` fields (e.g. an intermediate step's text)."""
        from sciprobe.run.runners.single_call import sample_record

        return {**sample_record(self.task, row, completion), **extra}

    def result(self, records: list[dict], phash: str | None = None, n_calls: int | None = None,
               **extra: Any) -> TaskResult:
        """One result scored in every requested mode. Without ``phash`` / ``n_calls``: the hash of every prompt
        sent through :meth:`ask`, batch by batch, and their count."""
        if phash is None:
            from sciprobe.llm.types import canonical_json, sha256_hex

            phash = sha256_hex(canonical_json([[list(r.messages) for r in batch] for batch in self._asked]))
        if n_calls is None:
            n_calls = sum(len(batch) for batch in self._asked)
        # a plan (``dry_run``) scores nothing: its answers are placeholders, and scoring would load what only a
        # real run needs (scikit-learn, models)
        scores = {} if self.dry_run else _score_all(self.task, records, self.modes)
        return TaskResult(self.ref, self.task.num_fewshot, scores, records,
                          {**self.base, "prompt_hash": phash, "n_calls": n_calls, **extra}, self.task.headline,
                          default_mode=self.modes[0])


def spec_label(spec: str | None) -> str | None:
    """A model spec as recorded in provenance: never with a literal api_key."""
    if spec is None:
        return None
    from sciprobe.llm.spec import ModelSpec

    try:
        return ModelSpec.parse(spec).to_string()
    except (SciprobeError, ValueError):  # a bad spec fails later, where the client is built
        return spec.split(",")[0]


def _override(request: EvaluationRequest, requested: str, ref: str) -> dict[str, Any]:
    return request.per_task.get(ref) or request.per_task.get(requested) or {}


def _prompt_set(benchmark: Benchmark, task: TaskSpec, request: EvaluationRequest,
                override: dict[str, Any]) -> PromptSet:
    return prompt_set_for(benchmark, task, override.get("prompts", request.prompts),
                          local_dir=override.get("upstream_dir", request.upstream_dir),
                          allow_modified=request.allow_modified_prompts)


def _sample_options(benchmark: Benchmark, prompts: PromptSet) -> dict[str, Any] | None:
    """The reader options the bundled sample is built with: the release text upstream sends for its prompt set."""
    if prompts.provenance and benchmark.upstream is not None and benchmark.upstream.release_text_options:
        return dict(benchmark.upstream.release_text_options)
    return None


def check_prompt_sets(request: EvaluationRequest) -> None:
    """Every task's prompt set, read before any model call: an upstream template that differs from the pin stops
    the run here in one line (unless ``allow_modified_prompts``), and each distinct warning (a modified template,
    data that does not hold the release text upstream sends) is said once on stderr. :func:`run_task` records the
    same in each result's provenance."""
    import sys

    from sciprobe.data.task_data import split_revision
    from sciprobe.run.upstream import release_text_check

    said: dict[str, None] = {}
    for requested in request.tasks:
        ref = canonical_ref(requested)
        benchmark, task = resolve_task(ref)
        prompts = _prompt_set(benchmark, task, request, _override(request, requested, ref))
        said.update(dict.fromkeys(prompts.warnings))
        if prompts.provenance and request.data:  # without --data the sample is built with the release text
            data, _ = split_revision(request.data, request.revision)
            warning = release_text_check(benchmark, data, Path(data).exists())[1]
            if warning:
                said[warning] = None
    for warning in said:
        print(f"warning: {warning}", file=sys.stderr)


def run_task(ref: str, request: EvaluationRequest, client: Any, *, judge_factory: Callable[[str], Any] | None = None,
             dry_run: bool = False, judge_log: list[str] | None = None) -> list[TaskResult]:
    """Run one task reference with its declared runner (an alias runs, and is keyed as, the task it names)."""
    requested, ref = ref, canonical_ref(ref)
    benchmark, task = resolve_task(ref)
    override = _override(request, requested, ref)
    modes = list(override.get("modes") or request.modes or task.modes)
    limit = override.get("limit", request.limit)
    unknown = [m for m in modes if m not in task.modes]
    if unknown:
        raise SciprobeError(f"task {ref} has no mode {unknown[0]!r}; modes: {', '.join(task.modes)}")
    prompts = _prompt_set(benchmark, task, request, override)
    data = load_task_data(benchmark, task, request.data, cutoff=request.cutoff, cutoff_source=request.cutoff_source,
                          limit=limit, revision=request.revision, sample_options=_sample_options(benchmark, prompts))
    if prompts.provenance:
        from sciprobe.run.upstream import release_text_check

        record, warning = release_text_check(benchmark, data.location, Path(data.location).exists())
        if record is not None:
            prompts.provenance["release_text"] = record
        if warning:
            prompts.warnings = (*prompts.warnings, warning)
    if prompts.builders and "build_messages" in prompts.builders:
        task = dataclasses.replace(task, build_messages=prompts.builders["build_messages"])
    params = {**task.generation, **request.generation}
    if request.items is not None:  # a partial score: only the items a predictions file has
        data.rows = [r for r in data.rows if str(r["id"]) in request.items]
    base = {"benchmark": benchmark.name, "benchmark_version": benchmark.version, "dataset": data.source,
            "dataset_fingerprint": data.fingerprint, "dataset_revision": data.revision,
            "prompt_version": (f"{prompts.name}:{benchmark.upstream.label}"
                               if prompts.provenance and benchmark.upstream else benchmark.prompt_version),
            **prompts.record(), "model_id": client.model_id,
            "judge_id": spec_label(request.judge), "generation_parameters": params, "cutoff": data.cutoff,
            "limit": data.limit, "subset": data.subset, "executor": request.executor}
    if prompts.warnings:
        base["prompt_warnings"] = list(prompts.warnings)
    if requested != ref:
        base["requested_as"] = requested
    results = runner_of(task).run(RunContext(ref, task, data, request, client, params, modes, base, judge_factory,
                                             dry_run, judge_log, prompts))
    from sciprobe.results.evidence import leave_out_call_failures

    for result in results:  # a call that got no answer is never scored as a wrong answer, in any mode
        leave_out_call_failures(task, result)
    if not dry_run:
        from sciprobe.results.analysis import finish_results

        finish_results(benchmark, task, data.rows, results)
    return results
