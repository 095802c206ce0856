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


# ---- views derived once per change of the store (tables, plots, choices, queue) ----------------------------------


class FixedClock:
    """An injected UTC clock: requests are stamped with it, and it moves only when the test says so."""

    def __init__(self) -> None:
        import datetime as dt

        self.at = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)

    def __call__(self):
        return self.at


def page(load) -> dict:
    """The outputs of one page load that these tests read: the overview table, the Provenance row choices and
    the Queue table."""
    import pandas as pd

    outputs = load.fn(None, None, None, None)
    at = next(i for i, o in enumerate(outputs) if isinstance(o, pd.DataFrame) and "Request" in o.columns)
    # the page's outputs end: ... Provenance row choices, Queue table, panel choices, agreement plot and table
    return {"overview": outputs[0].data, "rows": outputs[at - 1]["choices"], "queue": outputs[at]}


def counting(monkeypatch, module, name: str) -> list[int]:
    """Count the calls of ``module.name`` (the derivation the page would otherwise repeat)."""
    calls: list[int] = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def ipi_file(path, flip: int):
    import json

    from sciprobe.leaderboard.queue import data_for
    from sciprobe.leaderboard.validation import task_target

    ids = task_target("idrbench:ipi", data_for("idrbench")).ids
    path.write_text("".join(json.dumps({"id": i, "prediction": "yes" if (k + flip) % 3 == 0 else "no"}) + "\n"
                            for k, i in enumerate(ids)))
    return path


