"""Issue 11 through the CLI: no number without its evidence. A call that got no answer is not a wrong answer, a
missing prediction is not a failure, a sample is never published as the benchmark, an export says what it left out,
and a lighteval run of our cards reaches the leaderboard only rescored and complete."""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sciprobe.cli.commands import EXIT_INCOMPLETE, main
from sciprobe.leaderboard.importer import import_results_dir
from sciprobe.leaderboard.store import SQLiteStore
from sciprobe.testing.stub_server import StubServer

VERDICT = 'Your verdict: Yes\nConfidence score: 80\nSubject: ["Physics"]'


def closed_port() -> int:
    """A loopback port nobody listens on: connecting is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def results_of(out: Path) -> tuple[Path, dict]:
    [path] = sorted((out / "results").rglob("results_*.json"))
    return path, json.loads(path.read_text())


def ipi_ids() -> list[str]:
    from sciprobe.core.registry import get_benchmark
    from sciprobe.leaderboard.validation import task_target
    from sciprobe.data.task_data import sample_dataset_dir

    return list(task_target("idrbench:ipi", str(sample_dataset_dir(get_benchmark("idrbench")))).ids)


# ---------------------------------------------------------------- 1. call failures are not answers

def test_observation_1_a_server_that_is_not_running_gives_an_incomplete_run_never_a_score(tmp_path, capsys):
    """`sciprobe evaluate idrbench:ipi --model "openai/x,base_url=http://127.0.0.1:1/v1" --limit 3` with no server:
    exit 3, the summary says how many calls failed and why, no model-index, nothing exported or imported."""
    out = tmp_path / "run"
    model = f"openai/x,base_url=http://127.0.0.1:{closed_port()}/v1,api_key=sk-test,max_retries=0,timeout=10"
    assert main(["evaluate", "idrbench:ipi", "--model", model, "--limit", "3", "--output-dir", str(out)]) \
        == EXIT_INCOMPLETE
    captured = capsys.readouterr()
    assert "idrbench:ipi|0 (INCOMPLETE: 3/3 no answer)" in captured.out
    assert "INCOMPLETE: calls failed: 3 of 3 items got no answer (" in captured.err
    assert "Rerun the same command to resume from the cache" in captured.err
    assert "0.000" not in captured.out  # no item answered: no number, in any mode
    path, results = results_of(out)
    task = results["sciprobe"]["tasks"]["idrbench:ipi|0"]
    assert task["provenance"]["call_failures"]["n"] == 3
    assert sum(task["provenance"]["call_failures"]["kinds"].values()) == 3
    for mode in ("official", "strict"):  # never scored as wrong: nothing is counted, nothing is a number
        report = task["scores"][mode]
        assert report["macro_f1"] is None and report["coverage"]["n_failed"] == 0
    details = pq.read_table(out / task["details"]).to_pylist()
    assert [d["parse_path"] for d in details] == ["error"] * 3 and all(d["error"] for d in details)
    assert not list(out.rglob("*.model-index.yaml")) and not list(out.rglob("*.yaml"))
    assert main(["export", str(path)]) == 2
    assert "incomplete run" in capsys.readouterr().err
    store = SQLiteStore(tmp_path / "store")
    assert import_results_dir(store, out) == 0 and store.list_results() == []
    assert "left out: incomplete result" in capsys.readouterr().err


def test_failed_calls_are_left_out_parse_failures_keep_their_modes_and_a_rerun_resumes_from_the_cache(tmp_path,
                                                                                                   capsys):
    """Four items: two answered, one unparsable, one whose call fails (a 503 after the retries). The failed one is
    in no mode's score; the unparsable one is dropped by official and wrong in strict, as before. The rerun of
    the same command asks only the failed call again (failures are never cached) and is complete."""
    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.task_data import load_task_data

    bench = get_benchmark("idrbench")
    titles = [row["title"] for row in load_task_data(bench, bench.task("ipi"), None, limit=4).rows]
    failing = {"on": True}

    def reply(body: dict) -> str:
        return "I cannot tell." if titles[2] in body["messages"][-1]["content"] else VERDICT

    def status(body: dict, index: int):
        return 503 if failing["on"] and titles[3] in body["messages"][-1]["content"] else None

    with StubServer(reply=reply, status_script=status) as stub:
        model = f"openai/stub-model,base_url={stub.base_url},api_key=sk-test,max_retries=1"
        argv = ["evaluate", "idrbench:ipi", "--model", model, "--limit", "4"]
        assert main([*argv, "--output-dir", str(tmp_path / "a")]) == EXIT_INCOMPLETE
        _, first = results_of(tmp_path / "a")
        scores = first["sciprobe"]["tasks"]["idrbench:ipi|0"]["scores"]
        assert scores["official"]["coverage"] == {"n_items": 3, "n_scored": 2, "n_failed": 1,
                                                  "failure_rate": pytest.approx(1 / 3, abs=1e-6)}
        assert scores["strict"]["coverage"]["n_scored"] == 3 and scores["strict"]["coverage"]["n_failed"] == 1
        assert first["sciprobe"]["incomplete"]["call_failures"]["idrbench:ipi|0"]["kinds"] == {
            "ServiceUnavailableError": 1}
        assert "ServiceUnavailableError: 1" in capsys.readouterr().err
        sent = stub.count
        failing["on"] = False
        assert main([*argv, "--output-dir", str(tmp_path / "b")]) == 0
        assert stub.count == sent + 1  # only the call that got no answer is made again
        _, second = results_of(tmp_path / "b")
        assert second["sciprobe"]["incomplete"] is None
        assert second["sciprobe"]["tasks"]["idrbench:ipi|0"]["scores"]["strict"]["coverage"]["n_items"] == 4
        # complete, but a --limit sample: no model card (issue 23.1)
        assert not list((tmp_path / "b").rglob("*.model-index.yaml"))
        assert "LIMITED: idrbench:ipi|0 4 of 16 items" in capsys.readouterr().err


@pytest.mark.parametrize("message", [
    {"role": "assistant", "content": None, "finish_reason": "length"},  # the token budget ran out before any text
    {"role": "assistant", "content": None, "finish_reason": "content_filter"},
    {"role": "assistant", "content": None, "refusal": "I cannot help with that."},
], ids=["length", "content_filter", "refusal"])
def test_an_empty_reply_is_an_answer_the_parser_cannot_read_not_a_failed_call(tmp_path, capsys, message):
    """A model that answers with no content, and says why, answered: the item is a parse failure in each mode's own
    way and the run is complete (exit 0); only a call that got no answer makes it incomplete (a message with no
    content and no reason is a malformed answer: tests/llm/test_malformed_answers.py)."""
    with StubServer(reply=lambda body: dict(message)) as stub:
        model = f"openai/stub-model,base_url={stub.base_url},api_key=sk-test,max_retries=0"
        assert main(["evaluate", "idrbench:ipi", "--model", model, "--limit", "2",
                     "--output-dir", str(tmp_path / "o")]) == 0
    _, results = results_of(tmp_path / "o")
    task = results["sciprobe"]["tasks"]["idrbench:ipi|0"]
    assert results["sciprobe"]["incomplete"] is None and "call_failures" not in task["provenance"]
    assert task["scores"]["strict"]["coverage"] == {"n_items": 2, "n_scored": 2, "n_failed": 2, "failure_rate": 1.0}
    details = pq.read_table(tmp_path / "o" / task["details"]).to_pylist()
    assert [d["parse_path"] for d in details] == ["failed:no_answer"] * 2
    assert all(d["error"].startswith("EmptyResponse") for d in details)


def test_a_tournament_with_an_unanswered_comparison_is_left_out(tmp_path, capsys):
    """I2R: an instance whose tournament had a comparison that got no answer is no evidence of a ranking."""
    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.task_data import load_task_data

    bench = get_benchmark("idrbench")
    first = load_task_data(bench, bench.task("i2r"), None).rows[0]

    def status(body: dict, index: int):
        return 500 if first["seed"]["title"] in body["messages"][-1]["content"] else None

    with StubServer(reply=lambda body: "Your choice: Paper 1\nConfidence score: 60", status_script=status) as stub:
        model = f"openai/stub-model,base_url={stub.base_url},api_key=sk-test,max_retries=0"
        assert main(["evaluate", "idrbench:i2r", "--model", model, "--mode", "corrected",
                     "--output-dir", str(tmp_path / "o")]) == EXIT_INCOMPLETE
    _, results = results_of(tmp_path / "o")
    task = results["sciprobe"]["tasks"]["idrbench:i2r|0"]
    assert task["provenance"]["call_failures"]["n"] == 1
    assert task["scores"]["corrected"]["coverage"]["n_items"] == 2  # of 3 instances
    details = {d["id"]: d for d in pq.read_table(tmp_path / "o" / task["details"]).to_pylist()}
    assert details[str(first["id"])]["parse_path"] == "error"
    assert "comparisons got no answer" in details[str(first["id"])]["error"]


# ---------------------------------------------------------------- 2. missing predictions are not failures

def test_observation_2_a_file_that_lacks_items_is_refused_in_one_line_unless_partial(tmp_path, capsys):
    """`sciprobe score idrbench:ipi` with predictions for 10 of the items: refused; `--partial` scores the 10,
    marked partial in the results, the summary and on stderr, with no model-index; export and import refuse it."""
    ids = ipi_ids()
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"id": i, "prediction": "yes"}) + "\n" for i in ids[:10]))
    out = tmp_path / "o"
    assert main(["score", "idrbench:ipi", "--predictions", str(preds), "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {len(ids) - 10} of {len(ids)} items have no prediction in p.jsonl")
    assert err.count("\n") == 1 and not out.exists()

    # written as asked, but a partial score is no benchmark result: exit 4
    assert main(["score", "idrbench:ipi", "--predictions", str(preds), "--output-dir", str(out), "--partial"]) == 4
    captured = capsys.readouterr()
    assert f"idrbench:ipi|0 (PARTIAL 10/{len(ids)})" in captured.out
    assert f"PARTIAL: 10 of {len(ids)} items scored" in captured.err and "model-index" not in captured.out
    path, results = results_of(out)
    assert results["sciprobe"]["partial"] == {"n_predicted": 10, "n_items": len(ids)}
    task = results["sciprobe"]["tasks"]["idrbench:ipi|0"]
    assert task["provenance"]["partial"] == {"n_predicted": 10, "n_items": len(ids)}
    strict = task["scores"]["strict"]["coverage"]
    assert strict["n_items"] == 10 and strict["n_failed"] == 0
    assert not list(out.rglob("*.yaml"))
    assert main(["export", str(path), "--allow-incomplete"]) == 2
    assert "partial scores are never exported" in capsys.readouterr().err
    store = SQLiteStore(tmp_path / "store")
    assert import_results_dir(store, out) == 0 and store.list_results() == []
    assert "left out: partial result" in capsys.readouterr().err


def test_observation_2_on_the_real_release(idrbench_release_built, tmp_path, capsys):
    """As written: predictions for 10 of the 1,120 IPI items of the release (skips without the reference data)."""
    from sciprobe.leaderboard.validation import task_target

    ids = task_target("idrbench:ipi", str(idrbench_release_built)).ids
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"id": i, "prediction": "yes"}) + "\n" for i in ids[:10]))
    argv = ["score", "idrbench:ipi", "--predictions", str(preds), "--data", str(idrbench_release_built),
            "--output-dir", str(tmp_path / "o")]
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("error: 1110 of 1120 items have no prediction")
    assert main([*argv, "--partial"]) == 4  # written, but a partial score is no benchmark result
    assert "idrbench:ipi|0 (PARTIAL 10/1120)" in capsys.readouterr().out


def test_a_null_answer_is_a_failure_not_a_missing_item(tmp_path, capsys):
    ids = ipi_ids()
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"id": i, "response": None if k < 3 else VERDICT}) + "\n"
                             for k, i in enumerate(ids)))
    assert main(["score", "idrbench:ipi", "--predictions", str(preds), "--output-dir", str(tmp_path / "o")]) == 0
    _, results = results_of(tmp_path / "o")
    strict = results["sciprobe"]["tasks"]["idrbench:ipi|0"]["scores"]["strict"]
    assert strict["coverage"]["n_items"] == len(ids) and strict["coverage"]["n_failed"] == 3
    assert results["sciprobe"]["partial"] is None and results["sciprobe"]["incomplete"] is None


# ---------------------------------------------------------------- 4. publishing never passes a sample off

def _local_paths(tmp_path: Path) -> list[str]:
    from sciprobe.llm.cache import sciprobe_home

    from golden import REPO

    # this machine's own paths ("/root" or "/tmp" alone also appear in the sandbox's code, as in-sandbox paths)
    paths = {str(tmp_path), str(REPO), str(Path.home() / ".cache"), str(sciprobe_home()), os.getcwd()}
    return sorted(p for p in paths if len(p) > 5)


def test_observation_4_publish_refuses_a_sample_and_stages_no_local_path(tmp_path, capsys):
    """`sciprobe publish all ORG --dry-run` no longer stages the synthetic sample as ORG/idrbench; with --sample
    every dataset card opens by saying it is a sample, and nothing staged names a local path."""
    out = tmp_path / "staged"
    assert main(["publish", "all", "ORG", "--dry-run", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: publish all needs the datasets' release files") and err.count("\n") == 1
    assert not out.exists()
    assert main(["publish", "dataset", "ORG/idrbench", "--dry-run", "--out", str(out)]) == 2
    assert "bundled synthetic sample" in capsys.readouterr().err and not out.exists()

    assert main(["publish", "all", "ORG", "--dry-run", "--sample", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "staged dataset dataset:ORG/idrbench" in printed
    cards = sorted((out / "datasets").glob("*/README.md"))
    assert cards
    for card in cards:
        body = card.read_text("utf-8").split("\n---\n", 1)[1].lstrip("\n")
        assert body.splitlines()[0].startswith("**SYNTHETIC SAMPLE, NOT THE BENCHMARK.**"), card
        info = json.loads((card.parent / "sciprobe_build.json").read_text())
        assert info["sample"] is True and info["source"].startswith("sample:")
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) > 50
    forbidden = _local_paths(tmp_path)
    for file in files:
        data = file.read_bytes()
        hits = [p for p in forbidden if p.encode() in data]
        assert not hits, f"{file.relative_to(out)} names a local path: {hits}"


def test_a_copy_of_the_sample_is_still_the_sample(tmp_path, capsys):
    import shutil

    from sciprobe.core.registry import get_benchmark

    copy = tmp_path / "release-looking"
    shutil.copytree(get_benchmark("idrbench").sample_source, copy)
    assert main(["publish", "dataset", "ORG/idrbench", "--dry-run", "--source", str(copy),
                 "--out", str(tmp_path / "s")]) == 2
    assert "bundled synthetic sample" in capsys.readouterr().err


# ---------------------------------------------------------------- 5. export lists what it left out

def test_observation_5_export_lists_what_it_left_out_and_a_nan_never_becomes_a_number(tmp_path, capsys):
    """A run whose official macro-F1 is NaN (no answer parsed): the model-index and eval-results list it as left
    out, and no NaN (or 0) stands in for it."""
    import yaml

    with StubServer(reply=lambda body: "I would rather not say.") as stub:
        model = f"openai/stub-model,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", "idrbench:ipi", "--model", model, "--output-dir", str(tmp_path / "o")]) == 0
    captured = capsys.readouterr()
    # many numbers: one line per class of omission, with a count and the first one (issue 28: no 40 lines)
    assert re.search(r"\d+ number\(s\) left out of the model-index: n/a \(e\.g\. idrbench:ipi macro_f1 "
                     r"\(official\)\); every one is in results_", captured.err), captured.err
    path, _ = results_of(tmp_path / "o")
    index = yaml.safe_load(next((tmp_path / "o").rglob("*.model-index.yaml")).read_text())
    names = [m["name"] for r in index["model-index"][0]["results"] for m in r["metrics"]]
    assert "macro_f1 (strict)" in names and "macro_f1 (official)" not in names

    assert main(["export", str(path), "--format", "eval-results", "--dataset-id", "org/idrbench"]) == 2
    err = capsys.readouterr().err  # the default mode's headline is n/a: nothing to export, and it says why
    assert err.startswith("error: the results file has no task with a numeric headline score to export (left out: "
                          "idrbench:ipi macro_f1 (official): n/a (scored 0/16))") and err.count("\n") == 1
    assert main(["export", str(path)]) == 0
    captured = capsys.readouterr()
    assert "left out: idrbench:ipi macro_f1 (official)" in captured.err
    assert "nan" not in captured.out.lower()


# ---------------------------------------------------------------- 6. lighteval interop (the CLI's --import)

@pytest.fixture(scope="module")
def lighteval_runs(tmp_path_factory):
    """A complete and a partial lighteval run of idrbench:ipi, written by lighteval's own tracker."""
    from lighteval_support import write_lighteval_run

    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.task_data import sample_dataset_dir

    root = tmp_path_factory.mktemp("lighteval")
    os.environ["SCIPROBE_HOME"] = str(tmp_path_factory.getbasetemp() / "sciprobe-home")
    data = str(sample_dataset_dir(get_benchmark("idrbench")))
    answers = [VERDICT, 'Your verdict: No\nConfidence score: 70\nSubject: ["Physics"]', "no idea"]
    complete = write_lighteval_run(root / "complete", "idrbench:ipi", lambda i, k: answers[k % 3], data=data)
    partial = write_lighteval_run(root / "partial", "idrbench:ipi", lambda i, k: answers[k % 3], data=data,
                                  max_samples=6, model_name="org/partial-model")
    return {"complete": complete, "partial": partial, "root": root}


