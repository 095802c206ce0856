"""Import results files written by ``sciprobe evaluate`` / ``sciprobe demo`` into a leaderboard store, so a
local leaderboard shows your own runs next to submissions. Scores are taken as computed by sciprobe on this
machine (the Space never accepts scores from submitters; this path is for the local store only)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from sciprobe.errors import SciprobeError
from sciprobe.leaderboard.agreement import PROVENANCE_KEY, judge_scores_from_details
from sciprobe.leaderboard.queue import knowledge_cutoff
from sciprobe.leaderboard.records import DEFAULT_PROMPT_SET, ResultRecord
from sciprobe.leaderboard.store import LeaderboardStore


def _family(model_id: str) -> str:
    return model_id.split("/", 1)[0] if "/" in model_id else model_id.split("-", 1)[0]


def _judge_scores(results_path: Path, details: str | None) -> dict | None:
    """Per-judge item scores from the task's details Parquet (``<out>/details/...``, next to ``<out>/results``),
    when the task was scored by a panel of judges; None when there is no panel or no details file."""
    if not details:
        return None
    file = results_path.resolve().parents[2] / details if len(results_path.resolve().parents) > 2 else None
    if file is None or not file.is_file():
        return None
    try:
        return judge_scores_from_details(file)
    except Exception:  # noqa: BLE001 - an unreadable details file only loses the agreement view
        return None


def import_results_file(store: LeaderboardStore, path: Path, user: str = "local") -> list[str]:
    """Add every task of one results JSON to ``store``; returns the result ids (re-importing replaces).

    A task that a ``--max-calls``/``--max-cost`` cap cut short (``provenance.incomplete``) is left out: its
    score covers an arbitrary prefix of the items and must not rank next to full runs. The run's complete
    tasks are imported."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
        block = data["sciprobe"]
        model_id = block["model_id"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise SciprobeError(f"{path} is not a sciprobe results file ({type(exc).__name__})") from None
    # I2R writes one entry per mode ("idrbench:i2r|0", "idrbench:i2r:corrected|0"): merge them per task.
    merged: dict[str, dict] = {}
    for key, task in block["tasks"].items():
        if task["provenance"].get("incomplete"):
            continue
        ref = key.rsplit("|", 1)[0]
        base = ":".join(ref.split(":")[:2])
        entry = merged.setdefault(base, {"scores": {}, "provenance": dict(task["provenance"]), "default": None,
                                         "headline": ""})
        panel = _judge_scores(Path(path), task.get("details"))
        if panel is not None:
            entry["provenance"][PROVENANCE_KEY] = panel
        entry["scores"].update(task["scores"])
        config = (data.get("config_tasks") or {}).get(key) or {}
        mode = config.get("default_mode")
        entry["default"] = entry["default"] or (mode if mode in task["scores"] else next(iter(task["scores"])))
        entry["headline"] = entry["headline"] or config.get("headline") or ""
    request_id = "import-" + hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    ids = []
    for ref, entry in merged.items():
        prov = entry["provenance"]
        default = entry["default"]
        headline = entry["headline"] or next((k for k in ("macro_f1", "mrr") if k in entry["scores"][default]), "")
        record = ResultRecord(
            request_id=request_id, user=user, model_name=model_id, task=ref, benchmark=prov["benchmark"],
            benchmark_version=prov["benchmark_version"], dataset_fingerprint=prov["dataset_fingerprint"],
            headline=headline, default_mode=default, scores=entry["scores"], provenance=prov,
            cutoff=(prov.get("cutoff") or {}).get("cutoff"), dataset_revision=prov.get("dataset_revision") or None,
            judge_ids=list(block.get("judge_ids") or []),
            model_family=_family(model_id), model_cutoff=knowledge_cutoff(model_id, None),
            prompt_set=prov.get("prompt_set") or DEFAULT_PROMPT_SET)
        ids.append(store.add_result(record))
    return ids


def import_results_dir(store: LeaderboardStore, folder: Path, user: str = "local") -> int:
    """Import every ``results_*.json`` below ``folder``; returns how many task results were added."""
    return sum(len(import_results_file(store, p, user)) for p in sorted(Path(folder).rglob("results_*.json")))
