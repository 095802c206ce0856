"""Leaderboard stores: SQLite (embedded default) and the Hub store on a local folder standing in for the repos.

Both satisfy the same contract (parametrised tests); SQLite additionally survives 50 concurrent submissions
from threads and from processes without losing or duplicating any.
"""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import threading
import uuid
from pathlib import Path

import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.interop.hub_api import LocalFolderApi, check_repo_path
from sciprobe.leaderboard.hub_store import HubStore
from sciprobe.leaderboard.records import FAILED, FINISHED, PENDING, RUNNING, ResultRecord, SubmissionRequest
from sciprobe.leaderboard.store import SCHEMA_VERSION, DuplicateSubmission, LeaderboardStore, RateLimited, SQLiteStore
from sciprobe.leaderboard.store_factory import open_store

REQUESTS, RESULTS = "sciprobe/requests", "sciprobe/results"


def make_request(user: str = "alice", model: str | None = None, task: str = "idrbench:ipi",
                 sha: str | None = None) -> SubmissionRequest:
    """A request; the model defaults to one of the user's own (a model name belongs to its first submitter)."""
    return SubmissionRequest(request_id=uuid.uuid4().hex, user=user, model_name=model or f"{user}/model-a", task=task,
                             benchmark=task.partition(":")[0], benchmark_version="1.0.0", dataset_fingerprint="fp-1",
                             predictions_sha256=sha or uuid.uuid4().hex, n_predictions=16,
                             predictions_file="preds.jsonl", model_family="org")


def make_result(request: SubmissionRequest, score: float = 0.5, fingerprint: str | None = None,
                task: str | None = None) -> ResultRecord:
    report = {"metric": "idr_classification", "mode": "official", "macro_f1": score,
              "coverage": {"n_items": 16, "n_scored": 15, "n_failed": 1, "failure_rate": 0.0625},
              "params": {}, "notes": []}
    return ResultRecord(request_id=request.request_id, user=request.user, model_name=request.model_name,
                        task=task or request.task, benchmark=request.benchmark, benchmark_version="1.0.0",
                        dataset_fingerprint=fingerprint or request.dataset_fingerprint, headline="macro_f1",
                        default_mode="official", scores={"official": report},
                        provenance={"dataset_fingerprint": fingerprint or request.dataset_fingerprint,
                                    "prompt_hash": None}, model_family="org", model_cutoff="2023-10-31",
                        model_cutoff_source="registry", min_item_date="2024-11-01")


@pytest.fixture(params=["sqlite", "hub"])
def store(request, tmp_path) -> LeaderboardStore:
    if request.param == "sqlite":
        return SQLiteStore(tmp_path / "lb")
    return HubStore(LocalFolderApi(tmp_path / "hub"), REQUESTS, RESULTS)


def flush(store) -> None:
    if hasattr(store, "flush"):
        store.flush()


def test_implements_protocol(store):
    assert isinstance(store, LeaderboardStore)


def test_submission_lifecycle(store):
    req = store.add_submission(make_request(), b'{"id": "a"}\n')
    assert req.status == PENDING
    assert store.get_predictions(req.request_id) == b'{"id": "a"}\n'
    claimed = store.claim_pending(5)
    assert [r.request_id for r in claimed] == [req.request_id] and claimed[0].status == RUNNING
    assert store.claim_pending(5) == []
    result_id = store.add_result(make_result(req))
    done = store.set_status(req.request_id, FINISHED, result_id=result_id)
    assert done.status == FINISHED and done.result_id == result_id
    assert store.get_request(req.request_id).status == FINISHED
    with pytest.raises(SciprobeError, match="cannot go from FINISHED"):
        store.set_status(req.request_id, RUNNING)
    flush(store)
    assert [r.status for r in store.list_requests()] == [FINISHED]
    assert store.list_requests(PENDING) == []


def test_failed_status_keeps_error(store):
    req = store.add_submission(make_request(), b"x")
    store.set_status(req.request_id, RUNNING)
    failed = store.set_status(req.request_id, FAILED, error="dataset changed")
    assert failed.status == FAILED and store.get_request(req.request_id).error == "dataset changed"


