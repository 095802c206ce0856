"""Predictions files for ``sciprobe score`` (and leaderboard submissions): JSONL, one item per line.

Single-call tasks: ``{"id": ..., "response": "<raw model text>"}`` (parsed with the task's parsers) or
``{"id": ..., "prediction": "yes"|"no"|null}`` (already parsed). I2R: ``{"id": ..., "ranking": [titles, best
first], "scores": [points]}`` (scores optional; without them the ranking is taken as given), or the stored
comparison replies ``{"id": ..., "comparisons": [{"paper_1": title, "paper_2": title, "response": text|null}]}``,
replayed through the tournament in every mode (:mod:`sciprobe.benchmarks.idrbench.i2r`).
Every problem is a one-line error naming the line; ids missing from the file count as failures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping

from sciprobe.core.errors import SciprobeError

MAX_LINE_BYTES = 5_000_000


def read_predictions(path: Path | str, known_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    path = Path(path)
    if not path.is_file():
        raise SciprobeError(f"predictions file {path} not found")
    known = set(known_ids)
    out: dict[str, dict[str, Any]] = {}
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if len(raw) > MAX_LINE_BYTES:
                raise SciprobeError(f"{path.name} line {number}: longer than {MAX_LINE_BYTES} bytes")
            if not raw.strip():
                continue
            try:
                item = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise SciprobeError(f"{path.name} line {number}: "
                                    f"not valid JSON ({exc.msg if hasattr(exc, 'msg') else exc})") from None
            if not isinstance(item, dict) or "id" not in item:
                raise SciprobeError(f"{path.name} line {number}: expected an object with an \"id\" field")
            item_id = str(item["id"])
            if item_id not in known:
                raise SciprobeError(f"{path.name} line {number}: unknown id {item_id!r} for this task")
            if item_id in out:
                raise SciprobeError(f"{path.name} line {number}: duplicate id {item_id!r}")
            out[item_id] = item
    if not out:
        raise SciprobeError(f"{path.name} holds no predictions")
    return out


def check_fields(item: Mapping[str, Any], required_any: tuple[str, ...], where: str) -> str:
    for key in required_any:
        if key in item:
            return key
    raise SciprobeError(f"{where}: needs one of the fields {', '.join(required_any)}")
