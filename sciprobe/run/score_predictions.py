"""``sciprobe score``: score a predictions file against a task, with the same records and results files
as ``sciprobe evaluate`` (the leaderboard scores submissions through this path too)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sciprobe.results.analysis import analyse, attach_row_fields
from sciprobe.core.registry import canonical_ref, resolve_task
from sciprobe.core.declaration import Benchmark, TaskSpec
from sciprobe.core.errors import SciprobeError
from sciprobe.data.predictions import check_fields, read_predictions
from sciprobe.results.write import RunInfo, TaskResult, write_run
from sciprobe.data.task_data import load_task_data
from sciprobe.run.task_runner import runner_of

def replay_refusal(ref: str) -> str | None:
    """Why ``ref`` cannot be scored from a predictions file (one line), or None."""
    from sciprobe.run.task_runner import runner_of

    _, task = resolve_task(ref)
    why = runner_of(task).replay_refusal
    return (f"task {ref} {why}; it cannot be scored from a predictions file (run it with `sciprobe evaluate` and "
            "import the results)") if why else None


class JudgeRequired(SciprobeError):
    """A task scored by its runner (LLM judges) was asked for without a judge spec."""


def row_item_id(benchmark: Benchmark, task: TaskSpec, row: Mapping) -> str:
    """A row's item id, by the id field its config declares."""
    return str(row[benchmark.config(task.config).id_field])


def missing_items(ids: Sequence[str], preds: Mapping[str, Any]) -> list[str]:
    """The item ids (in dataset order) that ``preds`` holds no line for."""
    return [i for i in ids if i not in preds]


def missing_message(missing: Sequence[str], n_items: int, file_name: str) -> str:
    """One line: ``1110 of 1120 items have no prediction in preds.jsonl (first: '...')``."""
    first = str(missing[0])[:60]
    return (f"{len(missing)} of {n_items} items have no prediction in {file_name} (first: {first!r}); a missing "
            "prediction is not a wrong answer: give one line per item (null for no answer), or pass --partial to "
            "score only the items it has (marked partial, never exported or ranked)")


