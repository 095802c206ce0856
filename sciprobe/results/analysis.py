"""Confidence intervals and per-group breakdowns of a task's result, computed once for every results file.

For each scored mode the task's declaration gives the headline as a statistic over items
(``TaskSpec.item_scores`` -> :class:`~sciprobe.scoring.item_scores.ItemScores`). Before anything is reported the
statistic over all items must reproduce the scorer's own headline; otherwise the mode gets no interval and a note
says why. Then one seeded bootstrap pass (:mod:`sciprobe.scoring.bootstrap`; clusters of items that share a source
when the task declares ``cluster_field``) gives the interval of the headline and of every group's score
(``TaskSpec.breakdowns``), each with its coverage.

What a results file gets (``sciprobe.tasks[KEY]``), documented in ``docs/results.md``:

- ``scores[MODE]["ci"]``: ``metric``, ``estimate``, ``low``, ``high``, ``confidence``, ``method``,
  ``n_resamples``, ``seed``, ``n_valid_resamples``, ``unit`` (``item`` or ``cluster:<field>``), ``n_units``
  (or ``low``/``high`` None and ``reason``);
- ``scores[MODE]["breakdowns"]``: ``{breakdown: {"title", "groups": {group: {"score", "ci_low", "ci_high",
  "n_items", "n_scored", "n_failed"}}}}``;
- for each of the task's ``analysed_metrics`` (metrics besides the headline, e.g. SGI-Bench's soft wet scores):
  ``scores[MODE]["other_ci"][METRIC]`` and ``scores[MODE]["other_breakdowns"][METRIC]``, blocks like the two
  above, from the same resamples;
- ``items``: the per-item table ``sciprobe compare`` and ``sciprobe report`` read: ``ids``, ``dates``,
  ``clusters``, ``groups`` and per mode the statistic, its params, its columns and failure flags.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from sciprobe.scoring.bootstrap import BootstrapSettings, bootstrap, interval, units_of
from sciprobe.scoring.item_scores import ItemScores, evaluate_statistic

if TYPE_CHECKING:
    from sciprobe.core.declaration import Benchmark, TaskSpec
    from sciprobe.results.write import TaskResult

__all__ = ["SETTINGS", "analyse", "attach_row_fields", "finish_results", "group_labels", "same_number"]

#: every results file's bootstrap: 1,000 percentile resamples, seed 0, 95%
SETTINGS = BootstrapSettings()
UNKNOWN = "unknown"


def attach_row_fields(task: TaskSpec, id_field: str, rows: Sequence[Mapping[str, Any]],
                      records: Sequence[dict[str, Any]]) -> None:
    """Give every record its row's ``record_fields``, breakdown groups and ``date`` where the runner did not
    (runners of several calls build their own records); records keep what they already hold."""
    by_id = {str(row.get(id_field)): row for row in rows}
    for record in records:
        row = by_id.get(str(record.get("id")))
        if row is None:
            continue
        for name in task.record_fields:
            if name not in record:
                record[name] = row.get(name)
        for breakdown in task.breakdowns:
            if breakdown.name not in record:
                record[breakdown.name] = breakdown.group_of(row)
        if "date" not in record:
            record["date"] = row.get("date")


def group_labels(value: Any) -> list[str]:
    """An item's groups as labels: a list counts in each of its groups; None (or nothing) is ``unknown``."""
    if isinstance(value, str) and value.startswith("[") and value.endswith("]"):
        import json

        try:  # a list stored as JSON text (details written in the all-text fallback)
            value = json.loads(value)
        except ValueError:
            pass
    values = list(value) if isinstance(value, (list, tuple, set, np.ndarray)) else [value]
    labels = []
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)) or v == "":
            continue
        label = ("yes" if v else "no") if isinstance(v, (bool, np.bool_)) else str(v)
        if label not in labels:
            labels.append(label)
    return labels or [UNKNOWN]


def same_number(a: Any, b: Any) -> bool:
    """Equal up to float summation order; two missing numbers (None/NaN) are equal."""
    def missing(x: Any) -> bool:
        return x is None or (isinstance(x, float) and math.isnan(x))

    if missing(a) or missing(b):
        return missing(a) and missing(b)
    if any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in (a, b)):
        return False
    return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a)), abs(float(b)))


