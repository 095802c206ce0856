"""lighteval's own output of a run of sciprobe's task cards (``task_cards/sciprobe_tasks.py``), read back so the run
can be scored the sciprobe way and put on a leaderboard.

lighteval writes ``OUT/results/<model>/results_<date>.json`` (its aggregated metrics: no coverage per mode, no
dataset fingerprint) and, with ``--save-details``, ``OUT/details/<model>/<date>/details_<task>|<shots>_<date>.parquet``
(one row per item: the ``doc`` our card built — ``specific.id`` and ``specific.gold`` — and the
``model_response``). The metrics sciprobe ranks by need every mode with its coverage and the dataset's
fingerprint, so a run is always **rescored from its details**: each item's answer becomes a predictions line
(``{"id", "response"}``) scored with :func:`sciprobe.run.score_predictions.score_file` against the dataset, exactly as
a
submitted predictions file. A details file whose golds differ from that dataset's was made on other data and is
refused; one that lacks items is a partial run (refused as such). Any problem is one line
(:class:`~sciprobe.core.errors.SciprobeError`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.results.read import is_lighteval_results  # noqa: F401 - part of this module's interface

#: at most this many rows in one details file (a larger file is refused, never read whole)
MAX_DETAILS_ROWS = 200_000


@dataclass(frozen=True)
class LightevalTask:
    """One task of a lighteval results file: its key (``idrbench:ipi|0``), the details file and the dataset the run
    read (``hf_repo``, pinned ``@hf_revision`` when lighteval recorded one)."""

    key: str
    details: Path | None
    dataset: str | None

    @property
    def ref(self) -> str:
        return self.key.rsplit("|", 1)[0]


def model_name(data: Mapping[str, Any]) -> str:
    """The model a lighteval results file was run with."""
    general = data.get("config_general") or {}
    name = general.get("model_name") or (general.get("model_config") or {}).get("model_name")
    if not isinstance(name, str) or not name.strip():
        raise SciprobeError("lighteval results without config_general.model_name")
    return name.strip()


def results_tasks(path: Path, data: Mapping[str, Any]) -> list[LightevalTask]:
    """The tasks of a lighteval results file, each with its details file (None when lighteval saved none)."""
    stem = Path(path).stem
    date_id = stem[len("results_"):] if stem.startswith("results_") else ""
    model = model_name(data)
    depth = len([p for p in model.strip("/").split("/") if p])
    parents = Path(path).resolve().parents
    # OUT/results/<model parts>/results_*.json: parents[depth] is OUT/results
    root = parents[depth + 1] if len(parents) > depth + 1 and parents[depth].name == "results" else None
    configs = data.get("config_tasks") if isinstance(data.get("config_tasks"), dict) else {}
    out = []
    for key in data["results"]:
        if key == "all" or "|" not in str(key):
            continue
        details = None
        if root is not None and date_id:
            candidate = root / "details" / model.strip("/") / date_id / f"details_{key}_{date_id}.parquet"
            if candidate.is_file() and candidate.resolve().is_relative_to(root):
                details = candidate
        config = configs.get(key) if isinstance(configs.get(key), dict) else {}
        repo, revision = config.get("hf_repo"), config.get("hf_revision")
        dataset = None
        if isinstance(repo, str) and repo:
            dataset = f"{repo}@{revision}" if isinstance(revision, str) and revision and not Path(repo).exists() \
                else repo
        out.append(LightevalTask(str(key), details, dataset))
    return out


@dataclass(frozen=True)
class DetailsRun:
    """What a lighteval details file holds for sciprobe: the task key and, per item id, the answer and the gold."""

    task: str
    answers: dict[str, str | None]
    golds: dict[str, Any]


def _first_text(response: Any) -> str | None:
    """The answer lighteval's metrics read (``ModelResponse.final_text[0]``): post-processed text, else raw text."""
    if not isinstance(response, Mapping):
        return None
    for field in ("text_post_processed", "text"):
        texts = response.get(field)
        if isinstance(texts, list) and texts:
            return texts[0] if isinstance(texts[0], str) else None
    return None


def read_details(path: Path | str) -> DetailsRun:
    """The items of one lighteval details Parquet file of a sciprobe card task; one-line errors otherwise."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    try:
        meta = pq.read_metadata(path)
        names = set(pq.read_schema(path).names)
    except (OSError, pa.ArrowException) as exc:
        raise SciprobeError(f"{path.name}: not a readable Parquet file ({type(exc).__name__})") from None
    if not {"doc", "model_response"} <= names:
        raise SciprobeError(f"{path.name}: not a lighteval details file (no doc / model_response columns)")
    if meta.num_rows > MAX_DETAILS_ROWS:
        raise SciprobeError(f"{path.name}: {meta.num_rows} rows is more than a details file of one task holds")
    try:
        rows = pq.read_table(path, columns=["doc", "model_response"]).to_pylist()
    except (OSError, pa.ArrowException) as exc:
        raise SciprobeError(f"{path.name}: unreadable details ({type(exc).__name__})") from None
    answers: dict[str, str | None] = {}
    golds: dict[str, Any] = {}
    tasks = set()
    for number, row in enumerate(rows, start=1):
        doc = row.get("doc") if isinstance(row.get("doc"), Mapping) else {}
        specific = doc.get("specific") if isinstance(doc.get("specific"), Mapping) else {}
        item = specific.get("id")
        if not isinstance(item, str) or not item:
            raise SciprobeError(f"{path.name} row {number}: no doc.specific.id (not made by sciprobe's task cards)")
        if item in answers:
            raise SciprobeError(f"{path.name} row {number}: item {item[:60]!r} twice")
        answers[item] = _first_text(row.get("model_response"))
        golds[item] = specific.get("gold")
        if isinstance(doc.get("task_name"), str):
            tasks.add(doc["task_name"])
    if not answers:
        raise SciprobeError(f"{path.name} holds no items")
    if len(tasks) != 1:
        raise SciprobeError(f"{path.name}: expected the items of one task, found {len(tasks)}")
    return DetailsRun(tasks.pop(), answers, golds)


def predictions_bytes(run: DetailsRun) -> bytes:
    """The run's answers as a predictions JSONL (``{"id", "response"}`` lines; null where lighteval got none)."""
    return "".join(json.dumps({"id": i, "response": r}, ensure_ascii=False) + "\n"
                   for i, r in run.answers.items()).encode("utf-8")


def _comparable(value: Any) -> Any:
    """A gold as both sides hold it after Arrow round trips: numbers as floats, tuples as lists."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, Mapping):
        return {str(k): _comparable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_comparable(v) for v in value]
    return str(value)


def _canonical(value: Any) -> str:
    return json.dumps(_comparable(value), sort_keys=True, ensure_ascii=False, default=str)


def check_golds(run: DetailsRun, golds: Mapping[str, Any], dataset: str) -> None:
    """Refuse details made on other data than ``dataset`` (whose golds per item id are ``golds``)."""
    for item, gold in run.golds.items():
        if item in golds and gold is not None and _canonical(gold) != _canonical(golds[item]):
            raise SciprobeError(f"the details were made on other data than {dataset}: the gold of item {item[:60]!r} "
                                "differs (rerun lighteval on that dataset)")


__all__ = ["DetailsRun", "LightevalTask", "check_golds", "is_lighteval_results", "model_name", "predictions_bytes",
           "read_details", "results_tasks"]
