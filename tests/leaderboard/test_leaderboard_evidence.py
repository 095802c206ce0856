"""Issue 11 through the Space: it scores against pinned data (a demo says so on every tab), ranks only complete
results in a mode that cannot be gamed by dropping items, refuses partial submissions, and takes a lighteval run as
its details file (rescored, and only when made on its data)."""

from __future__ import annotations

import json
import re
import shutil
import socket
import urllib.request
from pathlib import Path

import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.leaderboard import tables
from sciprobe.leaderboard.app import LeaderboardService, Settings, build_app, launch_options
from sciprobe.leaderboard.records import ResultRecord
from sciprobe.leaderboard.store import SQLiteStore
from sciprobe.leaderboard.validation import task_target

VERDICTS = ['Your verdict: Yes\nConfidence score: 80\nSubject: ["Physics"]',
            'Your verdict: No\nConfidence score: 70\nSubject: ["Physics"]', "no idea"]
TABS = ("overview", "idrbench", "provenance", "agreement", "submit", "queue", "about")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def predictions(path: Path, ids, answer=lambda k: "yes" if k % 3 == 0 else "no") -> Path:
    path.write_text("".join(json.dumps({"id": i, "prediction": answer(k)}) + "\n" for k, i in enumerate(ids)))
    return path


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    """A release of IPI whose ids are not the sample's (what the Space must score once it is pinned to it): the
    sample's files with the non-few-shot ids renumbered, built as `sciprobe build` would."""
    import os

    from sciprobe.core.registry import get_benchmark
    from sciprobe.benchmarks.idrbench.source import IPI_FEWSHOT_IDS, fewshot_ids
    from sciprobe.data.build import build_benchmark

    os.environ["SCIPROBE_HOME"] = str(tmp_path_factory.getbasetemp() / "sciprobe-home")
    root = tmp_path_factory.mktemp("release")
    bench = get_benchmark("idrbench")
    shutil.copytree(bench.sample_source, root / "src")
    ipi = json.loads((root / "src" / "data_exp_1.json").read_text())
    fewshot = set(fewshot_ids(IPI_FEWSHOT_IDS, {r["id"] for r in ipi}))  # as the sample spells them
    for record in ipi:
        if record["id"] not in fewshot:
            record["id"] = re.sub(r"^(\d{4})\.\d", r"\1.8", record["id"])  # the sample's ids read YYMM.9xxxx
    (root / "src" / "data_exp_1.json").write_text(json.dumps(ipi))
    build_benchmark(bench, root / "src", root / "idrbench-release", configs=["ipi"])
    return root / "idrbench-release"


def service(tmp_path: Path, data: tuple = (), benchmarks=("idrbench",)) -> LeaderboardService:
    return LeaderboardService(SQLiteStore(tmp_path / "store"), Settings(auth="local", data=data), list(benchmarks))


# ---------------------------------------------------------------- 3. the Space scores against the real, pinned data

def test_observation_3_pinned_space_takes_the_release_ids_and_refuses_the_samples(release, tmp_path):
    """Predictions for the release's ids are scored (no longer "unknown id"); the sample's ids are refused, and the
    message names the dataset the Space scores against. The result carries that dataset's fingerprint."""
    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.build import dataset_fingerprint
    from sciprobe.data.task_data import sample_dataset_dir

    pinned = service(tmp_path, (("idrbench", str(release)),))
    assert pinned.demo_notice() == "" and "idrbench-release" in pinned.data_note("idrbench")
    ids = task_target("idrbench:ipi", str(release)).ids
    sample_ids = task_target("idrbench:ipi", str(sample_dataset_dir(get_benchmark("idrbench")))).ids
    assert set(ids) != set(sample_ids)
    status, request = pinned.submit("alice", "idrbench:ipi", str(predictions(tmp_path / "p.jsonl", ids)),
                                    "org/model")
    assert request["status"] == "FINISHED", status
    assert "(strict, the ranked mode)" in status
    [result] = pinned.store.list_results()
    assert result.dataset_fingerprint == request["dataset_fingerprint"] == dataset_fingerprint(release)
    assert result.provenance["dataset"] == "folder:idrbench-release"
    status, rejected = pinned.submit("bob", "idrbench:ipi", str(predictions(tmp_path / "s.jsonl", sample_ids)),
                                     "bob/model")
    assert rejected["status"] == "REJECTED"
    assert "unknown id" in status and "folder:idrbench-release" in status


