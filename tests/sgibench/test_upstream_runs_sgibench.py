"""Reproducing and importing upstream SGI-Bench runs (issue 12): ``--prompts upstream`` appends the task's
upstream template to the question (our stand-in step files in upstream's format); the answer-level ``llm_judge`` of
SGI-Bench@5d562f6 (1 whenever exact match is 1); ``sciprobe import-upstream sgibench`` re-scores the task logs
upstream writes (stand-in logs written for these tests over the synthetic data)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.sgibench.prompts import SYSTEM
from sciprobe.cli.commands import main
from sciprobe.testing.stub_server import StubServer
from sciprobe.benchmarks.sgibench.scoring.deep_research import answer_judge_accuracy, parse_answer_verdict
from sciprobe.data.task_data import load_task_data
from sciprobe.run.upstream import prompt_set_for, python_constants

from golden import CASES_DIR
from upstream_support import pin_stand_ins

CASES = CASES_DIR
UPSTREAM_DIR = CASES / "upstream" / "sgibench"
LOGS = CASES / "upstream_logs" / "sgibench"
SGI = get_benchmark("sgibench")


@pytest.fixture(autouse=True)
def _stand_ins_pinned(monkeypatch) -> None:
    """The stand-in templates as the pinned ones (modified templates: tests/core/test_modified_prompts.py)."""
    pin_stand_ins(monkeypatch, "sgibench")


def _constant(relative: str, name: str):
    return python_constants((UPSTREAM_DIR / relative).read_text())[name]


@pytest.fixture(scope="module")
def sgi_data(tmp_path_factory) -> Path:
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.data.build import build_benchmark

    root = tmp_path_factory.mktemp("sgi-upstream")
    build_benchmark(SGI, write_synthetic_source(root / "source", n=3), root / "built")
    return root / "built"


def _rows(data: Path, task: str) -> list[dict]:
    return load_task_data(SGI, SGI.task(task), str(data)).rows


def _results(out: Path) -> dict:
    return json.loads(max((out / "results").rglob("results_*.json")).read_text())


def _text(messages: list[dict]) -> str:
    content = messages[-1]["content"]
    return content if isinstance(content, str) else "\n".join(p["text"] for p in content if p["type"] == "text")


def test_upstream_prompts_append_upstreams_templates(sgi_data: Path, tmp_path: Path) -> None:
    def reply(body: dict) -> str:
        return "\\boxed{A}" if "TEST-ER" in _text(body["messages"]) else "<answer>20</answer>"

    tasks = ["sgibench:deep_research", "sgibench:wet_experiment", "sgibench:experimental_reasoning"]
    with StubServer(reply=reply) as stub:
        model = f"openai/stub,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", *tasks, "--model", model, "--data", str(sgi_data), "--output-dir", str(tmp_path),
                     "--prompts", "upstream", "--upstream-dir", str(UPSTREAM_DIR)]) == 0
        sent = [r["messages"] for r in stub.requests]
    dr = _constant("evaluation/task_1_deep_research/step_1_get_answer.py", "output_requirements")
    wet = _constant("evaluation/task_3_wet_experiment/step_1_get_answer.py", "output_requirements")
    for row in _rows(sgi_data, "deep_research"):
        assert [{"role": "system", "content": SYSTEM}, {"role": "user", "content": row["question"] + dr}] in sent
    for row in _rows(sgi_data, "wet_experiment"):
        assert [{"role": "system", "content": SYSTEM}, {"role": "user", "content": row["question"] + wet}] in sent
    context = _constant("evaluation/task_4_experimental_reasoning/step_1_get_answer.py", "CONTEXT")
    reasoning = [m for m in sent if "TEST-ER" in _text(m)]
    assert len(reasoning) == 3
    rows = _rows(sgi_data, "experimental_reasoning")
    # Requests arrive in any order under concurrency (and the synthetic questions repeat), so compare as multisets.
    expected = []
    for row in rows:
        options = "".join(f"{chr(65 + i)}. {o}\n" for i, o in enumerate(row["options"]))
        text = f"{context}\n\nQuestion:\n{row['question']}\n\nOptions:\n{options}"
        expected.append((("image_url",) * len(row["images"]), text))  # images first, as upstream
    got = [(tuple(p["type"] for p in m[-1]["content"][:-1]), m[-1]["content"][-1]["text"]) for m in reasoning]
    assert sorted(got) == sorted(expected)
    tasks_out = _results(tmp_path)["sciprobe"]["tasks"]
    assert {t["provenance"]["prompt_set"] for t in tasks_out.values()} == {"upstream"}
    files = tasks_out["sgibench:deep_research|0"]["provenance"]["upstream_prompts"]["files"]
    assert list(files) == ["evaluation/task_1_deep_research/step_1_get_answer.py"]


def test_idea_and_dry_upstream_prompts(sgi_data: Path) -> None:
    example = _constant("evaluation/task_2_idea_generation/step_1_get_answer.py", "example")
    idea = prompt_set_for(SGI, SGI.task("idea_generation"), "upstream", local_dir=UPSTREAM_DIR)
    row = _rows(sgi_data, "idea_generation")[0]
    user = idea.builders["build_messages"](row, [])[-1]["content"]
    assert user == row["question"] + "\n\n### Example:\n```json\n" + json.dumps(example, indent=4) + "\n```"
    dry = prompt_set_for(SGI, SGI.task("dry_experiment"), "upstream", local_dir=UPSTREAM_DIR)
    row = _rows(sgi_data, "dry_experiment")[0]
    requirements = _constant("evaluation/task_3_dry_experiment/step_2_get_answer.py", "output_requirements")
    assert dry.builders["build_messages"](row, [])[-1]["content"] == row["question"] + requirements


# ---------------------------------------------------------------- llm_judge (SGI-Bench@5d562f6)


def test_answer_verdicts_read_as_upstream_reads_them() -> None:
    assert parse_answer_verdict('Sure. {"judge": 1, "reason": "same"} done') == 1
    assert parse_answer_verdict('{"reason": "no judge key"}') == 0  # upstream: result.get("judge", 0)
    assert parse_answer_verdict('{"judge": 2}') == 2  # kept as upstream keeps it
    assert parse_answer_verdict('{"judge": "yes"}') is None and parse_answer_verdict("no object") is None
    assert parse_answer_verdict(None) is None
    assert parse_answer_verdict('{"judge": 2}', "paper") is None
    assert parse_answer_verdict('{"judge": true}', "paper") == 1
    assert parse_answer_verdict('{"judge": "0"}', "paper") == 0


def test_llm_judge_is_one_whenever_exact_match_is_one() -> None:
    report = answer_judge_accuracy([None, '{"judge": 0}', '{"judge": 1}', "garbage"], [1, 0, 0, 0])
    assert report.values["per_item"] == [1.0, 0.0, 1.0, 0.0]
    assert report.values["llm_judge"] == 50.0 and report.values["n_judged"] == 3
    assert (report.coverage.n_items, report.coverage.n_scored, report.coverage.n_failed) == (4, 3, 1)
    assert report.params["upstream_commit"].startswith("5d562f6")


def test_deep_research_runner_asks_the_answer_judge_only_where_exact_match_fails(sgi_data: Path,
                                                                                tmp_path: Path) -> None:
    def reply(body: dict) -> str:
        text = _text(body["messages"])
        if body["model"] == "stub":
            match = re.search(r"(\d+) events per year over (\d+) years", text)
            product = int(match[1]) * int(match[2])
            return {20: "<answer>20</answer>", 33: "<answer>33 events</answer>"}.get(product, "<answer>7</answer>")
        if "Reference answer:" in text:  # the answer-level judge
            return '{"judge": 1, "reason": "same count"}' if "33 events" in text else '{"judge": 0, "reason": "no"}'
        if "<input_text>" in text:
            return text.split("<input_text>\n")[1].split("\n</input_text>")[0]
        return '[{"solution_step": "a", "reason": "ok", "judge": "correct"}]'

    with StubServer(reply=reply) as stub:
        model = f"openai/stub,base_url={stub.base_url},api_key=sk-test"
        judge = f"openai/judge,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", "sgibench:deep_research", "--model", model, "--judge", judge, "--data",
                     str(sgi_data), "--output-dir", str(tmp_path)]) == 0
        answer_judge_calls = [r for r in stub.requests if "Reference answer:" in _text(r["messages"])]
    assert len(answer_judge_calls) == 2  # item 0 matches exactly: no call
    flat = _results(tmp_path)["results"]["sgibench:deep_research|0"]
    assert flat["exact_match"] == pytest.approx(100 / 3)
    assert flat["llm_judge"] == pytest.approx(200 / 3) and flat["answer_judge_n_failed"] == 0
    assert flat["llm_judge:paper"] == pytest.approx(200 / 3)
    task = _results(tmp_path)["sciprobe"]["tasks"]["sgibench:deep_research|0"]
    notes = task["scores"]["official"]["notes"]
    assert any(n.startswith("llm_judge (answer-level judge, SGI-Bench@5d562f6") for n in notes)
    details = pq.read_table(tmp_path / task["details"]).to_pylist()
    assert json.loads(details[0]["answer_judge_replies"]) == {"openai/judge": None}
    from sciprobe.leaderboard.tables import task_columns

    assert any(c.ref == "sgibench:deep_research" and c.headline == "llm_judge" for c in task_columns(["sgibench"]))


# ---------------------------------------------------------------- import-upstream


def _log(task: str) -> list[dict]:
    return json.loads(next((LOGS / "evaluation" / task / "logs").glob("*']*.json")).read_text())


@pytest.fixture(scope="module")
def imported(sgi_data: Path, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("sgi-import")  # --data given: nothing is built under SCIPROBE_HOME
    assert main(["import-upstream", "sgibench", "--logs", str(LOGS), "--data", str(sgi_data),
                 "--output-dir", str(out)]) == 0
    return _results(out)


def _mean(values: list[float]) -> float:
    return 100 * sum(values) / len(values)


def test_import_reads_every_task_log(imported: dict) -> None:
    assert set(imported["results"]) == {f"sgibench:{t}|0" for t in SGI.tasks}
    assert imported["config_general"]["model_name"] == "stub-model"
    assert imported["sciprobe"]["judge_ids"] == ["upstream:o4-mini"]
    prov = imported["sciprobe"]["tasks"]["sgibench:idea_generation|0"]["provenance"]
    assert prov["upstream_disciplines"] == "['all']" and prov["prompt_set"] == "upstream"
    assert "stub-model['all']_evaluation.json" in prov["upstream_files_skipped"]


def test_import_deep_research_equals_what_upstream_wrote(imported: dict) -> None:
    logged = _log("task_1_deep_research")
    flat = imported["results"]["sgibench:deep_research|0"]
    assert flat["exact_match"] == pytest.approx(_mean([x["exact_match"] for x in logged]))
    assert flat["step_level_accuracy"] == pytest.approx(_mean([x["step_level_acc"] for x in logged]))
    assert flat["llm_judge"] == pytest.approx(_mean([x["llm_judge"] for x in logged]))
    assert flat["n_failed"] == 1  # the "[Error]" reply is a failed call, not a wrong answer


def test_import_reasoning_dry_wet_and_idea(imported: dict) -> None:
    results = imported["results"]
    reasoning = _log("task_4_experimental_reasoning")
    assert results["sgibench:experimental_reasoning|0"]["mca"] == pytest.approx(_mean([x["MCA"] for x in reasoning]))
    assert results["sgibench:experimental_reasoning|0"]["rv"] == pytest.approx(_mean([x["RV"] for x in reasoning]))
    dry = _log("task_3_dry_experiment")
    passes = [sum(t["pass"] for t in x.get("unit_test", [])) for x in dry]
    assert results["sgibench:dry_experiment|0"]["passall_at_5"] == pytest.approx(_mean([p == 5 for p in passes]))
    assert results["sgibench:dry_experiment|0"]["passall_at_1"] == pytest.approx(_mean([p >= 1 for p in passes]))
    assert results["sgibench:wet_experiment|0"]["n_failed"] == 1
    assert results["sgibench:wet_experiment|0"]["final"] is not None
    idea = imported["sciprobe"]["tasks"]["sgibench:idea_generation|0"]["scores"]["official"]
    assert idea["final"] is None and idea["objective_detailedness"] is not None
    assert any("keep no judge votes" in n for n in idea["notes"])


def test_import_of_a_log_at_the_pinned_commit_has_no_llm_judge(sgi_data: Path, tmp_path: Path) -> None:
    """At 8268d43 ``llm_judge`` is the step judge's list and there is no answer-level judge."""
    old = []
    for entry in _log("task_1_deep_research"):
        entry = {k: v for k, v in entry.items() if k not in ("llm_judge", "llm_judge_reason")}
        entry["llm_judge"] = entry.pop("step_llm_judge")
        old.append(entry)
    logs = tmp_path / "task_1_deep_research" / "logs"
    logs.mkdir(parents=True)
    (logs / "gpt-4.1['all'].json").write_text(json.dumps(old))
    assert main(["import-upstream", "sgibench", "--logs", str(tmp_path / "task_1_deep_research"), "--data",
                 str(sgi_data), "--output-dir", str(tmp_path / "out")]) == 0
    results = _results(tmp_path / "out")
    flat = results["results"]["sgibench:deep_research|0"]
    assert flat["llm_judge"] is None and flat["step_level_accuracy"] == pytest.approx(50.0)
    assert results["config_general"]["model_name"] == "gpt-4.1"


def test_import_refuses_items_missing_from_the_dataset(sgi_data: Path, tmp_path: Path, capsys) -> None:
    entry = dict(_log("task_3_wet_experiment")[0], idx="SGI_WetExperiment_9999")
    (tmp_path / "m['all'].json").write_text(json.dumps([entry]))
    assert main(["import-upstream", "sgibench", "--logs", str(tmp_path), "--data", str(sgi_data),
                 "--output-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "SGI_WetExperiment_9999" in err and err.count("\n") == 1 and not (tmp_path / "out").exists()