def score_file(ref: str, predictions: Path, *, data: str | None = None, modes: Sequence[str] | None = None,
               model_name: str = "submitted", output_dir: Path = Path("results"), judge: str | None = None,
               max_calls: int | None = None, max_cost: float | None = None, ledger: Any = None,
               cache: Any = None, use_cache: bool = True, per_task: Mapping[str, Any] | None = None,
               prompts: str = "sciprobe", upstream_dir: Path | None = None, partial: bool = False,
               extra_provenance: Mapping[str, Any] | None = None,
               allow_modified_prompts: bool = False) -> tuple[Path, list[TaskResult]]:
    """Score a predictions file. Tasks whose runner reads records straight from predictions (single-call tasks,
    I2R rankings) are scored from the file alone (``judge`` and the budget are ignored). Any other runner (judges,
    code execution) is run for real on a
    :class:`~sciprobe.run.replay.ReplayClient` that answers the model's requests from the file; its judges
    (``judge``: one spec or ``;``-separated panel) are real clients sharing ``cache`` (default: the response cache
    of ``sciprobe evaluate``) and ``ledger`` (default: a new one with ``max_calls`` / ``max_cost``). A result whose
    judge calls were cut by the budget, or got no answer, carries ``provenance["incomplete"]``. ``prompts`` names
    the prompt set the predictions were made with (recorded; a replayed runner builds its requests from it, and
    refuses upstream templates that differ from the pin unless ``allow_modified_prompts``). An alias scores (and
    is keyed as) the task it names.

    A file that lacks items is refused (one line: how many of how many), unless ``partial``: then only the items
    it has are scored, and the result says so (``provenance["partial"]``, the run's ``sciprobe.partial``).
    ``extra_provenance`` is added to every result's provenance (e.g. where the predictions came from)."""
    from sciprobe.run.upstream import check_prompt_set, no_upstream_prompt_reason

    ref = canonical_ref(ref)
    benchmark, task = resolve_task(ref)
    prompts = check_prompt_set(prompts)
    why = no_upstream_prompt_reason(benchmark, task) if prompts == "upstream" else None
    if why:
        raise SciprobeError(f"task {ref} has no upstream prompt set: {why}")
    modes = list(modes or task.modes)
    for mode in modes:
        if mode not in task.modes:
            raise SciprobeError(f"task {ref} has no mode {mode!r}; modes: {', '.join(task.modes)}")
    refusal = replay_refusal(ref)
    if refusal:
        from sciprobe.run.replay import MultiTurnTask

        raise MultiTurnTask(refusal)
    # the bundled sample as `evaluate --prompts upstream` builds it (the release text upstream sends), so the two
    # name the same data
    release_text = benchmark.upstream.release_text_options if prompts == "upstream" and benchmark.upstream else None
    loaded = load_task_data(benchmark, task, data, sample_options=dict(release_text) if release_text else None)
    ids = [row_item_id(benchmark, task, r) for r in loaded.rows]
    preds = read_predictions(predictions, ids)
    missing = missing_items(ids, preds)
    partial_info = {"n_predicted": len(ids) - len(missing), "n_items": len(ids)} if missing else None
    runner = runner_of(task)
    if not runner.reads_predictions:
        return _score_with_runner(ref, preds, predictions.name, data=data, modes=modes, model_name=model_name,
                                  output_dir=output_dir, judge=judge, max_calls=max_calls, max_cost=max_cost,
                                  ledger=ledger, cache=cache, use_cache=use_cache, per_task=per_task,
                                  prompts=prompts, upstream_dir=upstream_dir, missing=missing, n_items=len(ids),
                                  partial=partial, extra_provenance=extra_provenance,
                                  allow_modified_prompts=allow_modified_prompts)
    # every line is checked first (its fields, its label), so a bad line is named before a count of missing ones
    rows = [r for r, i in zip(loaded.rows, ids) if i in preds]
    records = runner.records_from_predictions(task, rows, preds)
    if missing and not partial:
        raise SciprobeError(missing_message(missing, len(ids), predictions.name))
    attach_row_fields(task, benchmark.config(task.config).id_field, rows, records)
    scores = {mode: task.score(records, mode) for mode in modes}
    provenance = {"benchmark": benchmark.name, "benchmark_version": benchmark.version, "dataset": loaded.source,
                  "dataset_fingerprint": loaded.fingerprint, "dataset_revision": loaded.revision,
                  "predictions_file": predictions.name, "model_id": model_name, "cutoff": loaded.cutoff,
                  "prompt_hash": None, "prompt_set": prompts, **(extra_provenance or {})}
    if prompts == "upstream" and benchmark.upstream is not None:
        provenance["upstream_prompts"] = {"repo": benchmark.upstream.repo, "commit": benchmark.upstream.commit}
    if partial_info:
        provenance["partial"] = partial_info
    result = TaskResult(ref, task.num_fewshot, scores, records, provenance, task.headline, default_mode=modes[0])
    result.analysis = analyse(task, result)
    run = RunInfo(model_id=model_name, generation_parameters={})
    run.partial = partial_info
    path = write_run(output_dir, run, [result])
    return path, [result]


