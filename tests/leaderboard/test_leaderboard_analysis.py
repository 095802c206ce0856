"""Issue 16 on the leaderboard: the 95% interval beside every score, the breakdown view, and reference baselines as
reference rows on every tab (computed on each tab's own data, never ranked, owned by nobody).

Results come from the real paths: predictions submitted to the service (scored by ``score_file``), results files
of ``sciprobe baselines`` imported, reference baselines computed by ``ensure_baselines`` on the pinned data."""

from __future__ import annotations

import copy
import json
import math
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from sciprobe.run.baselines import run_baselines
from sciprobe.core.errors import SciprobeError
from sciprobe.leaderboard import breakdowns, tables
from sciprobe.leaderboard.app import LeaderboardService, Settings
from sciprobe.leaderboard.baseline_runs import ensure_baselines, ensure_benchmark
from sciprobe.leaderboard.importer import import_results_dir
from sciprobe.leaderboard.intervals import headline_interval, interval_text
from sciprobe.leaderboard.pins import FOLDER, DataPin, data_pin
from sciprobe.leaderboard.queue import data_for
from sciprobe.leaderboard.records import ResultRecord
from sciprobe.leaderboard.store import SCHEMA_VERSION, SQLiteStore
from sciprobe.leaderboard.validation import SubmissionError, task_target, validate_model_info

IPI = "idrbench:ipi"


def ipi_predictions(path: Path, answer) -> Path:
    ids = task_target(IPI, data_for("idrbench")).ids
    path.write_text("".join(json.dumps({"id": i, "prediction": answer(k)}) + "\n" for k, i in enumerate(ids)))
    return path


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """Two IPI submissions scored by the service (no start-up baselines: LeaderboardService, not build_app), plus
    the files `sciprobe baselines idrbench` writes on the same data, imported with `leaderboard --import`'s code."""
    root = tmp_path_factory.mktemp("lb-analysis")
    service = LeaderboardService(SQLiteStore(root / "store"), Settings(auth="local"), ["idrbench"])
    for user, model, answer in (("alice", "org/good", lambda k: "yes" if k % 2 else "no"),
                                ("bob", "org/all-yes", lambda k: "yes")):
        status, request = service.submit(user, IPI, str(ipi_predictions(root / f"{user}.jsonl", answer)), model)
        assert request["status"] == "FINISHED", status
    out = root / "baselines"
    run_baselines("idrbench", data=data_for("idrbench"), output_dir=out, log=lambda _: None)
    assert import_results_dir(service.store, out) > 0
    return service, out


def _file_task(out: Path, baseline: str, key: str) -> dict:
    path = next((out / "results" / f"reference-baseline__{baseline}").glob("results_*.json"))
    return json.loads(path.read_text())["sciprobe"]["tasks"][key]


# ---------------------------------------------------------------- 1. the interval beside every score

def test_every_score_has_its_95_percent_interval_beside_it(scored):
    service, out = scored
    frame = service.table("idrbench")
    headers = list(frame.columns)
    for column in ("ipi macro_f1", "i2r mrr"):
        assert headers[headers.index(column) + 1] == f"{column} 95% CI"  # right beside the score
    stored = {r.row_id: r for r in service.results() if r.task == IPI}
    checked = 0
    for _, row in frame.iterrows():
        if row["Row"] not in stored:  # title-similarity ranks I2R only: no IPI result, an empty cell
            assert pd.isna(row["ipi macro_f1"]) and row["ipi macro_f1 95% CI"] == row["ipi coverage"] == ""
            continue
        report = stored[row["Row"]].scores["strict"]  # the ranked mode of IPI
        assert row["ipi macro_f1"] == pytest.approx(report["macro_f1"], abs=5e-4)  # shown with 3 decimals
        ci = report["ci"]
        assert ci["metric"] == "macro_f1" and ci["confidence"] == 0.95
        assert row["ipi macro_f1 95% CI"] == f"[{ci['low']:.3f}, {ci['high']:.3f}]"
        checked += 1
    assert checked == 4  # two models, two reference baselines (random, majority) scored on IPI
    # the numbers are the results file's own
    references = tables.reference_rows(frame)
    majority = references[references["Model"] == "majority (reference baseline)"].iloc[0]
    ci = _file_task(out, "majority", "idrbench:ipi|0")["scores"]["strict"]["ci"]
    assert majority["ipi macro_f1 95% CI"] == f"[{ci['low']:.3f}, {ci['high']:.3f}]"
    # the overview shows one score per task, with its interval beside it
    overview = service.table("overview")
    assert list(overview["idrbench:ipi macro_f1 95% CI"]) == list(frame["ipi macro_f1 95% CI"])
    # the score column stays numeric, so the table sorts by it
    assert tables.model_rows(frame)["ipi macro_f1"].dtype.kind == "f"
    scores = list(tables.model_rows(frame)["ipi macro_f1"])
    assert scores == sorted(scores, reverse=True)


