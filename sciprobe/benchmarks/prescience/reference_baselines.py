"""PreScience reference baselines for ``sciprobe baselines prescience``: the non-LLM baselines of
:mod:`.baselines` (read from the release files, history rule included; ``--source``, default the bundled sample),
turned into the records each task's scorer reads, for the built instance rows (``--data``):

- ``history-frequency``: T2 co-authorship frequency, T3 references of the team's recent papers, T5 co-citation
  frequency (popularity fallback);
- ``random-reference``: T1, one of the target's influential references, drawn with a seeded generator;
- ``linear``: T4 least squares on bibliometric features (fitted on the train targets), T6/T7 per-unit linear
  trend of the monthly history counts;
- ``mean``: T4 the mean training label, T6/T7 one constant count for every unit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sciprobe.core.declaration import Baseline, BaselineInput

_GOLD = {"collaborator_prediction": "gold_author_ids", "prior_work_selection": "gold_corpus_ids",
         "future_combination": "gold_corpus_ids", "citation_prediction": "label_12m",
         "topic_trends": "forecast_count", "topic_pair_trends": "forecast_count"}


def _gold(task: str, row: Mapping[str, Any]) -> Any:
    if task == "contribution_generation":
        return {"title": row.get("title") or "", "abstract": row.get("abstract") or ""}
    return row[_GOLD[task]]


def _records(given: BaselineInput, variant: str | None) -> list[dict[str, Any]]:
    from sciprobe.benchmarks.prescience.offline_scoring import TaskData

    task = given.task.name
    data = TaskData(given.source, task)
    predictions = data.baseline_predictions(variant)
    key = given.benchmark.config(given.task.config).id_field
    records = []
    for row in given.rows:
        item = str(row[key])
        record: dict[str, Any] = {"id": item, "gold": _gold(task, row), "prediction": predictions.get(item)}
        if task.startswith("topic"):
            record["history"] = row["history_count"]
        record["error"] = None if item in predictions else "the baseline made no prediction for this item (do " \
                                                           "--data and --source hold the same release?)"
        records.append(record)
    return records


def baselines() -> list[Baseline]:
    return [
        Baseline("history-frequency", "rankings by frequency in the history before t_p (co-authorship, the team's "
                                      "references, co-citation)",
                 ("collaborator_prediction", "prior_work_selection", "future_combination"),
                 records=lambda given: _records(given, None)),
        Baseline("random-reference", "one of the target's influential references (seeded) as the generated "
                                     "contribution", ("contribution_generation",),
                 records=lambda given: _records(given, None)),
        Baseline("linear", "least squares on bibliometric features (citations); per-unit linear trend of the "
                           "monthly history counts (topics, topic pairs)",
                 ("citation_prediction", "topic_trends", "topic_pair_trends"),
                 records=lambda given: _records(given, "linear")),
        Baseline("mean", "the mean training label (citations); one constant forecast count for every unit "
                         "(topics, topic pairs)", ("citation_prediction", "topic_trends", "topic_pair_trends"),
                 records=lambda given: _records(given, "mean")),
    ]