def _number(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _coverage(items: ItemScores, mask: np.ndarray) -> dict[str, int]:
    scored = items.scored()
    failed = np.asarray(items.failed, dtype=bool)
    return {"n_items": int(mask.sum()), "n_scored": int((scored & mask).sum()), "n_failed": int((failed & mask).sum())}


def _mode_analysis(task: TaskSpec, result: TaskResult, mode: str, items: ItemScores, groups: Mapping[str, list],
                   unit_of_item: np.ndarray, n_units: int, unit: str, settings: BootstrapSettings,
                   metric: str | None = None) -> dict[str, Any]:
    """The interval of the result's headline (or of ``metric``) and the breakdowns of ``groups``."""
    headline = metric or result.headline
    reported = result.scores[mode].values.get(headline)
    n = len(items.failed)
    value = items.value()
    base = {"metric": headline, "estimate": _number(reported) if isinstance(reported, (int, float)) else None,
            **settings.as_dict(), "unit": unit, "n_units": n_units}
    if not isinstance(reported, (int, float)) or isinstance(reported, bool) or not math.isfinite(reported):
        reason = f"no {'headline' if metric is None else metric} number in this mode"
    elif not same_number(value, reported):
        reason = f"the item statistic ({items.statistic}) gives {value!r}, the scorer {reported!r}: no interval"
    else:
        reason = ""
    if reason:
        return {"ci": {**base, "low": None, "high": None, "n_valid_resamples": 0, "reason": reason}, "breakdowns": {}}
    masks: list[np.ndarray] = [np.ones(n, dtype=bool)]
    where: list[tuple[str, str]] = []
    for name, labels in groups.items():
        for label in sorted({g for item_groups in labels for g in item_groups}):
            masks.append(np.array([label in item_groups for item_groups in labels], dtype=bool))
            where.append((name, label))
    stack = np.stack(masks).astype(float)  # (k, n)
    cols, params = items.arrays(), items.params

    def statistic(weights: np.ndarray) -> np.ndarray:
        return evaluate_statistic(items.statistic, cols, weights, params, stack)

    samples = bootstrap(statistic, unit_of_item, n_units, settings)
    point = statistic(np.ones((1, n)))[0]
    low, high, n_valid = interval(samples[:, 0], settings.confidence)
    ci = {**base, "low": low, "high": high, "n_valid_resamples": n_valid}
    if n_valid == 0:
        ci["reason"] = "the statistic is undefined on every resample"
    breakdowns: dict[str, Any] = {}
    titles = {b.name: b.title or b.name for b in task.breakdowns}
    for j, (name, label) in enumerate(where, start=1):
        g_low, g_high, _ = interval(samples[:, j], settings.confidence)
        entry = breakdowns.setdefault(name, {"title": titles.get(name, name), "groups": {}})
        entry["groups"][label] = {"score": _number(point[j]), "ci_low": g_low, "ci_high": g_high,
                                  **_coverage(items, masks[j])}
    return {"ci": ci, "breakdowns": breakdowns}


def analyse(task: TaskSpec, result: TaskResult, settings: BootstrapSettings = SETTINGS) -> dict[str, Any]:
    """Per mode: the headline's interval and the breakdowns; plus the per-item table (see the module docstring)."""
    from sciprobe.results.evidence import call_failure

    records = [r for r in result.records if call_failure(r) is None]  # a call without an answer is no item score
    groups = {b.name: [group_labels(r.get(b.name)) for r in records] for b in task.breakdowns}
    clusters = [None if r.get(task.cluster_field) is None else str(r.get(task.cluster_field)) for r in records] \
        if task.cluster_field else None
    out: dict[str, Any] = {"modes": {}, "notes": []}
    table: dict[str, Any] = {"ids": [str(r.get("id")) for r in records],
                             "dates": [None if r.get("date") is None else str(r.get("date")) for r in records],
                             "clusters": clusters, "cluster_field": task.cluster_field, "groups": groups, "modes": {}}
    if not records:
        out["notes"].append("no items: no interval")
        return out
    unit_of_item, n_units = units_of(clusters, len(records))
    unit = f"cluster:{task.cluster_field}" if task.cluster_field else "item"
    for mode in result.scores:
        if task.item_scores is None:
            out["notes"].append(f"{mode}: the task declares no item statistic (TaskSpec.item_scores): no interval")
            continue
        items = task.item_scores(records, mode, result.scores[mode], result.headline)
        if items is None:
            out["modes"][mode] = {"ci": {"metric": result.headline, "estimate": None, **settings.as_dict(),
                                         "unit": unit, "n_units": n_units, "low": None, "high": None,
                                         "n_valid_resamples": 0, "reason": "no headline number in this mode"},
                                  "breakdowns": {}}
            continue
        if len(items.failed) != len(records):
            out["notes"].append(f"{mode}: the item statistic has {len(items.failed)} items for {len(records)} "
                                "records: no interval")
            continue
        out["modes"][mode] = _mode_analysis(task, result, mode, items, groups, unit_of_item, n_units, unit, settings)
        table["modes"][mode] = items.as_json()
        if task.headline != result.headline:  # e.g. a judged run's LACER: the declared headline is still shown
            other = _other_analysis(task, result, mode, records, {}, unit_of_item, n_units, unit, settings,
                                    task.headline)
            if other is not None:
                out["modes"][mode]["other_ci"] = {task.headline: other["ci"]}
        for metric in task.analysed_metrics:
            other = _other_analysis(task, result, mode, records, groups, unit_of_item, n_units, unit, settings,
                                    metric)
            if other is not None:
                out["modes"][mode].setdefault("other_ci", {})[metric] = other["ci"]
                out["modes"][mode].setdefault("other_breakdowns", {})[metric] = other["breakdowns"]
    out["items"] = table
    return out


def _other_analysis(task: TaskSpec, result: TaskResult, mode: str, records: Sequence[dict[str, Any]],
                    groups: Mapping[str, list], unit_of_item: np.ndarray, n_units: int, unit: str,
                    settings: BootstrapSettings, metric: str) -> dict[str, Any] | None:
    """The interval (and the breakdowns of ``groups``) of a metric other than the result's headline: the task's
    declared headline when the result reports another (a judged PreScience contribution run reports LACER; the
    leaderboard and the model-index show ROUGE-L), or one of its ``analysed_metrics``. Same resamples, same check
    that the item statistic reproduces the scorer's number; None when the task has no statistic for it."""
    assert task.item_scores is not None
    items = task.item_scores(records, mode, result.scores[mode], metric)
    if items is None or len(items.failed) != len(records):
        return None
    return _mode_analysis(task, result, mode, items, groups, unit_of_item, n_units, unit, settings, metric=metric)


def finish_results(benchmark: Benchmark, task: TaskSpec, rows: Sequence[Mapping[str, Any]],
                   results: Sequence[TaskResult], settings: BootstrapSettings = SETTINGS) -> None:
    """Every result of a task run: records completed from their rows, then analysed (``result.analysis``)."""
    id_field = benchmark.config(task.config).id_field
    for result in results:
        attach_row_fields(task, id_field, rows, result.records)
        result.analysis = analyse(task, result, settings)
