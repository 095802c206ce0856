"""The SGI-Score row the demo prints under SGI-Bench's table (``Benchmark.summary_rows``) has the table's columns,
and the per-benchmark tables print with it (the demo ended in a KeyError once the table gained its interval
column)."""

from __future__ import annotations

from sciprobe.benchmarks.sgibench.demo import sgi_score_rows
from sciprobe.results.write import TaskResult
from sciprobe.scoring.score_report import Coverage, ScoreReport
from sciprobe.benchmarks.sgibench.scoring.overall import COMPONENTS
from sciprobe.results.summary import benchmark_tables, format_table, summary_rows

HEADLINES = {"deep_research": "exact_match", "idea_generation": "final", "dry_experiment": "passall_at_5",
             "wet_experiment": "final", "experimental_reasoning": "mca"}


def _results() -> list[TaskResult]:
    return [TaskResult(f"sgibench:{name}", 0,
                       {"official": ScoreReport("sgi_score", "official", {HEADLINES[name]: 10.0 * (i + 1)},
                                                Coverage(1, 1, 0))},
                       [], {}, HEADLINES[name]) for i, name in enumerate(COMPONENTS)]


def test_the_sgi_score_row_has_the_tables_columns() -> None:
    results = _results()
    (row,) = sgi_score_rows(results)
    assert list(row) == list(summary_rows(results)[0])
    assert row["score"] == "30.00" and row["95% CI"] == "n/a" and row["scored"] == "5/5 components"


def test_benchmark_tables_print_the_sgi_score_under_the_components() -> None:
    text = benchmark_tables(_results())
    assert text.splitlines()[0] == "SGI-Bench" and "95% CI" in text.splitlines()[1]
    assert text.splitlines()[-1].split()[:4] == ["sgibench:sgi_score", "official", "sgi_score", "30.00"]


def test_a_cell_a_row_lacks_is_blank() -> None:
    assert format_table([{"a": "1", "b": "2"}, {"a": "3"}]).splitlines()[-1] == "3"