def test_observation_6_lighteval_results_import_rescored_and_other_files_are_one_warning(lighteval_runs, tmp_path,
                                                                                         capsys, monkeypatch):
    """`sciprobe leaderboard --import DIR` with lighteval's own results and details of our card: the complete run
    is rescored by sciprobe (every mode, coverage, the dataset's fingerprint; the same numbers lighteval printed),
    the partial one and a stray file are one warning line each, and the import goes on."""
    import sciprobe.leaderboard.commands as commands

    folder = tmp_path / "runs"
    import shutil

    shutil.copytree(lighteval_runs["root"], folder)
    (folder / "results_stray.json").write_text('{"config_general": {"lighteval_sha": "?"}, "results": 3}')
    served = []
    monkeypatch.setattr(commands, "serve", lambda host, port: served.append(port))  # the import step, no server
    store_dir = tmp_path / "store"
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_STORE", "sqlite")
    assert main(["leaderboard", "--import", str(folder), "--store-dir", str(store_dir)]) == 0
    assert len(served) == 1  # then the Space is served
    captured = capsys.readouterr()
    assert "imported 1 task result(s)" in captured.out
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 2, captured.err
    assert any("partial run: 10 of 16 items" in w for w in warnings)
    assert any("results_stray.json" in w for w in warnings)
    [result] = SQLiteStore(store_dir).list_results()
    assert result.model_name == "org/lighteval-model" and result.task == "idrbench:ipi"
    assert set(result.scores) == {"official", "strict"}
    assert result.scores["strict"]["coverage"]["n_items"] == 16
    assert result.provenance["scored_from"] == "lighteval details, rescored by sciprobe"
    assert len(result.dataset_fingerprint) == 64
    printed = json.loads(lighteval_runs["complete"].read_text())["results"]["idrbench:ipi|0"]
    assert result.scores["official"]["macro_f1"] == pytest.approx(printed["macro_f1"])
    assert result.scores["strict"]["macro_f1"] == pytest.approx(printed["macro_f1_strict"])


def test_a_details_file_alone_imports_and_one_made_on_other_data_is_refused(lighteval_runs, tmp_path, capsys):
    import pyarrow as pa

    [details] = (lighteval_runs["root"] / "complete").rglob("details_*.parquet")
    store = SQLiteStore(tmp_path / "store")
    assert import_results_dir(store, details) == 1
    assert store.list_results()[0].model_name == "org/lighteval-model"
    table = pq.read_table(details)
    rows = table.to_pylist()
    for row in rows:  # the same ids, other golds: another dataset
        row["doc"]["specific"]["gold"] = "no" if row["doc"]["specific"]["gold"] == "yes" else "yes"
    other = tmp_path / "details" / "org" / "other-data" / "2026" / details.name
    other.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), other)
    assert import_results_dir(store, other) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "made on other data" in err
