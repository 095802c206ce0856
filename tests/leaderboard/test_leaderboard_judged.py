"""Judged leaderboard submissions (issue 6): PENDING -> queue worker -> FINISHED with real judges over HTTP
(loopback StubServer). The worker runs the task's real runner on a ReplayClient (the model's answers come from
the stored predictions), with one budget (RunLedger) for its lifetime and the response cache of `sciprobe
evaluate`: a budget cut leaves the request PENDING with nothing stored, and the next worker only makes the
missing judge calls."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.leaderboard.agreement import PROVENANCE_KEY, agreement_table
from sciprobe.leaderboard.queue import (
    Worker,
    data_for,
    process_pending,
    run_worker,
    submit,
)
from sciprobe.leaderboard.store import SQLiteStore
from sciprobe.leaderboard.validation import (
    task_target,
    validate_model_info,
    validate_submission,
)
from sciprobe.testing.stub_server import StubServer
from sciprobe.benchmarks.prescience import lacer_judge as lr

PRESCIENCE = "prescience:contribution_generation"
IDEA = "sgibench:idea_generation"
N_PRESCIENCE = 31  # items in the bundled PreScience sample's contribution_generation test split


# ---------------------------------------------------------------- PreScience: LACER judges on a lattice template

@pytest.fixture(autouse=True)
def lacer_template(tmp_path_factory, monkeypatch) -> Path:
    """An offline LACER judge prompt (lattice file), as tests/prescience/test_prescience_lacer_runner.py does."""
    path = tmp_path_factory.getbasetemp() / "judged-lattice.json"
    if not path.is_file():
        lr.write_lattices(path, [lr.toy_lattice("matching"), lr.toy_lattice("coloring")], {"note": "test lattice"})
    monkeypatch.setenv(lr.TEMPLATE_ENV, str(path))
    return path


def _generation(user: str) -> str:
    """The generation title of a filled LACER judge prompt (the pair is the last block)."""
    tail = user[user.rindex("\nReference:\n") + len("\nReference:\n"):]
    return tail[tail.index("Generation:\n") + len("Generation:\n"):].splitlines()[0]


def lacer_reply(body: dict) -> str:
    """Judge ``*-a`` gives 1 + k % 10 to the generation "Idea k", judge ``*-b`` 10 - k % 10: they always
    disagree (Pearson -1) and average 5.5 on every item."""
    k = int(_generation(body["messages"][-1]["content"]).split()[-1])
    score = 1 + k % 10 if body["model"].endswith("-a") else 10 - k % 10
    return f"Reasoning: compared the two.\nScore: {score}"


def prescience_file(path: Path, tag: str = "") -> Path:
    ids = task_target(PRESCIENCE, data_for("prescience")).ids
    assert len(ids) == N_PRESCIENCE
    path.write_text("".join(json.dumps({"id": i, "response": f"Reasoning: r{tag}.\nTitle: Idea {k}\n"
                                                            f"Abstract: A follow-up{tag} number {k}."}) + "\n"
                            for k, i in enumerate(ids)))
    return path


def submit_prescience(store: SQLiteStore, tmp_path: Path, model: str, tag: str = ""):
    sub = validate_submission(PRESCIENCE, prescience_file(tmp_path / f"{model.replace('/', '_')}.jsonl", tag),
                              validate_model_info(model), data=data_for("prescience"))
    request = submit(store, sub, "judy")
    assert request.status == "PENDING" and store.list_results() == []  # judged tasks wait for the worker
    return request


def judge_spec(stub: StubServer, name: str) -> str:
    return f"openai/{name},base_url={stub.base_url},api_key=sk-test"


def test_prescience_submission_is_scored_by_the_worker(tmp_path):
    store = SQLiteStore(tmp_path / "store")
    request = submit_prescience(store, tmp_path, "org/pre-model")
    logs: list[str] = []
    with StubServer(reply=lacer_reply) as stub:
        panel = f"{judge_spec(stub, 'p1-a')};{judge_spec(stub, 'p1-b')}"
        worker = Worker.create(panel, log=logs.append)
        assert run_worker(store, worker=worker, max_rounds=1, poll_seconds=0) == 1
        assert stub.count == 2 * N_PRESCIENCE  # every pair judged once by each judge of the panel
        assert sorted({b["model"] for b in stub.requests}) == ["p1-a", "p1-b"]
    assert logs == []
    done = store.get_request(request.request_id)
    assert done.status == "FINISHED" and done.error is None and done.result_id
    (result,) = store.list_results()
    assert result.judge_ids == ["openai/p1-a", "openai/p1-b"]
    official = result.scores["official"]
    assert official["lacer"] == pytest.approx(5.5)
    # one column, one metric: the task's headline (rougeL, which every path computes) and the judged LACER
    from sciprobe.leaderboard.tables import leaderboard_frame, task_columns

    frame = leaderboard_frame([result], task_columns(["prescience"]))
    assert frame.loc[0, "contribution_generation rougeL"] == pytest.approx(round(official["rougeL"], 4))
    assert frame.loc[0, "contribution_generation lacer"] == pytest.approx(5.5)
    # the judged result's headline is LACER (its `ci`); the ROUGE-L shown gets its own interval (`other_ci`)
    assert official["ci"]["metric"] == "lacer"
    rouge_ci = official["other_ci"]["rougeL"]
    assert rouge_ci["estimate"] == pytest.approx(official["rougeL"]) and rouge_ci["n_valid_resamples"] > 0
    assert rouge_ci["low"] <= official["rougeL"] <= rouge_ci["high"]
    from sciprobe.leaderboard.intervals import interval_text

    assert frame.loc[0, "contribution_generation rougeL 95% CI"] == interval_text(rouge_ci["low"], rouge_ci["high"])
    assert official["lacer[openai/p1-a]"] == pytest.approx(sum(1 + k % 10 for k in range(N_PRESCIENCE)) / N_PRESCIENCE)
    assert official["coverage"]["n_scored"] == N_PRESCIENCE and 0 < official["bertscore_f1"] <= 1
    prov = result.provenance
    assert prov["judge_ids"] == ["openai/p1-a", "openai/p1-b"] and "sk-test" not in json.dumps(prov)
    assert prov["scored_by"] == "sciprobe.run.score_predictions.score_file" and "ReplayClient" in prov["scored_from"]
    assert prov["replay"]["answered"] == N_PRESCIENCE and prov["replay"]["n_missing"] == 0
    assert prov["predictions_sha256"] == request.predictions_sha256 and "incomplete" not in prov
    (pair,) = agreement_table(prov[PROVENANCE_KEY])  # the Space's judge-agreement view needs no details file
    assert pair["n"] == N_PRESCIENCE and pair["pearson"] == pytest.approx(-1.0)


def _cli(argv: list[str]) -> int:
    from sciprobe.leaderboard.commands import (
        cmd_leaderboard,
        configure_leaderboard_parser,
    )

    parser = argparse.ArgumentParser()
    configure_leaderboard_parser(parser)
    return cmd_leaderboard(parser.parse_args(argv))


def test_budget_cut_leaves_the_request_pending_and_a_second_worker_resumes(tmp_path, monkeypatch, capsys):
    """`sciprobe leaderboard --worker --once --judge J --max-calls 10`: exit 3, request PENDING, no result; the
    next worker (no cap) finishes it with only the 21 missing judge calls (the first 10 come from the cache)."""
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_STORE", "sqlite")
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DIR", str(tmp_path / "store"))
    store = SQLiteStore(tmp_path / "store")
    request = submit_prescience(store, tmp_path, "org/budget-model", tag=" b")
    with StubServer(reply=lacer_reply) as stub:
        judge = judge_spec(stub, "p2-a")
        base = ["--worker", "--once", "--poll-seconds", "0", "--store-dir", str(tmp_path / "store"), "--judge", judge]
        assert _cli([*base, "--max-calls", "10"]) == 3
        out, err = capsys.readouterr()
        assert stub.count == 10
        paused = store.get_request(request.request_id)
        assert paused.status == "PENDING" and "max_calls=10 reached" in paused.error
        assert store.list_results() == []  # an incomplete result is never a leaderboard result
        assert "processed 0 request(s)" in out and "budget spent" in out
        assert "[sciprobe worker] stopping" in err and request.request_id[:8] in err

        assert _cli(base) == 0
        assert stub.count == N_PRESCIENCE  # 21 new calls: the 10 answered before come from the response cache
        assert "processed 1 request(s)" in capsys.readouterr().out
    done = store.get_request(request.request_id)
    assert done.status == "FINISHED" and done.error is None
    (result,) = store.list_results()
    assert result.judge_ids == ["openai/p2-a"] and "incomplete" not in result.provenance
    assert result.scores["official"]["coverage"]["n_scored"] == N_PRESCIENCE
    expected = sum(1 + k % 10 for k in range(N_PRESCIENCE)) / N_PRESCIENCE
    assert result.scores["official"]["lacer"] == pytest.approx(expected)


def test_one_budget_across_requests(tmp_path):
    """The worker's max_calls is for its lifetime: 40 calls finish the first request (31) and cut the second."""
    store = SQLiteStore(tmp_path / "store")
    first = submit_prescience(store, tmp_path, "org/first", tag=" one")
    second = submit_prescience(store, tmp_path, "org/second", tag=" two")
    logs: list[str] = []
    with StubServer(reply=lacer_reply) as stub:
        worker = Worker.create(judge_spec(stub, "p3-a"), max_calls=40, log=logs.append)
        assert run_worker(store, worker=worker, max_rounds=5, poll_seconds=0) == 1
        assert stub.count == 40 and worker.exhausted
    assert store.get_request(first.request_id).status == "FINISHED"
    assert store.get_request(second.request_id).status == "PENDING"
    assert [r.model_name for r in store.list_results()] == ["org/first"]
    assert len(logs) == 1 and "max_calls=40 reached" in logs[0] and "1 request(s) left" in logs[0]


