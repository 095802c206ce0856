"""The table the CLI prints after a run: headline metric, mode and coverage per task."""

from __future__ import annotations

from typing import Sequence

from sciprobe.results import TaskResult


def summary_rows(results: Sequence[TaskResult]) -> list[dict[str, str]]:
    rows = []
    for result in results:
        for mode, report in result.scores.items():
            value = report.values.get(result.headline)
            cov = report.coverage
            rows.append({
                # a task a --max-calls/--max-cost cap cut short says so next to its score
                "task": result.key + (" (INCOMPLETE)" if result.provenance.get("incomplete") else ""), "mode": mode, "metric": result.headline,
                "score": "n/a" if value is None or value != value else f"{value:.3f}",  # NaN: nothing scored
                "scored": f"{cov.n_scored}/{cov.n_items}",
                "failed": f"{cov.n_failed} ({cov.failure_rate:.0%})",
            })
    return rows


def format_table(rows: list[dict[str, str]]) -> str:
    if not rows:
        return "(no results)"
    headers = list(rows[0])
    widths = {h: max(len(h), *(len(r[h]) for r in rows)) for h in headers}
    line = lambda cells: "  ".join(c.ljust(widths[h]) for h, c in zip(headers, cells))  # noqa: E731
    return "\n".join([line(headers), line(["-" * widths[h] for h in headers]),
                      *(line([r[h] for h in headers]) for r in rows)])


def print_summary(results: Sequence[TaskResult]) -> None:
    print(format_table(summary_rows(results)))


def benchmark_tables(results: Sequence[TaskResult]) -> str:
    """One table per benchmark (in run order), each with the rows its declaration's ``summary_rows`` hook adds
    (e.g. an aggregate over the tasks that ran)."""
    import importlib

    from sciprobe.benchmarks import get_benchmark

    groups: dict[str, list[TaskResult]] = {}
    for result in results:
        groups.setdefault(result.task.partition(":")[0], []).append(result)
    blocks = []
    for name, group in groups.items():
        benchmark = get_benchmark(name)
        rows = summary_rows(group)
        if benchmark.summary_rows:
            module, _, function = benchmark.summary_rows.partition(":")
            rows += getattr(importlib.import_module(module), function)(group)
        blocks.append(f"{benchmark.title}\n{format_table(rows)}")
    return "\n\n".join(blocks)
