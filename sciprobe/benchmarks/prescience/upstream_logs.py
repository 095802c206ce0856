"""Reading allenai/prescience's prediction and generation files (``sciprobe import-upstream prescience --logs
DIR``; upstream at the pinned commit, spec ``prescience.md`` §2).

Upstream saves per-instance lists with ``utils.save_json`` (``{"metadata": [...], "data": [...]}``, or a bare list,
or JSON Lines); the task is recognised by the entries' keys:

- ``predicted_coauthor_ids`` (``task_coauthor_prediction`` baselines: ``corpus_id``, ``gt_coauthor_ids``, the
  ranked ids and their scores) -> ``collaborator_prediction``;
- ``predicted_reference_ids`` (``task_priorwork_prediction``: ``gt_reference_ids``) -> ``prior_work_selection``;
- ``predicted_citations`` (``task_impact_prediction``) -> ``citation_prediction``;
- ``title`` / ``abstract`` next to ``corpus_id`` (``task_followup_prediction/generate``: ``generations.<model>.json``,
  the generated title and abstract; ``""`` after failed retries) -> ``contribution_generation``. A
  ``*.lacer_scored.json`` file also carries upstream's LACER judge replies (``lacer_response``,
  ``lacer_scoring_model``, ``lacer_error``), which are replayed as that judge's replies (judge id
  ``upstream:<model>``); it is preferred over the plain generations file of the same run.

Predicted ids are kept exactly as logged (official mode compares them as upstream does: an integer id never
matches a string id). Items are scored against the dataset's gold (a logged gold list that differs is reported);
dataset instances missing from the file were not predicted (upstream baselines may subsample) and are not scored.
The model name comes from the metadata (the ``--model`` of the step that made the predictions, never of a scoring
step such as ``lacer_score.py``, whose ``--model`` is the judge) or the file name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.run.upstream_import import ImportedTask, json_files, match_items, read_json, records_list

#: task -> (predicted key, logged gold key, dataset gold column)
RANKINGS = {
    "collaborator_prediction": ("predicted_coauthor_ids", "gt_coauthor_ids", "gold_author_ids"),
    "prior_work_selection": ("predicted_reference_ids", "gt_reference_ids", "gold_corpus_ids"),
}
_LACER_KEYS = ("lacer_response", "lacer_score", "lacer_error")


def task_of(entry: Mapping[str, Any]) -> str | None:
    for task, (predicted, _, _) in RANKINGS.items():
        if predicted in entry:
            return task
    if "predicted_citations" in entry:
        return "citation_prediction"
    if "corpus_id" in entry and "title" in entry and "abstract" in entry:
        return "contribution_generation"
    return None


def is_scoring_script(script: Any) -> bool:
    """True for upstream's scoring steps (``task_*/evaluate.py``, ``task_followup_prediction/evaluate/*.py``:
    LACER, ROUGE, BERTScore ...), whose ``--model`` is a judge's or a scorer's, never the evaluated model's."""
    parts = [p for p in str(script).replace("\\", "/").split("/") if p]
    return bool(parts) and (parts[-1] == "evaluate.py" or "evaluate" in parts[:-1] or parts[-1].endswith("_score.py"))


def model_of(metadata: Any, file: Path) -> str | None:
    """The evaluated model: the ``--model`` of the last step of the metadata that made the predictions (a step
    whose script is known and is not a scoring step: a LACER step's ``--model`` is the judge), else the file name
    ``generations.<model>.json``."""
    if isinstance(metadata, list):
        for step in reversed(metadata):
            if not isinstance(step, Mapping) or not isinstance(step.get("script"), str):
                continue  # a step that does not say what ran cannot say whose model it names
            args = step.get("args")
            if (not is_scoring_script(step["script"]) and isinstance(args, Mapping)
                    and isinstance(args.get("model"), str)):
                return args["model"]
    parts = file.name.split(".")
    if parts[0] == "generations" and len(parts) > 2:
        return ".".join(p for p in parts[1:-1] if p not in ("lacer_scored", "rouge_scored"))
    return None


