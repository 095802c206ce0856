"""The table the CLI prints after a run: headline metric, its 95% bootstrap interval, mode and coverage per task."""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag without importing typing: these modules are on the CLI's start-up path
if TYPE_CHECKING:  # `sciprobe tasks` prints its table with format_table and needs no results
    from typing import Sequence

    from sciprobe.results.write import TaskResult


def _interval(result: TaskResult, mode: str) -> str:
    """The headline's 95% bootstrap interval (``sciprobe.results.analysis``), or n/a."""
    ci = ((result.analysis or {}).get("modes", {}).get(mode) or {}).get("ci") or {}
    if ci.get("low") is None or ci.get("high") is None:
        return "n/a"
    return f"[{ci['low']:.3f}, {ci['high']:.3f}]"


def summary_rows(results: Sequence[TaskResult]) -> list[dict[str, str]]:
    from sciprobe.results.evidence import coverage_text

    rows = []
    for result in results:
        for mode, report in result.scores.items():
            value = report.values.get(result.headline)
            cov = report.coverage
            rows.append({
                # an incomplete task (a cap cut it short, calls got no answer) or a partial score says so, and so
                # does a run on upstream templates that differ from the pin
                "task": result.key + status_label(result.provenance) + modified_prompts_label(result.provenance),
                "mode": mode, "metric": result.headline,
                "score": "n/a" if value is None or value != value else f"{value:.3f}",  # NaN: nothing scored
                "95% CI": _interval(result, mode),
                # against the dataset: a --limit sample reads 120/1120 (limit), never 120/120
                "scored": coverage_text(cov.as_dict(), result.provenance),
                "failed": f"{cov.n_failed} ({cov.failure_rate:.0%})",
            })
    return rows


def status_label(provenance: dict) -> str:
    """`` (INCOMPLETE)`` (`` (INCOMPLETE: 3/3 no answer)`` when calls failed; the score then stands on the answered
    items only), `` (PARTIAL 10/1120)`` or nothing for a complete result (sciprobe.results.evidence)."""
    from sciprobe.results.evidence import INCOMPLETE, PARTIAL, result_status

    status = result_status(provenance)
    if status == INCOMPLETE:
        failures = provenance.get("call_failures") or {}
        return f" (INCOMPLETE: {failures['n']}/{failures['n_items']} no answer)" if failures else " (INCOMPLETE)"
    if status == PARTIAL:
        partial = provenance.get("partial") or {}
        return f" (PARTIAL {partial.get('n_predicted', '?')}/{partial.get('n_items', '?')})"
    return ""


def modified_prompts_label(provenance: dict) -> str:
    """`` (MODIFIED upstream prompts)`` for a run on upstream templates that differ from the pin, else nothing."""
    from sciprobe.core.prompt_sets import MODIFIED_PROMPT_SET, PROMPT_SET_TITLES, recorded_prompt_set

    name = recorded_prompt_set(provenance)
    return f" ({PROMPT_SET_TITLES[name]})" if name == MODIFIED_PROMPT_SET else ""


def format_table(rows: list[dict[str, str]]) -> str:
    """Rows as aligned text columns (the first row's keys, in order); a cell a row does not have is blank."""
    if not rows:
        return "(no results)"
    headers = list(rows[0])
    widths = {h: max(len(h), *(len(r.get(h, "")) for r in rows)) for h in headers}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(widths[h]) for h, c in zip(headers, cells)).rstrip()

    return "\n".join([line(headers), line(["-" * widths[h] for h in headers]),
                      *(line([r.get(h, "") for h in headers]) for r in rows)])


def print_summary(results: Sequence[TaskResult]) -> None:
    print(format_table(summary_rows(results)))
    for line in mode_call_lines(results):
        print(line)


def mode_call_lines(results: Sequence[TaskResult]) -> list[str]:
    """One line per task whose modes each asked their own calls (I2R: a tournament per mode), when more than one
    mode ran: how many calls each mode shared with an earlier one (answered from the cache) and how many were
    its own (``provenance["i2r_calls"]``, sciprobe.benchmarks.idrbench.i2r.mode_call_counts)."""
    groups: dict[str, list[TaskResult]] = {}
    for result in results:
        if isinstance(result.provenance.get("i2r_calls"), dict):
            groups.setdefault(result.task.split(":")[0] + ":" + result.task.split(":")[1], []).append(result)
    lines = []
    for task, group in groups.items():
        if len(group) < 2:
            continue
        parts = [f"{r.provenance.get('mode', r.default_mode)} {r.provenance['i2r_calls']['shared']} shared + "
                 f"{r.provenance['i2r_calls']['extra']} extra" for r in group]
        lines.append(f"{task} calls by mode: {'; '.join(parts)} (shared: the same comparison as an earlier mode, "
                     "from the cache)")
    return lines


def benchmark_tables(results: Sequence[TaskResult]) -> str:
    """One table per benchmark (in run order), each with the rows its declaration's ``summary_rows`` hook adds
    (e.g. an aggregate over the tasks that ran)."""
    from sciprobe.core.registry import get_benchmark
    from sciprobe.core.lazy import resolve

    groups: dict[str, list[TaskResult]] = {}
    for result in results:
        groups.setdefault(result.task.partition(":")[0], []).append(result)
    blocks = []
    for name, group in groups.items():
        benchmark = get_benchmark(name)
        rows = summary_rows(group)
        if benchmark.summary_rows:
            rows += resolve(benchmark.summary_rows)(group)
        blocks.append(f"{benchmark.title}\n{format_table(rows)}")
    return "\n\n".join(blocks)
