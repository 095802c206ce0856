"""Results files: lighteval-compatible results JSON plus per-sample details Parquet, with provenance and
coverage on every score (shared/spec/README.md conventions 1, 4, 5).

Layout (as lighteval's ``EvaluationTracker`` writes it):
``<out>/results/<model>/results_<ts>.json`` and ``<out>/details/<model>/<ts>/details_<task>|<shots>_<ts>.parquet``.
Every file is written to a temporary name and renamed into place, so a crash never leaves half a file.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import platform
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from sciprobe import __version__
from sciprobe.scoring.score_report import ScoreReport


def model_slug(model_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "__", model_id).strip("_") or "model"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_json(path: Path, obj: Any, *, compact_lists: bool = False) -> None:
    """``obj`` as indented JSON; ``compact_lists`` puts every list of plain values on one line (per-item columns
    would otherwise take a line per item)."""
    text = json.dumps(obj, indent=2, ensure_ascii=False, default=str)
    if compact_lists:
        text = _SCALAR_LIST.sub(lambda m: "[" + re.sub(r",\n\s*", ", ", m.group(1)) + "]", text)
    atomic_write_bytes(path, (text + "\n").encode("utf-8"))


_SCALAR = r'(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|NaN|-?Infinity|"(?:[^"\\\n]|\\.)*")'
_SCALAR_LIST = re.compile(r"\[\n\s*(" + _SCALAR + r"(?:,\n\s*" + _SCALAR + r")*)\n\s*\]")


def _details_table(records: list[dict[str, Any]]):
    import pyarrow as pa

    def cell(value: Any) -> Any:
        if isinstance(value, dict):
            return json.dumps(value, ensure_ascii=False, sort_keys=True)
        return value

    rows = [{k: cell(v) for k, v in r.items()} for r in records]
    try:
        return pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        # Mixed types in a column (e.g. a prediction that is sometimes a list): keep every value as JSON text.
        return pa.Table.from_pylist([{k: json.dumps(v, ensure_ascii=False, default=str) for k, v in r.items()}
                                     for r in rows])


def write_details(path: Path, records: list[dict[str, Any]]) -> None:
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(_details_table(records), tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass
class TaskResult:
    """One task's outcome: scores per mode, per-sample records and how they were produced."""

    task: str                      # "idrbench:ipi"
    num_fewshot: int
    scores: dict[str, ScoreReport]
    records: list[dict[str, Any]]
    provenance: dict[str, Any]
    headline: str = ""
    default_mode: str = "official"
    # confidence intervals, breakdowns and the per-item table (sciprobe.results.analysis.analyse); None: not analysed
    analysis: dict[str, Any] | None = None

    @property
    def key(self) -> str:
        return f"{self.task}|{self.num_fewshot}"

    def score_dicts(self) -> dict[str, dict[str, Any]]:
        """``{mode: ScoreReport.as_dict()}`` with the mode's ``ci`` and ``breakdowns`` from the analysis."""
        modes = (self.analysis or {}).get("modes", {})
        out = {}
        for mode, report in self.scores.items():
            entry = report.as_dict()
            if mode in modes:
                entry["ci"] = modes[mode]["ci"]
                entry["breakdowns"] = modes[mode]["breakdowns"]
                if modes[mode].get("other_ci"):
                    entry["other_ci"] = modes[mode]["other_ci"]
                if modes[mode].get("other_breakdowns"):
                    entry["other_breakdowns"] = modes[mode]["other_breakdowns"]
            out[mode] = entry
        return out

    def flat_metrics(self) -> dict[str, Any]:
        return flat_scores(self.score_dicts(), self.default_mode)


def flat_scores(scores: dict[str, dict[str, Any]], default_mode: str) -> dict[str, Any]:
    """lighteval-style flat numbers from ``{mode: ScoreReport.as_dict()}``: the default mode's keys bare, other
    modes as ``key:mode``; numbers (and None), coverage and the intervals (``<metric>_ci_low`` /
    ``<metric>_ci_high``: the headline's, and the declared headline's when the result reports another) only."""
    out: dict[str, Any] = {}
    for mode, report in scores.items():
        suffix = "" if mode == default_mode else f":{mode}"
        for key, value in report.items():
            if key in ("metric", "mode", "params", "notes"):
                continue
            if key == "coverage":
                out.update({ck + suffix: cv for ck, cv in value.items()})
            elif key == "ci" and isinstance(value, dict) and value.get("metric"):
                out[f"{value['metric']}_ci_low{suffix}"] = value.get("low")
                out[f"{value['metric']}_ci_high{suffix}"] = value.get("high")
            elif key == "other_ci" and isinstance(value, dict):
                for metric, ci in value.items():
                    if isinstance(ci, dict):
                        out[f"{metric}_ci_low{suffix}"] = ci.get("low")
                        out[f"{metric}_ci_high{suffix}"] = ci.get("high")
            elif isinstance(value, (int, float)) or value is None:
                out[key + suffix] = value
    return out


