"""Reproducing and importing upstream PreScience runs (issue 12): ``--prompts upstream`` sends upstream's
generation system prompt (our stand-in file) and its user-message layout; ``sciprobe import-upstream prescience``
scores upstream's prediction / generation files (stand-ins written for these tests over the bundled sample)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciprobe.benchmarks import get_benchmark
from sciprobe.benchmarks.prescience.lacer import toy_lattice, write_lattices
from sciprobe.cli import main
from sciprobe.llm.stub_server import StubServer
from sciprobe.task_data import load_task_data
from sciprobe.upstream import prompt_set_for

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
    from sciprobe.benchmarks.prescience.ranking import score_rankings

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
