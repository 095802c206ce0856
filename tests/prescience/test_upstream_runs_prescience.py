"""Reproducing and importing upstream PreScience runs (issue 12): ``--prompts upstream`` sends upstream's
generation system prompt (our stand-in file) and its user-message layout; ``sciprobe import-upstream prescience``
scores upstream's prediction / generation files (stand-ins written for these tests over the bundled sample)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.prescience.lacer_judge import toy_lattice, write_lattices
from sciprobe.cli.commands import main
from sciprobe.testing.stub_server import StubServer
from sciprobe.data.task_data import load_task_data
from sciprobe.run.upstream import prompt_set_for

from golden import CASES_DIR
from upstream_support import pin_stand_ins

CASES = CASES_DIR
UPSTREAM_DIR = CASES / "upstream" / "prescience"
SYSTEM_FILE = UPSTREAM_DIR / "task_followup_prediction" / "templates" / "prediction_system.prompt"
LOGS = CASES / "upstream_logs" / "prescience"
PRE = get_benchmark("prescience")


@pytest.fixture(autouse=True)
def _stand_ins_pinned(monkeypatch) -> None:
    """The stand-in templates as the pinned ones (modified templates: tests/core/test_modified_prompts.py)."""
    pin_stand_ins(monkeypatch, "prescience")


def _rows(task: str) -> list[dict]:
    return load_task_data(PRE, PRE.task(task), None).rows


def _results(out: Path) -> dict:
    return json.loads(max((out / "results").rglob("results_*.json")).read_text())


def _expected_user(row: dict) -> str:
    return "".join(f"Background Paper {i}:\nTitle: {r['title']}\nAbstract: {r['abstract']}\n\n"
                   for i, r in enumerate(row["references"], 1))


def test_contribution_upstream_prompt_is_the_system_file_and_upstreams_layout() -> None:
    prompts = prompt_set_for(PRE, PRE.task("contribution_generation"), "upstream", local_dir=UPSTREAM_DIR)
    row = _rows("contribution_generation")[0]
    assert prompts.builders["build_messages"](row, []) == [
        {"role": "system", "content": SYSTEM_FILE.read_text()}, {"role": "user", "content": _expected_user(row)}]


def test_evaluate_contribution_with_upstream_prompts(tmp_path: Path, monkeypatch) -> None:
    lattice = tmp_path / "lattice.json"
    write_lattices(lattice, [toy_lattice("matching")])
    monkeypatch.setenv("SCIPROBE_LACER_TEMPLATE", str(lattice))

    def reply(body: dict) -> str:
        if body["messages"][0]["content"].startswith("TEST-PRESCIENCE-SYSTEM"):
            return "Reasoning: combine.\nTitle: A forecast\nAbstract: An abstract."
        return "Reasoning: close.\nScore: 6"

    with StubServer(reply=reply) as stub:
        model = f"openai/stub,base_url={stub.base_url},api_key=sk-test"
        judge = f"openai/judge,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", "prescience:contribution_generation", "--model", model, "--judge", judge,
                     "--limit", "2", "--output-dir", str(tmp_path / "out"), "--prompts", "upstream",
                     "--upstream-dir", str(UPSTREAM_DIR)]) == 0
        generation = [r["messages"] for r in stub.requests if r["model"] == "stub"]
    rows = load_task_data(PRE, PRE.task("contribution_generation"), None, limit=2).rows  # the items --limit 2 asks
    expected = [[{"role": "system", "content": SYSTEM_FILE.read_text()},
                 {"role": "user", "content": _expected_user(r)}] for r in rows]
    assert sorted(generation, key=repr) == sorted(expected, key=repr)  # concurrent requests arrive in any order
    prov = _results(tmp_path / "out")["sciprobe"]["tasks"]["prescience:contribution_generation|0"]["provenance"]
    assert prov["prompt_set"] == "upstream" and prov["prompt_version"] == f"upstream:{PRE.upstream.label}"
    assert _results(tmp_path / "out")["results"]["prescience:contribution_generation|0"]["lacer"] == 6.0


def test_import_baseline_predictions(tmp_path: Path) -> None:
    from sciprobe.benchmarks.prescience.scoring.ranking_tasks import score_rankings

    assert main(["import-upstream", "prescience", "--logs", str(LOGS / "baselines"), "--output-dir",
                 str(tmp_path)]) == 0
    results = _results(tmp_path)
    assert results["config_general"]["model_name"] == "upstream-run"  # baselines files name no model
    tasks = results["sciprobe"]["tasks"]
    assert set(tasks) == {"prescience:collaborator_prediction|0", "prescience:prior_work_selection|0",
                          "prescience:citation_prediction|0"}
    for name, predicted, gold_column in (("coauthor.frequency.json", "predicted_coauthor_ids", "gold_author_ids"),
                                         ("priorwork.frequency.json", "predicted_reference_ids", "gold_corpus_ids")):
        logged = json.loads((LOGS / "baselines" / name).read_text())["data"]
        task = "collaborator_prediction" if "coauthor" in name else "prior_work_selection"
        gold = {r["corpus_id"]: list(r[gold_column]) for r in _rows(task)}
        direct = score_rankings([x[predicted] for x in logged], [gold[x["corpus_id"]] for x in logged],
                                variant="calculate_ndcg", mode="official")
        scores = tasks[f"prescience:{task}|0"]["scores"]
        assert scores["official"]["ndcg@1000"] == direct.values["ndcg@1000"]
        assert scores["official"]["coverage"]["n_items"] == len(logged)
    strict = tasks["prescience:prior_work_selection|0"]["scores"]["strict"]
    assert strict["ndcg@1000"] is None and "duplicate id" in strict["no_score_reason"]  # refused, not a crash
    logged = [json.loads(line) for line in (LOGS / "baselines" / "impact.poisson.jsonl").read_text().splitlines()]
    labels = {r["corpus_id"]: int(r["label_12m"]) for r in _rows("citation_prediction")}
    mae = sum(abs(x["predicted_citations"] - labels[x["corpus_id"]]) for x in logged) / len(logged)
    assert tasks["prescience:citation_prediction|0"]["scores"]["official"]["mae"] == pytest.approx(mae)


def test_import_generations_replays_upstreams_lacer_replies(tmp_path: Path) -> None:
    assert main(["import-upstream", "prescience", "--logs", str(LOGS / "gpt"), "--output-dir", str(tmp_path)]) == 0
    results = _results(tmp_path)
    assert results["config_general"]["model_name"] == "gpt-5-2025-08-07"
    task = results["sciprobe"]["tasks"]["prescience:contribution_generation|0"]
    assert task["provenance"]["upstream_files_skipped"] == ["generations.gpt-5-2025-08-07.json"]
    assert results["sciprobe"]["judge_ids"] == ["upstream:gpt-5-2025-08-07"]
    logged = json.loads((LOGS / "gpt" / "generations.gpt-5-2025-08-07.lacer_scored.json").read_text())["data"]
    scored = [x["lacer_score"] for x in logged if "lacer_score" in x]
    official = task["scores"]["official"]
    assert official["lacer"] == sum(scored) / len(scored)  # upstream's mean over the scored records
    assert official["coverage"]["n_failed"] == 1  # the record whose judge call failed
    assert official["per_item_rougeL"][0] == 1.0 and official["n_generation_failed"] == 1


@pytest.mark.parametrize("value", [True, "615714", "12"])
def test_import_refuses_a_citation_forecast_that_is_no_json_number(value: object, tmp_path: Path, capsys) -> None:
    """``float()`` read ``true`` as 1 citation and a string as a number; upstream's evaluate.py subtracts JSON
    numbers."""
    row = _rows("citation_prediction")[0]
    logs = tmp_path / "impact.jsonl"
    logs.write_text(json.dumps({"corpus_id": row["corpus_id"], "predicted_citations": value}) + "\n")
    assert main(["import-upstream", "prescience", "--logs", str(logs), "--output-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "not a finite JSON number" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


LACER_SYSTEM = "TEST-LACER-SYSTEM: you compare two research papers."  # our stand-in lacer_score.py's SYSTEM_PROMPT


def test_upstream_dir_supplies_the_lacer_judge_prompt_and_its_system_message(tmp_path: Path, monkeypatch) -> None:
    """Issue 22: --upstream-dir did not supply the LACER template (offline runs also needed SCIPROBE_LACER_TEMPLATE)
    and the judge's system message was sciprobe's; the official judge messages are upstream's."""
    monkeypatch.delenv("SCIPROBE_LACER_TEMPLATE", raising=False)
    monkeypatch.delenv("SCIPROBE_PRESCIENCE_UPSTREAM", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def reply(body: dict) -> str:
        if body["messages"][0]["content"] == LACER_SYSTEM:
            return "Reasoning: close.\nScore: 7"
        return "Reasoning: combine.\nTitle: A forecast\nAbstract: An abstract."

    with StubServer(reply=reply) as stub:
        model = f"openai/stub,base_url={stub.base_url},api_key=sk-test"
        judge = f"openai/judge,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", "prescience:contribution_generation", "--model", model, "--judge", judge,
                     "--limit", "2", "--output-dir", str(tmp_path / "out"), "--no-cache",
                     "--upstream-dir", str(UPSTREAM_DIR)]) == 0
        judged = [r["messages"] for r in stub.requests if r["model"] == "judge"]
    assert len(judged) == 2 and all(m[0] == {"role": "system", "content": LACER_SYSTEM} for m in judged)
    assert all(m[1]["content"].startswith("TEST-LACER-TEMPLATE") and "{{" not in m[1]["content"] for m in judged)
    results = _results(tmp_path / "out")
    assert results["results"]["prescience:contribution_generation|0"]["lacer"] == 7.0
    prov = results["sciprobe"]["tasks"]["prescience:contribution_generation|0"]["provenance"]
    assert prov["lacer_system_prompt_source"].endswith("lacer_score.py SYSTEM_PROMPT")
    assert str(UPSTREAM_DIR) in prov["lacer_template_source"]
    # the stand-ins are not upstream's files: the result says so
    assert sum("differs from allenai/prescience@47384ed" in w for w in prov["prompt_warnings"]) == 2