def test_duplicate_detection(store):
    first = store.add_submission(make_request(sha="same"), b"x")
    with pytest.raises(DuplicateSubmission, match="duplicate submission"):
        store.add_submission(make_request(sha="same"), b"x")
    assert store.find_duplicate("alice", "alice/model-a", "idrbench:ipi", "same").request_id == first.request_id
    # another user, model, task or file is not a duplicate
    store.add_submission(make_request(user="bob", sha="same"), b"x")
    store.add_submission(make_request(model="alice/model-b", sha="same"), b"x")
    store.add_submission(make_request(task="idrbench:i2r", sha="same"), b"x")
    assert store.find_duplicate("alice", "alice/model-a", "idrbench:ipi", "other") is None
    assert len(store.list_requests()) == 4


def test_rate_limit(store):
    for _ in range(3):
        store.add_submission(make_request(), b"x", max_recent=3)
    with pytest.raises(RateLimited, match="limit 3"):
        store.add_submission(make_request(), b"x", max_recent=3)
    assert store.count_recent("alice", dt.timedelta(hours=1)) == 3
    assert store.count_recent("alice", dt.timedelta(microseconds=1)) == 0
    store.add_submission(make_request(user="bob"), b"x", max_recent=3)  # per user
    assert len(store.list_requests()) == 4


def test_results_and_provenance(store):
    req = store.add_submission(make_request(), b"x")
    rid = store.add_result(make_result(req, 0.4))
    # the same cell again replaces the old result; a different dataset fingerprint is a separate row
    assert store.add_result(make_result(req, 0.6)) == rid
    other = store.add_result(make_result(req, 0.9, fingerprint="fp-2"))
    assert other != rid
    flush(store)
    results = {r.result_id: r for r in store.list_results()}
    assert set(results) == {rid, other}
    assert results[rid].scores["official"]["macro_f1"] == 0.6
    assert results[rid].row_id != results[other].row_id
    prov = store.get_provenance(rid)
    assert prov["dataset_fingerprint"] == "fp-1" and prov["submitted_by"] == "alice"
    assert prov["scores"]["official"]["coverage"]["n_scored"] == 15
    assert prov["contamination_free"] is True
    assert store.list_results("scitaste") == []
    with pytest.raises(SciprobeError):
        store.get_provenance("nope")


def test_hub_store_layout_and_batched_commits(tmp_path):
    api = LocalFolderApi(tmp_path / "hub")
    store = HubStore(api, REQUESTS, RESULTS)
    reqs = [store.add_submission(make_request(model=f"org/m{i}"), b'{"id": "a"}\n') for i in range(3)]
    assert store.commits == 0 and api.snapshot(REQUESTS) is None  # buffered
    assert store.flush() == 1  # one commit for the requests repo
    for req in reqs:
        store.set_status(req.request_id, RUNNING)
        rid = store.add_result(make_result(req), details=b"PAR1")
        store.set_status(req.request_id, FINISHED, result_id=rid)
    assert store.flush() == 2  # one commit per repo for all nine writes
    req_root, res_root = tmp_path / "hub" / "datasets" / REQUESTS, tmp_path / "hub" / "datasets" / RESULTS
    req_files = sorted(p.relative_to(req_root).as_posix() for p in req_root.rglob("*.json"))
    assert req_files == sorted(f"org__m{i}/request_idrbench_ipi_{r.request_id}.json" for i, r in enumerate(reqs))
    assert len(list((req_root / "predictions").glob("*.jsonl"))) == 3
    stored = json.loads((req_root / req_files[0]).read_text())
    assert stored["status"] == FINISHED
    results = sorted(res_root.rglob("results_*.json"))
    assert len(results) == 3 and len(list(res_root.rglob("details_*.parquet"))) == 3
    body = json.loads(results[0].read_text())
    # the template's contract: config + results {task: {metric: score}}; sciprobe block beside it
    assert body["config"]["model_name"].startswith("org/m")
    assert body["results"]["idrbench:ipi"]["macro_f1"] == 0.5 and body["results"]["idrbench:ipi"]["n_scored"] == 15
    assert body["sciprobe"]["dataset_fingerprint"] == "fp-1"
    # a fresh store reads everything back from the "repos"
    again = HubStore(api, REQUESTS, RESULTS)
    assert {r.request_id for r in again.list_requests(FINISHED)} == {r.request_id for r in reqs}
    assert len(again.list_results()) == 3
    assert again.get_predictions(reqs[0].request_id) == b'{"id": "a"}\n'
    with pytest.raises(DuplicateSubmission):
        again.add_submission(make_request(model="org/m0", sha=reqs[0].predictions_sha256), b"x")