def _ranking(task: str, entry: Mapping[str, Any], row: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    predicted, logged_gold, gold_column = RANKINGS[task]
    ranked = entry.get(predicted)
    if not isinstance(ranked, list):
        raise SciprobeError(f"{task} item {row['corpus_id']!r}: {predicted} must be a list")
    gold = [str(g) for g in row[gold_column]]
    differs = logged_gold in entry and [str(g) for g in entry[logged_gold] or []] != gold
    return {"id": str(row["corpus_id"]), "gold": gold, "prediction": list(ranked), "error": None}, differs


def _citation(entry: Mapping[str, Any], row: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """A JSON number as upstream's ``evaluate.py`` subtracts it; a string or ``true`` is no forecast (``float``
    would read ``"615714"`` or ``true`` as one), and NaN or infinity is no number."""
    value = entry.get("predicted_citations")
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                              or not math.isfinite(value)):
        raise SciprobeError(f"citation item {row['corpus_id']!r}: predicted_citations {value!r} is not a finite "
                            "JSON number")
    prediction = None if value is None else float(value)
    return {"id": str(row["corpus_id"]), "gold": row["label_12m"], "prediction": prediction, "error": None}, False


def lacer_judge_of(items: Sequence[Mapping[str, Any]], metadata: Any) -> str:
    """The judge id of a ``*.lacer_scored.json`` file: ``upstream:<lacer_scoring_model>`` (one per file, also for
    the records whose call failed and so name no model)."""
    models = {str(e["lacer_scoring_model"]) for e in items if e.get("lacer_scoring_model")}
    if len(models) > 1:
        raise SciprobeError(f"one LACER file names several judges ({', '.join(sorted(models))})")
    if not models and isinstance(metadata, list):
        for step in metadata:
            args = step.get("args") if isinstance(step, Mapping) else None
            if isinstance(args, Mapping) and "lacer" in str(step.get("script", "")) and args.get("model"):
                models.add(str(args["model"]))
    return f"upstream:{next(iter(models), 'lacer-judge')}"


def _generation(entry: Mapping[str, Any], row: Mapping[str, Any], judge: str) -> tuple[dict[str, Any], bool]:
    from sciprobe.benchmarks.prescience.contribution import contribution_gold

    title, abstract = str(entry.get("title") or ""), str(entry.get("abstract") or "")
    record: dict[str, Any] = {
        "id": str(row["corpus_id"]), "date": row.get("date"), "gold": contribution_gold(row),
        "prediction": {"title": title, "abstract": abstract} if title else None,
        "parse_path": "upstream" if title else "failed:empty", "response": None, "error": None,
        "reasoning": entry.get("reasoning"),
    }
    if any(k in entry for k in _LACER_KEYS):
        record["lacer_replies"] = {judge: None if "lacer_error" in entry else entry.get("lacer_response")}
        record["lacer_errors"] = {judge: entry.get("lacer_error")}
    return record, False


def _pick(task: str, entries: list[tuple[Path, Any, list[dict[str, Any]]]]) -> tuple[Path, Any, list[dict]]:
    if task == "contribution_generation" and len(entries) > 1:
        judged = [e for e in entries if any(k in e[2][0] for k in _LACER_KEYS)]
        entries = judged or entries
    if len(entries) > 1:
        raise SciprobeError(f"{task} is in several files ({', '.join(e[0].name for e in entries)}): point --logs at "
                            "one run")
    return entries[0]


def read_logs(path: Path, rows_of: Callable[[str], Sequence[Mapping[str, Any]]]) -> list[ImportedTask]:
    """Every PreScience prediction / generation file under ``path`` -> one :class:`ImportedTask` per task."""
    found: dict[str, list[tuple[Path, Any, list[dict[str, Any]]]]] = {}
    skipped = []
    for file in json_files(path):
        data = read_json(file)
        metadata = data.get("metadata") if isinstance(data, Mapping) else None
        try:
            items = records_list(data, file)
        except SciprobeError:
            skipped.append(file.name)
            continue
        task = task_of(items[0]) if items else None
        if task is None:
            skipped.append(file.name)
            continue
        found.setdefault(task, []).append((file, metadata, items))
    out = []
    for task, entries in found.items():
        file, metadata, items = _pick(task, entries)
        logged: dict[str, dict[str, Any]] = {}
        for entry in items:
            if task_of(entry) != task:
                raise SciprobeError(f"{file.name}: an entry is not a {task} entry")
            key = str(entry["corpus_id"])
            if key in logged:
                raise SciprobeError(f"{file.name}: corpus_id {key!r} appears twice")
            logged[key] = entry
        rows = rows_of(task)
        judge = lacer_judge_of(items, metadata) if task == "contribution_generation" else ""
        records, differing = [], 0
        for row, entry in match_items(rows, logged, id_field="corpus_id", where=file.name):
            if entry is None:
                continue
            if task in RANKINGS:
                record, differs = _ranking(task, entry, row)
            elif task == "citation_prediction":
                record, differs = _citation(entry, row)
            else:
                record, differs = _generation(entry, row, judge)
            records.append(record)
            differing += differs
        notes = []
        if len(records) < len(rows):
            notes.append(f"{len(rows) - len(records)} dataset instance(s) are not in the file (not predicted); they "
                         "are not scored")
        if differing:
            notes.append(f"{differing} logged gold list(s) differ from the dataset's: scored against the dataset, so "
                         "official numbers differ from upstream's evaluate.py on the file")
        judges = sorted({j for r in records for j in (r.get("lacer_replies") or {})})
        provenance: dict[str, Any] = {"judge_ids": judges}
        if len(entries) > 1 or skipped:
            provenance["upstream_files_skipped"] = sorted([e[0].name for e in entries if e[0] != file] + skipped)
        out.append(ImportedTask(task, records, [file], model_name=model_of(metadata, file), notes=notes,
                                provenance=provenance))
    return out