def _record(report: dict, model: str = "org/m") -> ResultRecord:
    return ResultRecord(request_id="r", user="u", model_name=model, task=IPI, benchmark="idrbench",
                        benchmark_version="1.0.0", dataset_fingerprint="f" * 64, headline="macro_f1",
                        default_mode="official", scores={"official": report, "strict": report}, provenance={})


CI = {"metric": "macro_f1", "estimate": 0.5, "low": 0.41, "high": 0.58, "confidence": 0.95}
COVERAGE = {"n_items": 16, "n_scored": 16, "n_failed": 0}


@pytest.mark.parametrize("ci", [
    None,                                                                   # a result from before intervals
    {**CI, "low": None, "high": None, "reason": "no headline number in this mode"},
    {**CI, "estimate": 0.9},                                                # the interval of another number
    {**CI, "metric": "accuracy"},                                           # of another metric
    {**CI, "low": 0.7, "high": 0.2},                                        # upside down
    {**CI, "low": "0.4"}, {**CI, "high": 10 ** 400}, {**CI, "low": True},   # not numbers
    "[0.1, 0.9]",                                                           # not a block
], ids=["missing", "reason", "other_estimate", "other_metric", "inverted", "string", "huge", "bool", "text"])
def test_no_interval_shows_na_never_a_made_up_one(ci):
    report = {"macro_f1": 0.5, "coverage": COVERAGE, **({} if ci is None else {"ci": ci})}
    frame = tables.leaderboard_frame([_record(report)], tables.task_columns(["idrbench"]))
    assert frame.iloc[0]["ipi macro_f1"] == 0.5 and frame.iloc[0]["ipi macro_f1 95% CI"] == "n/a"
    assert headline_interval(report, "macro_f1") == "n/a"


def test_interval_text():
    assert headline_interval({"macro_f1": 0.5, "ci": CI}, "macro_f1") == "[0.410, 0.580]"
    assert interval_text(45.21, 61.06) == "[45.2, 61.1]"  # percentages (SGI, SciTaste) with one decimal
    assert interval_text(0.1, 0.2, 0.9) == "[0.100, 0.200] (90%)"
    assert interval_text(None, 0.2) == "n/a" and interval_text(float("nan"), 0.2) == "n/a"


def test_an_old_store_opens_its_rows_show_na_and_its_imported_baselines_become_reference_rows(tmp_path):
    """A schema-1 store: results without intervals, and a baseline imported before the leaderboard knew baselines
    (owned by the importing user, flagged only in its provenance). Opening it migrates: n/a intervals, and the
    baseline becomes a reference row owned by nobody."""
    folder = tmp_path / "old"
    store = SQLiteStore(folder)
    store.add_result(_record({"macro_f1": 0.5, "coverage": COVERAGE}))
    baseline = _record({"macro_f1": 0.4, "coverage": COVERAGE, "ci": {**CI, "estimate": 0.4}},
                       model="reference-baseline/random")
    baseline.user, baseline.provenance = "local", {"reference_baseline": {"name": "random", "description": "coin"}}
    body = baseline.to_json()
    del body["sciprobe"]["reference_baseline"]  # as the older importer stored it
    store.close()
    con = sqlite3.connect(folder / SQLiteStore.FILE_NAME)
    con.execute("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?)", ("old-id", "import-x", "idrbench", 2.0,
                                                                   json.dumps(body), None))
    con.execute("PRAGMA user_version = 1")
    con.commit()
    con.close()

    reopened = SQLiteStore(folder)
    assert reopened._connection().execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
    results = reopened.list_results()
    assert len(results) == 2
    adopted = next(r for r in results if r.model_name == "reference-baseline/random")
    assert adopted.is_reference and adopted.user == "" and reopened.get_result(adopted.result_id).is_reference
    frame = tables.leaderboard_frame(results, tables.task_columns(["idrbench"]))
    assert list(frame["Model"]) == ["org/m", "random (reference baseline)"]
    assert list(frame["ipi macro_f1 95% CI"]) == ["n/a", "[0.410, 0.580]"]
    assert list(frame["Submitter"]) == ["u", "—"]


# ---------------------------------------------------------------- 2. the breakdown view