def test_hub_store_auto_flush(tmp_path):
    store = HubStore(LocalFolderApi(tmp_path / "hub"), REQUESTS, RESULTS, batch_size=4)
    store.add_submission(make_request(), b"x")
    assert store.commits == 0
    store.add_submission(make_request(), b"y")
    assert store.commits == 1


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a/../../b", "a\\b", "", "a//b"])
def test_local_api_rejects_traversal(tmp_path, bad):
    with pytest.raises(SciprobeError):
        check_repo_path(bad)
    with pytest.raises(SciprobeError):
        LocalFolderApi(tmp_path).commit(REQUESTS, {bad: b"x"}, "m")
    assert not any(tmp_path.rglob("*x*"))


def test_open_store_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DIR", str(tmp_path / "lb"))
    monkeypatch.delenv("SCIPROBE_LEADERBOARD_STORE", raising=False)
    assert isinstance(open_store(), SQLiteStore) and (tmp_path / "lb" / SQLiteStore.FILE_NAME).is_file()
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_STORE", "hub")
    with pytest.raises(SciprobeError, match="REQUESTS_REPO"):
        open_store()
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_REQUESTS_REPO", REQUESTS)
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_RESULTS_REPO", RESULTS)
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_HUB_LOCAL", str(tmp_path / "hub"))
    assert isinstance(open_store(), HubStore)


def test_sqlite_is_wal(tmp_path):
    store = SQLiteStore(tmp_path)
    assert store._connection().execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# ---------------------------------------------------------------- concurrency (SQLite)

N = 50


def _submit_many(folder: str, start: int, count: int, dup_every: int) -> list[str]:
    """Submit ``count`` requests; every ``dup_every``-th one repeats a shared (user, model, task, sha)."""
    store = SQLiteStore(folder)
    outcomes = []
    for i in range(start, start + count):
        shared = i % dup_every == 0
        req = make_request(user="dup" if shared else f"user{i}", sha="shared" if shared else f"sha{i}")
        try:
            store.add_submission(req, f"pred{i}".encode(), max_recent=1000)
            outcomes.append("ok")
        except DuplicateSubmission:
            outcomes.append("dup")
    store.close()
    return outcomes


def _check_concurrent_outcome(folder: Path, outcomes: list[str], dup_every: int) -> None:
    store = SQLiteStore(folder)
    requests = store.list_requests()
    shared = len([i for i in range(N) if i % dup_every == 0])
    assert outcomes.count("dup") == shared - 1          # exactly one of the shared submissions wins
    assert len(requests) == N - shared + 1              # nothing lost, nothing duplicated
    assert len({r.request_id for r in requests}) == len(requests)
    assert len({(r.user, r.model_name, r.task, r.predictions_sha256) for r in requests}) == len(requests)
    for req in requests:                                # every stored request has its predictions
        assert store.get_predictions(req.request_id).startswith(b"pred")


def test_sqlite_50_concurrent_threads(tmp_path):
    folder = tmp_path / "lb"
    SQLiteStore(folder)
    outcomes: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(N)

    def one(i: int) -> None:
        barrier.wait()
        result = _submit_many(str(folder), i, 1, 5)
        with lock:
            outcomes.extend(result)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(outcomes) == N
    _check_concurrent_outcome(folder, outcomes, 5)


def test_sqlite_50_concurrent_processes(tmp_path):
    folder = tmp_path / "lb"
    SQLiteStore(folder)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(5) as pool:
        chunks = pool.starmap(_submit_many, [(str(folder), start, 10, 7) for start in range(0, N, 10)])
    outcomes = [o for chunk in chunks for o in chunk]
    assert len(outcomes) == N
    _check_concurrent_outcome(folder, outcomes, 7)


