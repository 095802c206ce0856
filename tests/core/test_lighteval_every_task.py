"""lighteval covers every task it can express (issue 14): every single-call and judge-scored task of every
benchmark is in the one card module, the multi-step ones are named in its docstring with the reason, PreScience's
forecasting tasks and SGI-Bench's idea generation score through the declarations, and `sciprobe lighteval` picks
settings a CPU finishes. The README's lighteval lines themselves run in tests/core/test_readme_lighteval_lines.py."""

from __future__ import annotations

import math
import re

import pytest

from sciprobe.core.registry import benchmark_names, get_benchmark
from sciprobe.interop.lighteval_cli import cpu_settings
from sciprobe.run.task_runner import runner_of

from task_card_support import CARD, load_card

EXPRESSIBLE = ("single call", "judged")


def _all_tasks():
    return [(b, t) for b in benchmark_names() for t in get_benchmark(b).tasks.values()]


def _card_names() -> set[str]:
    names: set[str] = set()
    for benchmark in benchmark_names():
        names |= {t.name for t in load_card(benchmark).TASKS_TABLE}
    return names


def test_card_has_every_single_call_and_judged_task_and_names_the_others() -> None:
    names = _card_names()
    doc = CARD.read_text(encoding="utf-8").split('"""')[1]
    sciprobe_only = doc.split("sciprobe-only", 1)[1]
    for benchmark, task in _all_tasks():
        ref = f"{benchmark}:{task.name}"
        # a task whose declaration says why it is sciprobe-only (``card_note``) may run a judged loop of its own
        if runner_of(task).kind in EXPRESSIBLE and ref != "sgibench:dry_experiment" and not task.card_note:
            assert ref in names, f"{ref} ({runner_of(task).kind}) is missing from the lighteval card"
        else:
            assert ref not in names
            # the reason: in the card's docstring, or declared by the task itself (a new benchmark edits only its
            # own folder)
            assert task.card_note or re.search(rf"{re.escape(ref)}\b[^\n]* -- \w+", sciprobe_only), \
                f"{ref}: no reason in the card"
    for alias, target in get_benchmark("prescience").aliases.items():
        assert f"prescience:{alias}" in names and f"prescience:{target}" in names


def test_cpu_settings_only_touch_accelerate_without_a_batch_size() -> None:
    assert cpu_settings(["accelerate", "model_name=m", "t|0"]) == ["accelerate", "model_name=m,batch_size=1", "t|0"]
    assert cpu_settings(["accelerate", "model_name=m,batch_size=4", "t|0"])[1] == "model_name=m,batch_size=4"
    assert cpu_settings(["accelerate", "model_config.yaml", "t|0"])[1] == "model_config.yaml"
    assert cpu_settings(["endpoint", "litellm", "model_name=m"]) == ["endpoint", "litellm", "model_name=m"]


# ---------------------------------------------------------------- PreScience T2-T7 through the card
@pytest.fixture(scope="module")
def prescience_built(tmp_path_factory) -> str:
    from sciprobe.data.build import build_benchmark

    bench = get_benchmark("prescience")
    out = tmp_path_factory.mktemp("prescience-lighteval") / "data"
    build_benchmark(bench, bench.sample_source, out)
    return str(out)


def _response(text: str):
    from lighteval.models.model_output import ModelResponse

    return ModelResponse(text=[text])


def _oracle(task: str, doc) -> str:
    """What a perfect forecaster would answer, in the asked format."""
    spec = doc.specific
    if task in ("citation_prediction", "impact_prediction"):
        return f"Citations: {spec['gold']}"
    if task.startswith("topic"):
        return f"Papers: {spec['gold']}"
    gold = [g for g in spec["gold"] if g in spec["candidates"]]
    rest = [c for c in spec["candidates"] if c not in gold]
    return "Ranking: " + ", ".join(gold + rest)


@pytest.mark.parametrize("task", ["collaborator_prediction", "prior_work_selection", "future_combination",
                                  "citation_prediction", "impact_prediction", "topic_trends", "topic_pair_trends"])
