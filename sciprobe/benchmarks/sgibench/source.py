"""Read SGI-Bench from local Parquet in the hub schema into normalised rows (shared/spec/sgibench.md §2, §9).

Source layout: a folder holding one sub-folder per hub dataset (``SGI-DeepResearch``, ``SGI-IdeaGeneration``,
``SGI-DryExperiment``, ``SGI-WetExperiment``, ``SGI-Reasoning``; a snapshot of the hub repo, i.e. with
``data/test-*.parquet``) or named after our config (``deep_research``, ...). Every ``*.parquet`` below it is
read, in sorted order.

Normalisation (recorded in the dataset card):
- stringified Python dicts (idea generation) become ``[{"key", "value"}]`` lists via ``ast.literal_eval``
  (never ``eval``); a field that does not parse becomes ``[]`` and is named in ``parse_errors``;
- reasoning answers keep the 0-based ``answer`` and add ``answer_letter = chr(65 + answer)``;
- wet experiments add the ``action_names`` declared in the action pool;
- dry experiments add ``external_files`` (upstream-relative paths of the files items 0200/0206/0236 need);
- every row gets ``id = idx`` (the item key sciprobe's runners read) and ``date = None`` (the benchmark
  defines no item dates; freeze 2025-12, see the card).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from sciprobe.benchmarks.sgibench.external import EXTERNAL_FILES
from sciprobe.benchmarks.sgibench.release_layout import HUB_DATASETS
from sciprobe.core.errors import SciprobeError
from sciprobe.data.release_files import check_unique_ids, integer, number, text, text_list
from sciprobe.benchmarks.sgibench.scoring.wet_experiment import action_names

DICT_FIELDS = ("related_work", "existing_solutions", "implementation_steps", "evaluation_metrics",
               "related_work_test")
STRING_FIELDS = {
    "deep_research": ("idx", "question", "answer", "discipline", "direction", "type"),
    "idea_generation": ("idx", "question", "challenge", "limitation", "motivation", "task_objective", "core_idea",
                        "data", "expected_outcome", "discipline", "direction"),
    "dry_experiment": ("idx", "question", "data_code", "main_code", "incomplete_main_code", "function_type",
                       "discipline", "direction",
                       *[f"unit_test_{i}_{k}" for i in range(5) for k in ("data", "output")]),
    "wet_experiment": ("idx", "question", "action_pool", "answer", "discipline", "direction"),
    "experimental_reasoning": ("idx", "question", "image_type", "discipline", "direction", "type"),
}


def parquet_files(source: Path, config: str) -> list[Path]:
    for name in (HUB_DATASETS[config], config):
        folder = Path(source) / name
        if folder.is_dir():
            files = sorted(folder.rglob("*.parquet"))
            if files:
                return files
    raise SciprobeError(f"no Parquet for {config} under {source} "
                        f"(expected {HUB_DATASETS[config]}/data/test-*.parquet)")


def read_parquet_rows(files: list[Path], root: Path | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``(where, record)`` of every row of the files (``where`` = path below ``root`` and row number); a file
    with no rows is an error."""
    import pyarrow.parquet as pq

    rows: list[tuple[str, dict[str, Any]]] = []
    for path in files:
        name = str(path.relative_to(root)) if root is not None else path.name
        try:
            records = pq.read_table(path).to_pylist()
        except Exception as exc:  # pyarrow raises several types for unreadable files
            raise SciprobeError(f"cannot read {path}: {exc}".replace("\n", " ")) from None
        if not records:
            raise SciprobeError(f"{name}: the file has no items")
        rows.extend((f"{name} row {i}", record) for i, record in enumerate(records))
    return rows


def parse_dict_field(value: Any) -> list[dict[str, str]] | None:
    """Stringified Python dict -> ``[{"key", "value"}]`` (None when it is not a dict literal)."""
    if isinstance(value, Mapping):
        parsed = value
    else:
        try:
            parsed = ast.literal_eval(value) if isinstance(value, str) and value.strip() else {}
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if not isinstance(parsed, Mapping):
        return None
    return [{"key": str(k), "value": str(v)} for k, v in parsed.items()]


def _image(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return {"bytes": value.get("bytes"), "path": value.get("path")}
    if isinstance(value, (bytes, bytearray)):
        return {"bytes": bytes(value), "path": None}
    return value  # a PIL image: datasets encodes it


def _strings(raw: Mapping[str, Any], config: str, where: str) -> dict[str, Any]:
    return {key: text(raw.get(key), where, key) or "" for key in STRING_FIELDS[config]}


def normalise(raw: Mapping[str, Any], config: str, where: str | None = None) -> dict[str, Any]:
    """One hub record -> one row of the declared features (a wrong-typed field is refused, not coerced)."""
    where = where or config
    row = _strings(raw, config, where)
    if not row["idx"]:
        raise SciprobeError(f"{where}: a record has no idx")
    if config == "deep_research":
        row["steps"] = text_list(raw.get("steps"), where, "steps")
    elif config == "idea_generation":
        errors = []
        for key in DICT_FIELDS:
            parsed = parse_dict_field(raw.get(key))
            if parsed is None:
                errors.append(key)
            row[key] = parsed or []
        row["keywords"] = text_list(raw.get("keywords"), where, "keywords")
        row["implementation_order"] = text_list(raw.get("implementation_order"), where, "implementation_order")
        row["parse_errors"] = errors
    elif config == "dry_experiment":
        row["incomplete_functions"] = text_list(raw.get("incomplete_functions"), where, "incomplete_functions")
        runtime = raw.get("runtime")
        row["runtime"] = None if runtime is None else number(runtime, where, "runtime")
        row["external_files"] = list(EXTERNAL_FILES.get(row["idx"], ()))
    elif config == "wet_experiment":
        row["action_names"] = action_names(row["action_pool"])
    elif config == "experimental_reasoning":
        answer = raw.get("answer")
        if answer is None or not 0 <= integer(answer, where, "answer") < 26:
            raise SciprobeError(f"{row['idx']}: answer must be a 0-based option index, got {answer!r}")
        row["answer"] = answer
        row["answer_letter"] = chr(65 + answer)
        row["options"] = text_list(raw.get("options"), where, "options")
        row["steps"] = text_list(raw.get("steps"), where, "steps")
        row["images"] = [_image(i) for i in raw.get("images") or []]
        row["step_images"] = [_image(i) for i in raw.get("step_images") or []]
    row["id"] = row["idx"]  # the generic item key (runners, predictions files, lighteval)
    row["date"] = None
    return row


def read_source(source: Path, config: str, options: Mapping[str, Any]) -> Iterator[tuple[str, list[dict]]]:
    """Yield ``("test", rows)`` for one config."""
    if config not in HUB_DATASETS:
        raise SciprobeError(f"unknown SGI-Bench config {config!r}")
    records = read_parquet_rows(parquet_files(Path(source), config), Path(source))
    rows = [normalise(record, config, where) for where, record in records]
    check_unique_ids(((row["idx"], where) for row, (where, _) in zip(rows, records)), "idx")
    yield "test", rows