def test_sqlite_concurrent_claims_are_exclusive(tmp_path):
    store = SQLiteStore(tmp_path)
    for _ in range(20):
        store.add_submission(make_request(), b"x")
    claimed: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        mine = SQLiteStore(tmp_path)
        while batch := mine.claim_pending(3):
            with lock:
                claimed.extend(r.request_id for r in batch)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(claimed) == sorted(r.request_id for r in store.list_requests())
    assert len(set(claimed)) == 20


def test_hf_hub_api_wrapper_calls(tmp_path):
    """The real-Hub wrapper (not reachable offline): check the calls it makes on huggingface_hub's HfApi."""
    from sciprobe.interop.hub_api import HfHubApi

    calls: list[tuple] = []

    class FakeHfApi:
        token = None

        def create_commit(self, **kwargs):
            calls.append(("create_commit", kwargs))

        def create_repo(self, repo_id, **kwargs):
            calls.append(("create_repo", repo_id, kwargs))

        def upload_folder(self, **kwargs):
            calls.append(("upload_folder", kwargs))
            return "https://huggingface.co/x"

    api = HfHubApi()
    api.api = FakeHfApi()
    api.commit(REQUESTS, {"a/request_1.json": b"{}", "predictions/1.jsonl": b"x"}, "Add")
    (name, kwargs), = calls
    assert name == "create_commit" and kwargs["repo_id"] == REQUESTS and kwargs["repo_type"] == "dataset"
    assert sorted(op.path_in_repo for op in kwargs["operations"]) == ["a/request_1.json", "predictions/1.jsonl"]
    with pytest.raises(SciprobeError):
        api.commit(REQUESTS, {"../escape": b"x"}, "Add")
    api.upload_folder("sciprobe/space", tmp_path, "space", "Publish")
    assert calls[1] == ("create_repo", "sciprobe/space",
                        {"repo_type": "space", "exist_ok": True, "space_sdk": "gradio"})
    assert calls[2][1]["folder_path"] == str(tmp_path) and calls[2][1]["repo_type"] == "space"


# ---------------------------------------------------------------- identity, ownership and the v0 -> v1 migration

def test_case_and_width_variants_are_one_user_and_one_model(store):
    from sciprobe.leaderboard.store import ModelNameTaken

    store.add_submission(make_request(user="Alice", model="Org/Model", sha="s1"), b"x", max_recent=2)
    with pytest.raises(DuplicateSubmission):  # the same file again, by "alice" under "ORG/MODEL"
        store.add_submission(make_request(user="alice ", model="ORG/MODEL", sha="s1"), b"x")
    store.add_submission(make_request(user="\uff21lice", model="org/model", sha="s2"), b"x", max_recent=2)
    with pytest.raises(RateLimited):  # three names, one user
        store.add_submission(make_request(user="ALICE\n", model="org/model", sha="s3"), b"x", max_recent=2)
    with pytest.raises(ModelNameTaken, match="belongs to Alice"):
        store.add_submission(make_request(user="bob", model="org/MODEL", sha="s4"), b"x")
    assert store.model_owner("\uff4frg/model").user == "Alice"
    assert len(store.list_requests()) == 2


def test_rows_carry_their_owner(tmp_path):
    """Whatever path a result takes, one user's result never replaces another user's cell."""
    store = SQLiteStore(tmp_path / "lb")
    mine = make_result(make_request(user="alice", model="org/shared"), 0.2)
    theirs = make_result(make_request(user="mallory", model="ORG/Shared"), 0.99)
    assert store.add_result(mine) != store.add_result(theirs)
    assert {r.user: r.scores["official"]["macro_f1"] for r in store.list_results()} == {"alice": 0.2, "mallory": 0.99}
    again = make_result(make_request(user="ALICE", model="Org/Shared"), 0.3)  # the same row: replaced
    assert store.add_result(again) == mine.result_id and len(store.list_results()) == 2