def _lacer_commands(tmp_path: Path) -> dict[str, list[str]]:
    """Every command that judges LACER, with a judge that is never reached (the prompt is loaded first)."""
    rows = _rows("contribution_generation")
    preds, replies = tmp_path / "preds.jsonl", tmp_path / "replies.jsonl"
    preds.write_text("".join(json.dumps({"id": r["corpus_id"], "prediction": {"title": "T", "abstract": "A"}}) + "\n"
                             for r in rows))
    replies.write_text("".join(json.dumps({"id": r["corpus_id"], "response": "Title: T\nAbstract: A"}) + "\n"
                               for r in rows))
    judge = ["--judge", "openai/judge,base_url=http://127.0.0.1:9/v1,api_key=x"]
    return {"evaluate": ["evaluate", "prescience:contribution_generation", "--model",
                         "openai/m,base_url=http://127.0.0.1:9/v1,api_key=x", *judge, "--output-dir", str(tmp_path)],
            "score": ["score", "prescience:contribution_generation", "--predictions", str(replies), *judge,
                      "--output-dir", str(tmp_path)],
            "prescience score": ["prescience", "score", "contribution_generation", "--predictions", str(preds),
                                 *judge]}


@pytest.mark.parametrize("command", ["evaluate", "score", "prescience score"])
def test_offline_lacer_error_names_only_options_of_its_command(command: str, tmp_path: Path, capsys,
                                                                monkeypatch) -> None:
    """Issue 23.9: the offline LACER error said "pass --lacer-template PATH", which `sciprobe score` rejects."""
    import re

    monkeypatch.delenv("SCIPROBE_LACER_TEMPLATE", raising=False)
    monkeypatch.delenv("SCIPROBE_PRESCIENCE_UPSTREAM", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    argv = _lacer_commands(tmp_path)[command]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error:") and "not cached" in err
    options = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", err))
    assert "--upstream-dir" in options
    with pytest.raises(SystemExit):
        main([*command.split(), "--help"])
    usage = capsys.readouterr().out
    assert all(option in usage for option in options), options


def test_import_names_the_generating_model_not_the_judge(tmp_path: Path) -> None:
    """Issue 22: `model_of` took the last script's --model, so a Claude generation scored by a GPT-5 LACER judge
    was labelled with the judge's name. The file name here names no model: only the metadata can."""
    logged = json.loads((LOGS / "gpt" / "generations.gpt-5-2025-08-07.lacer_scored.json").read_text())
    logged["metadata"] = [
        {"script": "task_followup_prediction/generate/baseline_claude_parallel.py",
         "args": {"model": "claude-3-5-sonnet-20241022"}},
        {"script": "/home/u/prescience/task_followup_prediction/evaluate/lacer_score.py",
         "args": {"judge": "openai", "model": "gpt-5-2025-08-07"}},
        {"script": "task_followup_prediction/evaluate/bert_score.py",
         "args": {"model": "microsoft/deberta-large-mnli"}},
    ]
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "run.scored.json").write_text(json.dumps(logged))
    assert main(["import-upstream", "prescience", "--logs", str(logs), "--output-dir", str(tmp_path / "out")]) == 0
    results = _results(tmp_path / "out")
    assert results["config_general"]["model_name"] == "claude-3-5-sonnet-20241022"
    assert results["sciprobe"]["judge_ids"] == ["upstream:gpt-5-2025-08-07"]


