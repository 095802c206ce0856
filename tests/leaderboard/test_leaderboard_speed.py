"""The Space's fixed costs (issue 28): the results table is decoded once per page load (and once per change), and
dataset fingerprints computed at start are cached in the store, keyed by the pinned revision. Behaviour only: how
often the store is read and the data loaded, never how long it takes (bench/leaderboard_space.py measures that)."""

from __future__ import annotations

import os


from sciprobe.leaderboard import baseline_runs
from sciprobe.leaderboard.app import LeaderboardService, Settings, build_app
from sciprobe.leaderboard.records import ResultRecord
from sciprobe.leaderboard.store import SQLiteStore


class CountingStore(SQLiteStore):
    """A SQLite store that counts how often the whole results table is read and decoded."""

    reads = 0

    def list_results(self, benchmark=None):
        self.reads += 1
        return super().list_results(benchmark)


def result(model: str, value: float, fingerprint: str = "fp-a") -> ResultRecord:
    report = {"metric": "m", "mode": "strict", "macro_f1": value,
              "coverage": {"n_items": 4, "n_scored": 4, "n_failed": 0, "failure_rate": 0.0}}
    return ResultRecord(request_id=f"req-{model}", user="u", model_name=model, task="idrbench:ipi",
                        benchmark="idrbench", benchmark_version="1.0.0", dataset_fingerprint=fingerprint,
                        headline="macro_f1", default_mode="strict", scores={"strict": report}, provenance={},
                        model_family="org")


def test_results_are_decoded_once_per_change(tmp_path):
    store = CountingStore(tmp_path / "s")
    store.add_result(result("org/a", 0.5))
    service = LeaderboardService(store, Settings(), ["idrbench"])
    first = [service.results() for _ in range(5)]
    assert store.reads == 1 and all(len(r) == 1 for r in first)
    other = SQLiteStore(tmp_path / "s")  # another process's writer: the counter is in the file
    other.add_result(result("org/b", 0.7))
    assert sorted(r.model_name for r in service.results()) == ["org/a", "org/b"]
    assert store.reads == 2
    other.add_result(result("org/b", 0.9))  # a replaced cell is a change too
    assert [r.scores["strict"]["macro_f1"] for r in service.results() if r.model_name == "org/b"] == [0.9]
    assert store.reads == 3


def test_a_store_without_a_version_is_read_once_per_page_load(tmp_path):
    class Unversioned:
        reads = 0

        def __init__(self, inner):
            self.inner = inner

        def list_results(self, benchmark=None):
            self.reads += 1
            return self.inner.list_results(benchmark)

    inner = SQLiteStore(tmp_path / "s")
    inner.add_result(result("org/a", 0.5))
    store = Unversioned(inner)
    service = LeaderboardService(store, Settings(), ["idrbench"])
    with service.one_read():
        views = [service.table("idrbench") for _ in range(4)] + [service.row_choices()]
    assert store.reads == 1 and all(len(v) == 1 for v in views)
    service.results()
    assert store.reads == 2  # outside a page load it reads the store


