"""``sciprobe score``: score a predictions file against a task, with the same records and results files
as ``sciprobe evaluate`` (the leaderboard scores submissions through this path too)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sciprobe.benchmarks import resolve_task
from sciprobe.declaration import Parsed, TaskSpec
from sciprobe.errors import SciprobeError
from sciprobe.evaluation import load_task_data
from sciprobe.numbers import finite_number
from sciprobe.predictions import check_fields, read_predictions
from sciprobe.results import RunInfo, TaskResult, write_run

#: runners whose records come straight from the predictions (no model or judge call): scored inline.
INLINE_RUNNERS = (None, "swiss")


#: runners a predictions file cannot stand in for: the model's turns depend on what the runner answers it.
NOT_REPLAYABLE = {"scitaste_agent": "runs a tool-using agent loop (several model turns per item)"}


def replay_refusal(ref: str) -> str | None:
    """Why ``ref`` cannot be scored from a predictions file (one line), or None."""
    _, task = resolve_task(ref)
    why = NOT_REPLAYABLE.get(task.runner) if isinstance(task.runner, str) else None
    return (f"task {ref} {why}; it cannot be scored from a predictions file (run it with `sciprobe evaluate` and "
            "import the results)") if why else None


class JudgeRequired(SciprobeError):
    """A task scored by its runner (LLM judges) was asked for without a judge spec."""


def row_item_id(row: Mapping) -> str:
    """A row's item id: ``id``, else ``corpus_id`` (PreScience rows carry no ``id``)."""
    return str(row["id"] if "id" in row else row["corpus_id"])


_LABELS = {"yes": "yes", "no": "no", "true": "yes", "false": "no", "1": "yes", "0": "no"}


def _label(value: Any, where: str) -> str | None:
    if value is None:
        return None
    key = str(value).strip().lower()
    if key not in _LABELS:
        raise SciprobeError(f"{where}: prediction must be yes/no/null, got {value!r}")
    return _LABELS[key]


def single_call_records(task: TaskSpec, rows: Sequence[Mapping], preds: Mapping[str, Mapping]) -> list[dict]:
    records = []
    for row in rows:
        item = preds.get(str(row["id"]))
        base = {"id": str(row["id"]), "pa_id": row.get("pa_id"), "gold": task.gold(row)}
        if item is None:
            records.append({**base, "prediction": None, "official": None, "parse_path": "missing",
                            "response": None, "error": "no prediction submitted"})
            continue
        key = check_fields(item, ("response", "prediction"), f"prediction for id {row['id']!r}")
        if key == "response":
            parsed = task.parse(str(item["response"])) if item["response"] is not None else Parsed(None, "failed")
            records.append({**base, "prediction": parsed.value, "official": parsed.extra.get("official"),
                            "parse_path": parsed.path, "response": item["response"], "error": None})
        else:
            label = _label(item["prediction"], f"prediction for id {row['id']!r}")
            records.append({**base, "prediction": label, "official": label,
                            "parse_path": "submitted" if label else "failed", "response": None, "error": None})
    return records


def ranking_records(rows: Sequence[Mapping], preds: Mapping[str, Mapping]) -> list[dict]:
    records = []
    for row in rows:
        players = [t["title"] for t in row["targets"]] + [d["title"] for d in row["distractors"]]
        item = preds.get(str(row["id"]))
        gold = [t["title"] for t in row["targets"]]
        if item is None:
            records.append({"id": str(row["id"]), "gold": gold, "standings": None, "scores": None,
                            "error": "no prediction submitted"})
            continue
        where = f"ranking for id {row['id']!r}"
        ranking = item.get("ranking")
        if not isinstance(ranking, list) or not all(isinstance(t, str) for t in ranking):
            raise SciprobeError(f"{where}: \"ranking\" must be a list of candidate titles")
        unknown = [t for t in ranking if t not in set(players)]
        if unknown:
            raise SciprobeError(f"{where}: unknown candidate title {unknown[0][:60]!r}")
        scores = item.get("scores")
        if scores is None:
            scores = [float(len(ranking) - i) for i in range(len(ranking))]
        else:  # 10**400 or "3" would crash float() or sort wrongly; 1e400 parses to inf
            scores = [finite_number(s) for s in scores] if isinstance(scores, list) else []
            if len(scores) != len(ranking) or None in scores:
                raise SciprobeError(f"{where}: \"scores\" must be a list of finite numbers as long as \"ranking\"")
        records.append({"id": str(row["id"]), "gold": gold, "standings": ranking, "scores": scores, "error": None})
    return records


