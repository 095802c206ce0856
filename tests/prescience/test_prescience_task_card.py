"""The PreScience lighteval task card (contribution generation: ROUGE-L, BERTScore) and the bundled sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.prescience.contribution import (
    contribution_messages,
    parse_contribution,
)
from sciprobe.testing.stub_server import StubServer

from task_card_support import CARD, load_card

PRESCIENCE = get_benchmark("prescience")


def _card():
    return load_card("prescience")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    from sciprobe.data.build import build_benchmark

    out = tmp_path_factory.mktemp("prescience-card") / "data"
    build_benchmark(PRESCIENCE, PRESCIENCE.sample_source, out, configs=["contribution_generation"])
    return out


def reply(body: dict) -> str:
    """The first background paper's title and abstract as the 'forecast'; prompts with one reference fail."""
    user = body["messages"][-1]["content"]
    if "Background Paper 2:" not in user:
        return "No idea."
    first = user.split("Background Paper 1:\n", 1)[1]
    title = first.split("Title: ", 1)[1].splitlines()[0]
    abstract = first.split("Abstract: ", 1)[1].split("\n\nBackground Paper", 1)[0].strip()
    return f"Reasoning: extend the first.\nTitle: {title}\nAbstract: {abstract}"


def test_sample_is_bundled_and_small() -> None:
    source = PRESCIENCE.sample_source
    assert source is not None and (source / "test.parquet").is_file() and (source / "README.md").is_file()
    assert sum(p.stat().st_size for p in source.iterdir()) < 300_000


def test_parser_reads_the_answer_format() -> None:
    parsed = parse_contribution("Reasoning: r\nTitle: **A title**\nAbstract: Line one.\nLine two.")
    assert parsed.value == {"title": "A title", "abstract": "Line one.\nLine two."} and parsed.path == "official"
    assert parse_contribution("Reasoning: r\nTitle: only a title").path == "failed:no_abstract"
    assert parse_contribution(None).value is None
    row = {"references": [{"title": "T1", "abstract": "A1"}, {"title": "T2", "abstract": "A2"}]}
    user = contribution_messages(row)[-1]["content"]
    assert user == "Background Paper 1:\nTitle: T1\nAbstract: A1\n\nBackground Paper 2:\nTitle: T2\nAbstract: A2"


def test_card_table_and_metrics(built: Path, monkeypatch) -> None:
    import datasets
    from lighteval.models.model_output import ModelResponse

    monkeypatch.setenv("SCIPROBE_PRESCIENCE_DATA", str(built))
    card = _card()
    names = [t.name for t in card.TASKS_TABLE]
    assert names[0] == "prescience:contribution_generation"
    assert set(names) == {f"prescience:{t}" for t in PRESCIENCE.tasks} | {"prescience:impact_prediction"}
    task = card.TASKS_TABLE[0]
    assert task.hf_repo == str(built) and task.hf_subset == "contribution_generation"
    metrics = {m.metric_name: m for m in task.metrics}
    assert set(metrics) == {"rougeL", "bertscore_f1", "parse_failure_rate"}
    rows = datasets.load_dataset(str(built), "contribution_generation", split="test").to_list()
    docs = [task.prompt_function(r, task.name) for r in rows]
    assert docs[0].specific["id"] == rows[0]["corpus_id"] and "Background Paper 1:" in docs[0].query
    replies = [ModelResponse(text=[reply({"messages": [{"content": d.query}]})]) for d in docs]
    failed = [metrics["parse_failure_rate"].sample_level_fn.compute(doc=d, model_response=r)
              for d, r in zip(docs, replies)]
    assert 0 < sum(failed) < len(docs)
    rouge = [metrics["rougeL"].sample_level_fn.compute(doc=d, model_response=r) for d, r in zip(docs, replies)]
    assert all(v == 0.0 for v, f in zip(rouge, failed) if f)
    assert 0 < metrics["rougeL"].corpus_level_fn.compute_corpus(rouge) < 1
    # the gold itself as the answer scores 1 on both metrics
    gold = ModelResponse(text=[f"Reasoning: r\nTitle: {rows[0]['title']}\nAbstract: {rows[0]['abstract']}"])
    assert metrics["rougeL"].sample_level_fn.compute(doc=docs[0], model_response=gold) == pytest.approx(1.0)
    bertscore = metrics["bertscore_f1"].sample_level_fn.compute(doc=docs[0], model_response=gold)
    assert bertscore == pytest.approx(1.0, abs=1e-4)