def environment() -> dict[str, Any]:
    """sciprobe's, Python's and the main packages' versions (read from the installed metadata once per process:
    a leaderboard writes this for every submission it scores)."""
    found = _package_versions()
    return {"sciprobe": __version__, "python": platform.python_version(), "packages": dict(found)}


@functools.lru_cache(maxsize=1)
def _package_versions() -> tuple[tuple[str, str | None], ...]:
    from importlib.metadata import PackageNotFoundError, version

    versions = []
    for package in ("datasets", "evaluate", "lighteval", "litellm", "transformers", "torch", "huggingface-hub"):
        try:
            versions.append((package, version(package)))
        except PackageNotFoundError:
            versions.append((package, None))
    return tuple(versions)


@dataclass
class RunInfo:
    model_id: str
    generation_parameters: dict[str, Any]
    judge_ids: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    param_adjustments: list[str] = field(default_factory=list)
    ledger: dict[str, Any] = field(default_factory=dict)       # the run's calls/cost and caps (sciprobe.llm.ledger)
    incomplete: dict[str, Any] | None = None                  # set when a cap stopped the run or calls failed
    partial: dict[str, Any] | None = None                     # {"n_predicted", "n_items"}: score --partial
    # set for a run of a reference baseline (`sciprobe baselines`): {"name", "description"}
    reference_baseline: dict[str, Any] | None = None
    # the clock that stamps the run (start, end); tests inject a fixed one so no output depends on today
    clock: Callable[[], dt.datetime] = field(default=lambda: dt.datetime.now(dt.timezone.utc), repr=False)
    start: dt.datetime | None = None

    def __post_init__(self) -> None:
        if self.start is None:
            self.start = self.clock()


def _task_entry(task: TaskResult, details: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"scores": task.score_dicts(), "provenance": task.provenance, "details": details}
    if task.analysis is not None:
        entry["items"] = task.analysis.get("items")
        if task.analysis.get("notes"):
            entry["analysis_notes"] = task.analysis["notes"]
    return entry


def write_run(out_dir: Path, run: RunInfo, tasks: list[TaskResult]) -> Path:
    """Write details for every task, then the results JSON that points at them; returns the JSON path."""
    end = run.clock()
    stamp = run.start.strftime("%Y-%m-%dT%H-%M-%S.%f")
    slug = model_slug(run.model_id)
    detail_files = {}
    for task in tasks:
        path = Path(out_dir) / "details" / slug / stamp / f"details_{task.key}_{stamp}.parquet"
        write_details(path, task.records)
        detail_files[task.key] = str(path.relative_to(out_dir))
    results = {
        "config_general": {
            "lighteval_sha": None, "model_name": run.model_id, "model_sha": None,
            "start_time": run.start.isoformat(), "end_time": end.isoformat(),
            "total_evaluation_time_secondes": str((end - run.start).total_seconds()),
            "generation_parameters": run.generation_parameters, "max_samples": None,
        },
        "results": {t.key: t.flat_metrics() for t in tasks},
        "versions": {t.key: 0 for t in tasks},
        "config_tasks": {t.key: {"name": t.task, "num_fewshot": t.num_fewshot, "headline": t.headline,
                                 "default_mode": t.default_mode, "modes": list(t.scores)} for t in tasks},
        "summary_tasks": {t.key: {"hashes": {"prompts": t.provenance.get("prompt_hash")},
                                  "effective_few_shots": float(t.num_fewshot),
                                  "non_truncated": len(t.records), "padded": 0, "non_padded": len(t.records)}
                          for t in tasks},
        "summary_general": {"n_tasks": len(tasks)},
        "sciprobe": {
            "environment": environment(),
            "model_id": run.model_id,
            "judge_ids": run.judge_ids,
            "usage": run.usage,
            "param_adjustments": run.param_adjustments,
            "ledger": run.ledger,
            "incomplete": run.incomplete,
            "partial": run.partial,
            "reference_baseline": run.reference_baseline,
            "tasks": {t.key: _task_entry(t, detail_files[t.key]) for t in tasks},
        },
    }
    path = Path(out_dir) / "results" / slug / f"results_{stamp}.json"
    atomic_write_json(path, results, compact_lists=True)
    return path