def test_the_real_release_ids_are_scored_by_a_space_pinned_to_the_release(idrbench_release_built, tmp_path):
    """The observation as written: predictions for the 1,120 IPI ids of the real release (skips when the reference
    data is not on this machine)."""
    pinned = service(tmp_path, (("idrbench", str(idrbench_release_built)),))
    ids = task_target("idrbench:ipi", str(idrbench_release_built)).ids
    assert len(ids) == 1120
    status, request = pinned.submit("alice", "idrbench:ipi", str(predictions(tmp_path / "p.jsonl", ids)),
                                    "org/model")
    assert request["status"] == "FINISHED" and "1120/1120" in status, status


def test_settings_pin_hub_datasets_to_a_revision(monkeypatch):
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DATA", "idrbench=org/idrbench")
    with pytest.raises(SciprobeError, match="pinned hub dataset OWNER/NAME@REVISION"):
        Settings.from_env()
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DATA", "nosuchbench=org/x@abc")
    with pytest.raises(SciprobeError, match="unknown benchmark 'nosuchbench'"):
        Settings.from_env()
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DATA", "idrbench=org/idrbench@0123abcd")
    settings = Settings.from_env()
    from sciprobe.leaderboard.pins import data_pin

    pin = data_pin("idrbench", dict(settings.data))
    assert pin.kind == "hub" and not pin.demo and pin.resolve() == "org/idrbench@0123abcd"
    assert pin.describe() == "`org/idrbench@0123abcd`"
    from sciprobe.data.task_data import split_revision

    assert split_revision("org/idrbench@0123abcd") == ("org/idrbench", "0123abcd")


def test_a_submission_validated_on_other_data_is_never_scored_on_the_pinned_data(release, tmp_path):
    """The fingerprint a submission was validated against must be the pinned dataset's when it is scored."""
    from sciprobe.core.registry import get_benchmark
    from sciprobe.leaderboard.queue import process_pending, submit
    from sciprobe.leaderboard.validation import validate_model_info, validate_submission
    from sciprobe.data.task_data import sample_dataset_dir

    store = SQLiteStore(tmp_path / "store")
    sample = str(sample_dataset_dir(get_benchmark("idrbench")))
    ids = task_target("idrbench:ipi", sample).ids
    sub = validate_submission("idrbench:ipi", predictions(tmp_path / "p.jsonl", ids), validate_model_info("org/m"),
                              data=sample)
    request = submit(store, sub, "alice", data=lambda bench: sample, inline=False)
    [done] = process_pending(store, data=lambda bench: str(release))  # the Space was re-pinned meanwhile
    assert done.request_id == request.request_id and done.status == "FAILED"
    assert "dataset changed" in done.error and store.list_results() == []


# ---------------------------------------------------------------- the demo says so on every tab

def _page_config(demo) -> dict:
    demo.queue()
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options())
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=60) as response:
            return json.loads(response.read())
    finally:
        demo.close()


def _markdown(config: dict) -> dict[str, str]:
    return {c["props"].get("elem_id"): c["props"].get("value") or "" for c in config["components"]
            if c.get("type") == "markdown" and c["props"].get("elem_id")}


def test_a_demo_space_says_so_on_every_tab_and_a_pinned_one_does_not(release, tmp_path):
    """The page the browser gets (/config of the running Space): with the bundled sample, a demo notice on each of
    the seven tabs; pinned to a release, none, and the benchmark tab names its data and the ranked mode."""
    demo_page = _markdown(_page_config(build_app(SQLiteStore(tmp_path / "a"), Settings(auth="local"), ["idrbench"])))
    for tab in TABS:
        assert "**Demo:** idrbench is scored against sciprobe's bundled synthetic sample" in demo_page[f"demo-{tab}"]
    assert "bundled synthetic sample (a demo" in demo_page["about-idrbench"]
    pinned_page = _markdown(_page_config(build_app(SQLiteStore(tmp_path / "b"),
                                                   Settings(auth="local", data=(("idrbench", str(release)),)),
                                                   ["idrbench"])))
    assert not [key for key in pinned_page if key.startswith("demo-")]
    assert "`idrbench-release`" in pinned_page["about-idrbench"]
    assert "**strict** (idrbench:ipi" in pinned_page["ranking-idrbench"]
    assert "**corrected** (idrbench:i2r)" in pinned_page["ranking-idrbench"]


