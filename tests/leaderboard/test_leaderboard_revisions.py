"""Revision-aware rows (issue 7): results on another dataset revision or benchmark version never share a
leaderboard row; the same revision updates its row. Real results files written by ``sciprobe.results.write.write_run``
and imported into the embedded store. A leaderboard imports only results on every item of the data it pins (issue
22.5): each import here names the items of the made-up data (:func:`pinned_at`)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from pinned_support import pinned_as
from sciprobe.leaderboard import tables
from sciprobe.leaderboard.importer import import_results_dir, import_results_file
from sciprobe.leaderboard.records import (
    ResultRecord,
    revision_label,
    row_key,
    short_fingerprint,
)
from sciprobe.leaderboard.store import SQLiteStore
from sciprobe.results.write import RunInfo, TaskResult, write_run
from sciprobe.scoring.score_report import Coverage, ScoreReport

FP = "837ab983a1e85adfa69c6df2c2722252328c4d0cb145f1a40f2c4b2cd1010660"
COMMIT_A = "0123456789abcdef0123456789abcdef01234567"
COMMIT_B = "fedcba9876543210fedcba9876543210fedcba98"
IDS = [f"i{k}" for k in range(16)]


def pinned_at():
    """The pinned items of a leaderboard whose data has the test's 16 ids."""
    return pinned_as(IDS)


def write_ipi_result(out: Path, macro_f1: float, *, revision: str | None = None, fingerprint: str = FP,
                     version: str = "1.0.0", model: str = "org/model-a", second: int = 0) -> Path:
    report = ScoreReport("binary_classification", "official", {"macro_f1": macro_f1, "accuracy": macro_f1},
                         Coverage(16, 16, 0))
    provenance = {"benchmark": "idrbench", "benchmark_version": version, "dataset": "hub-or-folder",
                  "dataset_fingerprint": fingerprint, "dataset_revision": revision, "prompt_version": "1",
                  "model_id": model, "judge_id": None, "cutoff": {"cutoff": None, "source": "none"},
                  "prompt_hash": "p" * 64}
    records = [{"id": i, "response": "Your verdict: No", "prediction": "no", "gold": "no"} for i in IDS]
    task = TaskResult("idrbench:ipi", 0, {"official": report}, records, provenance, "macro_f1",
                      analysis={"items": {"ids": IDS}})
    start = dt.datetime(2026, 11, 29, 12, 0, second, tzinfo=dt.UTC)
    return write_run(out, RunInfo(model, {"temperature": 0.0}, clock=lambda: start), [task])


def columns():
    return tables.task_columns(["idrbench"])
# these results carry the official mode only; the default view ranks IPI in strict, so the tables below ask for
# official explicitly


def test_two_revisions_two_rows_same_revision_updates(tmp_path):
    store = SQLiteStore(tmp_path / "store")
    first = write_ipi_result(tmp_path / "runs", 0.40, revision=COMMIT_A, second=1)
    other = write_ipi_result(tmp_path / "runs", 0.90, revision=COMMIT_B, second=2)
    provenance = json.loads(first.read_text())["sciprobe"]["tasks"]["idrbench:ipi|0"]["provenance"]
    assert provenance["dataset_revision"] == COMMIT_A
    import_results_file(store, first, pinned=pinned_at())
    import_results_file(store, other, pinned=pinned_at())
    frame = tables.leaderboard_frame(store.list_results(), columns(), mode="official")
    assert len(frame) == 2  # same model, same fingerprint, different hub revision: two rows
    assert sorted(frame["Revision"]) == [COMMIT_A[:12], COMMIT_B[:12]]
    by_rev = {row["Revision"]: row for _, row in frame.iterrows()}
    assert by_rev[COMMIT_A[:12]]["ipi macro_f1"] == 0.4 and by_rev[COMMIT_B[:12]]["ipi macro_f1"] == 0.9

    # a newer run on revision A updates row A (one row per revision, latest wins)
    again = write_ipi_result(tmp_path / "runs", 0.55, revision=COMMIT_A, second=3)
    import_results_file(store, again, pinned=pinned_at())
    frame = tables.leaderboard_frame(store.list_results(), columns(), mode="official")
    assert len(frame) == 2
    assert {row["Revision"]: row["ipi macro_f1"] for _, row in frame.iterrows()} == {COMMIT_A[:12]: 0.55,
                                                                                    COMMIT_B[:12]: 0.9}
    assert len(store.list_results()) == 2  # replaced, not added

    # provenance and row labels carry the revision
    row_ids = {row["Revision"]: row[tables.ROW_COLUMN] for _, row in frame.iterrows()}
    prov = tables.row_provenance(store.list_results(), row_ids[COMMIT_A[:12]], "idrbench:ipi")
    assert prov["dataset_revision"] == COMMIT_A and prov["scores"]["official"]["macro_f1"] == 0.55
    assert COMMIT_A[:12] in tables.row_label(tables.group_rows(store.list_results())[row_ids[COMMIT_A[:12]]])


