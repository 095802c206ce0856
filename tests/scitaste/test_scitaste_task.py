"""SciTaste-Bench pure_qa: prompt, lenient parser (golden cases), end-to-end scoring offline through the sciprobe
runner and the lighteval task card (spec scitaste.md §2, §3, §4, §8)."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.scitaste import gold, score_pure_qa
from sciprobe.benchmarks.scitaste.parsing import parse_answer
from sciprobe.benchmarks.scitaste.prompts import PROMPT_VERSION, pure_qa_messages
from sciprobe.cli.commands import main
from sciprobe.core.errors import SciprobeError
from sciprobe.testing.stub_server import StubServer
from sciprobe.benchmarks.scitaste.scoring.composite import DIMENSIONS

from task_card_support import CARD, load_card

from golden import load_cases

TASTE = get_benchmark("scitaste")
CASES = load_cases("scitaste_parsing")
SAMPLE = [json.loads(line) for line in (TASTE.sample_source / "selected.jsonl").read_text().splitlines()]
GOLD = {r["bibcode"]: r for r in SAMPLE}
FAILING_ID = SAMPLE[1]["bibcode"]


# ---------------------------------------------------------------- parser

@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_parse_case(case: dict[str, Any]) -> None:
    parsed = parse_answer(case["text"])
    assert parsed.path == case["path"]
    if case["path"].startswith("failed:"):
        assert parsed.value is None and not parsed.ok
        assert parsed.extra["reason"] == case["path"].split(":", 1)[1]
        for key, value in case.get("extra", {}).items():
            assert parsed.extra[key] == value
        return
    assert parsed.ok and parsed.value["total"] == case["total"]
    assert list(parsed.value["dims"]) == list(DIMENSIONS)
    if "dims" in case:
        assert parsed.value["dims"] == {k: float(v) for k, v in case["dims"].items()}
    if "confidence" in case:
        assert parsed.value["confidence"] == case["confidence"]


def test_parser_cases_cover_the_brief() -> None:
    paths = {c["path"] for c in CASES}
    for required in ("strict", "tolerant:fenced", "tolerant:embedded", "tolerant:aliases", "failed:empty",
                     "failed:no_json", "failed:invalid_json", "failed:missing_dimensions", "failed:out_of_range"):
        assert required in paths


# ---------------------------------------------------------------- prompt

def test_prompt_has_the_paper_input_lines_and_the_json_contract() -> None:
    row = {**SAMPLE[0], "discipline": 0}  # a loaded Dataset row carries the ClassLabel index
    system, user = pure_qa_messages(row)
    assert system["role"] == "system" and user["role"] == "user"
    lines = user["content"].splitlines()
    assert [line.split(":", 1)[0] for line in lines] == ["Discipline", "Title", "Abstract", "Identifier"]
    assert lines[0] == "Discipline: physics" and lines[3] == f"Identifier: {SAMPLE[0]['bibcode']}"
    for key in DIMENSIONS:
        assert f'"{key}"' in system["content"]
    assert "29.5%" in system["content"] and "15.3%" in system["content"]
    assert TASTE.prompt_version == PROMPT_VERSION


def test_gold_carries_total_dims_and_discipline() -> None:
    row = {"gold_total": 61.5, "gold_dims": {d: 50.0 for d in DIMENSIONS}, "discipline": 5}
    assert gold(row) == {"total": 61.5, "dims": {d: 50.0 for d in DIMENSIONS}, "discipline": "finance"}


# ---------------------------------------------------------------- scorer

def _records(failing: set[int]) -> list[dict[str, Any]]:
    out = []
    for i, r in enumerate(SAMPLE):
        g = {"total": r["innovation_score"], "dims": r["dimension_scores"], "discipline": r["discipline"]}
        pred = None if i in failing else {"total": min(100.0, g["total"] + 3), "dims": g["dims"]}
        out.append({"id": r["bibcode"], "gold": g, "prediction": pred})
    return out


def test_score_reports_both_schemes_and_coverage() -> None:
    report = score_pure_qa(_records({0, 7}), "paper")
    v = report.values
    assert report.coverage.n_failed == 2 and v["n_success"] == 22 and report.coverage.n_scored == 22
    assert v["grade"] in "ABCDEF" and 0 <= v["scheme2_score"] <= 100
    assert set(v["by_discipline"]) == {r["discipline"] for r in SAMPLE}
    assert sum(g["n_failed"] for g in v["by_discipline"].values()) == 2
    assert v["dim_mae"] == {d: 0.0 for d in DIMENSIONS} and v["weighted_dim_spearman"] == pytest.approx(1.0)
    assert v["weights_source"] == "solved-from-gold"  # the fixture's gold determines the weights exactly
    strict = score_pure_qa(_records({0, 7}), "strict")
    assert strict.values["wape_pct"] > v["wape_pct"] and strict.coverage.n_scored == 24
    with pytest.raises(SciprobeError, match="unknown mode"):
        score_pure_qa(_records(set()), "official")


def test_score_all_failed_is_nan_not_zero() -> None:
    v = score_pure_qa(_records(set(range(len(SAMPLE)))), "paper").values
    assert math.isnan(v["scheme2_score"]) and math.isnan(v["scheme1_final"]) and v["n_success"] == 0
    assert v["grade"] is None


def test_too_few_items_fall_back_to_placeholder_weights() -> None:
    v = score_pure_qa(_records(set())[:5], "paper").values
    assert v["weights_source"] == "placeholder"


# ---------------------------------------------------------------- end to end (sciprobe runner, real HTTP stub)

def taste_reply(body: dict) -> str:
    ident = re.search(r"Identifier: (\S+)", body["messages"][-1]["content"])[1]
    if ident == FAILING_ID:
        return "I am unable to assess this paper."
    r = GOLD[ident]
    answer = {"score": min(100.0, r["innovation_score"] + 4),
              "dimensions": {k: min(100.0, v + 2) for k, v in r["dimension_scores"].items()},
              "reasoning": "stub", "confidence": 0.6}
    return "```json\n" + json.dumps(answer) + "\n```"


def test_evaluate_end_to_end_offline(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with StubServer(reply=taste_reply) as server:
        model = f"openai/stub-model,base_url={server.base_url},api_key=sk-test"
        assert main(["evaluate", "scitaste:pure_qa", "--model", model, "--output-dir", str(out)]) == 0
        assert server.count == len(SAMPLE)
    results = json.loads(next((out / "results").rglob("results_*.json")).read_text())
    scores = results["results"]["scitaste:pure_qa|0"]
    assert scores["n_items"] == 24 and scores["n_failed"] == 1 and scores["n_success"] == 23
    assert scores["bias"] == pytest.approx(4.0) and scores["spearman"] == pytest.approx(1.0)
    assert scores["scheme2_score:strict"] < scores["scheme2_score"]
    task = results["sciprobe"]["tasks"]["scitaste:pure_qa|0"]
    details = pq.read_table(out / task["details"]).to_pylist()
    paths = [d["parse_path"] for d in details]
    assert paths.count("failed:no_json") == 1 and paths.count("tolerant:fenced") == 23


# ---------------------------------------------------------------- lighteval task card

def test_card_lists_pure_qa_with_declared_metrics() -> None:
    card = load_card("scitaste")
    assert [t.name for t in card.TASKS_TABLE] == ["scitaste:pure_qa"]
    task = card.TASKS_TABLE[0]
    assert task.hf_subset == "selected" and task.generation_size == 4096
    names = [m.metric_name for m in task.metrics]
    assert {"scheme2_score", "wape_pct", "scheme1_final", "failure_rate", "scheme2_score_strict"} <= set(names)
    assert "official_parse_failure_rate" not in names and "macro_f1" not in names
    idr = load_card("idrbench")  # the generalised adapter keeps IDRBench's metric set
    ipi = next(t for t in idr.TASKS_TABLE if t.name == "idrbench:ipi")
    assert {"macro_f1", "tnr", "official_parse_failure_rate"} <= {m.metric_name for m in ipi.metrics}


def test_card_metrics_score_parsed_answers(tmp_path: Path) -> None:
    import datasets
    from lighteval.models.model_output import ModelResponse

    from sciprobe.data.build import build_benchmark
    from sciprobe.interop.lighteval_tasks import make_prompt_function, render_query, tasks_table

    build_benchmark(TASTE, TASTE.sample_source, tmp_path / "d", configs=["selected"])
    rows = datasets.load_dataset(str(tmp_path / "d"), "selected", split="test").to_list()
    task = TASTE.task("pure_qa")
    prompt = make_prompt_function(task, str(tmp_path / "d"))
    docs = [prompt(r, "scitaste:pure_qa") for r in rows]
    assert docs[0].query == render_query(pure_qa_messages(rows[0]))
    assert docs[0].specific["gold"]["discipline"] == "physics"
    metrics = {m.metric_name: m for m in tasks_table(TASTE, str(tmp_path / "d"))[0].metrics}
    replies = [taste_reply({"messages": [{"content": d.query}]}) for d in docs]
    items = [metrics["scheme2_score"].sample_level_fn.compute(doc=d, model_response=ModelResponse(text=[t]))
             for d, t in zip(docs, replies)]
    assert sum(i["prediction"] is None for i in items) == 1
    direct = score_pure_qa(items, "paper").values
    assert metrics["scheme2_score"].corpus_level_fn.compute_corpus(items) == pytest.approx(direct["scheme2_score"])
    assert metrics["failure_rate"].corpus_level_fn.compute_corpus(items) == pytest.approx(1 / 24)
    strict = metrics["scheme2_score_strict"].corpus_level_fn.compute_corpus(items)
    assert strict == pytest.approx(score_pure_qa(items, "strict").values["scheme2_score"])


@pytest.mark.slow
def test_lighteval_endpoint_litellm_against_the_stub(tmp_path: Path) -> None:
    """The real lighteval CLI (through `sciprobe lighteval`), litellm backend, real HTTP to a loopback stub."""
    from sciprobe.data.build import build_benchmark

    data = tmp_path / "data"
    build_benchmark(TASTE, TASTE.sample_source, data)
    with StubServer(reply=taste_reply) as server:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test", "SCIPROBE_HOME": str(tmp_path / "home"),
               "SCIPROBE_SCITASTE_DATA": str(data)}
        proc = subprocess.run(
            [sys.executable, "-m", "sciprobe.cli.commands", "lighteval", "endpoint", "litellm",
             f"model_name=openai/stub-model,base_url={server.base_url},provider=openai,api_key=sk-test",
             "scitaste:pure_qa|0", "--custom-tasks", str(CARD),
             "--output-dir", str(tmp_path / "out")],
            env=env, capture_output=True, text=True, timeout=600,
            cwd=tmp_path)  # lighteval's litellm disk cache lives in the cwd; a cache hit crashes litellm 1.108
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert server.count == len(SAMPLE)
    results = json.loads(next((tmp_path / "out" / "results").rglob("results_*.json")).read_text())
    scores = results["results"]["scitaste:pure_qa|0"]
    assert scores["failure_rate"] == pytest.approx(1 / 24)
    assert 0 < scores["scheme2_score"] <= 100 and scores["scheme2_score_strict"] < scores["scheme2_score"]


def test_score_a_file_of_raw_responses(tmp_path: Path) -> None:
    """`sciprobe score` on submitted raw answers: exact gold answers score 100; a non-JSON answer is a failure."""
    lines = []
    for i, r in enumerate(SAMPLE):
        response = "no idea" if i == 0 else json.dumps({"score": r["innovation_score"],
                                                         "dimensions": r["dimension_scores"]})
        lines.append(json.dumps({"id": r["bibcode"], "response": response}))
    preds = tmp_path / "preds.jsonl"
    preds.write_text("\n".join(lines) + "\n")
    out = tmp_path / "scored"
    assert main(["score", "scitaste:pure_qa", "--predictions", str(preds), "--output-dir", str(out)]) == 0
    scores = json.loads(next((out / "results").rglob("results_*.json")).read_text())["results"]["scitaste:pure_qa|0"]
    assert scores["scheme2_score"] == pytest.approx(100.0) and scores["wape_pct"] == pytest.approx(0.0)
    assert scores["n_failed"] == 1 and scores["scheme2_score:strict"] < 100.0
    assert scores["composite_consistency_mae"] < 0.01  # exact gold: the total is the weighted sum of the dims