# ---------------------------------------------------------------- ranking: complete results, a mode that counts all

def _result(model: str, official: float, strict: float, provenance: dict | None = None) -> ResultRecord:
    def report(value: float, scored: int) -> dict:
        return {"macro_f1": value, "coverage": {"n_items": 16, "n_scored": scored, "n_failed": 16 - scored,
                                                "failure_rate": (16 - scored) / 16}}

    return ResultRecord(request_id="r", user=model.split("/")[0], model_name=model, task="idrbench:ipi",
                        benchmark="idrbench", benchmark_version="1.0.0", dataset_fingerprint="f" * 64,
                        headline="macro_f1", default_mode="official",
                        scores={"official": report(official, 4), "strict": report(strict, 16)},
                        provenance=provenance or {})


def test_the_leaderboard_ranks_complete_results_in_a_mode_that_dropping_items_cannot_game():
    """A model that answers only 4 easy items (official drops the 12 it left unanswered: 0.95) must not outrank
    one that answers everything (0.70 both ways): the default view ranks IPI by strict. Partial and incomplete
    records are never shown; coverage stands beside every score, in the overview too."""
    gamer, honest = _result("a/gamer", 0.95, 0.25), _result("b/honest", 0.70, 0.70)
    hidden = [_result("c/partial", 0.99, 0.99, {"partial": {"n_predicted": 10, "n_items": 16}}),
              _result("d/incomplete", 0.99, 0.99, {"incomplete": "calls failed"})]
    columns = tables.task_columns(["idrbench"])
    ranked = tables.leaderboard_frame([gamer, honest, *hidden], columns)
    assert list(ranked["Model"]) == ["b/honest", "a/gamer"]
    assert list(ranked["ipi macro_f1"]) == [0.7, 0.25] and list(ranked["ipi coverage"]) == ["16/16", "16/16"]
    official = tables.leaderboard_frame([gamer, honest, *hidden], columns, mode="official")
    assert list(official["Model"]) == ["a/gamer", "b/honest"] and official.iloc[0]["ipi coverage"] == "4/16"
    overview = tables.leaderboard_frame([gamer, honest, *hidden], columns, overview=True)
    assert list(overview["idrbench:ipi coverage"]) == ["16/16", "16/16"]
    assert ("ranked", tables.DEFAULT_MODE) == tables.mode_choices(columns)[0]
    assert tables.row_provenance([*hidden], hidden[0].row_id) == {"error": f"no leaderboard row {hidden[0].row_id!r}"}


def test_every_ranked_mode_scores_every_item():
    """The mode each task ranks by counts an unanswered item against the score (n_scored == n_items), checked
    through a predictions file of null answers for every task that scores one without a model or judge."""
    import tempfile

    from sciprobe.core.registry import benchmark_names, get_benchmark
    from sciprobe.run.score_predictions import score_file
    from sciprobe.run.task_runner import runner_of

    checked = []
    for bench in ("idrbench",):  # the benchmarks with a bundled sample that build fast
        for name, task in get_benchmark(bench).tasks.items():
            assert task.ranked_mode in task.modes
            if not runner_of(task).reads_predictions or "response" not in runner_of(task).prediction_fields(task):
                continue
            with tempfile.TemporaryDirectory() as tmp:
                ids = task_target(f"{bench}:{name}", None).ids
                preds = Path(tmp) / "p.jsonl"
                preds.write_text("".join(json.dumps({"id": i, "response": None}) + "\n" for i in ids))
                _, [result] = score_file(f"{bench}:{name}", preds, output_dir=Path(tmp) / "o")
                coverage = result.scores[task.ranked_mode].coverage
                assert coverage.n_scored == coverage.n_items == len(ids), (name, task.ranked_mode)
                checked.append(name)
    assert "ipi" in checked
    for bench in benchmark_names():
        for task in get_benchmark(bench).tasks.values():
            assert task.ranked_mode in task.modes, (bench, task.name)