def _score_with_runner(ref: str, preds: Mapping[str, Mapping[str, Any]], file_name: str, *, data: str | None,
                       modes: list[str], model_name: str, output_dir: Path, judge: str | None,
                       max_calls: int | None, max_cost: float | None, ledger: Any, cache: Any, use_cache: bool,
                       per_task: Mapping[str, Any] | None, prompts: str = "sciprobe",
                       upstream_dir: Path | None = None, missing: Sequence[str] = (), n_items: int = 0,
                       partial: bool = False, extra_provenance: Mapping[str, Any] | None = None,
                       allow_modified_prompts: bool = False) -> tuple[Path, list[TaskResult]]:
    """The task's real runner on a ReplayClient; judges through one cache and one ledger. With ``partial``, the
    runner sees only the items the file has (``missing`` are left out before any call)."""
    from sciprobe.run.evaluation import check_priced
    from sciprobe.llm.client import LLMClient
    from sciprobe.llm.ledger import Budget, RunLedger
    from sciprobe.llm.spec import split_specs
    from sciprobe.run.replay import ReplayClient
    from sciprobe.run.task_runner import EvaluationRequest, check_prompt_sets, run_task, spec_label

    benchmark, task = resolve_task(ref)
    options = dict((per_task or {}).get(ref) or {})
    specs = list(options.get("judges") or split_specs(judge))
    if not specs:
        raise JudgeRequired(f"task {ref} is scored by its runner {runner_of(task).name!r} with an LLM judge: "
                            "pass a judge spec (--judge SPEC, several: 'SPEC1;SPEC2'), or use `sciprobe evaluate`")
    if ledger is None:
        ledger = RunLedger(Budget(max_calls, max_cost))
        if max_cost is not None:
            check_priced(specs)
    if cache is None and use_cache:
        from sciprobe.llm.cache import ResponseCache, default_cache_path

        cache = ResponseCache(default_cache_path())
    responses: dict[str, str | None] = {}
    for item_id, item in preds.items():
        where = f"prediction for id {item_id!r}"
        check_fields(item, ("response",), where)
        value = item["response"]
        if value is not None and not isinstance(value, str):
            raise SciprobeError(f"{where}: \"response\" must be the raw model text (a string) or null")
        responses[item_id] = value
    if missing and not partial:
        raise SciprobeError(missing_message(missing, n_items, file_name))
    client = ReplayClient(responses, model_name, task_ref=ref, cache=cache, ledger=ledger)
    judges: list[Any] = []

    def judge_factory(spec: str) -> Any:
        built = LLMClient(spec, cache=cache, ledger=ledger)
        judges.append(built)
        return built

    request = EvaluationRequest(tasks=[ref], model=model_name, data=data, judge=";".join(specs), modes=modes,
                                per_task={ref: options} if options else {}, output_dir=Path(output_dir),
                                use_cache=use_cache, max_calls=max_calls, max_cost=max_cost, prompts=prompts,
                                upstream_dir=upstream_dir, items=frozenset(preds) if missing else None,
                                allow_modified_prompts=allow_modified_prompts)
    check_prompt_sets(request)
    skipped_before = ledger.skipped
    results = run_task(ref, request, client, judge_factory=judge_factory)
    if not results:
        raise SciprobeError(f"task {ref}: its runner produced no result from the predictions file")
    incomplete = ledger.stop_reason if ledger.skipped > skipped_before else None
    judge_ids: list[str] = []
    for built in judges:
        if built.model_id not in judge_ids:
            judge_ids.append(built.model_id)
    if not judge_ids:
        judge_ids = [label for label in (spec_label(s) for s in specs) if label]
    for result in results:
        result.provenance.update({"predictions_file": file_name, "model_id": model_name,
                                  "judge_id": ";".join(judge_ids), "judge_ids": list(judge_ids),
                                  "scored_from": "predictions file (sciprobe.run.replay.ReplayClient)",
                                  "replay": client.summary(), **(extra_provenance or {})})
        if incomplete:
            result.provenance["incomplete"] = incomplete
        if missing:
            result.provenance["partial"] = {"n_predicted": n_items - len(missing), "n_items": n_items}
    run = RunInfo(model_id=model_name, generation_parameters={}, judge_ids=list(judge_ids))
    if missing:
        run.partial = {"n_predicted": n_items - len(missing), "n_items": n_items}
    run.usage = {built.model_id: built.stats.as_dict() for built in judges}
    run.param_adjustments = [a for built in judges for a in built.param_adjustments]
    run.ledger = ledger.as_dict()
    from sciprobe.run.evaluation import incomplete_block

    run.incomplete = incomplete_block(results, _SinceLedger(ledger, skipped_before), [])
    return write_run(Path(output_dir), run, results), results


class _SinceLedger:
    """A shared ledger seen from one request: its stop reason, and the calls skipped since ``skipped_before``."""

    def __init__(self, ledger: Any, skipped_before: int) -> None:
        self.skipped = ledger.skipped - skipped_before
        self.exhausted = self.skipped > 0
        self.stop_reason = ledger.stop_reason
