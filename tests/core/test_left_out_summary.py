"""What a model-index leaves out, on stderr (issue 28): a few numbers listed one by one, many counted per class
of omission (the demo over four benchmarks used to print ~40 lines)."""

from __future__ import annotations

from pathlib import Path

from sciprobe.cli import LEFT_OUT_LISTED, left_out_summary

RESULTS = Path("results/demo/results_x.json")


def _line(task: str, metric: str, what: str) -> str:
    return f"{task} {metric} (strict): {what} (scored 0/4)"


def test_a_few_are_listed_one_by_one():
    lines = [_line("idrbench:ipi", "macro_f1", "n/a")]
    assert left_out_summary(lines, RESULTS) == [f"left out of the model-index: {lines[0]}"]


def test_many_are_one_line_per_class_with_a_count_and_an_example():
    lines = ([_line(f"sgibench:t{i}", "final", "n/a") for i in range(14)]
             + [_line("prescience:p", "ndcg", "NaN"), _line("scitaste:q", "wape", "NaN")])
    assert len(lines) > LEFT_OUT_LISTED
    summary = left_out_summary(lines, RESULTS)
    assert len(summary) == 2
    assert summary[0].startswith("14 number(s) left out of the model-index: n/a (e.g. sgibench:t0 final (strict))")
    assert summary[1].startswith("2 number(s) left out of the model-index: NaN")
    assert all("results_x.json" in line for line in summary)
