"""Reading irllm-framework's output files (``sciprobe import-upstream idrbench --logs OUTPUT_DIR``; upstream
``tasks.py`` at the pinned commit, spec ``idrbench.md`` §3.2, §5).

Upstream writes one JSON list per experiment into its ``save_path`` (``./output``), named
``exp_<experiment>_<model>[_budget][_critical][_fewshot].json``:

- ``exp_1_*`` (IPI; ``ipi``, with ``_fewshot`` ``ipi_5shot``): ``{id, y_true, y_pred, subject_choices, verb_conf,
  log_probs}`` per item;
- ``exp_2_1_*`` / ``exp_2_2_*`` (I3 from ``data_exp_2_1.json`` / ``data_exp_2_2.json``: ``i3_set1`` / ``i3_set2``,
  with ``_fewshot`` the 3-shot tasks; ``exp_2_3_*`` of older commits, from ``data_exp_2_3.json``, also go to
  ``i3_set2``): ``{id, y_true, y_pred, reasons, verb_conf, log_probs}``;
- ``exp_3_1_*`` and its partitions ``part_<k>_exp_3_1_*`` (I2R, merged): ``{id, start_ids, list, y_true: {title,
  abstract, ...}, y_pred: [{title, abstract, score}, ...] (final standings), verb_conf, log_probs}``.

``y_pred`` is the verdict upstream's regex read (``true``/``false``): upstream keeps only the replies its regex
could read, so a dataset item missing from a classification file is an unparsable reply (or one the run never
reached): official mode drops it, as upstream's ``evaluate_file``; strict mode counts it wrong. The dataset
supplies the items (every logged id must be in it). I2R instances missing from the files were
not run and are not scored; the corrected mode scores upstream's final standings with the corrected metrics (the
corrected tournament cannot be replayed from standings). Classification items are scored against the dataset's
labels (a logged label that disagrees is reported); I2R standings and gold titles are the file's own (upstream
compares titles exactly, and the file holds the release's raw text whatever whitespace rule the build used).
Budget-mode files, the single-prompt ranking variant (``exp_3r_*``), generation (``exp_4_*``) and upstream's
summaries are not sciprobe tasks and are skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sciprobe.benchmarks.idrbench.source import normalize_id
from sciprobe.core.errors import SciprobeError
from sciprobe.run.upstream_import import ImportedTask, json_files, match_items, read_json, records_list

_NAME = re.compile(r"^(?:part_(?P<part>\d+)_)?exp_(?P<exp>1|2_\d+|3_\d+)_(?P<rest>.+)\.json$")
# at the pin classify_task writes exp_2_2_* (from data_exp_2_2.json); exp_2_3_* are logs of older commits that read
# data_exp_2_3.json, scored on i3_set2 as before (a dataset built from the pin has data_exp_2_2.json's items)
_I3_FILES = {"2_1": "i3_set1", "2_2": "i3_set2", "2_3": "i3_set2"}
_FLAGS = ("_fewshot", "_critical", "_budget")


def parse_name(name: str) -> dict[str, Any] | None:
    """``exp_2_1_gpt-4o-mini_critical.json`` -> experiment, model, flags (None: not an output file we read)."""
    match = _NAME.match(name)
    if not match:
        return None
    rest, flags = match["rest"], set()
    for flag in _FLAGS:  # upstream appends them in the order budget, critical, fewshot
        if rest.endswith(flag):
            flags.add(flag[1:])
            rest = rest[: -len(flag)]
    return {"exp": match["exp"], "part": int(match["part"]) if match["part"] else None, "model": rest,
            "flags": flags}


def _task_of(info: Mapping[str, Any]) -> str | None:
    shots = "fewshot" in info["flags"]
    if info["exp"] == "1":
        return "ipi_5shot" if shots else "ipi"
    if info["exp"] in _I3_FILES:
        return _I3_FILES[info["exp"]] + ("_3shot" if shots else "")
    if info["exp"] == "3_1" and not shots:
        return "i2r"
    return None


def _label(value: Any, where: str) -> str | None:
    """An upstream verdict / label (bool, 0/1 or "True"/"False") as yes/no."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    key = str(value).strip().lower()
    if key in ("true", "1", "yes", "1.0"):
        return "yes"
    if key in ("false", "0", "no", "0.0"):
        return "no"
    raise SciprobeError(f"{where}: cannot read the label {value!r}")