def test_prescience_forecast_tasks_score_through_the_card(prescience_built: str, task: str, monkeypatch) -> None:
    import datasets

    from sciprobe.benchmarks.prescience.forecast_context import load_corpus
    from sciprobe.benchmarks.prescience.forecast_runner import build_prompt
    from sciprobe.interop.lighteval_tasks import render_query

    monkeypatch.setenv("SCIPROBE_PRESCIENCE_DATA", prescience_built)
    cfg = next(t for t in load_card("prescience").TASKS_TABLE if t.name == f"prescience:{task}")
    spec = get_benchmark("prescience").task(task)
    assert cfg.hf_repo == prescience_built and cfg.hf_subset == spec.config
    rows = datasets.load_dataset(prescience_built, spec.config, split="test").to_list()[:6]
    docs = [cfg.prompt_function(r, cfg.name) for r in rows]
    # the query is exactly what `sciprobe evaluate` sends
    assert docs[0].query == render_query(build_prompt(spec.name, load_corpus(prescience_built), rows[0]).messages)
    metrics = {m.metric_name: m for m in cfg.metrics}
    assert "parse_failure_rate" in metrics and all(n.endswith(("_strict", "_paper")) or n in metrics for n in metrics)
    oracle = [metrics["parse_failure_rate"].sample_level_fn.compute(doc=d, model_response=_response(_oracle(task, d)))
              for d in docs]
    junk = [metrics["parse_failure_rate"].sample_level_fn.compute(doc=d, model_response=_response("no idea"))
            for d in docs]
    assert metrics["parse_failure_rate"].corpus_level_fn.compute_corpus(oracle) == 0.0
    assert metrics["parse_failure_rate"].corpus_level_fn.compute_corpus(junk) == 1.0
    if spec.name in ("citation_prediction",):
        assert metrics["mae"].corpus_level_fn.compute_corpus(oracle) == 0.0
    elif spec.name.startswith("topic"):
        assert metrics["delta_share_mae"].corpus_level_fn.compute_corpus(oracle) == pytest.approx(0.0)
        assert metrics["delta_share_mae_paper"].corpus_level_fn.compute_corpus(oracle) == pytest.approx(0.0)
    else:
        best = metrics["ndcg@1000"].corpus_level_fn.compute_corpus(oracle)
        reverse = [metrics["ndcg@1000"].sample_level_fn.compute(
            doc=d, model_response=_response("Ranking: " + ", ".join(reversed(d.specific["candidates"]))))
            for d in docs]
        assert 0.0 < best <= 1.0 and best >= metrics["ndcg@1000"].corpus_level_fn.compute_corpus(reverse)
        assert math.isfinite(metrics["r_precision_strict"].corpus_level_fn.compute_corpus(oracle))


def test_card_metrics_pickle(prescience_built: str, monkeypatch) -> None:
    """lighteval ships metric objects to worker processes."""
    import pickle

    monkeypatch.setenv("SCIPROBE_PRESCIENCE_DATA", prescience_built)
    for cfg in load_card("prescience").TASKS_TABLE:
        pickle.loads(pickle.dumps(cfg.metrics))


# ---------------------------------------------------------------- SGI-Bench idea generation through the card
@pytest.mark.slow
def test_sgi_idea_generation_objective_terms_and_panel(tmp_path, monkeypatch) -> None:
    """Loads all-MiniLM-L6-v2 (the objective terms). Without a panel `final` is NaN; with a stub panel that always
    prefers the generated idea it is a number."""
    import datasets

    from sciprobe.data.build import build_benchmark
    from sciprobe.testing.stub_server import StubServer

    bench = get_benchmark("sgibench")
    built = tmp_path / "sgi"
    build_benchmark(bench, bench.sample_source, built, configs=["idea_generation"])
    monkeypatch.setenv("SCIPROBE_SGIBENCH_DATA", str(built))
    cfg = next(t for t in load_card("sgibench").TASKS_TABLE if t.name == "sgibench:idea_generation")
    rows = datasets.load_dataset(str(built), "idea_generation", split="test").to_list()
    docs = [cfg.prompt_function(r, cfg.name) for r in rows]
    assert docs[0].specific["row"]["idx"] == rows[0]["idx"] and "ImplementationSteps" in docs[0].query
    idea = ('```json\n{"Idea": "Use a graph network over the whole seismic array to detect and locate events '
            'jointly.", "ImplementationSteps": {"1": "Collect data.", "2": "Train."}, "ImplementationOrder": ["1-2"],'
            ' "Dataset": "array records", "EvaluationMetrics": {"Recall": "events found"}, '
            '"ExpectedOutcome": "More events."}\n```')
    metrics = {m.metric_name: m for m in cfg.metrics}
    items = [metrics["final"].sample_level_fn.compute(doc=d, model_response=_response(idea)) for d in docs]
    assert 0 <= metrics["objective_feasibility"].corpus_level_fn.compute_corpus(items) <= 100
    assert math.isnan(metrics["final"].corpus_level_fn.compute_corpus(items))
    verdict = "\n".join(f"{d}: [Win B] because it is better." for d in
                        ("Effectiveness", "Novelty", "Detailedness", "Feasibility", "Overall"))
    with StubServer(reply=lambda body: verdict) as server:
        monkeypatch.setenv("SCIPROBE_SGI_IDEA_JUDGES", f"openai/stub-judge,base_url={server.base_url},api_key=sk-test")
        final = metrics["final"].corpus_level_fn.compute_corpus(items)
        assert server.count == 2 * len(docs)  # two position-swapped votes per item, once (memoised)
        metrics["objective_novelty"].corpus_level_fn.compute_corpus(items)
        assert server.count == 2 * len(docs)
        resample = [items[-1], *items]  # lighteval's bootstrap stderr: the same answers again, not judged again
        assert 0.0 <= metrics["final"].corpus_level_fn.compute_corpus(resample) <= 100.0
        assert server.count == 2 * len(docs)
    assert 0.0 <= final <= 100.0
