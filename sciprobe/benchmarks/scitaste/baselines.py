"""SciTaste-Bench reference baselines (``sciprobe baselines scitaste``; spec ``scitaste.md`` §2.2 answer format):

- ``mean``: every paper gets the mean composite and mean dimension scores of the **backup pool** (the 5,700
  papers that are not evaluated, config ``backup``), so no gold of an evaluated paper is used;
- ``discipline-mean``: the same means per discipline (the pool's overall mean where the pool has no paper of
  that discipline).

Each prediction is the canonical JSON answer (``score``, ``dimensions``), read by the task's own parser.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sciprobe.core.declaration import Baseline, BaselineInput
from sciprobe.core.errors import SciprobeError


def _pool(given: BaselineInput) -> list[dict[str, Any]]:
    import datasets

    from sciprobe.data.task_data import sample_dataset_dir

    location = given.data or str(sample_dataset_dir(given.benchmark))
    try:
        return datasets.load_dataset(location, "backup", split="test").to_list()
    except ValueError as exc:
        raise SciprobeError(f"the SciTaste mean baselines need the backup pool (config 'backup') in {location}: "
                            f"{str(exc).splitlines()[0]}") from None


def _means(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    from sciprobe.benchmarks.scitaste.scoring.composite import DIMENSIONS

    n = len(rows)
    return {"score": round(sum(float(r["gold_total"]) for r in rows) / n, 4),
            "dimensions": {d: round(sum(float(r["gold_dims"][d]) for r in rows) / n, 4) for d in DIMENSIONS}}


def _answer(means: Mapping[str, Any], how: str) -> dict[str, str]:
    return {"response": json.dumps({**means, "reasoning": f"reference baseline: {how}"})}


def mean_predictions(given: BaselineInput) -> dict[str, dict[str, str]]:
    pool = _pool(given)
    if not pool:
        raise SciprobeError("the backup pool is empty")
    means = _means(pool)
    return {str(row["id"]): _answer(means, "backup-pool mean") for row in given.rows}


def discipline_mean_predictions(given: BaselineInput) -> dict[str, dict[str, str]]:
    from sciprobe.benchmarks.scitaste.source import discipline_name

    pool = _pool(given)
    if not pool:
        raise SciprobeError("the backup pool is empty")
    overall = _means(pool)
    by_discipline: dict[str, list] = {}
    for row in pool:
        by_discipline.setdefault(discipline_name(row["discipline"]), []).append(row)
    means = {d: _means(rows) for d, rows in by_discipline.items()}
    out = {}
    for row in given.rows:
        name = discipline_name(row["discipline"])
        out[str(row["id"])] = _answer(means.get(name, overall), f"backup-pool mean of {name}"
                                      if name in means else "backup-pool mean (no paper of this discipline)")
    return out


def baselines() -> list[Baseline]:
    return [
        Baseline("mean", "the backup pool's mean composite and dimension scores for every paper", ("pure_qa",),
                 mean_predictions),
        Baseline("discipline-mean", "the backup pool's per-discipline mean composite and dimension scores",
                 ("pure_qa",), discipline_mean_predictions),
    ]
