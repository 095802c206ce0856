"""The leaderboard Space end to end through its API: gradio_client 2.7.2 against
``launch(prevent_thread_lock=True, server_name="127.0.0.1")`` on a free port, store in a tmp dir."""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path

import pytest

from sciprobe.leaderboard.app import LeaderboardService, Settings, build_app, launch_options
from sciprobe.leaderboard.queue import data_for, process_pending, submit
from sciprobe.leaderboard.store import SQLiteStore
from sciprobe.leaderboard.validation import task_target, validate_model_info, validate_submission

from golden import CASES_DIR

SUBMISSIONS = CASES_DIR / "submissions"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ipi_predictions(path: Path, flip: int = 0) -> Path:
    """Gold-agnostic predictions for every idrbench:ipi id; ``flip`` changes some labels (a different file)."""
    target = task_target("idrbench:ipi", data_for("idrbench"))
    path.write_text("".join(json.dumps({"id": i, "prediction": "yes" if (k + flip) % 3 == 0 else "no"}) + "\n"
                            for k, i in enumerate(target.ids)))
    return path


@pytest.fixture(scope="module")
def env_dirs(tmp_path_factory):
    saved = {k: os.environ.get(k) for k in ("SCIPROBE_LEADERBOARD_DIR", "SCIPROBE_LEADERBOARD_AUTH",
                                             "SCIPROBE_LEADERBOARD_RATE_LIMIT", "SCIPROBE_LEADERBOARD_STORE")}
    root = tmp_path_factory.mktemp("lb-app")
    os.environ.update({"SCIPROBE_LEADERBOARD_DIR": str(root / "store"), "SCIPROBE_LEADERBOARD_AUTH": "local",
                       "SCIPROBE_LEADERBOARD_RATE_LIMIT": "4/3600", "SCIPROBE_LEADERBOARD_STORE": "sqlite"})
    yield root
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="module")
def app(env_dirs, tmp_path_factory):
    from gradio_client import Client

    os.environ.setdefault("SCIPROBE_HOME", str(tmp_path_factory.getbasetemp() / "sciprobe-home"))
    demo = build_app()
    demo.queue()
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options())
    client = Client(f"http://127.0.0.1:{port}/", verbose=False)
    yield demo, client
    client.close() if hasattr(client, "close") else None
    demo.close()


def table(result) -> list[dict]:
    return [dict(zip(result["headers"], row)) for row in result["data"]]


def models(rows: list[dict]) -> list[dict]:
    """The model rows of a table (reference baselines are rows of Type "reference baseline")."""
    return [r for r in rows if r["Type"] == "model"]


def test_every_handler_has_an_api_name(app):
    _, client = app
    names = set(client.view_api(return_format="dict", print_info=False)["named_endpoints"])
    expected = {"/submit", "/refresh", "/refresh_after_submit", "/load", "/provenance", "/sign_in",
                "/filter_overview", "/filter_idrbench", "/select_overview", "/select_idrbench", "/plots_idrbench"}
    assert expected <= names
    # tabs come from the registry, not a hard-coded list
    from sciprobe.core.registry import benchmark_names

    assert {f"/filter_{b}" for b in benchmark_names()} <= names
    for dep in app[0].config["dependencies"]:
        assert dep.get("api_name"), dep