def test_sqlite_store_of_schema_v0_is_migrated(tmp_path):
    """A store written before leases and identity keys opens: columns added, keys normalised, result ids
    recomputed (the latest result per new id kept), and its requests can be claimed."""
    import sqlite3

    folder = tmp_path / "lb"
    folder.mkdir()
    con = sqlite3.connect(folder / SQLiteStore.FILE_NAME)
    con.executescript("""
        CREATE TABLE requests (request_id TEXT PRIMARY KEY, user TEXT NOT NULL, model_name TEXT NOT NULL,
            task TEXT NOT NULL, predictions_sha256 TEXT NOT NULL, status TEXT NOT NULL, submitted_ts REAL NOT NULL,
            record TEXT NOT NULL, UNIQUE (user, model_name, task, predictions_sha256));
        CREATE TABLE predictions (request_id TEXT PRIMARY KEY REFERENCES requests (request_id), data BLOB NOT NULL);
        CREATE TABLE results (result_id TEXT PRIMARY KEY, request_id TEXT NOT NULL, benchmark TEXT NOT NULL,
            created_ts REAL NOT NULL, record TEXT NOT NULL, details BLOB);
    """)
    old = make_request(user="Alice", model="Org/Model-A")
    old_record = {k: v for k, v in old.to_json().items() if k not in ("claimed_by", "lease_until", "attempts")}
    con.execute("INSERT INTO requests VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (old.request_id, "Alice", "Org/Model-A", old.task, old.predictions_sha256, PENDING, 1.0,
                 json.dumps(old_record)))
    con.execute("INSERT INTO predictions VALUES (?, ?)", (old.request_id, b"p"))
    for k, (model, score) in enumerate([("Org/Model-A", 0.1), ("org/model-a", 0.2)]):  # one row once case folds
        result = make_result(make_request(user="Alice", model=model), score)
        result.created_time = f"2026-01-0{k + 1}T00:00:00+00:00"
        body = result.to_json()
        con.execute("INSERT INTO results VALUES (?, ?, ?, ?, ?, ?)",
                    (f"old-id-{k}", result.request_id, "idrbench", float(k), json.dumps(body), None))
    con.commit()
    con.close()

    store = SQLiteStore(folder)
    assert store._connection().execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.find_duplicate("alice", "org/model-a", old.task, old.predictions_sha256).request_id == old.request_id
    (kept,) = store.list_results()
    assert kept.scores["official"]["macro_f1"] == 0.2 and store.get_result(kept.result_id).result_id == kept.result_id
    (claimed,) = store.claim_pending()
    assert claimed.request_id == old.request_id and claimed.attempts == 1
    assert SQLiteStore(folder).get_request(old.request_id).status == RUNNING  # opening again changes nothing


def test_hub_store_skips_unreadable_repo_files(tmp_path):
    """A hand-edited or truncated file in the repos is a warning, not a Space that cannot start."""
    api = LocalFolderApi(tmp_path / "hub")
    store = HubStore(api, REQUESTS, RESULTS)
    req = store.add_submission(make_request(), b"x")
    store.add_result(make_result(req))
    store.flush()
    api.commit(REQUESTS, {"evil/request_a.json": b'{"request_id": ', "evil/request_b.json": b"[1, 2]",
                          "evil/request_c.json": json.dumps({**req.to_json(), "request_id": "c",
                                                             "submitted_time": 10 ** 400}).encode()}, "junk")
    api.commit(RESULTS, {"evil/results_x.json": b'{"sciprobe": 5}', "evil/results_y.json": b"\xff\xfe"}, "junk")
    with pytest.warns(UserWarning, match="skipping unreadable") as caught:
        again = HubStore(api, REQUESTS, RESULTS)
    assert len(caught) == 5
    assert [r.request_id for r in again.list_requests()] == [req.request_id]
    assert len(again.list_results()) == 1


def test_hub_store_keeps_the_latest_file_of_a_cell(tmp_path):
    """The same owner's case variants are one cell but two file paths (the slug keeps the spelling): on reading
    the repos back, the newer result wins, whatever the file order."""
    api = LocalFolderApi(tmp_path / "hub")
    store = HubStore(api, REQUESTS, RESULTS)
    newer = make_result(make_request(model="ALICE/Model-A"), 0.9)
    newer.created_time = "2026-02-01T00:00:00+00:00"
    older = make_result(make_request(model="alice/model-a"), 0.1)
    older.created_time = "2026-01-01T00:00:00+00:00"
    assert store.add_result(newer) == store.add_result(older)
    store.flush()
    (kept,) = HubStore(api, REQUESTS, RESULTS).list_results()
    assert kept.scores["official"]["macro_f1"] == 0.9
