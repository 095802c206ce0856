"""The SGI-Score row of a run's summary (``Benchmark.summary_rows``): the official SGI-Score over the components
that ran (spec sgibench.md §3.6); with a component missing or without a scored item there is no score, and the
row says which."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def sgi_score_rows(results: Sequence[Any]) -> list[dict[str, str]]:
    from sciprobe.benchmarks.sgibench.scoring.overall import COMPONENTS, sgi_score

    found = {}
    for result in results:
        component = result.task.partition(":")[2]
        if component in COMPONENTS and "official" in result.scores:
            found[component] = result.scores["official"]
    if not found:
        return []
    report = sgi_score(found, mode="official")
    value = report.values["sgi_score"]
    missing = report.values["missing_components"]
    return [{"task": "sgibench:sgi_score", "mode": "official", "metric": "sgi_score",
             "score": "n/a" if value is None else f"{value:.2f}", "95% CI": "n/a",  # no interval for the aggregate
             "scored": f"{len(COMPONENTS) - len(missing)}/{len(COMPONENTS)} components",
             "failed": ("missing " + ", ".join(missing)) if missing else "0"}]
