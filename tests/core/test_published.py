"""The papers' published numbers (``sciprobe/benchmarks/<name>/published.yaml``, ``sciprobe.results.published``): every
benchmark's file loads; every row is checked against the declaration and the metric's range; the transcribed tables
have their printed shape; spot values; the tables' own arithmetic; the rows against the paper text when it is
present; hostile files fail with one line; ``sciprobe paper BENCH``."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from sciprobe.core.registry import benchmark_names, get_benchmark
from sciprobe.cli.commands import main
from sciprobe.core.errors import SciprobeError
from sciprobe.results.published import SCALES, PublishedResult, published_file, published_path, read_published
from sciprobe.scoring.ranges import score_range

from golden import REPO, case_ids, load_cases

CASES = load_cases("published")
PAPERS = Path(os.environ.get("SCIPROBE_SHARED_DIR") or REPO.parent / "shared") / "papers"
#: the benchmarks whose papers are transcribed (golden counts and shapes); a new benchmark may have no paper yet
PAPER_BENCHMARKS = sorted(CASES["counts"])
#: every registered benchmark that ships published numbers
BENCHMARKS = [b for b in benchmark_names() if published_path(b).exists()]


def _rows(benchmark: str, table: str) -> list[PublishedResult]:
    return [r for r in published_file(benchmark).results if r.source.table == table]


def test_every_benchmark_with_published_numbers_has_golden_counts() -> None:
    assert set(PAPER_BENCHMARKS) <= set(BENCHMARKS) and set(BENCHMARKS) <= set(PAPER_BENCHMARKS)


@pytest.mark.parametrize("benchmark", PAPER_BENCHMARKS)
def test_every_benchmark_has_published_numbers(benchmark: str) -> None:
    loaded = published_file(benchmark)
    assert [len(loaded.results), sum(r.comparable for r in loaded.results)] == CASES["counts"][benchmark]
    assert loaded.paper.version and loaded.paper.title


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_every_row_is_valid_against_the_declaration(benchmark: str) -> None:
    """Checked here from the declaration and the ranges, not by trusting the loader's own validation."""
    declared = get_benchmark(benchmark)
    for r in published_file(benchmark).results:
        where = f"{r.source.describe()} {r.model}"
        assert r.model.strip() and r.metric.strip(), where
        assert r.source.paper and r.source.table and r.source.row, where
        low, high = SCALES[r.scale]
        assert math.isfinite(r.value) and low <= r.value <= high, where
        if r.task is not None:
            assert r.task in declared.tasks or r.task in declared.aggregates, where
        if not r.comparable:
            assert r.reason, where
            continue
        assert r.task is not None and r.setting.mode, where
        task = declared.tasks.get(r.task)
        family = task.metric if task else declared.aggregates[r.task]
        if task is not None:
            assert r.setting.mode in task.modes, where
            assert r.setting.shots in (None, task.num_fewshot), where
            assert r.setting.group is None or r.setting.group[0] in {b.name for b in task.breakdowns}, where
        declared_range = score_range(family, r.metric, r.setting.mode)
        assert declared_range is not None and declared_range.contains(r.value), where
        if math.isfinite(declared_range.low) and math.isfinite(declared_range.high):  # printed on the metric's scale
            assert SCALES[r.scale] == (declared_range.low, declared_range.high), where


@pytest.mark.parametrize("benchmark", PAPER_BENCHMARKS)
def test_transcribed_tables_have_the_printed_shape(benchmark: str) -> None:
    """rows × columns as printed, the numbers transcribed and the cells printed as "-"."""
    shapes = {t.source: [t.rows, t.columns, t.values, t.not_reported] for t in published_file(benchmark).tables}
    assert shapes == CASES["shapes"][benchmark]


