"""PreScience T2-T7 with a model (issue 14): prompts from the leak-free history H^<t of the bundled sample, the
context budget, official + tolerant parsing, padding, the runner through a loopback OpenAI-compatible stub, dry-run
plans, predictions files, the `impact_prediction` alias and the `sciprobe tasks` listing
(spec prescience.md §1.4, §2 T2-T7)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import sciprobe.benchmarks.prescience.forecast_prompts as fp
from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.prescience.forecast_context import load_corpus, padding_draw
from sciprobe.benchmarks.prescience.forecast_runner import (
    COUNT_LABELS,
    RANKING_TASKS,
    Prompt,
    build_prompt,
    finalize_ranking,
    item_id,
)
from sciprobe.core.errors import SciprobeError

from golden import case_ids, load_cases

FORECAST_TASKS = (*RANKING_TASKS, *COUNT_LABELS)
COUNT_CASES = load_cases("prescience_count_parsing")
BENCH = get_benchmark("prescience")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> str:
    """The bundled sample, built once for this module."""
    from sciprobe.data.build import build_benchmark

    out = tmp_path_factory.mktemp("prescience") / "build"
    build_benchmark(BENCH, BENCH.sample_source, out)
    return str(out)


def _rows(built: str, task: str) -> list[dict]:
    import datasets

    return datasets.load_dataset(built, BENCH.task(task).config, split="test").to_list()


def _user(prompt: Prompt) -> str:
    return prompt.messages[-1]["content"]


def _dates(text: str) -> list[str]:
    return re.findall(r"\b\d{4}-\d{2}-\d{2}\b", text)


# ---------------------------------------------------------------- prompts from H^<t
@pytest.mark.parametrize("task", FORECAST_TASKS)
def test_every_instance_gets_a_prompt(built: str, task: str) -> None:
    corpus = load_corpus(built)
    rows = _rows(built, task)
    assert rows
    for row in rows[:5]:
        prompt = build_prompt(task, corpus, row)
        assert prompt.messages[0]["role"] == "system" and prompt.messages[1]["role"] == "user"
        user = _user(prompt)
        if task in RANKING_TASKS:
            assert prompt.candidates and "Ranking:" in user
            assert all(c in user for c in prompt.candidates)
            assert len(prompt.padding) == len(set(prompt.padding)) > 0
        else:
            assert f"{COUNT_LABELS[task]}: <number>" in user


@pytest.mark.parametrize("task", ["collaborator_prediction", "prior_work_selection"])
def test_history_prompts_show_nothing_from_the_target_or_after_it(built: str, task: str) -> None:
    """T2/T3 see no target text and no paper dated on or after t_p (strict date < t_p, spec §1.4)."""
    corpus = load_corpus(built)
    for row in _rows(built, task):
        target = corpus.test.row(corpus.test.row_of(row["corpus_id"]))
        user = _user(build_prompt(task, corpus, row, context_chars=50_000, max_candidates=500))
        assert target["title"] not in user and row["corpus_id"] not in user
        cutoff = row["date"]
        shown = [d for d in _dates(user) if d != cutoff]
        assert all(d < cutoff for d in shown), (row["corpus_id"], cutoff, max(shown))
        # the candidates are all from the history (authors with a paper before t_p / papers before t_p)
        prompt = build_prompt(task, corpus, row, context_chars=50_000, max_candidates=500)
        view = corpus.test.view(cutoff)
        for cid in prompt.candidates:
            assert (view.author_history_rows(cid).size > 0) if task == "collaborator_prediction" else cid in view


def test_future_combination_candidates_precede_the_target(built: str) -> None:
    corpus = load_corpus(built)
    for row in _rows(built, "future_combination"):
        prompt = build_prompt("future_combination", corpus, row, context_chars=50_000, max_candidates=500)
        view = corpus.test.view(row["date"])
        assert prompt.candidates and all(c in view for c in prompt.candidates)
        assert all(c in view for c in prompt.padding) and row["corpus_id"] not in prompt.padding


def test_citation_prompt_never_shows_the_trajectory(built: str) -> None:
    corpus = load_corpus(built)
    for row in _rows(built, "citation_prediction"):
        target = corpus.test.row(corpus.test.row_of(row["corpus_id"]))
        user = _user(build_prompt("citation_prediction", corpus, row))
        assert target["title"] in user and f"published {row['date']}" in user
        assert "trajectory" not in user.lower() and str(target["citation_trajectory"]) not in user


def test_topic_prompt_uses_the_history_window_only(built: str) -> None:
    corpus = load_corpus(built)
    row = next(r for r in _rows(built, "topic_trends") if r["history_count"] > 0)
    user = _user(build_prompt("topic_trends", corpus, row))
    counts = re.search(r"Papers with this topic per month: ([\d, ]+) \(total (\d+)\)", user)
    assert counts and int(counts.group(2)) == row["history_count"]  # the instance's own history count
    assert "2023-10-01 to 2024-10-01" in user and "2024-10-01 to 2025-10-01 (12 months)" in user
    pair = _rows(built, "topic_pair_trends")[0]
    user = _user(build_prompt("topic_pair_trends", corpus, pair))
    assert "(9 months)" in user and pair["topic"].split("||")[0] in user
    assert re.search(rf"both topics per month: [\d, ]+ \(total {pair['history_count']}\)", user)


@pytest.mark.parametrize("task", FORECAST_TASKS)
def test_prompts_are_deterministic(built: str, task: str) -> None:
    corpus = load_corpus(built)
    row = _rows(built, task)[0]
    a, b = build_prompt(task, corpus, row), build_prompt(task, corpus, row)
    assert a.messages == b.messages and a.candidates == b.candidates and a.padding == b.padding and a.cut == b.cut


# ---------------------------------------------------------------- the context budget
@pytest.mark.parametrize("task", ["collaborator_prediction", "prior_work_selection", "future_combination"])
def test_context_budget_cuts_deterministically_and_says_what(built: str, task: str) -> None:
    corpus = load_corpus(built)
    rows = _rows(built, task)
    big = [build_prompt(task, corpus, r, context_chars=100_000, max_candidates=500) for r in rows]
    row, full = max(zip(rows, big), key=lambda pair: len(_user(pair[1])))
    small = build_prompt(task, corpus, row, context_chars=1500)
    assert len(_user(small)) <= 1500 + 10 < len(_user(full))
    assert small.cut and all(v["shown"] < v["total"] for k, v in small.cut.items() if isinstance(v, dict))
    assert set(small.candidates) <= set(full.candidates) and small.candidates == sorted(small.candidates)
    assert not full.cut.get("candidates")
    capped = build_prompt(task, corpus, row, context_chars=100_000, max_candidates=2)
    assert len(capped.candidates) == min(2, len(full.candidates))
    if len(full.candidates) > 2:
        assert capped.cut["candidates_over_max"] == {"shown": 2, "total": len(full.candidates)}


def test_budget_rejects_nonsense(built: str) -> None:
    corpus = load_corpus(built)
    row = _rows(built, "collaborator_prediction")[0]
    with pytest.raises(SciprobeError, match="context_chars"):
        build_prompt("collaborator_prediction", corpus, row, context_chars=100)
    with pytest.raises(SciprobeError, match="max_candidates"):
        build_prompt("collaborator_prediction", corpus, row, max_candidates=0)


def test_budget_section_keeps_whole_lines() -> None:
    budget = fp.Budget(100)
    budget.fixed("x" * 38)  # 40 counted with its separator
    kept = budget.section("s", ["a" * 20, "b" * 20, "c" * 20, "d" * 20], share=0.5)
    assert kept == ["a" * 20] and budget.cut["s"] == {"shown": 1, "total": 4}
    assert budget.section("t", ["y" * 500], min_lines=1) == ["y" * 500]


# ---------------------------------------------------------------- parsing and padding
def test_ranking_parser_official_then_tolerant() -> None:
    cands = ["blk1_1", "blk2_2", "blk12_12"]
    official = fp.parse_ranking("thinking...\n**Ranking:** blk2_2, `blk1_1`, nobody", cands)
    assert official.path == "official" and official.value == ["blk2_2", "blk1_1", "nobody"]
    assert official.official == official.value
    tolerant = fp.parse_ranking("I would pick blk12_12 first, then blk1_1.", cands)
    assert tolerant.path == "tolerant:candidate_ids" and tolerant.value == ["blk12_12", "blk1_1"]
    assert tolerant.official is None
    # a Ranking line that names no candidate falls back to the mentions
    echoed = fp.parse_ranking("Ranking: <id>, <id>\nblk2_2 looks likely", cands)
    assert echoed.path == "tolerant:candidate_ids" and echoed.value == ["blk2_2"] and echoed.official == ["id", "id"]
    assert fp.parse_ranking("no ids here", cands).path == "failed:no_ranking"
    assert fp.parse_ranking("", cands).path == "failed:empty"
    assert fp.parse_ranking("Ranking: 1, 2", ["12", "1"]).value == ["1", "2"]  # no candidate filter in the parser


@pytest.mark.parametrize("case", COUNT_CASES, ids=case_ids(COUNT_CASES))
def test_count_parser_reads_only_answers_in_the_format(case: dict) -> None:
    """Issue 22.1: a number inside prose or glued to letters (a stub's hex digest) is no forecast."""
    parsed = fp.parse_count(case["text"], case["label"])
    assert (parsed.value, parsed.path) == (case["value"], case["path"])
    assert parsed.official == (case["value"] if case["path"] == "official" else None)


def test_ranking_parser_reads_candidate_ids_as_whole_tokens() -> None:
    cands = ["12", "13", "8"]
    assert fp.parse_ranking("stub judgement 8a615714, then 12.5 and 13", cands).value == ["13"]
    assert fp.parse_ranking("stub judgement 8a615714.", cands).path == "failed:no_ranking"


@pytest.mark.parametrize("task", list(COUNT_LABELS))
def test_a_reply_that_is_no_answer_is_a_parse_failure_in_every_mode(built: str, task: str, tmp_path: Path) -> None:
    """Issue 22.1: the loopback stub's default reply ("Reasoning: stub judgement 8a615714. Verdict: ...") was read
    as 615714 citations and scored 13/13 with MAE 47,434; it is no count, so every item is a parse failure."""
    from sciprobe.run.evaluation import EvaluationRequest, evaluate
    from sciprobe.llm.client import LLMClient
    from sciprobe.testing.stub_server import StubServer

    with StubServer() as server:
        client = LLMClient(f"openai/stub,base_url={server.base_url},api_key=sk-test,max_retries=0")
        request = EvaluationRequest(tasks=[f"prescience:{task}"], model="openai/stub", data=built, limit=5,
                                    output_dir=tmp_path, use_cache=False)
        _, (result,) = evaluate(request, client)
    n = len(result.records)
    assert n > 0 and all(r["parse_path"] == "failed:no_number" and r["prediction"] is None for r in result.records)
    for mode in BENCH.task(task).modes:
        coverage = result.scores[mode].coverage
        assert (coverage.n_items, coverage.n_failed) == (n, n), mode
        assert result.scores[mode].values.get("n_parse_tolerant", 0) == 0
    if task == "citation_prediction":  # no number to score: the MAE stands on nothing (topic units predict 0)
        assert result.scores["official"].coverage.n_scored == 0 and result.scores["official"].values["mae"] is None


def test_finalize_ranking_filters_dedupes_and_pads() -> None:
    prompt = Prompt([], candidates=["a", "b", "c"], padding=["x", "b", "y", "z"])
    ranking, info = finalize_ranking(["b", "ghost", "b", "a"], prompt, k=5)
    assert ranking == ["b", "a", "x", "y", "z"]
    assert info == {"model_ranking": ["b", "a"], "n_unknown": 1, "n_padded": 3}
    assert finalize_ranking(["ghost"], prompt)[0] is None
    assert finalize_ranking(None, prompt)[0] is None


def test_padding_is_seeded_by_item() -> None:
    pool = [f"p{i}" for i in range(50)]
    a = padding_draw(pool, "item-1", k=10)
    assert a == padding_draw(pool, "item-1", k=10) and len(set(a)) == 10
    assert a != padding_draw(pool, "item-2", k=10)
    assert len(padding_draw(pool, "item-1", k=1000, exclude=["p0"])) == 49


# ---------------------------------------------------------------- the runner, end to end through real HTTP
def _stub_reply(body: dict) -> str:
    user = body["messages"][-1]["content"]
    if "Ranking:" in user:
        ids = re.findall(r"^- (\S+?): ", user, flags=re.MULTILINE)
        return "The strongest evidence comes first.\nRanking: " + ", ".join(reversed(ids))
    label = "Citations" if "Citations:" in user else "Papers"
    return f"Reasoning: steady growth.\n{label}: 7"


@pytest.fixture
def stub_client():
    from sciprobe.llm.client import LLMClient
    from sciprobe.testing.stub_server import StubServer

    with StubServer(reply=_stub_reply) as server:
        yield LLMClient(f"openai/stub-forecaster,base_url={server.base_url},api_key=sk-test,max_retries=0"), server


@pytest.mark.parametrize("task", FORECAST_TASKS)
def test_runner_end_to_end(built: str, task: str, stub_client, tmp_path: Path) -> None:
    from sciprobe.run.evaluation import EvaluationRequest, evaluate

    client, server = stub_client
    request = EvaluationRequest(tasks=[f"prescience:{task}"], model="openai/stub-forecaster", data=built, limit=4,
                                output_dir=tmp_path, use_cache=False)
    path, results = evaluate(request, client)
    (result,) = results
    n = len(result.records)
    assert server.count == n > 0 and result.task == f"prescience:{task}"
    assert result.provenance["context_budget"]["context_chars"] == fp.DEFAULT_CONTEXT_CHARS
    for record in result.records:
        assert record["parse_path"] == "official" and record["error"] is None
        if task in RANKING_TASKS:
            ranked = record["model_ranking"]
            assert ranked and record["prediction"][:len(ranked)] == ranked
            assert record["n_unknown"] == 0 and len(record["prediction"]) == len(set(record["prediction"]))
        else:
            assert record["prediction"] == 7.0
    for mode, report in result.scores.items():
        assert report.coverage.n_items == n and report.coverage.n_failed == 0
        assert report.values["n_parse_official"] == n
        headline = report.values[result.headline]
        assert headline is None or isinstance(headline, float)
    details = next((tmp_path / "details").rglob("*.parquet"))
    import pyarrow.parquet as pq

    row = pq.read_table(details).to_pylist()[0]
    assert {"response", "parse_path", "context_cut", "official"} <= set(row)
    assert json.loads(path.read_text())["sciprobe"]["tasks"]


def test_runner_records_failed_calls_and_unparsable_answers(built: str, tmp_path: Path) -> None:
    from sciprobe.run.evaluation import EvaluationRequest, evaluate
    from sciprobe.llm.client import LLMClient
    from sciprobe.testing.stub_server import StubServer

    with StubServer(reply=lambda body: "I cannot tell.", status_script=[500]) as server:
        client = LLMClient(f"openai/stub,base_url={server.base_url},api_key=sk-test,max_retries=0")
        request = EvaluationRequest(tasks=["prescience:collaborator_prediction"], model="openai/stub", data=built,
                                    limit=3, output_dir=tmp_path, use_cache=False)
        _, (result,) = evaluate(request, client)
    paths = sorted(r["parse_path"] for r in result.records)
    assert paths == ["error", "failed:no_ranking", "failed:no_ranking"]
    assert all(r["prediction"] is None for r in result.records)
    # a failed call is no answer: left out of the score (the run is incomplete); an unparsable answer counts
    assert (result.scores["official"].coverage.n_items, result.scores["official"].coverage.n_failed) == (2, 2)
    assert result.provenance["call_failures"]["n"] == 1 and result.provenance["incomplete"]


# ---------------------------------------------------------------- plans, predictions files, alias, listing
@pytest.mark.parametrize("task", [*FORECAST_TASKS, "impact_prediction"])
def test_dry_run_plans_every_task(built: str, task: str, capsys) -> None:
    from sciprobe.cli.commands import main

    assert main(["evaluate", f"prescience:{task}", "--model", "local/smollm2", "--data", built, "--limit", "2",
                 "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["calls"] == min(2, len(_rows(built, task if task != "impact_prediction" else "citation_prediction")))


def _predictions(tmp_path: Path, lines: list[dict]) -> Path:
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("task", RANKING_TASKS)
def test_gold_rankings_from_a_predictions_file_score_one(built: str, task: str, tmp_path: Path) -> None:
    from sciprobe.run.score_predictions import score_file

    rows = _rows(built, task)
    gold_key = "gold_author_ids" if task == "collaborator_prediction" else "gold_corpus_ids"
    preds = _predictions(tmp_path, [{"id": r["corpus_id"], "prediction": r[gold_key]} for r in rows])
    _, (result,) = score_file(f"prescience:{task}", preds, data=built, output_dir=tmp_path / "out")
    assert result.scores["official"].values["ndcg@1000"] == pytest.approx(1.0)
    assert result.scores["official"].coverage.n_failed == 0


def test_predictions_file_refuses_missing_items_and_bad_values(built: str, tmp_path: Path) -> None:
    from sciprobe.run.score_predictions import score_file

    rows = _rows(built, "citation_prediction")
    preds = _predictions(tmp_path, [{"id": r["corpus_id"], "prediction": r["label_12m"]} for r in rows[1:]])
    with pytest.raises(SciprobeError, match=f"1 of {len(rows)} items have no prediction"):
        score_file("prescience:impact_prediction", preds, data=built, output_dir=tmp_path / "out")
    _, (result,) = score_file("prescience:impact_prediction", preds, data=built, output_dir=tmp_path / "out",
                              partial=True)
    assert result.task == "prescience:citation_prediction"  # the alias is keyed by the task it names
    report = result.scores["official"]
    assert report.values["mae"] == 0.0 and report.coverage.n_items == len(rows) - 1
    assert result.provenance["partial"] == {"n_predicted": len(rows) - 1, "n_items": len(rows)}
    bad = _predictions(tmp_path, [{"id": rows[0]["corpus_id"], "prediction": "many"}])
    with pytest.raises(SciprobeError, match="must be a number"):
        score_file("prescience:citation_prediction", bad, data=built, output_dir=tmp_path / "out")
    bad = _predictions(tmp_path, [{"id": rows[0]["corpus_id"], "response": "Citations: 3"}])
    with pytest.raises(SciprobeError, match="prediction"):
        score_file("prescience:citation_prediction", bad, data=built, output_dir=tmp_path / "out")
    ranking = _predictions(tmp_path, [{"id": _rows(built, "prior_work_selection")[0]["corpus_id"], "prediction": "x"}])
    with pytest.raises(SciprobeError, match="list of ids"):
        score_file("prescience:prior_work_selection", ranking, data=built, output_dir=tmp_path / "out")


@pytest.mark.parametrize("task", ["topic_trends", "topic_pair_trends"])
def test_topic_predictions_score_in_both_modes(built: str, task: str, tmp_path: Path) -> None:
    from sciprobe.run.score_predictions import score_file

    rows = _rows(built, task)
    assert all(r["history_papers"] > 0 and r["forecast_papers"] > 0 for r in rows)
    preds = _predictions(tmp_path, [{"id": r["topic"], "prediction": r["forecast_count"]} for r in rows])
    _, (result,) = score_file(f"prescience:{task}", preds, data=built, output_dir=tmp_path / "out")
    assert result.scores["official"].values["delta_share_mae"] == pytest.approx(0.0)
    assert result.scores["paper"].values["delta_share_mae"] == pytest.approx(0.0)


def test_alias_resolves_everywhere() -> None:
    from sciprobe.core.registry import canonical_ref, resolve_task

    assert BENCH.task("impact_prediction") is BENCH.task("citation_prediction")
    assert canonical_ref("prescience:impact_prediction") == "prescience:citation_prediction"
    assert resolve_task("prescience:impact_prediction")[1].name == "citation_prediction"
    report = BENCH.task("impact_prediction").score([{"id": "a", "gold": 3, "prediction": 5.0},
                                                     {"id": "b", "gold": 7, "prediction": 6.0}])
    assert {"mae", "pearson", "spearman"} <= set(report.values) and report.values["mae"] == 1.5


def test_tasks_listing_says_what_a_predictions_file_holds(capsys) -> None:
    from sciprobe.cli.task_listing import task_rows

    rows = {r["task"]: r for r in task_rows(["prescience"])}
    for task in FORECAST_TASKS:
        row = rows[f"prescience:{task}"]
        assert row["predictions"] == ["prediction"] and row["kind"] == "single call" and row["judge"] == "no"
    assert rows["prescience:citation_prediction"]["aliases"] == ["prescience:impact_prediction"]
    assert rows["prescience:contribution_generation"]["predictions"] == ["response"]
    from sciprobe.cli.commands import main

    assert main(["tasks", "prescience"]) == 0
    assert "prescience:citation_prediction (= impact_prediction)" in capsys.readouterr().out


def test_item_ids() -> None:
    assert item_id({"corpus_id": "7", "date": "2025-01-01"}) == "7"
    assert item_id({"topic": "A||B"}) == "A||B"