def test_submit_refresh_filter_provenance(app, tmp_path):
    from gradio_client import handle_file

    demo, client = app
    status, request = client.predict("alice", "idrbench:ipi", handle_file(str(ipi_predictions(tmp_path / "a.jsonl"))),
                                     "openai/gpt-4o-mini", "", "", "", "first run", api_name="/submit")
    assert status.startswith("**Scored:**") and "macro_f1" in status and "16/16" in status, status
    assert re.search(r"macro_f1 \d\.\d{3}, 95% CI \[\d\.\d{3}, \d\.\d{3}\] \(strict", status), status
    assert request["status"] == "FINISHED" and request["predictions_file"] == "a.jsonl"

    upload = handle_file(str(ipi_predictions(tmp_path / "b.jsonl", 1)))
    status2, request2 = client.predict("bob", "idrbench:ipi", upload,
                                       "meta-llama/Llama-3.3-70B-Instruct", "", "", "2025-06", "", api_name="/submit")
    assert request2["status"] == "FINISHED", status2
    # a claim of 1900-01 for a model the registry does not know: shown as a claim, never "contamination-free"
    third = handle_file(str(ipi_predictions(tmp_path / "c.jsonl", 2)))
    status3, request3 = client.predict("bob", "idrbench:ipi", third, "bob/unlisted-7b", "", "", "1900-01", "",
                                       api_name="/submit")
    assert request3["status"] == "FINISHED", status3

    outputs = client.predict(api_name="/refresh")
    everything = table(outputs[0])
    overview = models(everything)
    assert {r["Model"] for r in overview} == {"openai/gpt-4o-mini", "meta-llama/Llama-3.3-70B-Instruct",
                                              "bob/unlisted-7b"}
    # the reference baselines computed at start are there too: after every model, owned by nobody
    references = everything[len(overview):]
    assert {"random (reference baseline)", "majority (reference baseline)"} <= {r["Model"] for r in references}
    assert all(r["Type"] == "reference baseline" and r["Submitter"] == "—" for r in references)
    gpt = next(r for r in overview if r["Model"] == "openai/gpt-4o-mini")
    assert isinstance(gpt["idrbench:ipi macro_f1"], float) and gpt["Coverage"] == "16/16"
    interval = re.fullmatch(r"\[([01]\.\d{3}), ([01]\.\d{3})\]", gpt["idrbench:ipi macro_f1 95% CI"])  # beside it
    assert interval and float(interval[1]) <= round(gpt["idrbench:ipi macro_f1"], 3) <= float(interval[2])
    assert gpt["Benchmark"] == "idrbench" and gpt["Version"] == "1.0.0" and gpt["Contamination-free"] == "yes"
    assert gpt["Knowledge cutoff"] == "2023-10-31" and gpt["Submitter"] == "alice"
    # llama claims 2025-06, the registry says 2024-06: the registry wins, the conflicting claim is shown beside it
    llama = next(r for r in overview if r["Model"].startswith("meta-llama/"))
    assert llama["Knowledge cutoff"] == "2024-06-30 (registry; claimed 2025-06-30)"
    assert llama["Contamination-free"] == "yes"
    unlisted = next(r for r in overview if r["Model"] == "bob/unlisted-7b")
    assert unlisted["Knowledge cutoff"] == "1900-01-31 (claimed)" and unlisted["Contamination-free"] == "unverified"
    idr = models(table(outputs[1]))
    assert {r["ipi coverage"] for r in idr} == {"16/16"}

    # filters: family, contamination-free only (the claim-only row is left out), search
    only_gpt = table(client.predict("default", ["gpt"], False, "", api_name="/filter_idrbench"))
    assert [r["Model"] for r in models(only_gpt)] == ["openai/gpt-4o-mini"]
    assert len(only_gpt) > 1  # the filters choose models: the reference rows stay
    clean = models(table(client.predict("default", [], True, "", api_name="/filter_overview")))
    assert sorted(r["Model"] for r in clean) == ["meta-llama/Llama-3.3-70B-Instruct", "openai/gpt-4o-mini"]
    searched = models(table(client.predict("default", [], False, "llama", api_name="/filter_idrbench")))
    assert [r["Model"] for r in searched] == ["meta-llama/Llama-3.3-70B-Instruct"]
    strict = table(client.predict("strict", ["gpt"], False, "", api_name="/filter_idrbench"))
    assert strict[0]["ipi coverage"] == "16/16"

    # provenance of the row and of one cell
    row_id = gpt["Row"]
    prov = client.predict(row_id, "", api_name="/provenance")
    cell = prov["cells"]["idrbench:ipi"]
    assert cell["dataset_fingerprint"] == request["dataset_fingerprint"] and cell["submitted_by"] == "alice"
    assert cell["provenance"]["predictions_sha256"] == request["predictions_sha256"]
    assert cell["provenance"]["scored_by"] == "sciprobe.run.score_predictions.score_file"
    assert set(cell["scores"]) == {"official", "strict"}
    one = client.predict(row_id, "idrbench:ipi", api_name="/provenance")
    assert one["task"] == "idrbench:ipi" and one["model"] == "openai/gpt-4o-mini"

    # the same file again is a duplicate; nothing new is stored
    before = len(demo.sciprobe_service.store.list_requests())
    status3, rejected = client.predict("alice", "idrbench:ipi", handle_file(str(tmp_path / "a.jsonl")),
                                       "openai/gpt-4o-mini", "", "", "", "", api_name="/submit")
    assert rejected["status"] == "REJECTED" and "duplicate submission" in status3
    assert len(demo.sciprobe_service.store.list_requests()) == before


def test_hostile_upload_through_the_api_is_rejected(app):
    from gradio_client import handle_file

    demo, client = app
    before = len(demo.sciprobe_service.store.list_requests())
    status, record = client.predict("mallory", "idrbench:ipi", handle_file(str(SUBMISSIONS / "binary_garbage.jsonl")),
                                    "org/model", "", "", "", "", api_name="/submit")
    assert record["status"] == "REJECTED" and "binary data" in status
    status, record = client.predict("mallory", "idrbench:ipi", handle_file(str(SUBMISSIONS / "valid_ipi.jsonl")),
                                    "<script>alert(1)</script>", "", "", "", "", api_name="/submit")
    assert record["status"] == "REJECTED" and "<script>" not in status
    assert len(demo.sciprobe_service.store.list_requests()) == before