# ---------------------------------------------------------------- missing predictions; lighteval details uploads

def test_a_partial_submission_is_refused_in_one_line(tmp_path):
    space = service(tmp_path)
    ids = task_target("idrbench:ipi", None).ids
    status, request = space.submit("alice", "idrbench:ipi", str(predictions(tmp_path / "p.jsonl", ids[:10])),
                                   "org/model")
    assert request["status"] == "REJECTED" and space.store.list_requests() == []
    assert f"{len(ids) - 10} of {len(ids)} items have no prediction" in status and "never ranked" in status


@pytest.fixture(scope="module")
def lighteval_run(tmp_path_factory):
    from lighteval_support import write_lighteval_run

    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.task_data import sample_dataset_dir

    data = str(sample_dataset_dir(get_benchmark("idrbench")))
    results = write_lighteval_run(tmp_path_factory.mktemp("lighteval"), "idrbench:ipi",
                                  lambda item, k: VERDICTS[k % 3], data=data)
    [details] = results.parents[3].rglob("details_*.parquet")
    return results, details


def test_the_space_takes_a_lighteval_details_upload_and_rescores_it(lighteval_run, tmp_path):
    """Through the running Space's API: the details file of a lighteval run of our card is scored (the numbers
    lighteval printed, now with coverage); its results JSON is refused (scores are never taken from outside);
    details made on other data are refused."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from gradio_client import Client, handle_file

    results, details = lighteval_run
    upload = tmp_path / "details_ipi.parquet"
    shutil.copy(details, upload)
    table = pq.read_table(details)
    rows = table.to_pylist()
    for row in rows:
        row["doc"]["specific"]["gold"] = "no" if row["doc"]["specific"]["gold"] == "yes" else "yes"
    other = tmp_path / "details_other.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), other)
    lighteval_json = tmp_path / "results_lighteval.json"
    shutil.copy(results, lighteval_json)

    demo = build_app(SQLiteStore(tmp_path / "store"), Settings(auth="local"), ["idrbench"])
    demo.queue()
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options())
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        status, request = client.predict("alice", "idrbench:ipi", handle_file(str(upload)), "org/lighteval-model",
                                         "", "", "", "", api_name="/submit")
        assert request["status"] == "FINISHED", status
        assert "16/16" in status
        status, rejected = client.predict("alice", "idrbench:ipi", handle_file(str(lighteval_json)), "org/other",
                                          "", "", "", "", api_name="/submit")
        assert rejected["status"] == "REJECTED" and "results file: its scores are never taken from outside" in status
        status, rejected = client.predict("alice", "idrbench:ipi", handle_file(str(other)), "org/third",
                                          "", "", "", "", api_name="/submit")
        assert rejected["status"] == "REJECTED" and "made on other data" in status
    finally:
        demo.close()
    [result] = [r for r in SQLiteStore(tmp_path / "store").list_results() if not r.is_reference]
    printed = json.loads(results.read_text())["results"]["idrbench:ipi|0"]
    assert result.scores["official"]["macro_f1"] == pytest.approx(printed["macro_f1"])
    assert result.scores["strict"]["macro_f1"] == pytest.approx(printed["macro_f1_strict"])
    assert result.scores["strict"]["coverage"]["n_items"] == 16


def test_a_cell_without_a_number_draws_no_bar():
    """n/a is not a score of zero: the per-task bars leave it out instead of drawing a bar of height 0."""
    columns = tables.task_columns(["idrbench"])
    fig = tables.task_bars([_result("a/m", 0.5, None)], columns, mode="strict")
    assert [p.get_height() for p in fig.axes[0].patches] == []
    fig = tables.task_bars([_result("a/m", 0.5, 0.4)], columns, mode="strict")
    assert [round(p.get_height(), 3) for p in fig.axes[0].patches] == [0.4]


@pytest.mark.slow
def test_lighteval_cli_run_goes_on_the_leaderboard(tmp_path, monkeypatch, capsys):
    """lighteval's own CLI (through `sciprobe lighteval`, litellm over real HTTP to a loopback stub, --save-details)
    on our card, then `sciprobe leaderboard --import` of its output folder: one result, rescored by sciprobe to the
    numbers lighteval printed."""
    import itertools
    import os
    import subprocess
    import sys

    from sciprobe.cli.commands import main
    from sciprobe.testing.stub_server import StubServer

    from task_card_support import CARD

    answers = itertools.cycle(VERDICTS)
    with StubServer(reply=lambda body: next(answers)) as server:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
        proc = subprocess.run(
            [sys.executable, "-m", "sciprobe.cli.commands", "lighteval", "endpoint", "litellm",
             f"model_name=openai/stub-model,base_url={server.base_url},provider=openai,api_key=sk-test",
             "idrbench:ipi|0", "--custom-tasks", str(CARD), "--output-dir", str(tmp_path / "out"), "--save-details"],
            env=env, capture_output=True, text=True, timeout=1800, cwd=tmp_path)  # litellm caches in cwd
        assert proc.returncode == 0, proc.stderr[-2000:]
    from sciprobe.leaderboard import commands

    monkeypatch.setattr(commands, "serve", lambda host, port: None)
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_STORE", "sqlite")
    assert main(["leaderboard", "--import", str(tmp_path / "out"), "--store-dir", str(tmp_path / "store")]) == 0
    assert "imported 1 task result(s)" in capsys.readouterr().out
    [result] = [r for r in SQLiteStore(tmp_path / "store").list_results() if not r.is_reference]
    printed = json.loads(next((tmp_path / "out" / "results").rglob("results_*.json")).read_text())
    scores = printed["results"]["idrbench:ipi|0"]
    assert result.model_name == "openai/stub-model" and result.scores["strict"]["coverage"]["n_items"] == 16
    assert result.scores["official"]["macro_f1"] == pytest.approx(scores["macro_f1"])
    assert result.scores["strict"]["macro_f1"] == pytest.approx(scores["macro_f1_strict"])


def test_judge_calls_without_an_answer_never_reach_the_leaderboard_and_resume_from_the_cache(tmp_path, monkeypatch):
    """The scoring worker: when judge calls get no answer (a 503 after the retries) the request goes back to
    PENDING with why, nothing is stored; a later worker makes only the calls that were not answered."""
    from sciprobe.benchmarks.prescience import lacer_judge as lr
    from sciprobe.leaderboard.queue import Worker, data_for, run_worker, submit
    from sciprobe.leaderboard.validation import validate_model_info, validate_submission
    from sciprobe.testing.stub_server import StubServer

    template = tmp_path / "lattice.json"
    lr.write_lattices(template, [lr.toy_lattice("matching")], {"note": "test lattice"})
    monkeypatch.setenv(lr.TEMPLATE_ENV, str(template))
    task = "prescience:contribution_generation"
    ids = task_target(task, data_for("prescience")).ids
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"id": i, "response": f"Title: Idea {k}\nAbstract: A follow-up {k}."})
                             + "\n" for k, i in enumerate(ids)))
    store = SQLiteStore(tmp_path / "store")
    request = submit(store, validate_submission(task, preds, validate_model_info("org/m"),
                                                data=data_for("prescience")), "judy")
    failing = {"on": True}

    def status(body: dict, index: int):
        return 503 if failing["on"] and "Idea 3\n" in body["messages"][-1]["content"] else None

    with StubServer(reply=lambda body: "Score: 7", status_script=status) as stub:
        spec = f"openai/judge,base_url={stub.base_url},api_key=sk-test,max_retries=0"
        logs: list[str] = []
        assert run_worker(store, worker=Worker.create(spec, log=logs.append), max_rounds=1, poll_seconds=0) == 0
        paused = store.get_request(request.request_id)
        assert paused.status == "PENDING" and "scoring incomplete" in paused.error
        assert "1 of 31 items got no answer (ServiceUnavailableError (judge): 1)" in paused.error
        assert store.list_results() == [] and any("PENDING again" in line for line in logs)
        sent = stub.count
        failing["on"] = False
        assert run_worker(store, worker=Worker.create(spec, log=logs.append), max_rounds=1, poll_seconds=0) == 1
        assert stub.count == sent + 1  # the other judge answers came from the cache
    done = store.get_request(request.request_id)
    assert done.status == "FINISHED"
    [result] = store.list_results()
    assert result.scores["corrected"]["coverage"]["n_items"] == len(ids) and "call_failures" not in result.provenance