def test_model_of_reads_only_steps_that_made_the_predictions() -> None:
    from sciprobe.benchmarks.prescience.upstream_logs import model_of

    judged_only = [{"script": "task_followup_prediction/evaluate/lacer_score.py", "args": {"model": "gpt-5"}}]
    assert model_of(judged_only, Path("generations.my-model.lacer_scored.json")) == "my-model"
    assert model_of(judged_only, Path("scored.json")) is None
    assert model_of([{"args": {"model": "who-ran-this"}}], Path("scored.json")) is None  # no script: unknown step
    assert model_of([{"script": "task_impact_prediction/evaluate.py", "args": {"model": "x"}}], Path("p.json")) is None


@pytest.mark.parametrize("prompts", ["sciprobe", "upstream"])
def test_contribution_generation_sends_no_max_tokens_as_upstream(prompts: str, tmp_path: Path) -> None:
    """Issue 22: generation sent max_tokens 2048 where upstream's OpenAI baseline sends none; --max-tokens still
    sets a cap, recorded with the results."""

    def reply(body: dict) -> str:
        if body["model"] == "judge":
            return "Reasoning: close.\nScore: 5"
        return "Reasoning: combine.\nTitle: A forecast\nAbstract: An abstract."

    argv = ["evaluate", "prescience:contribution_generation", "--limit", "2", "--no-cache", "--prompts", prompts,
            "--upstream-dir", str(UPSTREAM_DIR)]
    with StubServer(reply=reply) as stub:
        model = f"openai/stub,base_url={stub.base_url},api_key=sk-test"
        judge = f"openai/judge,base_url={stub.base_url},api_key=sk-test"
        assert main([*argv, "--model", model, "--judge", judge, "--output-dir", str(tmp_path / "a")]) == 0
        sent = [r for r in stub.requests if r["model"] == "stub"]
        assert len(sent) == 2 and not any({"max_tokens", "max_completion_tokens"} & set(r) for r in sent)
        assert main([*argv, "--model", model, "--judge", judge, "--output-dir", str(tmp_path / "b"),
                     "--max-tokens", "300"]) == 0
        capped = [r for r in stub.requests if r["model"] == "stub"][2:]
    assert len(capped) == 2 and all(r["max_tokens"] == 300 for r in capped)
    prov = _results(tmp_path / "a")["sciprobe"]["tasks"]["prescience:contribution_generation|0"]["provenance"]
    assert "max_tokens" not in prov["generation_parameters"]
