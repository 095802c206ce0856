"""SGI-Bench multi-call runners end to end over real HTTP (loopback stub) on the synthetic fixture:
dry experiments in the real sandbox (sciprobe.benchmarks.sgibench.dry_runner) and the idea judge panel
(sciprobe.benchmarks.sgibench.idea_runner), wired into ``sciprobe evaluate`` (spec sgibench.md §3.2, §3.3, §4.4,
§4.5, §8)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.cli.commands import main
from sciprobe.run.evaluation import EvaluationRequest, evaluate
from sciprobe.testing.stub_server import StubServer
from sciprobe.sandbox.runner import SandboxLimits, sandbox_available

SGI = get_benchmark("sgibench")
needs_sandbox = pytest.mark.skipif(not sandbox_available()[0], reason="bubblewrap sandbox not available here")

CORRECT = "<answer>\ndef scale(values, factor):\n    return [v * factor for v in values]\n</answer>"
OFF_BY_ONE = "<answer>\ndef scale(values, factor):\n    return [v * factor + 1 for v in values]\n</answer>"
FORK_BOMB = ("<answer>\ndef scale(values, factor):\n    import os\n    while True:\n        try:\n"
             "            os.fork()\n        except OSError:\n            pass\n</answer>")
INFINITE_LOOP = "<answer>\ndef scale(values, factor):\n    while True:\n        pass\n</answer>"
IDEA = {"Idea": "GENERATED: a learned denoiser feeds a robust estimator so weak signals survive heavy noise. "
                "The estimator down-weights outliers that the denoiser cannot explain. " * 3,
        "ImplementationSteps": {"1": "Collect data.", "2": "Train the denoiser.", "3": "Estimate robustly."},
        "ImplementationOrder": ["1-2", "2-3"], "Dataset": "Synthetic traces.",
        "EvaluationMetrics": {"SNR": "signal-to-noise ratio"}, "ExpectedOutcome": "Higher SNR."}
VERDICT = "\n".join(f"{d}: [Win {{w}}] because it is better." for d in
                    ("Effectiveness", "Novelty", "Detailedness", "Feasibility", "Overall"))


@pytest.fixture(scope="module")
def sgi_data(tmp_path_factory) -> Path:
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.data.build import build_benchmark

    root = tmp_path_factory.mktemp("sgi-runners")
    source = write_synthetic_source(root / "source", n=3)
    build_benchmark(SGI, source, root / "built", configs=["deep_research", "wet_experiment", "dry_experiment",
                                                          "idea_generation"])
    return root / "built"


def _content(body: dict) -> str:
    return body["messages"][-1]["content"]


def _results(out: Path) -> dict:
    return json.loads(max((out / "results").rglob("results_*.json")).read_text())


def _details(out: Path, task: str) -> list[dict]:
    results = _results(out)
    key = next(k for k in results["sciprobe"]["tasks"] if k.startswith(task + "|"))
    return pq.read_table(out / results["sciprobe"]["tasks"][key]["details"]).to_pylist()


# ---------------------------------------------------------------- ids, single-call SGI tasks, dispatch

def test_rows_carry_a_string_id(sgi_data: Path) -> None:
    import datasets

    for config in ("deep_research", "dry_experiment"):
        rows = datasets.load_dataset(str(sgi_data), config, split="test").to_list()
        assert all(isinstance(r["id"], str) and r["id"] == r["idx"] for r in rows)


def test_single_call_sgi_tasks_end_to_end(sgi_data: Path, tmp_path: Path) -> None:
    def reply(body: dict) -> str:
        text = _content(body)
        if "<research direction>" in text:
            return "<answer>\nsample = <Collect soil sample>(\n    site=\"x\",\n    depth=\"1 cm\"\n)\n</answer>"
        n = re.search(r"reports (\d+) events per year over (\d+) years", text)
        return f"Step 1. Multiply.\n<answer>{int(n[1]) * int(n[2])}</answer>"

    out = tmp_path / "run"
    with StubServer(reply=reply) as stub:
        model = f"openai/stub,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", "sgibench:deep_research", "sgibench:wet_experiment", "--model", model,
                     "--data", str(sgi_data), "--output-dir", str(out)]) == 0
        assert stub.count == 6
    scores = _results(out)["results"]
    assert scores["sgibench:deep_research|0"]["exact_match"] == pytest.approx(100.0)
    assert scores["sgibench:wet_experiment|0"]["n_items"] == 3
    assert _details(out, "sgibench:deep_research")[0]["id"] == "SGI_DeepResearch_0000"


def test_every_task_is_handed_a_runner_object() -> None:
    from sciprobe.core.declaration import Runner
    from sciprobe.run.task_runner import runner_of

    kinds = {name: runner_of(task).kind for name, task in SGI.tasks.items()}
    assert all(isinstance(runner_of(task), Runner) for task in SGI.tasks.values())
    assert kinds == {"deep_research": "judged", "idea_generation": "judged", "dry_experiment": "sandbox",
                     "wet_experiment": "single call", "experimental_reasoning": "judged"}


def test_score_file_refuses_runner_tasks(sgi_data: Path, tmp_path: Path) -> None:
    from sciprobe.core.errors import SciprobeError
    from sciprobe.run.score_predictions import score_file

    preds = tmp_path / "p.jsonl"
    preds.write_text('{"id": "SGI_DryExperiment_0200", "response": "x"}\n')
    with pytest.raises(SciprobeError, match="use `sciprobe evaluate`"):
        score_file("sgibench:dry_experiment", preds, data=str(sgi_data), output_dir=tmp_path / "o")


# ---------------------------------------------------------------- dry experiment in the real sandbox

@needs_sandbox
def test_dry_correct_functions_pass_and_rerun_replays_from_cache(sgi_data: Path, tmp_path: Path) -> None:
    with StubServer(reply=lambda body: CORRECT) as stub:
        model = f"openai/coder,base_url={stub.base_url},api_key=sk-test"
        argv = ["evaluate", "sgibench:dry_experiment", "--model", model, "--data", str(sgi_data)]
        assert main(argv + ["--output-dir", str(tmp_path / "a")]) == 0
        first = stub.count
        assert first == 1  # the three synthetic prompts are identical: asked once
        assert main(argv + ["--output-dir", str(tmp_path / "b")]) == 0
        assert stub.count == first  # replayed from the response cache, no new HTTP call
    for run in ("a", "b"):
        results = _results(tmp_path / run)
        scores = results["results"]["sgibench:dry_experiment|0"]
        assert scores["passall_at_5"] == 100.0 and scores["ser"] == 100.0 and scores["n_failed"] == 0
        assert scores["passall_at_5:paper"] == 100.0
        prov = results["sciprobe"]["tasks"]["sgibench:dry_experiment|0"]["provenance"]
        assert prov["sandboxed"] is True and prov["n_runs"] == 15
        assert any("SCIPROBE_DRYEXP_ENV" in w for w in prov["warnings"])  # not the pinned interpreter
    details = _details(tmp_path / "b", "sgibench:dry_experiment")
    assert all(d["cached"] for d in details)
    assert details[0]["runs"][4]["stdout"].strip() == "[Final Output]\n20"
    assert json.loads(details[0]["assembly"])["official"]["replaced"] == ["scale"]


def _rows(sgi_data: Path, n: int) -> list[dict]:
    """Dry rows whose prompts differ, so the stub can answer each item differently."""
    import datasets

    rows = datasets.load_dataset(str(sgi_data), "dry_experiment", split="test").to_list()
    return [{**r, "question": f"[item {k}]\n{r['question']}"} for k, r in enumerate(rows[:n])]


@needs_sandbox
@pytest.mark.slow
def test_dry_fork_bomb_and_infinite_loop_are_contained(sgi_data: Path) -> None:
    from sciprobe.benchmarks.sgibench import prompts, score_dry
    from sciprobe.llm.client import LLMClient
    from sciprobe.benchmarks.sgibench.dry_runner import run_sgi_dry

    answers = {0: FORK_BOMB, 1: INFINITE_LOOP, 2: CORRECT}
    with StubServer(reply=lambda body: answers[int(re.search(r"\[item (\d)\]", _content(body))[1])]) as stub:
        client = LLMClient(f"openai/coder,base_url={stub.base_url},api_key=sk-test")
        records, phash, n_calls, prov = run_sgi_dry(
            _rows(sgi_data, 3), client, {"temperature": 0.0}, build_messages=prompts.dry_messages,
            limits=SandboxLimits(wall_s=3, cpu_s=30))
    assert n_calls == 3 and len(phash) == 64 and prov["n_runs"] == 15
    bomb, loop, good = (r["runs"] for r in records)
    assert all(run["returncode"] != 0 for run in bomb + loop)
    assert all(run["timed_out"] and run["returncode"] == -1 for run in loop)
    assert all(run["returncode"] == 0 for run in good)  # the batch went on
    report = score_dry(records, "official")
    assert report.values["passall_at_1"] == pytest.approx(100 / 3)
    assert [it["pass_nums"] for it in report.values["per_item"]] == [0, 0, 5]
    assert report.values["test_outcomes"] == {"error": 10, "exact": 5}
    assert report.values["ser"] == pytest.approx(100 / 3)


@needs_sandbox
def test_dry_judge_garbage_is_a_recorded_failure(sgi_data: Path, tmp_path: Path) -> None:
    def reply(body: dict) -> str:
        if body["model"] == "judge":
            return "I cannot tell." if "## Model Output\n[Final Output]\n4" in _content(body) else \
                '{"judgment": "correct", "reason": "close enough"}'
        return OFF_BY_ONE

    with StubServer(reply=reply) as stub:
        model = f"openai/coder,base_url={stub.base_url},api_key=sk-test"
        judge = f"openai/judge,base_url={stub.base_url},api_key=sk-test"
        argv = ["evaluate", "sgibench:dry_experiment", "--model", model, "--judge", judge, "--data", str(sgi_data),
                "--mode", "official"]
        assert main(argv + ["--output-dir", str(tmp_path / "a")]) == 0
        first = stub.count
        assert main(argv + ["--output-dir", str(tmp_path / "b")]) == 0
        assert stub.count == first  # model and judge both replayed
    results = _results(tmp_path / "b")
    values = results["sciprobe"]["tasks"]["sgibench:dry_experiment|0"]["scores"]["official"]
    # off by one: test t prints 2*sum + t + 1 (judged correct), except test 1 (prints 4): a garbage verdict
    assert values["test_outcomes"]["judge_failed"] == 3 and values["test_outcomes"]["judge"] == 12
    assert values["passall_at_3"] == 100.0 and values["passall_at_5"] == 0.0
    details = _details(tmp_path / "b", "sgibench:dry_experiment")
    assert "I cannot tell." in json.loads(details[0]["judge_replies"]).values()
    assert "sk-test" not in json.dumps(results)  # judge specs are recorded without their api_key


def test_dry_refuses_without_sandbox_unless_allowed(sgi_data: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    from sciprobe.sandbox import runner as sandbox

    monkeypatch.setattr(sandbox, "sandbox_available", lambda **_: (False, "bubblewrap not found at /nowhere"))
    with StubServer(reply=lambda body: CORRECT) as stub:
        model = f"openai/coder,base_url={stub.base_url},api_key=sk-test"
        argv = ["evaluate", "sgibench:dry_experiment", "--model", model, "--data", str(sgi_data), "--limit", "1"]
        assert main(argv + ["--output-dir", str(tmp_path / "a")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "refusing to run untrusted code without a sandbox" in err
        assert stub.count == 0  # refused before any model call
        assert main(argv + ["--output-dir", str(tmp_path / "b"), "--allow-unsandboxed"]) == 0
    results = _results(tmp_path / "b")
    prov = results["sciprobe"]["tasks"]["sgibench:dry_experiment|0"]["provenance"]
    assert prov["sandboxed"] is False and any("UNSANDBOXED" in w for w in prov["warnings"])
    assert results["results"]["sgibench:dry_experiment|0"]["passall_at_5"] == 100.0


# ---------------------------------------------------------------- idea generation: 2-judge panel

def _panel_reply(garbage_judge: str | None = None):
    def reply(body: dict) -> str:
        text = _content(body)
        if "##Hypothesis A:" not in text:
            return "```json\n" + json.dumps(IDEA) + "\n```"
        if body["model"] == garbage_judge:
            return "Both hypotheses have merit."
        generated_is_a = "GENERATED" in text.split("##Hypothesis A:")[1].split("##Hypothesis B:")[0]
        return VERDICT.format(w="A" if generated_is_a else "B")  # both judges always prefer the generated idea
    return reply


@pytest.mark.slow
def test_idea_panel_two_judges_votes_and_score(sgi_data: Path, tmp_path: Path) -> None:
    with StubServer(reply=_panel_reply()) as stub:
        judges = [f"openai/judge-{k},base_url={stub.base_url},api_key=sk-test" for k in "ab"]
        request = EvaluationRequest(tasks=["sgibench:idea_generation"],
                                    model=f"openai/ideator,base_url={stub.base_url},api_key=sk-test",
                                    data=str(sgi_data), output_dir=tmp_path / "a",
                                    per_task={"sgibench:idea_generation": {"judges": judges}})
        _, results = evaluate(request)
        first = stub.count
        models = [b["model"] for b in stub.requests]
        assert models.count("judge-a") == models.count("judge-b") == 2  # 2 swapped votes, identical items deduped
        request.output_dir = tmp_path / "b"
        _, again = evaluate(request)
        assert stub.count == first
    official, paper = results[0].scores["official"], results[0].scores["paper"]
    assert official.coverage.n_items == 3 and official.coverage.n_scored == 3 and official.coverage.n_failed == 0
    item = official.values["per_item"][0]
    assert item["votes"]["generated"]["effectiveness"] == 4 and item["votes"]["cast"]["novelty"] == 4
    # 4/4 votes win effectiveness (> 3) but not novelty (needs > 4 of 6, unreachable with 2 judges)
    assert official.values["win_rate_effectiveness"] == 100.0 and official.values["win_rate_novelty"] == 0.0
    assert paper.values["win_rate_novelty"] == 100.0
    assert 0 < official.values["final"] < 100 and official.params["judges"] == ["openai/judge-a", "openai/judge-b"]
    assert again[0].scores["official"].values["final"] == pytest.approx(official.values["final"])
    assert results[0].provenance["idea_judges"] == ["openai/judge-a", "openai/judge-b"]


@pytest.mark.slow
def test_idea_panel_judge_garbage_is_retried_then_recorded(sgi_data: Path, tmp_path: Path) -> None:
    with StubServer(reply=_panel_reply(garbage_judge="judge-b")) as stub:
        judges = [f"openai/judge-{k},base_url={stub.base_url},api_key=sk-test" for k in "ab"]
        request = EvaluationRequest(tasks=["sgibench:idea_generation"], modes=["official"],
                                    model=f"openai/ideator,base_url={stub.base_url},api_key=sk-test",
                                    data=str(sgi_data), output_dir=tmp_path / "a",
                                    per_task={"sgibench:idea_generation": {"judges": judges, "judge_attempts": 2}})
        _, results = evaluate(request)
        garbage = [b for b in stub.requests if b["model"] == "judge-b"]
        assert len(garbage) == 4  # 2 distinct votes x 2 attempts, the retry resends the identical request
        assert sorted(json.dumps(b["messages"]) for b in garbage[:2]) == sorted(json.dumps(b["messages"])
                                                                                for b in garbage[2:])
        first = stub.count
        request.output_dir = tmp_path / "b"
        evaluate(request)
        assert stub.count == first  # every attempt replays from the cache
    report = results[0].scores["official"]
    votes = report.values["per_item"][0]["votes"]
    assert votes["failed_calls"] == 2 and votes["cast"]["effectiveness"] == 2
    assert report.values["win_rate_effectiveness"] == 0.0  # 2 votes cannot pass the > 3 gate
    retried = results[0].provenance["judge_retry_usage"]["openai/judge-b"]
    assert retried["calls"] - retried["cached"] == 2 and retried["failed"] == 0  # 6 asked, 2 distinct sent
    log = json.loads(results[0].records[0]["judge_calls"])
    assert [c["verdict"] is None for c in log if c["judge"] == "openai/judge-b"] == [True] * 4


@needs_sandbox
def test_dry_failed_model_call_is_a_counted_failure(sgi_data: Path) -> None:
    from sciprobe.benchmarks.sgibench import prompts, score_dry
    from sciprobe.llm.client import LLMClient
    from sciprobe.benchmarks.sgibench.dry_runner import run_sgi_dry

    def status(body: dict, index: int):
        return 400 if "[item 1]" in _content(body) else None

    with StubServer(reply=lambda body: CORRECT, status_script=status) as stub:
        client = LLMClient(f"openai/coder,base_url={stub.base_url},api_key=sk-test", max_retries=0)
        records, _, n_calls, prov = run_sgi_dry(_rows(sgi_data, 3), client, {}, build_messages=prompts.dry_messages,
                                                modes=("official", "paper"))
    assert n_calls == 3 and prov["n_runs"] == 10  # the failed item is not run
    assert records[1]["runs"] is None and records[1]["error"] and records[0]["runs_paper"] is None
    for mode in ("official", "paper"):
        report = score_dry(records, mode)
        assert report.coverage.n_failed == 1 and report.values["passall_at_5"] == pytest.approx(200 / 3)