def test_breakdown_view_shows_every_group_with_interval_and_coverage(scored):
    service, _ = scored
    column = next(c for c in breakdowns.breakdown_columns(service.all_columns) if c.ref == IPI)
    assert breakdowns.breakdowns_of(IPI) == [("discipline", "disciplines")]
    frame = breakdowns.breakdown_frame(service.results(), column, tables.DEFAULT_MODE, "disciplines")
    assert len(frame) == 4 and list(frame["Type"]) == ["model", "model", "reference baseline", "reference baseline"]
    stored = {r.row_id: r for r in service.results() if r.task == IPI}
    groups_seen = 0
    for _, row in frame.iterrows():
        report = stored[row["Row"]].scores["strict"]
        assert row["All items"] == pytest.approx(report["macro_f1"], abs=5e-4)  # macro-F1 shows 3 decimals
        assert row["All items coverage"] == "16/16"
        for label, group in report["breakdowns"]["disciplines"]["groups"].items():
            label = frame.attrs["groups"][label]  # the column header: the label, shortened
            if group["score"] is None:
                assert math.isnan(row[label]) and row[f"{label} 95% CI"] == "n/a"
            else:
                assert row[label] == pytest.approx(group["score"], abs=5e-4)
                assert row[f"{label} 95% CI"] == interval_text(group["ci_low"], group["ci_high"])
            assert row[f"{label} coverage"] == f"{group['n_scored']}/{group['n_items']}"
            groups_seen += 1
    assert groups_seen >= 8
    # the official mode is one pick away; so is the view through the service's tab logic
    from sciprobe.leaderboard.breakdown_tab import BreakdownView

    view = BreakdownView(service)
    assert IPI in view.task_choices() and ("official", "official") in view.mode_choices(IPI)
    official = view.table(IPI, "official", "disciplines")
    assert "official" in view.note(IPI, "official", "disciplines") and len(official) == 4