def score_file(ref: str, predictions: Path, *, data: str | None = None, modes: Sequence[str] | None = None,
               model_name: str = "submitted", output_dir: Path = Path("results"), judge: str | None = None,
               max_calls: int | None = None, max_cost: float | None = None, ledger: Any = None,
               cache: Any = None, use_cache: bool = True,
               per_task: Mapping[str, Any] | None = None) -> tuple[Path, list[TaskResult]]:
    """Score a predictions file. Tasks whose runner is None / ``swiss`` are scored from the file alone (``judge``
    and the budget are ignored). Any other runner (judges, code execution) is run for real on a
    :class:`~sciprobe.replay.ReplayClient` that answers the model's requests from the file; its judges
    (``judge``: one spec or ``;``-separated panel) are real clients sharing ``cache`` (default: the response cache
    of ``sciprobe evaluate``) and ``ledger`` (default: a new one with ``max_calls`` / ``max_cost``). A result whose
    judge calls were cut by the budget carries ``provenance["incomplete"]``."""
    benchmark, task = resolve_task(ref)
    modes = list(modes or task.modes)
    for mode in modes:
        if mode not in task.modes:
            raise SciprobeError(f"task {ref} has no mode {mode!r}; modes: {', '.join(task.modes)}")
    if task.runner not in INLINE_RUNNERS:
        refusal = replay_refusal(ref)
        if refusal:
            from sciprobe.replay import MultiTurnTask

            raise MultiTurnTask(refusal)
        return _score_with_runner(ref, predictions, data=data, modes=modes, model_name=model_name,
                                  output_dir=output_dir, judge=judge, max_calls=max_calls, max_cost=max_cost,
                                  ledger=ledger, cache=cache, use_cache=use_cache, per_task=per_task)
    loaded = load_task_data(benchmark, task, data)
    preds = read_predictions(predictions, (str(r["id"]) for r in loaded.rows))
    records = ranking_records(loaded.rows, preds) if task.runner == "swiss" else single_call_records(task, loaded.rows, preds)
    scores = {mode: task.score(records, mode) for mode in modes}
    provenance = {"benchmark": benchmark.name, "benchmark_version": benchmark.version, "dataset": loaded.source,
                  "dataset_fingerprint": loaded.fingerprint, "predictions_file": predictions.name,
                  "model_id": model_name, "cutoff": loaded.cutoff, "prompt_hash": None}
    result = TaskResult(ref, task.num_fewshot, scores, records, provenance, task.headline, default_mode=modes[0])
    path = write_run(output_dir, RunInfo(model_id=model_name, generation_parameters={}), [result])
    return path, [result]


def _score_with_runner(ref: str, predictions: Path, *, data: str | None, modes: list[str], model_name: str,
                       output_dir: Path, judge: str | None, max_calls: int | None, max_cost: float | None,
                       ledger: Any, cache: Any, use_cache: bool,
                       per_task: Mapping[str, Any] | None) -> tuple[Path, list[TaskResult]]:
    """The task's real runner on a ReplayClient; judges through one cache and one ledger."""
    from sciprobe.evaluation import (
        EvaluationRequest,
        _check_priced,
        _spec_label,
        run_task,
    )
    from sciprobe.llm.client import LLMClient
    from sciprobe.llm.ledger import Budget, RunLedger
    from sciprobe.llm.spec import split_specs
    from sciprobe.replay import ReplayClient

    benchmark, task = resolve_task(ref)
    options = dict((per_task or {}).get(ref) or {})
    specs = list(options.get("judges") or split_specs(judge))
    if not specs:
        raise JudgeRequired(f"task {ref} is scored by its runner {task.runner!r} with an LLM judge: pass a judge "
                            "spec (--judge SPEC, several: 'SPEC1;SPEC2'), or use `sciprobe evaluate`")
    if ledger is None:
        ledger = RunLedger(Budget(max_calls, max_cost))
        if max_cost is not None:
            _check_priced(specs)
    if cache is None and use_cache:
        from sciprobe.llm.cache import ResponseCache, default_cache_path

        cache = ResponseCache(default_cache_path())
    loaded = load_task_data(benchmark, task, data)
    preds = read_predictions(predictions, (row_item_id(r) for r in loaded.rows))
    responses: dict[str, str | None] = {}
    for item_id, item in preds.items():
        where = f"prediction for id {item_id!r}"
        check_fields(item, ("response",), where)
        value = item["response"]
        if value is not None and not isinstance(value, str):
            raise SciprobeError(f"{where}: \"response\" must be the raw model text (a string) or null")
        responses[item_id] = value
    client = ReplayClient(responses, model_name, task_ref=ref, cache=cache, ledger=ledger)
    judges: list[Any] = []

    def judge_factory(spec: str) -> Any:
        built = LLMClient(spec, cache=cache, ledger=ledger)
        judges.append(built)
        return built

    request = EvaluationRequest(tasks=[ref], model=model_name, data=data, judge=";".join(specs), modes=modes,
                                per_task={ref: options} if options else {}, output_dir=Path(output_dir),
                                use_cache=use_cache, max_calls=max_calls, max_cost=max_cost)
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
        judge_ids = [label for label in (_spec_label(s) for s in specs) if label]
    for result in results:
        result.provenance.update({"predictions_file": Path(predictions).name, "model_id": model_name,
                                  "judge_id": ";".join(judge_ids), "judge_ids": list(judge_ids),
                                  "scored_from": "predictions file (sciprobe.replay.ReplayClient)",
                                  "replay": client.summary()})
        if incomplete:
            result.provenance["incomplete"] = incomplete
    run = RunInfo(model_id=model_name, generation_parameters={}, judge_ids=list(judge_ids))
    run.usage = {built.model_id: built.stats.as_dict() for built in judges}
    run.param_adjustments = [a for built in judges for a in built.param_adjustments]
    run.ledger = ledger.as_dict()
    if incomplete:
        run.incomplete = {"reason": incomplete, "skipped_calls": ledger.skipped - skipped_before,
                          "tasks_not_run": [], "tasks_partial": [r.key for r in results]}
    return write_run(Path(output_dir), run, results), results