def test_benchmark_version_and_fingerprint_split_rows(tmp_path):
    store = SQLiteStore(tmp_path / "store")
    write_ipi_result(tmp_path / "runs", 0.3, second=1)
    write_ipi_result(tmp_path / "runs", 0.6, version="1.1.0", second=2)
    write_ipi_result(tmp_path / "runs", 0.8, second=4)  # same version + files as the first: updates it
    assert import_results_dir(store, tmp_path / "runs", pinned=pinned_at()) == 3
    write_ipi_result(tmp_path / "other", 0.7, fingerprint="9" * 64, second=3)  # another build of the items
    assert import_results_dir(store, tmp_path / "other", pinned=pinned_at()) == 1
    frame = tables.leaderboard_frame(store.list_results(), columns(), mode="official")
    assert len(frame) == 3
    shown = {(row["Version"], row["Revision"]): row["ipi macro_f1"] for _, row in frame.iterrows()}
    assert shown == {("1.0.0", f"files:{FP[:8]}"): 0.8, ("1.1.0", f"files:{FP[:8]}"): 0.6,
                     ("1.0.0", "files:99999999"): 0.7}


def test_row_key_is_stable_without_a_revision():
    """Rows stored before revisions were recorded keep their ids; any recorded revision changes the key."""
    base = ("org/m", "idrbench", "1.0.0", FP, None, [])
    assert row_key(*base) == row_key(*base, None) == row_key(*base, "")
    assert row_key(*base, COMMIT_A) != row_key(*base) != row_key(*base, COMMIT_B)
    assert row_key(*base[:2], "1.1.0", *base[3:]) != row_key(*base)


def test_revision_labels():
    assert revision_label(COMMIT_A, FP) == COMMIT_A[:12]
    assert revision_label("v1.2", FP) == "v1.2"
    assert revision_label(None, FP) == f"files:{FP[:8]}"
    hub_fp = "hub:org/data@main:abcdef0123456789"
    assert revision_label(None, hub_fp) == "main"
    assert short_fingerprint(hub_fp) == "abcdef01"  # not "hub:org/"
    record = ResultRecord(request_id="r", user="u", model_name="m", task="idrbench:ipi", benchmark="idrbench",
                          benchmark_version="1", dataset_fingerprint=hub_fp, headline="macro_f1",
                          default_mode="official", scores={}, provenance={}, dataset_revision="v2")
    assert ResultRecord.from_json(json.loads(json.dumps(record.to_json()))).dataset_revision == "v2"
    assert record.to_json()["sciprobe"]["row_id"] == record.row_id


def test_hub_store_keeps_revisions_apart(tmp_path):
    """The hub store (a local folder standing in for the results repo) files results by result id, which
    includes the revision: two revisions are two files, a rerun on one revision replaces its file."""
    from sciprobe.interop.hub_api import LocalFolderApi
    from sciprobe.leaderboard.hub_store import HubStore

    store = HubStore(LocalFolderApi(tmp_path / "hub"), "sp/requests", "sp/results")
    for second, (value, revision) in enumerate([(0.4, COMMIT_A), (0.9, COMMIT_B), (0.55, COMMIT_A)]):
        import_results_file(store, write_ipi_result(tmp_path / "runs", value, revision=revision, second=second),
                            pinned=pinned_at())
    store.flush()
    files = sorted((tmp_path / "hub").rglob("results_*.json"))
    assert len(files) == 2
    reopened = HubStore(LocalFolderApi(tmp_path / "hub"), "sp/requests", "sp/results")
    shown = {r.dataset_revision: r.scores["official"]["macro_f1"] for r in reopened.list_results()}
    assert shown == {COMMIT_A: 0.55, COMMIT_B: 0.9}