def _classification(task: str, rows: Sequence[Mapping[str, Any]], files: list[Path],
                    items: list[dict[str, Any]]) -> ImportedTask:
    logged: dict[str, dict[str, Any]] = {}
    for item in items:
        item_id = normalize_id(item.get("id"))
        if item_id in logged:
            raise SciprobeError(f"{files[0].name}: item {item_id!r} appears twice")
        logged[item_id] = item
    records, mismatched = [], 0
    for row, item in match_items(rows, logged, where=files[0].name):
        dataset_gold = "yes" if row["label"] else "no"
        base = {"id": str(row["id"]), "pa_id": row.get("pa_id")}
        if item is None:
            records.append({**base, "gold": dataset_gold, "prediction": None, "official": None,
                            "parse_path": "not_logged", "response": None, "error": None, "not_logged": True})
            continue
        where = f"{files[0].name} item {row['id']!r}"
        logged_gold = _label(item.get("y_true"), where)
        mismatched += logged_gold is not None and logged_gold != dataset_gold
        verdict = _label(item.get("y_pred"), where)
        extra = {k: item[k] for k in ("verb_conf", "subject_choices", "reasons") if k in item}
        records.append({**base, "gold": dataset_gold, "prediction": verdict, "official": verdict,
                        "parse_path": "upstream" if verdict else "failed", "response": None, "error": None,
                        "parsed_extra": json.dumps(extra, ensure_ascii=False, sort_keys=True, default=str)})
    notes = []
    missing = sum(1 for r in records if r.get("not_logged"))
    if missing:
        notes.append(f"{missing} dataset item(s) are not in the upstream file (upstream keeps only the replies its "
                     "regex read, so these are unparsable replies or items the run never reached): official drops "
                     "them as upstream does, strict counts them wrong")
    if mismatched:
        notes.append(f"{mismatched} logged gold label(s) differ from the dataset's (another release?): scored "
                     "against the dataset, so official numbers differ from upstream's own evaluation of the file")
    return ImportedTask(task, records, files, notes=notes)


def _titles(value: Any, where: str) -> list[str]:
    titles = value.get("title") if isinstance(value, Mapping) else None
    if not isinstance(titles, list) or not all(isinstance(t, str) for t in titles):
        raise SciprobeError(f"{where}: expected {{\"title\": [...], ...}}")
    return titles


def _squash(text: str) -> str:
    return " ".join(str(text).split())


def _i2r(rows: Sequence[Mapping[str, Any]], files: list[Path], items: list[dict[str, Any]]) -> ImportedTask:
    logged: dict[str, dict[str, Any]] = {}
    for item in items:
        item_id = f"{normalize_id(item.get('id'))}-{normalize_id(item.get('start_ids', item.get('start_id')))}"
        if item_id in logged:
            raise SciprobeError(f"I2R instance {item_id!r} appears twice in {', '.join(p.name for p in files)}")
        logged[item_id] = item
    records, mismatched = [], 0
    for row, item in match_items(rows, logged, where=", ".join(p.name for p in files)):
        if item is None:
            continue
        where = f"I2R instance {row['id']!r}"
        standings = item.get("y_pred")
        if not isinstance(standings, list) or not all(isinstance(p, Mapping) and isinstance(p.get("title"), str)
                                                      for p in standings):
            raise SciprobeError(f"{where}: y_pred must be the final standings [{{title, abstract, score}}, ...]")
        try:
            scores = [float(p.get("score", 0)) for p in standings]
        except (TypeError, ValueError):
            raise SciprobeError(f"{where}: a standing has a non-numeric score") from None
        gold = _titles(item.get("y_true"), where)
        mismatched += sorted(map(_squash, gold)) != sorted(_squash(t["title"]) for t in row["targets"])
        records.append({"id": str(row["id"]), "pa_id": row.get("pa_id"), "gold": gold,
                        "standings": [p["title"] for p in standings], "scores": scores, "error": None,
                        "n_comparisons": len(item["verb_conf"]) if isinstance(item.get("verb_conf"), list) else None})
    notes = []
    not_run = len(rows) - len(records)
    if not_run:
        notes.append(f"{not_run} dataset instance(s) are not in the upstream files (not run); they are not scored")
    if mismatched:
        notes.append(f"{mismatched} logged gold paper list(s) differ from the dataset's targets (another release?)")
    notes.append("corrected mode scores upstream's final standings with the corrected metrics; the corrected "
                 "tournament (opponents by player) cannot be replayed from standings")
    if not records:
        raise SciprobeError(f"{files[0].name}: no I2R instance to score")
    return ImportedTask("i2r", records, files, notes=notes)


def read_logs(path: Path, rows_of: Callable[[str], Sequence[Mapping[str, Any]]]) -> list[ImportedTask]:
    """Every irllm-framework output file under ``path`` -> one :class:`ImportedTask` per task."""
    groups: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    skipped = []
    for file in json_files(path):
        info = parse_name(file.name)
        task = _task_of(info) if info else None
        if info is None or task is None or "budget" in info["flags"]:
            skipped.append(file.name)
            continue
        groups.setdefault(task, []).append((file, info))
    out = []
    for task, entries in groups.items():
        models = sorted({info["model"] for _, info in entries})
        if len(models) > 1:
            raise SciprobeError(f"several models' {task} files ({', '.join(models)}): point --logs at one "
                                "model's files")
        criticals = {"critical" in info["flags"] for _, info in entries}
        if task != "i2r" and len(entries) > 1:
            raise SciprobeError(f"{task} is in several files ({', '.join(f.name for f, _ in entries)}); point --logs "
                                "at one run")
        files = [f for f, _ in sorted(entries, key=lambda e: (e[1]["part"] or 0, e[0].name))]
        items = [x for f in files for x in records_list(read_json(f), f)]
        rows = rows_of(task)
        imported = _i2r(rows, files, items) if task == "i2r" else _classification(task, rows, files, items)
        imported.model_name = models[0]
        imported.provenance = {"critical": sorted(criticals) == [True]}
        if criticals != {True}:
            imported.notes.append("run without the critical system prompt (upstream config critical: False); "
                                  "sciprobe's tasks use the critical one")
        if skipped:
            imported.provenance["upstream_files_skipped"] = sorted(skipped)
        out.append(imported)
    return out
