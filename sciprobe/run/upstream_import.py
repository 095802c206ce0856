"""``sciprobe import-upstream BENCH --logs PATH``: score the per-item output files a benchmark's pinned upstream
code wrote, in every mode, and write a normal results file (``sciprobe export`` and the leaderboard read it).

A benchmark opts in through its declaration (``Benchmark.upstream_logs = "module:function"``); the function reads
the files it recognises under ``PATH`` and returns one :class:`ImportedTask` per task found, with records shaped
as the task's scorer reads them. This module does the rest: the dataset rows the records are joined to
(:func:`match_items`: every logged item must be in the dataset; dataset items missing from the logs stay as
records without an answer), scoring in every mode, provenance (the files and their sha256, the pinned upstream,
prompt set ``upstream``) and the results file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError

#: the model name of an import whose files do not name the model and no --model-name was given
UNNAMED_MODEL = "upstream-run"


@dataclass
class ImportedTask:
    """One task read from upstream output files."""

    task: str                                   # the benchmark's task name ("ipi", "deep_research", ...)
    records: list[dict[str, Any]]               # per dataset item, as the task's scorer reads them
    files: list[Path]                           # the files the records come from
    model_name: str | None = None               # as the upstream file names (or contents) give it
    notes: list[str] = field(default_factory=list)        # what the import could not carry over, and why
    provenance: dict[str, Any] = field(default_factory=dict)  # extra keys (e.g. upstream judge ids, flags)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_json(path: Path) -> Any:
    """A JSON file (or JSON Lines for ``*.jsonl``), with a one-line error when it is not one."""
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SciprobeError(f"{path}: not a readable JSON file ({exc})") from None


def json_files(path: Path) -> list[Path]:
    """``path`` itself, or every ``*.json`` / ``*.jsonl`` file under it (sorted, hidden folders skipped)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise SciprobeError(f"upstream logs {path} not found")
    found = [p for p in path.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl")
             and not any(part.startswith(".") for part in p.relative_to(path).parts)]
    return sorted(found)


def records_list(data: Any, path: Path) -> list[dict[str, Any]]:
    """The per-item records of an upstream output file: a JSON list of objects, or ``{"data": [...]}``."""
    if isinstance(data, Mapping) and isinstance(data.get("data"), list):
        data = data["data"]
    if not isinstance(data, list) or not all(isinstance(x, Mapping) for x in data):
        raise SciprobeError(f"{path}: expected a JSON list of per-item objects")
    return [dict(x) for x in data]


def match_items(rows: Sequence[Mapping[str, Any]], items: Mapping[str, Any], *, id_field: str = "id",
                where: str) -> list[tuple[Mapping[str, Any], Any]]:
    """``[(row, logged item or None)]`` in dataset order. Every logged item must be a dataset item: scoring a log
    against another release would silently change the numbers."""
    ids = {str(row[id_field]) for row in rows}
    unknown = [i for i in items if i not in ids]
    if unknown:
        raise SciprobeError(f"{where}: {len(unknown)} logged item(s) are not in the dataset (first: {unknown[0]!r}); "
                            "pass --data with the release the upstream run used")
    return [(row, items.get(str(row[id_field]))) for row in rows]


def _reader(benchmark: Any) -> Callable[..., list[ImportedTask]]:
    if not benchmark.upstream_logs:
        why = "it has no public upstream code" if benchmark.upstream is None else "its declaration names no reader"
        raise SciprobeError(f"{benchmark.name} cannot import upstream output files: {why}")
    from sciprobe.core.lazy import resolve

    return resolve(benchmark.upstream_logs)


def _model_name(imported: Iterable[ImportedTask], given: str | None) -> str:
    if given:
        return given
    names = sorted({t.model_name for t in imported if t.model_name})
    if len(names) > 1:
        raise SciprobeError(f"the logs hold runs of several models ({', '.join(names)}): point --logs at one "
                            "model's files, or pass --model-name")
    return names[0] if names else UNNAMED_MODEL