def test_worker_without_judge_leaves_judged_requests_pending(tmp_path, monkeypatch, capsys):
    from sciprobe.run.score_predictions import JudgeRequired, score_file

    store = SQLiteStore(tmp_path / "store")
    request = submit_prescience(store, tmp_path, "org/no-judge", tag=" nj")
    with pytest.raises(JudgeRequired, match="pass a judge spec"):
        score_file(PRESCIENCE, prescience_file(tmp_path / "p.jsonl"), data=data_for("prescience"),
                   output_dir=tmp_path / "o")
    logs: list[str] = []
    assert run_worker(store, worker=Worker.create(None, use_cache=False, log=logs.append), max_rounds=3,
                      poll_seconds=0) == 0
    waiting = store.get_request(request.request_id)
    assert waiting.status == "PENDING" and "--judge" in waiting.error and store.list_results() == []
    assert len(logs) == 1 and "stopping" in logs[0] and "--judge" in logs[0]

    monkeypatch.setenv("SCIPROBE_LEADERBOARD_STORE", "sqlite")
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DIR", str(tmp_path / "store"))
    assert _cli(["--worker", "--once", "--store-dir", str(tmp_path / "store")]) == 2
    assert "left PENDING" in capsys.readouterr().out
    with pytest.raises(SciprobeError, match="add --worker"):
        _cli(["--judge", "openai/x", "--store-dir", str(tmp_path / "store")])