def test_rate_limit_per_user(app, tmp_path):
    from gradio_client import handle_file

    _, client = app
    statuses = []
    for i in range(5):  # the module's limit is 4 per hour
        path = ipi_predictions(tmp_path / f"r{i}.jsonl", flip=i + 10)
        path.write_text(path.read_text().replace('"no"', '"yes"', i + 1))
        status, _ = client.predict("carol", "idrbench:ipi", handle_file(str(path)), f"org/rate-{i}", "", "", "", "",
                                   api_name="/submit")
        statuses.append(status)
    assert all(s.startswith("**Scored:**") for s in statuses[:4]), statuses
    assert "rate limit" in statuses[4]


def test_oauth_mode_uses_the_signed_in_profile(env_dirs, tmp_path, monkeypatch):
    """OAuth mode: the submit handler takes the user from gr.OAuthProfile. Outside a Space gradio mocks the login
    with the machine's HF account (network); the mock is replaced by a fixed profile and the handler is called
    directly."""
    pytest.importorskip("itsdangerous", reason="gradio's OAuth session middleware needs gradio[oauth]")
    import gradio as gr

    monkeypatch.setattr("gradio.oauth._get_mocked_oauth_info",
                        lambda: {"name": "HF User", "preferred_username": "hf-user", "picture": "", "profile": ""})

    store = SQLiteStore(tmp_path / "oauth-store")
    demo = build_app(store, Settings(auth="oauth"), ["idrbench"])
    handler = next(f.fn for f in demo.fns.values() if f.api_name == "submit")
    assert any(isinstance(b, gr.LoginButton) for b in demo.blocks.values())
    args = ("idrbench:ipi", str(ipi_predictions(tmp_path / "o.jsonl")), "org/m", "", "", "", "")
    status, record = handler(*args, None)
    assert record["status"] == "REJECTED" and "sign in first" in status and store.list_requests() == []
    profile = gr.OAuthProfile({"preferred_username": "hf-user", "name": "HF User", "picture": "", "profile": ""})
    status, record = handler(*args, profile)
    assert record["status"] == "FINISHED" and record["user"] == "hf-user", status


def test_queue_worker_scores_pending_requests(tmp_path):
    """Judge-scored tasks wait in the queue; the worker claims and scores them (here: an IPI file forced to queue)."""
    store = SQLiteStore(tmp_path / "q")
    data = data_for("idrbench")
    sub = validate_submission("idrbench:ipi", ipi_predictions(tmp_path / "q.jsonl"), validate_model_info("org/q"),
                              data=data)
    request = submit(store, sub, "dave", inline=False)
    assert request.status == "PENDING" and store.list_results() == []
    done = process_pending(store)
    assert [r.status for r in done] == ["FINISHED"] and len(store.list_results()) == 1
    assert process_pending(store) == []

    # a request whose dataset changed after validation fails cleanly (never stays RUNNING)
    sub2 = validate_submission("idrbench:ipi", ipi_predictions(tmp_path / "q2.jsonl", 2), validate_model_info("org/q"),
                               data=data)
    request2 = submit(store, sub2, "dave", inline=False)
    with store._tx() as con:  # simulate a revision change of the scoring dataset
        record = store.get_request(request2.request_id)
        record.dataset_fingerprint = "another-revision"
        store._save_request(con, record)
    failed = process_pending(store)
    assert failed[0].status == "FAILED" and "dataset changed" in failed[0].error
    assert len(store.list_results()) == 1


def test_hub_store_backed_app(tmp_path, monkeypatch):
    """The same service on the Hub store: files land where the template's repos would hold them."""
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_STORE", "hub")
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_REQUESTS_REPO", "sciprobe/requests")
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_RESULTS_REPO", "sciprobe/results")
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_HUB_LOCAL", str(tmp_path / "hub"))
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DIR", str(tmp_path / "lb"))
    from sciprobe.leaderboard.store_factory import open_store

    service = LeaderboardService(open_store(), Settings(), ["idrbench"])
    predictions = str(ipi_predictions(tmp_path / "h.jsonl"))
    status, record = service.submit("erin", "idrbench:ipi", predictions, "org/hub-model")
    assert record["status"] == "FINISHED", status
    assert service.store.commits == 2  # inline scoring: one batched commit per repo
    requests = list((tmp_path / "hub" / "datasets" / "sciprobe" / "requests").rglob("request_*.json"))
    results = list((tmp_path / "hub" / "datasets" / "sciprobe" / "results").rglob("results_*.json"))
    assert len(requests) == 1 and json.loads(requests[0].read_text())["status"] == "FINISHED"
    assert len(results) == 1 and "idrbench:ipi" in json.loads(results[0].read_text())["results"]
    fresh = LeaderboardService(open_store(), Settings(), ["idrbench"])
    assert [r["Model"] for r in fresh.table("overview").to_dict("records")] == ["org/hub-model"]


