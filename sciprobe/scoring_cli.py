"""``sciprobe score``: score a predictions file against a task, with the same records and results files
as ``sciprobe evaluate`` (the leaderboard scores submissions through this path too)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from sciprobe.benchmarks import resolve_task
from sciprobe.declaration import Parsed, TaskSpec
from sciprobe.errors import SciprobeError
from sciprobe.evaluation import load_task_data
from sciprobe.predictions import check_fields, read_predictions
from sciprobe.results import RunInfo, TaskResult, write_run

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
        elif not isinstance(scores, list) or len(scores) != len(ranking):
            raise SciprobeError(f"{where}: \"scores\" must be a list as long as \"ranking\"")
        records.append({"id": str(row["id"]), "gold": gold, "standings": ranking,
                        "scores": [float(s) for s in scores], "error": None})
    return records


def score_file(ref: str, predictions: Path, *, data: str | None = None, modes: Sequence[str] | None = None,
               model_name: str = "submitted", output_dir: Path = Path("results")) -> tuple[Path, list[TaskResult]]:
    benchmark, task = resolve_task(ref)
    modes = list(modes or task.modes)
    for mode in modes:
        if mode not in task.modes:
            raise SciprobeError(f"task {ref} has no mode {mode!r}; modes: {', '.join(task.modes)}")
    if task.runner in ("sandbox", "idea_panel"):  # SGI dry experiment / idea panel: execution and judges
        raise SciprobeError(f"task {ref} is scored from its runner's records (runner {task.runner!r}), not from a "
                            "predictions file; use `sciprobe evaluate`")
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