def test_bad_judge_credentials_or_spec_never_fail_a_submission(tmp_path):
    """A 401 from the judge is the worker's problem: the request goes back to PENDING, the worker stops; a typo in
    the judge spec fails the worker at start."""
    store = SQLiteStore(tmp_path / "store")
    request = submit_prescience(store, tmp_path, "org/auth", tag=" auth")
    logs: list[str] = []
    with StubServer(reply=lacer_reply, status_script=lambda body, index: 401) as stub:
        worker = Worker.create(judge_spec(stub, "p4-a"), use_cache=False, log=logs.append)
        assert run_worker(store, worker=worker, max_rounds=2, poll_seconds=0) == 0
    waiting = store.get_request(request.request_id)
    assert waiting.status == "PENDING" and "judge unusable" in waiting.error and store.list_results() == []
    assert len(logs) == 1 and "authentication failed" in logs[0]
    with pytest.raises(SciprobeError):
        Worker.create("openai/j,no_such_key=1")


def test_a_multi_turn_runner_fails_the_request_with_a_clear_message(tmp_path, monkeypatch):
    """A runner that asks the model a second time per item (an agent loop) cannot be replayed: FAILED, not stuck."""
    from sciprobe.benchmarks.prescience.contribution import CONTRIBUTION
    from sciprobe.llm.types import Request

    def two_turns(ctx):
        row = ctx.data.rows[0]
        item = str(row["corpus_id"])
        ctx.client.complete_many([Request.of([{"role": "user", "content": "round 1"}], item_id=item)])
        ctx.client.complete_many([Request.of([{"role": "user", "content": "round 2"}], item_id=item)])
        raise AssertionError("unreachable")

    monkeypatch.setattr(CONTRIBUTION, "run", two_turns)  # the task's runner object, patched for this test
    store = SQLiteStore(tmp_path / "store")
    request = submit_prescience(store, tmp_path, "org/agent", tag=" mt")
    (done,) = process_pending(store, worker=Worker.create("openai/unused,base_url=http://127.0.0.1:9/v1,api_key=x",
                                                          use_cache=False))
    assert done.request_id == request.request_id and done.status == "FAILED"
    assert "needs several model turns per item" in done.error and store.list_results() == []


# ---------------------------------------------------------------- SGI-Bench idea generation: a two-judge panel

