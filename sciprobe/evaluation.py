"""Evaluate a model on benchmark tasks: load (and cutoff-filter) the data, run, score every mode, write results.

Used by ``sciprobe evaluate`` and ``sciprobe demo``; the same functions serve the Python API.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

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
    per_task: dict[str, dict[str, Any]] = field(default_factory=dict)  # {ref: {"modes": [...], "limit": N}}
    output_dir: Path = Path("results")
    generation: dict[str, Any] = field(default_factory=dict)
    use_cache: bool = True
    revision: str | None = None


def _score_all(task: TaskSpec, records: list[dict], modes: Sequence[str]) -> dict[str, ScoreReport]:
    return {mode: task.score(records, mode) for mode in modes}


def make_client(model: str, use_cache: bool = True) -> Any:
    from sciprobe.llm.cache import ResponseCache, default_cache_path
    from sciprobe.llm.client import LLMClient

    return LLMClient(model, cache=ResponseCache(default_cache_path()) if use_cache else None)


def run_task(ref: str, request: EvaluationRequest, client: Any) -> list[TaskResult]:
    """Run one task reference; I2R plays one tournament per requested mode (their pairings differ)."""
    benchmark, task = resolve_task(ref)
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
            "prompt_version": benchmark.prompt_version, "model_id": client.model_id, "judge_id": request.judge,
            "generation_parameters": params, "cutoff": data.cutoff, "limit": limit}
    if task.runner == "swiss":
        from sciprobe.runners.i2r import run_i2r

        results = []
        for mode in modes:
            records, phash, n_calls = run_i2r(data.rows, client, params, mode=mode)
            scores = {mode: task.score(records, mode)}
            results.append(TaskResult(ref if mode == modes[0] else f"{ref}:{mode}", 0, scores, records,
                                      {**base, "prompt_hash": phash, "n_calls": n_calls, "mode": mode},
                                      task.headline, default_mode=mode))
        return results
    from sciprobe.runners.single_call import run_single_call

    records, phash, n_calls = run_single_call(task, data.rows, data.fewshot, client, params)
    return [TaskResult(ref, task.num_fewshot, _score_all(task, records, modes), records,
                       {**base, "prompt_hash": phash, "n_calls": n_calls}, task.headline,
                       default_mode=modes[0])]


def evaluate(request: EvaluationRequest, client: Any | None = None) -> tuple[Path, list[TaskResult]]:
    for ref in request.tasks:
        resolve_task(ref)  # fail on a typo before any model call
    client = client or make_client(request.model, request.use_cache)
    run = RunInfo(model_id=client.model_id, generation_parameters=dict(request.generation),
                  judge_ids=[request.judge] if request.judge else [])
    results: list[TaskResult] = []
    for ref in request.tasks:
        results.extend(run_task(ref, request, client))
    run.usage = client.stats.as_dict()
    run.param_adjustments = list(getattr(client, "param_adjustments", []))
    return write_run(request.output_dir, run, results), results