def test_page_load_reads_the_table_once(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIPROBE_HOME", str(tmp_path / "home"))
    store = CountingStore(tmp_path / "s")
    for i in range(3):
        store.add_result(result(f"org/m{i}", i / 10))
    demo = build_app(store, Settings(), ["idrbench"])
    load = next(f for f in demo.fns.values() if f.api_name == "load")
    other = SQLiteStore(tmp_path / "s")
    other.add_result(result("org/new", 0.9))  # so the load cannot be answered from the start-up read
    before = store.reads
    outputs = load.fn(None, None, None, None)
    assert store.reads == before + 1
    assert len(outputs) == len(load.outputs)
    assert "org/new" in outputs[0].to_string()


def test_fingerprints_are_cached_by_pinned_revision(tmp_path, monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(baseline_runs, "_fingerprint", lambda b, t, loc: calls.append(loc) or f"fp({loc})")

    class Task:
        name = "ipi"

    class Bench:
        name, version = "idrbench", "1.0.0"

    store = SQLiteStore(tmp_path / "s")
    assert baseline_runs.cached_fingerprint(store, Bench, Task, "org/data@abc") == "fp(org/data@abc)"
    again = SQLiteStore(tmp_path / "s")  # the next start
    assert baseline_runs.cached_fingerprint(again, Bench, Task, "org/data@abc") == "fp(org/data@abc)"
    assert calls == ["org/data@abc"]
    assert baseline_runs.cached_fingerprint(again, Bench, Task, "org/data@def") == "fp(org/data@def)"
    assert calls == ["org/data@abc", "org/data@def"]  # another revision is computed, not reused


def test_a_changed_folder_is_fingerprinted_again(tmp_path, monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(baseline_runs, "_fingerprint", lambda b, t, loc: calls.append(loc) or f"fp{len(calls)}")

    class Task:
        name = "ipi"

    class Bench:
        name, version = "idrbench", "1.0.0"

    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "test.parquet").write_bytes(b"one")
    store = SQLiteStore(tmp_path / "s")
    assert baseline_runs.cached_fingerprint(store, Bench, Task, str(folder)) == "fp1"
    assert baseline_runs.cached_fingerprint(store, Bench, Task, str(folder)) == "fp1"
    (folder / "test.parquet").write_bytes(b"other bytes")
    assert baseline_runs.cached_fingerprint(store, Bench, Task, str(folder)) == "fp2"
    assert len(calls) == 2


def test_concurrent_submissions_scored_in_processes_none_lost_or_duplicated(tmp_path, monkeypatch):
    """Eight submitters at once, scored by a pool of two processes on one SQLite store: every request FINISHED
    once, one result each, none in the Space's own process."""
    import json
    import threading

    from sciprobe.leaderboard.queue import data_for
    from sciprobe.leaderboard.scoring_pool import ScoringPool
    from sciprobe.leaderboard.validation import task_target

    monkeypatch.setenv("SCIPROBE_HOME", str(tmp_path / "home"))
    ids = task_target("idrbench:ipi", data_for("idrbench")).ids
    files = []
    for n in range(8):
        path = tmp_path / f"p{n}.jsonl"
        path.write_text("".join(json.dumps({"id": i, "prediction": "yes" if (k + n) % 3 == 0 else "no"}) + "\n"
                                for k, i in enumerate(ids)))
        files.append(path)
    store = SQLiteStore(tmp_path / "s")
    service = LeaderboardService(store, Settings(), ["idrbench"])
    service.scoring = ScoringPool(2)
    answers: list[dict] = []

    def submitter(n: int) -> None:
        answers.append(service.submit(f"user{n}", "idrbench:ipi", str(files[n]), f"org/model-{n}")[1])

    threads = [threading.Thread(target=submitter, args=(n,)) for n in range(8)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        service.scoring.close()
    assert [a["status"] for a in answers] == ["FINISHED"] * 8, answers
    requests = store.list_requests()
    assert len(requests) == 8 and {r.status for r in requests} == {"FINISHED"}
    results = [r for r in store.list_results() if not r.is_reference]
    assert sorted(r.request_id for r in results) == sorted(r.request_id for r in requests)
    assert len({r.result_id for r in results}) == 8
    assert service.scoring.process_ids and os.getpid() not in service.scoring.process_ids


def test_a_submission_refused_in_a_scoring_process_is_reported(tmp_path, monkeypatch):
    import json

    from sciprobe.leaderboard.queue import data_for
    from sciprobe.leaderboard.scoring_pool import ScoringPool
    from sciprobe.leaderboard.validation import task_target

    monkeypatch.setenv("SCIPROBE_HOME", str(tmp_path / "home"))
    ids = task_target("idrbench:ipi", data_for("idrbench")).ids
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"id": i, "prediction": "no"}) + "\n" for i in ids))
    store = SQLiteStore(tmp_path / "s")
    service = LeaderboardService(store, Settings(), ["idrbench"])
    service.scoring = ScoringPool(2)
    try:
        first = service.submit("alice", "idrbench:ipi", str(path), "org/m")
        again = service.submit("alice", "idrbench:ipi", str(path), "org/m")
        taken = service.submit("bob", "idrbench:ipi", str(path), "ORG/M")
    finally:
        service.scoring.close()
    assert first[1]["status"] == "FINISHED"
    assert again[1]["status"] == "REJECTED" and "duplicate submission" in again[1]["error"]
    assert taken[1]["status"] == "REJECTED" and "belongs to alice" in taken[1]["error"]
    assert len(store.list_requests()) == 1


def test_a_store_without_a_cache_keeps_fingerprints_in_the_leaderboard_folder(tmp_path, monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(baseline_runs, "_fingerprint", lambda b, t, loc: calls.append(loc) or "fp")
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DIR", str(tmp_path / "lb"))

    class Task:
        name = "ipi"

    class Bench:
        name, version = "idrbench", "1.0.0"

    for _ in range(2):  # two starts of a Space on the hub store (no cache of its own)
        assert baseline_runs.cached_fingerprint(object(), Bench, Task, "org/data@abc") == "fp"
    assert calls == ["org/data@abc"]