IDEA_ANSWER = {"Idea": "GENERATED: a learned denoiser feeds a robust estimator. " * 6,
               "ImplementationSteps": {"1": "Collect data.", "2": "Train."}, "ImplementationOrder": ["1-2"],
               "Dataset": "Synthetic traces.", "EvaluationMetrics": {"SNR": "signal-to-noise"},
               "ExpectedOutcome": "SNR."}
DIMS = ("Effectiveness", "Novelty", "Detailedness", "Feasibility", "Overall")


@pytest.fixture(scope="module")
def sgi_data(tmp_path_factory) -> Path:
    from sciprobe.core.registry import get_benchmark
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.data.build import build_benchmark

    root = tmp_path_factory.mktemp("lb-sgi")
    source = write_synthetic_source(root / "source", n=3)
    build_benchmark(get_benchmark("sgibench"), source, root / "built", configs=["idea_generation"])
    return root / "built"


def idea_reply(body: dict) -> str:
    """Judge ``*-a`` always prefers the generated idea; ``*-b`` always votes for Hypothesis A (position bias)."""
    text = body["messages"][-1]["content"]
    generated_is_a = "GENERATED" in text.split("##Hypothesis A:")[1].split("##Hypothesis B:")[0]
    winner = "A" if body["model"].endswith("-b") or generated_is_a else "B"
    return "\n".join(f"{d}: [Win {winner}] because." for d in DIMS)


def test_sgi_idea_submission_is_scored_by_the_worker(tmp_path, sgi_data):
    def data(benchmark: str) -> str:
        return str(sgi_data)

    ids = task_target(IDEA, data("sgibench")).ids
    path = tmp_path / "ideas.jsonl"
    answer = "```json\n" + json.dumps(IDEA_ANSWER) + "\n```"
    path.write_text("".join(json.dumps({"id": i, "response": answer}) + "\n" for i in ids))
    sub = validate_submission(IDEA, path, validate_model_info("org/ideator"), data=data("sgibench"))
    store = SQLiteStore(tmp_path / "store")
    request = submit(store, sub, "iris", data=data)
    assert request.status == "PENDING"
    with StubServer(reply=idea_reply) as stub:
        panel = ";".join(judge_spec(stub, f"i1-{k}") for k in "ab")
        assert run_worker(store, data=data, worker=Worker.create(panel), max_rounds=1, poll_seconds=0) == 1
        models = [b["model"] for b in stub.requests]
        # both vote orders per judge; the synthetic items share one judge prompt, asked once (cache)
        assert models.count("i1-a") == models.count("i1-b") == 2
        assert all("GENERATED" in b["messages"][-1]["content"] for b in stub.requests)  # the submitted idea
    assert store.get_request(request.request_id).status == "FINISHED"
    (result,) = store.list_results()
    assert result.judge_ids == ["openai/i1-a", "openai/i1-b"]
    official = result.scores["official"]
    assert official["coverage"]["n_scored"] == len(ids) and 0 < official["final"] < 100
    assert official["params"]["judges"] == ["openai/i1-a", "openai/i1-b"]
    prov = result.provenance
    assert prov["idea_judges"] == ["openai/i1-a", "openai/i1-b"] and prov["judge_ids"] == prov["idea_judges"]
    assert prov["replay"]["answered"] == len(ids)
    scores = prov[PROVENANCE_KEY]
    assert set(scores["judges"]["openai/i1-a"].values()) == {1.0}
    assert set(scores["judges"]["openai/i1-b"].values()) == {0.5}


def test_score_cli_runs_the_judges_on_a_predictions_file_and_caps_them(tmp_path, capsys):
    from sciprobe.cli.commands import EXIT_INCOMPLETE, main

    preds = prescience_file(tmp_path / "preds.jsonl")
    with StubServer(reply=lacer_reply) as stub:
        judge = f"openai/cli-a,base_url={stub.base_url},api_key=sk-test"
        assert main(["score", PRESCIENCE, "--predictions", str(preds), "--judge", judge, "--max-calls", "5",
                     "--output-dir", str(tmp_path / "capped")]) == EXIT_INCOMPLETE
        assert stub.count == 5 and "INCOMPLETE: max_calls=5 reached" in capsys.readouterr().err
        assert main(["score", PRESCIENCE, "--predictions", str(preds), "--judge", judge,
                     "--output-dir", str(tmp_path / "full")]) == 0
        assert stub.count == N_PRESCIENCE  # the capped run's five answers came from the cache
    results = json.loads(sorted((tmp_path / "full" / "results").rglob("*.json"))[-1].read_text())
    assert results["sciprobe"]["judge_ids"] == ["openai/cli-a"]
    [task] = results["sciprobe"]["tasks"].values()
    assert results["results"][next(iter(results["results"]))]["lacer"] is not None