def test_worker_command_handler(tmp_path, monkeypatch, capsys):
    """`sciprobe leaderboard --worker --once` processes the queue of the store in --store-dir."""
    import argparse

    from sciprobe.leaderboard.commands import cmd_leaderboard, configure_leaderboard_parser

    monkeypatch.setenv("SCIPROBE_LEADERBOARD_STORE", "sqlite")
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DIR", str(tmp_path / "unused"))
    store = SQLiteStore(tmp_path / "store")
    sub = validate_submission("idrbench:ipi", ipi_predictions(tmp_path / "w.jsonl"), validate_model_info("org/w"),
                              data=data_for("idrbench"))
    submit(store, sub, "wendy", inline=False)
    parser = argparse.ArgumentParser()
    configure_leaderboard_parser(parser)
    args = parser.parse_args(["--worker", "--once", "--store-dir", str(tmp_path / "store")])
    assert cmd_leaderboard(args) == 0
    assert "processed 1 request(s)" in capsys.readouterr().out
    assert [r.status for r in store.list_requests()] == ["FINISHED"]


def test_rows_never_merge_dataset_revisions():
    """Tables: one row per (model, version, fingerprint, cutoff, judges); tasks of one row share it."""
    from sciprobe.leaderboard import tables
    from sciprobe.leaderboard.records import ResultRecord

    def result(task: str, fingerprint: str, value: float, family: str = "org") -> ResultRecord:
        report = {"metric": "m", "mode": "official", "macro_f1": value, "mrr": value,
                  "coverage": {"n_items": 4, "n_scored": 3, "n_failed": 1, "failure_rate": 0.25}}
        return ResultRecord(request_id="r", user="u", model_name="org/m", task=task, benchmark="idrbench",
                            benchmark_version="1.0.0", dataset_fingerprint=fingerprint,
                            headline="mrr" if task.endswith("i2r") else "macro_f1", default_mode="official",
                            scores={"official": report}, provenance={}, model_family=family)

    columns = tables.task_columns(["idrbench"])
    results = [result("idrbench:ipi", "fp-a", 0.5), result("idrbench:i2r", "fp-a", 0.7),
               result("idrbench:ipi", "fp-b", 0.9)]
    frame = tables.leaderboard_frame(results, columns, mode="official")  # the default view ranks ipi in strict
    assert len(frame) == 2
    assert sorted(frame["Dataset"]) == ["fp-a", "fp-b"]
    row_a = frame[frame["Dataset"] == "fp-a"].iloc[0]
    assert row_a["ipi macro_f1"] == 0.5 and row_a["i2r mrr"] == 0.7 and row_a["ipi coverage"] == "3/4"
    assert frame.iloc[0]["Dataset"] == "fp-b"  # sorted by the first task's score
    assert tables.leaderboard_frame(results, columns, mode="strict")["ipi macro_f1"].isna().all()
    hostile = tables.leaderboard_frame([result("idrbench:ipi", "fp-c", 0.1, family="<b>x</b>")], columns,
                                       mode="official")
    assert hostile.iloc[0]["Family"] == "&lt;b&gt;x&lt;/b&gt;"


def test_tables_never_trust_stored_numbers():
    """A stored result with absurd numbers (a store written before the importer checked them) shows n/a and '?',
    never an exception: 10**400 overflows float(), str() of a 5,000-digit int raises."""
    from sciprobe.leaderboard import tables
    from sciprobe.leaderboard.records import ResultRecord

    report = {"macro_f1": 10 ** 400, "coverage": {"n_items": 10 ** 5000, "n_scored": True, "n_failed": -1}}
    bad = ResultRecord(request_id="r", user="u", model_name="org/m", task="idrbench:ipi", benchmark="idrbench",
                       benchmark_version="1.0.0", dataset_fingerprint="fp", headline="macro_f1",
                       default_mode="official", scores={"official": report}, provenance={})
    frame = tables.leaderboard_frame([bad], tables.task_columns(["idrbench"]), mode="official")
    assert frame.iloc[0]["ipi coverage"] == "?/?" and frame.iloc[0]["ipi macro_f1"] is None
    overview = tables.leaderboard_frame([bad], tables.task_columns(["idrbench"]), overview=True, mode="official")
    assert overview.iloc[0]["Coverage"] == ""