@pytest.mark.slow
def test_lighteval_endpoint_litellm_against_the_stub(built: Path, tmp_path: Path, monkeypatch) -> None:
    """lighteval's CLI in-process (`sciprobe.interop.lighteval_cli.run`), litellm backend, real HTTP to a loopback
    stub."""
    from sciprobe.interop.lighteval_cli import run

    monkeypatch.setenv("SCIPROBE_PRESCIENCE_DATA", str(built))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)  # lighteval's litellm disk cache lives in the cwd
    import datasets

    n = len(datasets.load_dataset(str(built), "contribution_generation", split="test"))
    with StubServer(reply=reply) as server:
        code = run(["endpoint", "litellm",
                    f"model_name=openai/stub-model,base_url={server.base_url},provider=openai,api_key=sk-test",
                    "prescience:contribution_generation|0", "--custom-tasks", str(CARD),
                    "--output-dir", str(tmp_path / "out")])
        assert code == 0
        assert 0 < server.count <= n
    results = json.loads(next((tmp_path / "out" / "results").rglob("results_*.json")).read_text())
    scores = results["results"]["prescience:contribution_generation|0"]
    assert 0 < scores["rougeL"] < 1 and 0 < scores["bertscore_f1"] <= 1
    assert 0 < scores["parse_failure_rate"] < 1


def test_lacer_metric_in_the_card_when_a_judge_is_named(built: Path, tmp_path: Path, monkeypatch) -> None:
    """With $SCIPROBE_LACER_JUDGE set, the card adds a batched LACER metric judged through sciprobe's client;
    items a judge cannot score are NaN and left out of the corpus mean, as upstream excludes them."""
    import math

    import datasets
    from lighteval.models.model_output import ModelResponse

    from sciprobe.benchmarks.prescience import lacer_judge as lr

    ref = {"title": "Sparse gradient matching", "abstract": "A faster gradient method for matching."}
    gens = [{"score": s, "title": f"Step {s}", "abstract": f"Idea {s}."} for s in range(1, 10)]
    gens.append({"score": 10, **ref})
    lattice = lr.write_lattices(tmp_path / "lattice.json", [{"reference": ref, "generations": gens}], {"note": "t"})
    rows = datasets.load_dataset(str(built), "contribution_generation", split="test").to_list()[:3]

    def judge(body: dict) -> str:  # scores the first pair 8, the second 3, cannot score the third
        user = body["messages"][-1]["content"]
        title = user[user.rindex("Generation:\n") + len("Generation:\n"):].splitlines()[0]
        return {"Answer A": "Score: 8", "Answer B": "Score: 3"}.get(title, "Reasoning: unsure.")

    with StubServer(reply=judge) as server:
        monkeypatch.setenv("SCIPROBE_PRESCIENCE_DATA", str(built))
        monkeypatch.setenv("SCIPROBE_LACER_JUDGE", f"openai/stub-judge,base_url={server.base_url},api_key=sk-test")
        monkeypatch.setenv("SCIPROBE_LACER_TEMPLATE", str(lattice))
        task = _card().TASKS_TABLE[0]
        lacer = {m.metric_name: m for m in task.metrics}["lacer"]
        assert lacer.batched_compute
        docs = [task.prompt_function(r, task.name) for r in rows]
        replies = [ModelResponse(text=[f"Reasoning: r\nTitle: Answer {c}\nAbstract: text {c}"]) for c in "ABC"]
        values = lacer.sample_level_fn.compute(responses=replies, docs=docs)
        assert server.count == 3
    assert values[:2] == [8.0, 3.0] and math.isnan(values[2])
    assert lacer.corpus_level_fn.compute_corpus(values) == pytest.approx(5.5)


def test_forecast_docs_can_be_saved_as_lighteval_details(tmp_path: Path, monkeypatch) -> None:
    """Issue 23.11: with `--save-details` (which `leaderboard --import` needs) lighteval writes every doc's
    `specific` to Parquet; an item whose prompt cut nothing carried `context_cut: {}`, an empty struct Arrow cannot
    write, and the README's `prescience:topic_trends` line ended in that error after its whole run."""
    import datasets

    from sciprobe.data.build import build_benchmark

    data = tmp_path / "data"
    build_benchmark(PRESCIENCE, PRESCIENCE.sample_source, data)
    monkeypatch.setenv("SCIPROBE_PRESCIENCE_DATA", str(data))
    cuts = []
    for task in _card().TASKS_TABLE[1:]:  # the forecasting tasks (the first is contribution generation)
        rows = datasets.load_dataset(str(data), task.hf_subset, split="test").to_list()[:6]
        docs = [task.prompt_function(r, task.name) for r in rows]
        details = datasets.Dataset.from_list([{"doc": {"query": d.query, "specific": d.specific}} for d in docs])
        details.to_parquet(str(tmp_path / f"{task.hf_subset}.parquet"))  # raised ArrowNotImplementedError
        cuts += [d.specific["context_cut"] for d in docs]
    cuts = [json.loads(c) for c in cuts]
    assert {} in cuts and any(cuts)  # both kinds were written: nothing cut, and what a budget cut