def _score(task: Any, records: list[dict[str, Any]], mode: str) -> Any:
    """The task's score in ``mode``, or -- when that mode's own checks refuse the logged outputs (e.g. a strict
    mode rejecting duplicated ids) -- a report with no number that says why, so the other modes still count."""
    from sciprobe.scoring.score_report import Coverage, ScoreReport

    try:
        return task.score(records, mode)
    except SciprobeError as exc:
        n = len(records)
        return ScoreReport(task.metric, mode, {task.headline: None, "no_score_reason": str(exc)},
                           Coverage(n, 0, n), notes=[f"{mode} mode refuses the logged outputs: {exc}"])


def import_logs(bench: str, logs: Path, *, data: str | None = None, model_name: str | None = None,
                modes: Sequence[str] | None = None, output_dir: Path = Path("results")) -> tuple[Path, list[Any]]:
    """Read, score (every mode of each task, or ``modes``) and write one results file; returns its path and
    the task results."""
    from sciprobe.core.registry import get_benchmark
    from sciprobe.results.write import RunInfo, TaskResult, write_run
    from sciprobe.data.task_data import load_task_data

    benchmark = get_benchmark(bench)
    reader = _reader(benchmark)
    logs = Path(logs)
    if not logs.exists():
        from sciprobe.data.sources import missing_path_message

        raise SciprobeError(missing_path_message(str(logs), "--logs"))
    if data:  # checked before any log is read: a mistyped --data is one line, whatever the logs hold
        from sciprobe.data.sources import locate
        from sciprobe.data.task_data import split_revision

        locate(split_revision(data)[0], "--data")
    loaded: dict[str, Any] = {}

    def task_data(task_name: str) -> Any:
        if task_name not in loaded:
            loaded[task_name] = load_task_data(benchmark, benchmark.task(task_name), data)
        return loaded[task_name]

    imported = reader(logs, lambda name: task_data(name).rows)
    if not imported:
        raise SciprobeError(f"no upstream output file of {bench} found in {logs} ({benchmark.name}'s README lists "
                            "the formats)")
    seen: dict[str, list[Path]] = {}
    for item in imported:
        if item.task in seen:
            raise SciprobeError(f"{bench}:{item.task} is in several files ({seen[item.task][0].name}, "
                                f"{item.files[0].name}): point --logs at one run")
        seen[item.task] = item.files
    model = _model_name(imported, model_name)
    upstream = benchmark.upstream
    results, judge_ids = [], []
    for item in imported:
        task = benchmark.task(item.task)
        chosen = [m for m in (modes or task.modes) if m in task.modes]
        if not chosen:
            raise SciprobeError(f"task {bench}:{item.task} has none of the modes {list(modes or [])}; modes: "
                                f"{', '.join(task.modes)}")
        scores = {mode: _score(task, item.records, mode) for mode in chosen}
        loaded_data = task_data(item.task)
        provenance = {
            "benchmark": benchmark.name, "benchmark_version": benchmark.version, "dataset": loaded_data.source,
            "dataset_fingerprint": loaded_data.fingerprint, "model_id": model, "cutoff": loaded_data.cutoff,
            "prompt_hash": None, "prompt_set": "upstream",
            "upstream": {"repo": upstream.repo, "commit": upstream.commit} if upstream else None,
            "scored_from": "upstream output files (sciprobe import-upstream)",
            "upstream_files": [{"name": p.name, "sha256": sha256_file(p)} for p in item.files],
            "n_logged_items": sum(1 for r in item.records if not r.get("not_logged")),
            **item.provenance,
        }
        if item.notes:
            provenance["warnings"] = list(item.notes)
            for mode in chosen:
                scores[mode].notes.extend(n for n in item.notes if n not in scores[mode].notes)
        judge_ids += [j for j in item.provenance.get("judge_ids", []) if j not in judge_ids]
        results.append(TaskResult(f"{benchmark.name}:{item.task}", task.num_fewshot, scores, item.records, provenance,
                                  task.headline, default_mode=chosen[0]))
    path = write_run(Path(output_dir), RunInfo(model_id=model, generation_parameters={}, judge_ids=judge_ids),
                     results)
    return path, results
