"""Put a lighteval run of sciprobe's task cards on the leaderboard: its details are rescored by sciprobe
(:mod:`sciprobe.interop.lighteval_results`) into a sciprobe results file, which imports like any other.

Used by ``sciprobe leaderboard --import`` (a lighteval ``results_*.json`` brings its details along; a details
``.parquet`` may be named on its own). The Space takes a details file as an upload instead
(:func:`sciprobe.leaderboard.validation.validate_submission`): it never takes scores from outside.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError

Warn = Callable[[str], None]
#: imports one sciprobe results file, returns the result ids (sciprobe.leaderboard.importer passes its own)
ImportFile = Callable[[Path], list[str]]


def dataset_golds(ref: str, data: str | None) -> tuple[dict[str, Any], list[str], str]:
    """({item id: gold}, item ids in order, the dataset's label) of ``ref``'s test split in ``data``."""
    from sciprobe.core.registry import resolve_task
    from sciprobe.run.score_predictions import row_item_id
    from sciprobe.data.task_data import load_task_data

    benchmark, task = resolve_task(ref)
    loaded = load_task_data(benchmark, task, data)
    ids = [row_item_id(benchmark, task, row) for row in loaded.rows]
    golds = {i: task.gold(row) for i, row in zip(ids, loaded.rows)} if task.gold else {}
    return golds, ids, loaded.source


def _data_location(ref: str, recorded: str | None) -> str | None:
    """The dataset a run is rescored against: what lighteval recorded (a folder that is here, or a hub id), else
    ``SCIPROBE_<BENCH>_DATA`` (what the card reads), else None (the bundled sample)."""
    if recorded and (Path(recorded).is_dir() or ("/" in recorded and not recorded.startswith(("/", ".")))):
        return recorded
    from sciprobe.interop.lighteval_tasks import DATA_ENV

    return os.environ.get(DATA_ENV.format(ref.split(":", 1)[0].upper())) or None


def model_from_details_path(path: Path) -> str:
    """lighteval's layout ``.../details/<model>/<date>/details_*.parquet``: the model name."""
    parts = Path(path).resolve().parts
    if "details" in parts[:-2]:
        index = len(parts) - 1 - parts[::-1].index("details")
        name = "/".join(parts[index + 1:-2])
        if name:
            return name
    raise SciprobeError(f"{Path(path).name}: cannot tell the model (expected .../details/<model>/<date>/)")


def import_details(details: Path, model: str, recorded: str | None, source: str, import_file: ImportFile) -> list[str]:
    """Rescore one details file and import the result; SciprobeError (one line) when it cannot rank."""
    from sciprobe.core.registry import resolve_task
    from sciprobe.interop.lighteval_results import check_golds, predictions_bytes, read_details
    from sciprobe.run.score_predictions import score_file

    run = read_details(details)
    ref = run.task.rsplit("|", 1)[0]
    try:
        resolve_task(ref)
    except SciprobeError:
        raise SciprobeError(f"task {run.task[:60]!r} is not one of sciprobe's task cards") from None
    data = _data_location(ref, recorded)
    golds, ids, label = dataset_golds(ref, data)
    check_golds(run, golds, label)
    unknown = [i for i in run.answers if i not in set(ids)]
    if unknown:
        raise SciprobeError(f"item {unknown[0][:60]!r} is not in {label}: the run was made on other data")
    missing = len([i for i in ids if i not in run.answers])
    if missing:
        raise SciprobeError(f"partial run: {missing} of {len(ids)} items of {label} have no answer in it (lighteval "
                            "--max-samples?); only complete runs are ranked")
    with tempfile.TemporaryDirectory(prefix="sciprobe-lighteval-") as tmp:
        predictions = Path(tmp) / "predictions.jsonl"
        predictions.write_bytes(predictions_bytes(run))
        path, _ = score_file(ref, predictions, data=data, model_name=model, output_dir=Path(tmp) / "out",
                             extra_provenance={"scored_from": "lighteval details, rescored by sciprobe",
                                               "lighteval_source": source, "lighteval_details": details.name})
        return import_file(path)


def import_lighteval_results(path: Path, data: Mapping[str, Any], import_file: ImportFile, warn: Warn) -> list[str]:
    """Every task of a lighteval results file, rescored from its details; a task that cannot rank (no details,
    not our card, partial, other data) is one ``warn`` line and the others import."""
    from sciprobe.leaderboard.validation import sanitize_text
    from sciprobe.interop.lighteval_results import model_name, results_tasks

    model = model_name(data)
    ids: list[str] = []
    for task in results_tasks(path, data):
        try:
            if task.details is None:
                raise SciprobeError("no details file beside it (run lighteval with --save-details): its aggregated "
                                    "scores carry no coverage per mode, so sciprobe rescores from the details")
            ids += import_details(task.details, model, task.dataset, Path(path).name, import_file)
        except SciprobeError as exc:
            warn(f"{path}: lighteval task {sanitize_text(task.key, 60)!r} skipped: {sanitize_text(exc, 300)}")
    return ids


def import_details_file(path: Path, import_file: ImportFile) -> list[str]:
    """A lighteval details ``.parquet`` named on its own (model from its folder, dataset from the environment)."""
    return import_details(Path(path), model_from_details_path(path), None, Path(path).name, import_file)


__all__ = ["dataset_golds", "import_details", "import_details_file", "import_lighteval_results",
           "model_from_details_path"]
