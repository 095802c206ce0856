"""Issue 23.1 and 22.5: a subset of the data is never taken for the benchmark. ``--limit`` takes a seeded, stratified
sample (never the first N rows), says so, and records it; coverage is shown against the dataset (``8/16 (limit)``);
the evidence gate (``sciprobe.results.evidence.rank_verdict``) shows a sample unranked, never exports it, ranks a
cutoff
result only among its cutoff's results, and checks completeness against the pinned data's items, not the file's
counts. Issue 23.9a: ``export --mode``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from golden import load_cases
from sciprobe.cli.commands import main
from sciprobe.core.errors import SciprobeError
from sciprobe.testing.stub_server import StubServer

VERDICTS = load_cases("evidence_subsets", "verdicts")
COVERAGE = load_cases("evidence_subsets", "coverage")
ALWAYS_NO = 'Your verdict: No\nConfidence score: 60\nSubject: ["Physics"]'


@pytest.mark.parametrize("case", VERDICTS, ids=[c["name"] for c in VERDICTS])
def test_the_gate_decides_what_a_result_may_be_used_for(case: dict) -> None:
    from sciprobe.results.evidence import PinnedItems, rank_verdict

    pinned = case.get("pinned")
    verdict = rank_verdict(case["provenance"], scored_ids=case.get("scored_ids"), n_items=case.get("n_items", ()),
                           pinned=None if pinned is None else PinnedItems(frozenset(pinned["ids"]),
                                                                          pinned["n_total"]))
    expect = case["expect"]
    assert (verdict.shown, verdict.rankable, verdict.cause) == (expect["shown"], expect["rankable"], expect["cause"])
    if "group" in expect:
        assert verdict.group == expect["group"]
    assert expect.get("reason", "") in verdict.reason and "\n" not in verdict.reason


@pytest.mark.parametrize("case", COVERAGE, ids=[c["name"] for c in COVERAGE])
def test_coverage_is_shown_against_the_dataset(case: dict) -> None:
    from sciprobe.results.evidence import coverage_text

    assert coverage_text(case["coverage"], case["provenance"]) == case["expect"]


@pytest.fixture
def no_first(tmp_path: Path) -> Path:
    """The bundled IPI sample with its gold "no" items first (as the release file's first 120 are): a build whose
    first rows are no fair sample of it."""
    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.build import build_benchmark

    bench = get_benchmark("idrbench")
    source = tmp_path / "release"
    shutil.copytree(bench.sample_source, source)
    rows = json.loads((source / "data_exp_1.json").read_text("utf-8"))
    rows.sort(key=lambda r: str(r["y_true"]).lower() not in ("no", "0", "false"))
    (source / "data_exp_1.json").write_text(json.dumps(rows), "utf-8")
    build_benchmark(bench, source, tmp_path / "build")
    return tmp_path / "build"


def _golds(data: str | None, limit: int | None) -> list[str]:
    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.task_data import load_task_data

    bench = get_benchmark("idrbench")
    task = bench.task("ipi")
    return [task.gold(r) for r in load_task_data(bench, task, data, limit=limit).rows]


def test_limit_takes_a_seeded_stratified_sample(no_first: Path) -> None:
    every = _golds(str(no_first), None)
    assert every[:8] == ["no"] * 8 and every.count("yes") == 6  # the first 8 rows are one class only
    sample = _golds(str(no_first), 8)
    assert sample.count("yes") == 3 and sample.count("no") == 5  # each label keeps its share of the 16
    assert _golds(str(no_first), 8) == sample  # seeded: the same items every time


def test_a_limit_run_is_labelled_never_ranked_above_a_full_run(no_first: Path, tmp_path: Path, capsys,
                                                               monkeypatch) -> None:
    """Issue 23.1 as reported: an always-"no" model with `--limit` on data whose first rows are all "no" scored
    0.500 strict, showed 120/120, and `leaderboard --import` ranked it first, above a full run."""
    from sciprobe.leaderboard import tables
    from sciprobe.leaderboard.importer import import_results_dir
    from sciprobe.leaderboard.store import SQLiteStore

    with StubServer(reply=lambda body: ALWAYS_NO) as stub:
        model = f"openai/always-no,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", "idrbench:ipi", "--model", model, "--data", str(no_first), "--limit", "8",
                     "--output-dir", str(tmp_path / "limited")]) == 0
    captured = capsys.readouterr()
    strict = next(line for line in captured.out.splitlines() if line.startswith("idrbench:ipi|0  strict"))
    # against the dataset; a fair sample of it (3 yes, 5 no), where the first 8 rows gave 0.500
    assert "8/16 (limit)" in strict and strict.split()[3] == "0.385"
    assert "LIMITED: idrbench:ipi|0 8 of 16 items (a seeded sample, stratified by gold label, seed 0): not the " \
           "benchmark" in captured.err
    assert not list((tmp_path / "limited").rglob("*.model-index.yaml"))
    [path] = (tmp_path / "limited" / "results").rglob("results_*.json")
    provenance = json.loads(path.read_text())["sciprobe"]["tasks"]["idrbench:ipi|0"]["provenance"]
    assert provenance["limit"] == {"n": 8, "seed": 0, "strategy": "stratified by gold label"}
    assert provenance["subset"] == {"kind": "limit", "n": 8, "of": 16}
    assert main(["report", str(path), "--out", str(tmp_path / "report")]) == 0
    assert "<td class=\"num\">8/16 (limit)</td>" in (tmp_path / "report" / "index.html").read_text()
    assert main(["export", str(path), "--dataset-id", "org/idrbench"]) == 2
    assert "not the benchmark" in capsys.readouterr().err
    assert main(["export", str(path), "--dataset-id", "org/idrbench", "--format", "eval-results",
                 "--allow-sample"]) == 0
    assert "a --limit SAMPLE of 8 of 16 items, stratified by gold label, seed 0" in capsys.readouterr().out

    with StubServer(reply=lambda body: ALWAYS_NO.replace("No", "Yes")) as stub:  # scores below the sample
        model = f"openai/full-run,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", "idrbench:ipi", "--model", model, "--data", str(no_first),
                     "--output-dir", str(tmp_path / "full")]) == 0
    capsys.readouterr()
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DATA", f"idrbench={no_first}")
    store = SQLiteStore(tmp_path / "store")
    warnings: list[str] = []
    assert import_results_dir(store, tmp_path / "limited", warn=warnings.append) == 1
    assert import_results_dir(store, tmp_path / "full", warn=warnings.append) == 1
    assert len(warnings) == 1 and "imported unranked: a --limit sample: 8 of 16 items" in warnings[0]
    frame = tables.leaderboard_frame(store.list_results(), tables.task_columns(["idrbench"]))
    assert list(frame["Model"])[:2] == ["openai/full-run", "openai/always-no"]
    assert list(frame[tables.TYPE_COLUMN])[:2] == [tables.MODEL_TYPE, tables.SAMPLE_TYPE]
    assert list(frame["ipi coverage"])[:2] == ["16/16", "8/16 (limit)"]
    assert list(tables.model_rows(frame)["Model"]) == ["openai/full-run"]


def test_an_import_is_checked_against_the_pinned_items_not_the_files_counts(tmp_path: Path, capsys) -> None:
    """Issue 22.5: a results file claiming 3 of 3 items against a 16-item dataset imported as complete."""
    from sciprobe.leaderboard.importer import import_results_file
    from sciprobe.leaderboard.store import SQLiteStore

    with StubServer(reply=lambda body: ALWAYS_NO) as stub:
        model = f"openai/three,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", "idrbench:ipi", "--model", model, "--limit", "3",
                     "--output-dir", str(tmp_path / "run")]) == 0
    [path] = (tmp_path / "run" / "results").rglob("results_*.json")
    data = json.loads(path.read_text())
    prov = data["sciprobe"]["tasks"]["idrbench:ipi|0"]["provenance"]
    prov.update({"limit": None, "subset": None})  # as if it were every item: 3 of 3
    prov["cutoff"].update({"n_items_before": 3, "n_items_after": 3})
    path.write_text(json.dumps(data))
    store = SQLiteStore(tmp_path / "store")
    warnings: list[str] = []
    assert import_results_file(store, path, warn=warnings.append) == []
    assert store.list_results() == []
    assert len(warnings) == 1 and "left out: it covers 3 of the 16 items of this leaderboard's data (the " \
                                  "bundled idrbench sample (a demo)) but says it covers all of them" in warnings[0]


def test_export_mode_exports_the_mode_that_has_a_number(tmp_path: Path, capsys) -> None:
    """Issue 23.9a: eval-results refused a result whose official macro-F1 is n/a although strict had a number."""
    import yaml

    with StubServer(reply=lambda body: "I would rather not say.") as stub:
        model = f"openai/stub-model,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", "idrbench:ipi", "--model", model, "--output-dir", str(tmp_path / "o")]) == 0
    [path] = (tmp_path / "o" / "results").rglob("results_*.json")
    capsys.readouterr()
    args = ["export", str(path), "--format", "eval-results", "--dataset-id", "org/idrbench"]
    assert main(args) == 2
    assert "these modes have one: strict (--mode MODE)" in capsys.readouterr().err
    assert main([*args, "--mode", "strict"]) == 0
    [entry] = yaml.safe_load(capsys.readouterr().out)
    assert isinstance(entry["value"], float) and "macro_f1 (strict mode)" in entry["notes"]
    assert main([*args, "--mode", "ranked"]) == 0  # IPI's leaderboard mode is strict
    assert yaml.safe_load(capsys.readouterr().out) == [entry]
    assert main([*args, "--mode", "corrected"]) == 2
    assert "idrbench:ipi has no mode 'corrected' in this results file (modes: official, strict)" in \
        capsys.readouterr().err
    assert main(["export", str(path), "--mode", "strict"]) == 0
    index = yaml.safe_load(capsys.readouterr().out)
    names = [m["name"] for r in index["model-index"][0]["results"] for m in r["metrics"]]
    assert names and all(name.endswith("(strict)") for name in names)


def test_export_mode_takes_an_i2r_mode_from_its_own_entry(tmp_path: Path) -> None:
    """I2R writes one entry per mode (``idrbench:i2r`` official, ``idrbench:i2r:corrected``): --mode corrected
    exports the corrected entry and drops the official one, instead of refusing the task."""
    import yaml
    from huggingface_hub import parse_eval_result_entries
    from test_export import write_results

    from sciprobe.results.export import export_results

    path = write_results(tmp_path / "runs", revision="0" * 40, dataset="org/idrbench")
    entries = parse_eval_result_entries(yaml.safe_load(export_results(path, "eval-results", mode="ranked")))
    assert [(e.task_id, e.value) for e in entries] == [("ipi", 0.5), ("i2r", 0.45)]  # strict, corrected
    with pytest.raises(SciprobeError, match="idrbench:ipi has no mode 'corrected'"):  # one task lacks it
        export_results(path, "eval-results", mode="corrected")