@pytest.mark.parametrize("case", CASES["spot_checks"], ids=lambda c: f"{c['benchmark']}-{c['model']}-{c['metric']}")
def test_spot_checks(case: dict) -> None:
    found = [r for r in published_file(case["benchmark"]).results
             if (r.model, r.task, r.metric, r.source.table) == (case["model"], case["task"], case["metric"],
                                                                case["table"])
             and r.setting.group == (tuple(case["group"]) if case.get("group") else None)
             and r.source.row == case.get("row", r.source.row)]
    assert len(found) == 1
    assert found[0].value == pytest.approx(case["value"], abs=1e-9)
    assert found[0].comparable is case["comparable"]


def test_the_sgi_tables_agree_with_their_own_arithmetic() -> None:
    """SGI-Score = mean of the five components (two decimals); Table 6's Average = mean of its dimensions; Table 13's
    cells are whole items of each reasoning type and add up to Table 5's MCA."""
    table5: dict[str, dict[str, float]] = {}
    for r in _rows("sgibench", "Table 5"):
        table5.setdefault(r.model, {})[r.task] = r.value
    complete = {m: v for m, v in table5.items() if "sgi_score" in v}
    assert len(complete) == 19
    for model, values in complete.items():
        parts = [values[t] for t in ("deep_research", "idea_generation", "dry_experiment", "wet_experiment",
                                     "experimental_reasoning")]
        assert round(sum(parts) / 5, 2) == pytest.approx(values["sgi_score"], abs=0.0051), model
    table6: dict[str, dict[str, float]] = {}
    for r in _rows("sgibench", "Table 6"):
        table6.setdefault(r.model, {})[r.metric] = r.value
    for model, values in table6.items():
        dims = [values[d] for d in ("effectiveness", "novelty", "detailedness", "feasibility")]
        assert sum(dims) / 4 == pytest.approx(values["final"], abs=0.011), model
        assert values["final"] == table5[model]["idea_generation"], model
    sizes = {"Signal Perception": 28, "Attribute Understanding": 64, "Comparative Reasoning": 175,
             "Causal Reasoning": 24}  # the reasoning types' item counts (spec sgibench.md §1.5)
    table13: dict[str, int] = {}
    for r in _rows("sgibench", "Table 13"):
        items = r.value * sizes[r.setting.group[1]] / 100
        assert items == pytest.approx(round(items), abs=0.02), (r.model, r.setting.group)
        table13[r.model] = table13.get(r.model, 0) + round(items)
    for model, correct in table13.items():
        if model in table5:
            assert 100 * correct / 291 == pytest.approx(table5[model]["experimental_reasoning"], abs=0.006), model


def _paper(name: str) -> str:
    path = PAPERS / f"{name}.txt"
    if not path.is_file():
        pytest.skip(f"paper text not available in {PAPERS}")
    return path.read_text("utf-8")


def test_sgi_rows_are_lines_of_the_paper_text() -> None:
    """Every transcribed row of Tables 6, 7 and 10-19 is a line of the paper text: its label and values as printed."""
    lines = set(_paper("sgibench").splitlines())
    checked = 0
    for table in published_file("sgibench").tables:
        if table.source == "Table 5":  # medal glyphs break its lines (published.md)
            continue
        printed: dict[str, list[str]] = {}
        for r in _rows("sgibench", table.source):
            printed.setdefault(r.source.row, []).append(r.printed)
        for label, values in printed.items():
            assert f"{label} {' '.join(values)}" in lines, (table.source, label)
            checked += 1
    assert checked == 256


def test_idrbench_table_2_is_the_paper_text() -> None:
    text = _paper("idrbench")
    by_row: dict[str, list[str]] = {}
    for r in _rows("idrbench", "Table 2"):
        by_row.setdefault(r.source.row, []).append(r.printed)
    for label, values in by_row.items():
        # the text glues a value's asterisk to the next value: "0.646*0.623*0.650*0.623*0.585 0.661 ..."
        assert "".join(v if v.endswith("*") else f"{v} " for v in values).strip() in text, label


@pytest.mark.parametrize("case", CASES["hostile"], ids=case_ids(CASES["hostile"]))
def test_hostile_files_fail_with_one_line(tmp_path: Path, case: dict) -> None:
    path = tmp_path / "published.yaml"
    path.write_text(case["yaml"], encoding="utf-8")
    with pytest.raises(SciprobeError) as raised:
        read_published(path, "idrbench")
    assert case["error"] in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("case", CASES["valid"], ids=case_ids(CASES["valid"]))
