"""``sciprobe baselines BENCH``: the benchmark's reference baselines (random, majority, similarity rankers, mean
predictors ...), each scored like a submission and written as a normal results file flagged as a reference
baseline (``sciprobe.reference_baseline`` and every task's ``provenance.reference_baseline``).

A benchmark declares its baselines with the ``Benchmark.baselines`` hook ("module:function" returning a list of
:class:`~sciprobe.core.declaration.Baseline`). A baseline's predictions go through the path ``sciprobe score`` takes:
runners that read predictions files build the records from them; any other runner is run for real on a
:class:`~sciprobe.run.replay.ReplayClient` answering with the baseline's text (no judge: judged metrics are not
computed for a baseline). Baselines that give records directly are scored by the task's scorer.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError

__all__ = ["baselines_of", "configure_baselines_parser", "run_baselines"]

MODEL_PREFIX = "reference-baseline"


def baselines_of(benchmark: Any) -> list[Any]:
    """The benchmark's declared baselines ([] when it has none)."""
    if not benchmark.baselines:
        return []
    from sciprobe.core.lazy import resolve

    return list(resolve(benchmark.baselines)())


def _score_task(benchmark: Any, task: Any, baseline: Any, *, data: str | None, source: Path | None,
                limit: int | None, output_dir: Path, log: Any = print) -> list[Any]:
    from sciprobe.results.analysis import analyse, attach_row_fields
    from sciprobe.core.declaration import BaselineInput
    from sciprobe.results.write import TaskResult
    from sciprobe.data.task_data import load_task_data
    from sciprobe.run.task_runner import runner_of

    ref = f"{benchmark.name}:{task.name}"
    loaded = load_task_data(benchmark, task, data, limit=limit)
    given = BaselineInput(benchmark, task, loaded.rows, loaded.fewshot, data, source)
    runner = runner_of(task)
    provenance = {"benchmark": benchmark.name, "benchmark_version": benchmark.version, "dataset": loaded.source,
                  "dataset_fingerprint": loaded.fingerprint, "model_id": f"{MODEL_PREFIX}/{baseline.name}",
                  "cutoff": loaded.cutoff, "limit": loaded.limit, "subset": loaded.subset, "prompt_hash": None,
                  "reference_baseline": {"name": baseline.name, "description": baseline.description}}
    if baseline.records is None and not runner.reads_predictions:
        return _replayed(ref, task, baseline, given, data=data, limit=limit, output_dir=output_dir,
                         provenance=provenance)
    if baseline.records is not None:
        records = baseline.records(given)
    else:
        records = runner.records_from_predictions(task, loaded.rows, baseline.predict(given))
    attach_row_fields(task, benchmark.config(task.config).id_field, loaded.rows, records)
    scores = {}
    for mode in task.modes:
        try:
            scores[mode] = task.score(records, mode)
        except SciprobeError as exc:  # a mode the data cannot score; the others still count
            log(f"{baseline.name}: {ref} mode {mode} not scored: {exc}")
    if not scores:
        raise SciprobeError("no mode could be scored")
    result = TaskResult(ref, task.num_fewshot, scores, records, provenance, task.headline,
                        default_mode=next(iter(scores)))
    result.analysis = analyse(task, result)
    return [result]


def _replayed(ref: str, task: Any, baseline: Any, given: Any, *, data: str | None, limit: int | None,
              output_dir: Path, provenance: dict[str, Any]) -> list[Any]:
    """The task's real runner on the baseline's answers (no judge)."""
    from sciprobe.run.replay import ReplayClient
    from sciprobe.run.task_runner import EvaluationRequest, run_task, runner_of

    if runner_of(task).judge == "required":
        raise SciprobeError(f"{ref} needs an LLM judge to score anything; baseline {baseline.name!r} cannot run it")
    lines = baseline.predict(given)
    responses = {}
    for item, line in lines.items():
        if "response" not in line:
            raise SciprobeError(f"baseline {baseline.name!r} gives {ref} a {sorted(line)} line; the task's runner "
                                "replays raw answers ({\"response\": text})")
        responses[item] = line["response"]
    client = ReplayClient(responses, provenance["model_id"], task_ref=ref)
    request = EvaluationRequest(tasks=[ref], model=provenance["model_id"], data=data, limit=limit,
                                output_dir=output_dir, use_cache=False)
    results = run_task(ref, request, client)
    for result in results:
        result.provenance.update({"reference_baseline": provenance["reference_baseline"],
                                  "scored_from": "baseline answers (sciprobe.run.replay.ReplayClient)"})
    return results