def test_breakdown_groups_without_items_are_absent_not_zero(scored):
    service, _ = scored
    (good,) = [r for r in service.results() if r.model_name == "org/good"]
    other = copy.deepcopy(good)
    other.model_name, other.user = "org/other-data", "carol"
    groups = other.scores["strict"]["breakdowns"]["disciplines"]["groups"]
    dropped = next(iter(groups))
    del groups[dropped]  # a result with no item in this group
    groups["Astrophysics"] = {"score": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n_items": 0, "n_scored": 0, "n_failed": 0}
    partial = copy.deepcopy(good)
    partial.model_name, partial.provenance = "org/partial", {"partial": {"n_predicted": 3, "n_items": 16}}
    column = next(c for c in tables.task_columns(["idrbench"]) if c.ref == IPI)
    frame = breakdowns.breakdown_frame([good, other, partial], column, "strict", "disciplines").set_index("Model")
    assert "org/partial" not in frame.index  # complete results only
    assert "Astrophysics" not in frame.columns  # a group of no items is no group
    dropped = frame.attrs["groups"][dropped]
    assert math.isnan(frame.loc["org/other-data", dropped]) and not math.isnan(frame.loc["org/good", dropped])
    assert frame.loc["org/other-data", f"{dropped} coverage"] != "0/0"


def test_breakdown_groups_in_reading_order():
    groups = {label: {"score": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n_items": 2, "n_scored": 2, "n_failed": 0}
              for label in ("10+", "unknown", "2", "5-9", "1", "3-4")}
    report = {"macro_f1": 0.5, "coverage": COVERAGE, "breakdowns": {"team": {"title": "team", "groups": groups}}}
    column = next(c for c in tables.task_columns(["idrbench"]) if c.ref == IPI)
    frame = breakdowns.breakdown_frame([_record(report)], column, "official", "team")
    scores = [c for c in frame.columns if c in groups]
    assert scores == ["1", "2", "3-4", "5-9", "10+", "unknown"] == list(frame.attrs["groups"].values())


def test_long_group_labels_are_shortened_and_stay_distinct():
    long = "Computer Science, Electrical Engineering and Systems Science"
    labels = (long, long[:40] + " and more", "Model", "<b>x</b>")
    groups = {label: {"score": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n_items": 2, "n_scored": 2, "n_failed": 0}
              for label in labels}
    report = {"macro_f1": 0.5, "coverage": COVERAGE, "breakdowns": {"d": {"title": "d", "groups": groups}}}
    column = next(c for c in tables.task_columns(["idrbench"]) if c.ref == IPI)
    frame = breakdowns.breakdown_frame([_record(report)], column, "official", "d")
    headers = frame.attrs["groups"]
    assert len(set(headers.values())) == 4 and all(len(h) <= 40 for h in headers.values())
    assert headers[long].startswith("Computer Science") and headers[long].endswith("…")
    assert headers["Model"] == "Model (2)" and headers["<b>x</b>"] == "&lt;b&gt;x&lt;/b&gt;"
    assert list(frame["Model"]) == ["org/m"]
    note = breakdowns.breakdown_note(column, "official", "d", headers)  # the full names of shortened headers
    assert f"*{headers[long]}* = {long}" in note and "*Model (2)* = Model" in note and "&lt;b&gt;" not in note


# ---------------------------------------------------------------- 3. reference baselines

def test_reference_rows_are_marked_below_the_models_and_never_ranked(scored):
    service, _ = scored
    frame = service.table("idrbench")
    assert list(frame["Type"][:2]) == ["model", "model"] and set(frame["Type"][2:]) == {"reference baseline"}
    refs = tables.reference_rows(frame)
    assert set(refs["Model"]) == {"random (reference baseline)", "majority (reference baseline)",
                                  "title-similarity (reference baseline)"}
    assert set(refs["Submitter"]) == {"—"} and set(refs["Contamination-free"]) == {"n/a"}
    # a reference above a model's score still comes after it: baselines are never ranked among the models
    worst_model = tables.model_rows(frame)["ipi macro_f1"].min()
    assert refs["ipi macro_f1"].max() > worst_model
    # the filters choose models; the reference rows stay
    filtered = service.table("idrbench", query="good")
    assert list(tables.model_rows(filtered)["Model"]) == ["org/good"] and len(tables.reference_rows(filtered)) == 3
    assert "reference-baseline" not in tables.families_of(service.results())
    note = service.baselines_note("idrbench")
    assert "**random**" in note and "**title-similarity**" in note and "never ranked" in note
    # no request, no owner: a baseline is never a submission
    assert {r.model_name for r in service.store.list_requests()} == {"org/good", "org/all-yes"}
    assert service.store.model_owner("reference-baseline/random") is None
    assert {r.user for r in service.results() if r.is_reference} == {""}


@pytest.mark.parametrize("name", ["reference-baseline/random", "Reference-Baseline/mine",
                                  "\uff52eference-baseline/x"])
def test_no_submission_may_pass_for_a_reference_baseline(name):
    with pytest.raises(SubmissionError, match="reserved for the leaderboard's reference baselines"):
        validate_model_info(name)


def _drop_last_row(folder: Path, config: str) -> None:
    shard = next((folder / config).glob("test-*.parquet"))
    table = pq.read_table(shard)
    pq.write_table(table.slice(0, table.num_rows - 1), shard)


def test_baselines_are_computed_once_per_data_and_again_when_the_pinned_data_changes(tmp_path):
    store = SQLiteStore(tmp_path / "store")
    lines: list[str] = []
    pins = {"idrbench": data_pin("idrbench", {}), "sgibench": data_pin("sgibench", {})}
    notes = ensure_baselines(store, pins, log=lines.append)
    computed = [line for line in lines if line.startswith("computing reference baseline")]
    # IDRBench: random, majority, title-similarity; SGI-Bench (its bundled sample): majority-option, empty-answer
    assert len(computed) == 5 and notes["idrbench"] == []
    assert {r.model_name for r in store.list_results() if r.task.startswith("sgibench:")} == {
        "reference-baseline/majority-option", "reference-baseline/empty-answer"}
    first = {(r.model_name, r.task) for r in store.list_results()}
    assert ("reference-baseline/majority", IPI) in first and all(r.is_reference for r in store.list_results())

    lines.clear()
    ensure_baselines(store, pins, log=lines.append)
    assert not [line for line in lines if line.startswith("computing")] and len(store.list_results()) == len(first)

    # the pinned data changes (one IPI item less): the baselines are computed on it, as new rows
    changed = tmp_path / "idrbench-v2"
    shutil.copytree(pins["idrbench"].resolve(), changed)
    _drop_last_row(changed, "ipi")
    lines.clear()
    ensure_baselines(store, {"idrbench": DataPin("idrbench", str(changed), FOLDER)}, log=lines.append)
    assert len([line for line in lines if line.startswith("computing")]) == 3
    ipi = [r for r in store.list_results() if r.task == IPI and r.model_name == "reference-baseline/random"]
    assert sorted(r.scores["strict"]["coverage"]["n_items"] for r in ipi) == [15, 16]
    frame = tables.leaderboard_frame(store.list_results(), tables.task_columns(["idrbench"]))
    references = tables.reference_rows(frame)
    assert len(references[references["Model"] == "random (reference baseline)"]) == 2
    assert store.list_requests() == []


def test_service_notes_name_the_reference_rows_of_each_tab(tmp_path):
    service = LeaderboardService(SQLiteStore(tmp_path / "s"), Settings(auth="local"), ["sgibench"])
    service.ensure_baselines()
    note = service.baselines_note("sgibench")  # computed on SGI-Bench's bundled sample
    assert "none on this tab yet" not in note and "empty-answer" in note and "never ranked" in note
    assert "never ranked" in service.baselines_note("overview")


def test_a_mode_a_baseline_cannot_be_scored_in_is_na_with_a_note(tmp_path):
    out = tmp_path / "runs"
    run_baselines("prescience", names=["mean"], tasks=["topic_trends"], output_dir=out, log=lambda _: None)
    store = SQLiteStore(tmp_path / "store")
    assert import_results_dir(store, out) == 1
    (result,) = store.list_results()
    assert result.is_reference and "paper" not in result.scores  # the mode the sample cannot score
    columns = [c for c in tables.task_columns(["prescience"]) if c.ref == "prescience:topic_trends"]
    frame = tables.leaderboard_frame(store.list_results(), columns, mode="paper")
    assert pd.isna(frame.iloc[0][columns[0].score_header(False)])  # n/a, never 0
    assert frame.iloc[0][columns[0].ci_header(False)] == "n/a"
    assert "mean · prescience:topic_trends: paper" in tables.baselines_note(store.list_results(), "prescience")


@pytest.mark.slow
def test_a_baseline_missing_items_on_the_pinned_data_is_not_shown(tmp_path):
    """PreScience baselines read the release files; pinned to data whose items they have no prediction for, the
    task is not stored (a note says why), while the other tasks are."""
    import pyarrow as pa

    changed = tmp_path / "prescience-other"
    shutil.copytree(data_pin("prescience", {}).resolve(), changed)
    shard = next((changed / "citation_prediction").glob("test-*.parquet"))
    rows = pq.read_table(shard).to_pylist()
    rows[0]["corpus_id"] = "999999999"
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_table(shard).schema), shard)
    store = SQLiteStore(tmp_path / "store")
    notes = ensure_benchmark(store, DataPin("prescience", str(changed), FOLDER), log=lambda _: None)
    assert any("prescience:citation_prediction: not shown, no prediction for 1 of 13 items" in n for n in notes), notes
    stored = {(r.model_name, r.task) for r in store.list_results()}
    assert ("reference-baseline/mean", "prescience:citation_prediction") not in stored
    assert ("reference-baseline/mean", "prescience:topic_trends") in stored


def test_import_refuses_a_model_posing_as_a_reference(scored, tmp_path):
    _, out = scored
    path = next((out / "results" / "reference-baseline__random").glob("results_*.json"))
    data = json.loads(path.read_text())
    data["sciprobe"]["reference_baseline"] = None
    (tmp_path / "results_x.json").write_text(json.dumps(data))
    warnings: list[str] = []
    assert import_results_dir(SQLiteStore(tmp_path / "s"), tmp_path / "results_x.json", warn=warnings.append) == 0
    assert len(warnings) == 1 and "reserved for reference baselines" in warnings[0]
    with pytest.raises(SciprobeError):
        from sciprobe.leaderboard.reference import checked_flag

        checked_flag("org/model", {"name": "random", "description": ""})


def test_the_space_on_the_hub_store_keeps_its_baselines_in_the_results_repo(tmp_path):
    """The Space's store: the baselines computed at start are results files in the results repo (one commit), and a
    second start finds them there."""
    from sciprobe.interop.hub_api import LocalFolderApi
    from sciprobe.leaderboard.hub_store import HubStore

    def open_hub() -> HubStore:
        return HubStore(LocalFolderApi(tmp_path / "hub"), "sciprobe/requests", "sciprobe/results")

    store = open_hub()
    lines: list[str] = []
    ensure_baselines(store, {"idrbench": data_pin("idrbench", {})}, log=lines.append)
    assert store.commits == 1 and len([line for line in lines if line.startswith("computing")]) == 3
    files = list((tmp_path / "hub" / "datasets" / "sciprobe" / "results").rglob("results_*.json"))
    assert files and all(json.loads(f.read_text())["sciprobe"]["reference_baseline"] for f in files)
    again = open_hub()
    lines.clear()
    ensure_baselines(again, {"idrbench": data_pin("idrbench", {})}, log=lines.append)
    assert not [line for line in lines if line.startswith("computing")] and again.commits == 0
    frame = tables.leaderboard_frame(again.list_results(), tables.task_columns(["idrbench"]))
    assert set(frame["Type"]) == {"reference baseline"} and len(frame) == 3