def test_a_new_submission_shows_on_the_next_page_load(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIPROBE_HOME", str(tmp_path / "home"))
    store = SQLiteStore(tmp_path / "s", clock=FixedClock())
    store.add_result(result("org/old", 0.4))
    demo = build_app(store, Settings(), ["idrbench"])
    load = next(f for f in demo.fns.values() if f.api_name == "load")
    before = page(load)
    assert "org/old" in before["overview"].to_string() and len(before["queue"]) == 0
    status, request = demo.sciprobe_service.submit("alice", "idrbench:ipi", str(ipi_file(tmp_path / "p.jsonl", 1)),
                                                   "org/fresh")
    assert request["status"] == "FINISHED", status
    after = page(load)
    assert "org/fresh" in after["overview"].to_string() and "org/old" in after["overview"].to_string()
    assert list(after["queue"]["Model"]) == ["org/fresh"] and list(after["queue"]["Status"]) == ["FINISHED"]
    assert any("org/fresh" in label for label, _ in after["rows"])
    assert after["queue"]["Submitted"][0] == "2030-01-01 00:00:00"  # stamped by the injected clock


def test_an_unchanged_store_derives_nothing_on_a_page_load(tmp_path, monkeypatch):
    from sciprobe.leaderboard import tables
    from sciprobe.leaderboard.records import SubmissionRequest

    monkeypatch.setenv("SCIPROBE_HOME", str(tmp_path / "home"))
    store = CountingStore(tmp_path / "s", clock=FixedClock())
    store.add_result(result("org/a", 0.5))
    frames = counting(monkeypatch, tables, "leaderboard_frame")
    plots = counting(monkeypatch, tables, "cutoff_plot")
    demo = build_app(store, Settings(), ["idrbench"])
    handlers = {f.api_name: f for f in demo.fns.values()}
    load, open_tab = handlers["load"], handlers["open_idrbench"]
    page(load)
    assert not plots  # the first page draws no plot: a tab draws its own when it is opened
    drawn = open_tab.fn("default")  # (score vs cutoff, per-task bars, the paper's note, the paper's rows)
    assert all(p.plot.startswith("data:image/png;base64,") for p in drawn[:2])
    assert "sp-reported" in drawn[3]
    reads, derived = store.reads, (len(frames), len(plots))
    again = page(load)
    open_tab.fn("default")
    assert (store.reads, len(frames), len(plots)) == (reads, *derived)  # nothing read or derived again
    assert "org/a" in again["overview"].to_string()

    SQLiteStore(tmp_path / "s").add_result(result("org/b", 0.7))  # another process's writer
    changed = page(load)
    assert len(frames) > derived[0] and store.reads == reads + 1
    assert "org/b" in changed["overview"].to_string()
    open_tab.fn("default")
    assert len(plots) > derived[1]  # the tab's plots are drawn again for the new result

    # a queued request changes the queue, not the results: the Queue tab shows it, the tables are not redone
    derived = (len(frames), len(plots))
    store.add_submission(SubmissionRequest(
        request_id="r-judged", user="carol", model_name="org/queued", task="idrbench:ipi", benchmark="idrbench",
        benchmark_version="1.0.0", dataset_fingerprint="fp-a", predictions_sha256="0" * 64, n_predictions=4,
        predictions_file="p.jsonl"), b"{}")
    queued = page(load)
    open_tab.fn("default")
    assert list(queued["queue"]["Model"]) == ["org/queued"] and list(queued["queue"]["Status"]) == ["PENDING"]
    assert (len(frames), len(plots)) == derived


def test_a_page_load_gets_its_own_copy_of_a_kept_table(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIPROBE_HOME", str(tmp_path / "home"))
    store = SQLiteStore(tmp_path / "s")
    store.add_result(result("org/a", 0.5))
    service = LeaderboardService(store, Settings(), ["idrbench"])
    first = service.table_view("idrbench").data
    first.loc[:, "Model"] = "changed by a caller"
    assert "org/a" in service.table_view("idrbench").data.to_string()
    queue = service.queue_frame()
    queue["Model"] = ["x"] * len(queue)
    assert "x" not in service.queue_frame()["Model"].tolist()


def test_derived_views_follow_the_version_they_were_filed_under():
    from sciprobe.leaderboard.derived import DerivedViews

    views, calls = DerivedViews(max_views=2), []

    def compute(value):
        return lambda: calls.append(value) or value

    assert views.get("results", 1, "a", compute("a@1")) == "a@1"
    assert views.get("results", 1, "a", compute("again")) == "a@1"
    assert views.get("requests", 7, "a", compute("queue@7")) == "queue@7"  # scopes are apart
    assert views.get("results", 2, "a", compute("a@2")) == "a@2"  # a new version derives again
    assert views.get("results", 1, "a", compute("a@1 again")) == "a@1 again"  # a late reader of 1: not 2's view
    assert views.get("results", 2, "a", compute("a@2 again")) == "a@2"  # ... and it did not evict version 2
    assert views.get("results", None, "a", compute("n1")) == "n1"
    assert views.get("results", None, "a", compute("n2")) == "n2"  # no version: never kept
    views.get("results", 3, "a", compute("a@3"))
    views.get("results", 3, "b", compute("b@3"))
    views.get("results", 3, "c", compute("c@3"))  # over max_views: the scope starts afresh
    assert views.get("results", 3, "c", compute("c@3 again")) == "c@3"
    assert calls == ["a@1", "queue@7", "a@2", "a@1 again", "n1", "n2", "a@3", "b@3", "c@3"]


def test_gradio_is_imported_without_its_stub_writer(tmp_path):
    """In a fresh process (gradio is already imported in this one): the writer is replaced, no stub is written,
    and the Blocks of a small app still build with their events."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from sciprobe.leaderboard.gradio_import import import_gradio\n"
            "gr = import_gradio()\n"
            "import gradio.component_meta as meta\n"
            "assert meta.create_or_modify_pyi.__name__ == '_no_stub', meta.create_or_modify_pyi\n"
            "with gr.Blocks() as demo:\n"
            "    box = gr.Textbox()\n"
            "    out = gr.Textbox()\n"
            "    box.submit(lambda s: s.upper(), box, out, api_name='upper')\n"
            "fn = next(f for f in demo.fns.values() if f.api_name == 'upper')\n"
            "assert fn.fn('ok') == 'OK'\n"
            "assert import_gradio() is gr\n"
            "print('fine')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0 and done.stdout.strip().endswith("fine"), done.stderr[-2000:]


def test_a_dataset_is_hashed_once_per_state_of_its_shards(tmp_path, monkeypatch):
    from sciprobe.data import build

    hashed = counting(monkeypatch, build, "file_fingerprint")
    folder = tmp_path / "data" / "ipi"
    folder.mkdir(parents=True)
    (folder / "test.parquet").write_bytes(b"one")
    first = build.dataset_fingerprint(tmp_path / "data")
    assert build.dataset_fingerprint(tmp_path / "data") == first and len(hashed) == 1
    (folder / "test.parquet").write_bytes(b"other bytes")
    second = build.dataset_fingerprint(tmp_path / "data")
    assert second != first and len(hashed) == 2
    (folder / "train.parquet").write_bytes(b"a new shard")
    assert build.dataset_fingerprint(tmp_path / "data") not in (first, second) and len(hashed) == 3