def test_valid_variants_load(tmp_path: Path, case: dict) -> None:
    path = tmp_path / "published.yaml"
    path.write_text(case["yaml"], encoding="utf-8")
    results = read_published(path, "idrbench").results
    assert len(results) == case["results"]
    assert sum(r.comparable for r in results) == case.get("comparable", len(results))


def test_only_a_regular_file_of_bounded_size_is_read(tmp_path: Path, monkeypatch) -> None:
    import sciprobe.results.published as published

    with pytest.raises(SciprobeError, match="not a regular file"):
        read_published(tmp_path, "idrbench")
    os.mkfifo(tmp_path / "fifo.yaml")  # refused, never waited on
    with pytest.raises(SciprobeError, match="not a regular file"):
        read_published(tmp_path / "fifo.yaml", "idrbench")
    target = tmp_path / "real.yaml"
    target.write_text(CASES["valid"][0]["yaml"], encoding="utf-8")
    (tmp_path / "link.yaml").symlink_to(target)
    with pytest.raises(SciprobeError, match="cannot be read"):
        read_published(tmp_path / "link.yaml", "idrbench")
    monkeypatch.setattr(published, "MAX_FILE_BYTES", 64)
    with pytest.raises(SciprobeError, match="larger than 64 bytes"):
        read_published(target, "idrbench")
    (tmp_path / "latin1.yaml").write_bytes("format: 1 # caf\xe9".encode("latin-1"))
    with pytest.raises(SciprobeError, match="not UTF-8"):
        read_published(tmp_path / "latin1.yaml", "idrbench")


def test_deep_nesting_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "published.yaml"
    path.write_text("format: 1\npaper: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(SciprobeError, match="not valid YAML|nested too deeply"):
        read_published(path, "idrbench")


def test_paper_json_lists_the_table_2_and_random_baseline_rows(capsys) -> None:
    assert main(["paper", "idrbench", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["paper"]["version"] == "arXiv:2507.15736v3"
    cells = {(r["model"], r["task"], r["printed"], r["comparable"]) for r in listed["results"]}
    assert ("o4-mini", "ipi", "0.630", True) in cells
    assert ("random guessing", "ipi", "0.176", False) in cells
    random_row = next(r for r in listed["results"] if r["model"] == "random guessing")
    assert "positive-class F1" in random_row["reason"] and random_row["source"]["table"].startswith("§5.1")


def test_paper_table_lists_rows_with_reasons_as_footnotes(capsys) -> None:
    assert main(["paper", "sgibench", "--model", "qwen3-max", "--task", "sgi_score"]) == 0
    out = capsys.readouterr().out
    assert "1 published number(s), 0 comparable" in out
    assert "Qwen3-Max  sgi_score  sgi_score  31.97∗" in out and "no [1]" in out
    assert "[1] the experimental-reasoning result of a sibling multimodal model" in out


def test_paper_task_filter_resolves_aliases(capsys) -> None:
    assert main(["paper", "prescience", "--task", "impact_prediction", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["results"]
    assert {r["task"] for r in listed} == {"citation_prediction"} and len(listed) == 3


@pytest.mark.parametrize("argv, message", [
    (["paper", "nosuchbench"], "unknown benchmark 'nosuchbench'"),
    (["paper", "idrbench", "--task", "nosuchtask"], "unknown task idrbench:nosuchtask"),
])
def test_paper_errors_are_one_line(capsys, argv: list[str], message: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_a_benchmark_without_published_numbers_is_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    import sciprobe.results.published as published

    published.published_file.cache_clear()
    monkeypatch.setattr(published, "published_path", lambda name: tmp_path / "published.yaml")
    try:
        assert main(["paper", "idrbench"]) == 2
    finally:
        published.published_file.cache_clear()
    assert "idrbench has no published numbers" in capsys.readouterr().err