def run_baselines(benchmark_name: str, *, names: Sequence[str] | None = None, tasks: Sequence[str] | None = None,
                  data: str | None = None, source: str | None = None, limit: int | None = None,
                  output_dir: Path = Path("results"), log: Any = print) -> list[tuple[Any, Path, list[Any]]]:
    """Run the selected baselines of one benchmark; one results file per baseline: ``[(baseline, path, results)]``."""
    from sciprobe.core.registry import get_benchmark
    from sciprobe.results.write import RunInfo, write_run

    benchmark = get_benchmark(benchmark_name)
    declared = baselines_of(benchmark)
    if not declared:
        raise SciprobeError(f"{benchmark.name} declares no reference baselines")
    known = {b.name for b in declared}
    unknown = [n for n in names or [] if n not in known]
    if unknown:
        raise SciprobeError(f"unknown baseline {unknown[0]!r} for {benchmark.name}; known: {', '.join(sorted(known))}")
    for name in tasks or []:
        benchmark.task(name)
    if limit is not None and limit < 1:
        raise SciprobeError("--limit must be at least 1")
    from sciprobe.data.sources import local_folder, locate

    if data:  # checked once here: a mistyped path is one error, not one skipped line per baseline and task
        from sciprobe.data.task_data import split_revision

        locate(split_revision(data)[0], "--data")
    release = local_folder(source, "--source") if source else benchmark.sample_source
    out = []
    for baseline in declared:
        if names and baseline.name not in names:
            continue
        chosen = [t for t in baseline.tasks if not tasks or t in tasks]
        if not chosen:
            continue
        results = []
        for task_name in chosen:
            try:
                results.extend(_score_task(benchmark, benchmark.task(task_name), baseline, data=data, source=release,
                                           limit=limit, output_dir=output_dir, log=log))
            except SciprobeError as exc:
                log(f"{baseline.name}: {benchmark.name}:{task_name} skipped: {exc}")
        if not results:
            continue
        run = RunInfo(model_id=f"{MODEL_PREFIX}/{baseline.name}", generation_parameters={},
                      reference_baseline={"name": baseline.name, "description": baseline.description,
                                          "benchmark": benchmark.name})
        out.append((baseline, write_run(output_dir, run, results), results))
    if not out:
        raise SciprobeError(f"no baseline of {benchmark.name} could be scored on these tasks")
    return out


def configure_baselines_parser(parser: argparse.ArgumentParser, commands: dict | None = None) -> None:
    parser.description = ("Score a benchmark's reference baselines (no model, offline) and write one results file "
                          "per baseline, flagged as a reference baseline.")
    parser.add_argument("benchmark", help="benchmark name (`sciprobe tasks` lists them)")
    parser.add_argument("--baseline", action="append", dest="names", metavar="NAME",
                        help="only this baseline (repeatable; default: all)")
    parser.add_argument("--task", action="append", dest="tasks", metavar="TASK", help="only this task (repeatable)")
    parser.add_argument("--data", help="built dataset folder or hub id (default: the bundled sample)")
    parser.add_argument("--source", help="release folder for baselines that read the release files (PreScience "
                                         "history; default: the bundled sample's)")
    parser.add_argument("--limit", type=int,
                        help="only N items per task: a seeded sample (as `sciprobe evaluate --limit`), never ranked")
    parser.add_argument("--output-dir", default="results",
                        help="where results (OUTPUT_DIR/results) and details (OUTPUT_DIR/details) go "
                             "(default: %(default)s)")
    parser.add_argument("--list", action="store_true", help="list the baselines and their tasks, score nothing")
    if commands is not None:
        commands.setdefault("baselines", cmd_baselines)


def cmd_baselines(args: argparse.Namespace) -> int:
    from sciprobe.core.registry import get_benchmark
    from sciprobe.results.summary import print_summary

    if args.list:
        declared = baselines_of(get_benchmark(args.benchmark))
        if not declared:
            raise SciprobeError(f"{args.benchmark} declares no reference baselines")
        for b in declared:
            print(f"{b.name:24s} {', '.join(b.tasks)}\n{'':24s} {b.description}")
        return 0
    runs = run_baselines(args.benchmark, names=args.names, tasks=args.tasks, data=args.data, source=args.source,
                         limit=args.limit, output_dir=Path(args.output_dir))
    for baseline, path, results in runs:
        print(f"reference baseline {baseline.name}: {baseline.description}")
        print_summary(results)
        print(f"results: {path}\n")
    return 0
