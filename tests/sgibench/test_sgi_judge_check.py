"""`sciprobe judge-check` on the SGI idea panel (pairwise, position-swapped): a stored judge that always prefers
the generated idea against a re-judge that always votes for Hypothesis A (pure position bias). Expected: the
stored judge is swap-consistent (1.0), the biased one never (0.0); they agree on the half of the votes where the
generated idea is A, so Cohen's kappa is computed here with sklearn from those labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from sciprobe.benchmarks.sgibench.scoring.idea import JUDGE_DIMENSIONS

IDEA = {"Idea": "GENERATED: a learned denoiser feeds a robust estimator. " * 6,
        "ImplementationSteps": {"1": "Collect data.", "2": "Train."}, "ImplementationOrder": ["1-2"],
        "Dataset": "Synthetic traces.", "EvaluationMetrics": {"SNR": "signal-to-noise"}, "ExpectedOutcome": "SNR."}


def _reply(body: dict) -> str:
    text = body["messages"][-1]["content"]
    if "##Hypothesis A:" not in text:
        return "```json\n" + json.dumps(IDEA) + "\n```"
    generated_is_a = "GENERATED" in text.split("##Hypothesis A:")[1].split("##Hypothesis B:")[0]
    winner = "A" if body["model"] == "judge-biased" or generated_is_a else "B"
    return "\n".join(f"{d.capitalize()}: [Win {winner}] because." for d in JUDGE_DIMENSIONS)


def test_idea_panel_swap_consistency_and_kappa(tmp_path: Path, capsys) -> None:
    from sciprobe.core.registry import get_benchmark
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.data.build import build_benchmark
    from sciprobe.cli import main
    from sciprobe.run.evaluation import EvaluationRequest, evaluate
    from sciprobe.testing.stub_server import StubServer

    source = write_synthetic_source(tmp_path / "source", n=3)
    build_benchmark(get_benchmark("sgibench"), source, tmp_path / "built", configs=["idea_generation"])
    with StubServer(reply=_reply) as stub:
        fair = f"openai/judge-fair,base_url={stub.base_url},api_key=x"
        evaluate(EvaluationRequest(tasks=["sgibench:idea_generation"], modes=["official"],
                                   model=f"openai/ideator,base_url={stub.base_url},api_key=x",
                                   data=str(tmp_path / "built"), output_dir=tmp_path / "runs",
                                   per_task={"sgibench:idea_generation": {"judges": [fair]}}))
        results = next((tmp_path / "runs" / "results").rglob("results_*.json"))
        assert main(["judge-check", str(results), "--judge", f"openai/judge-biased,base_url={stub.base_url},api_key=x",
                     "--resamples", "50", "--json"]) == 0
    [report] = json.loads(capsys.readouterr().out)
    assert report["original_judge"] == "openai/judge-fair" and report["new_judge"] == "openai/judge-biased"
    swaps = report["swap_consistency"]
    n_votes = 3 * len(JUDGE_DIMENSIONS)
    assert swaps["original"] == {"n_pairs": n_votes, "n_incomplete": 0, "consistency": 1.0}
    assert swaps["new"] == {"n_pairs": n_votes, "n_incomplete": 0, "consistency": 0.0}
    # labels per vote: the fair judge always "generated"; the biased one "generated" only when it is A (swapped)
    fair_labels = ["generated"] * (2 * n_votes)
    biased_labels = ["generated" if swapped else "reference" for swapped in (0, 1) for _ in range(n_votes)]
    assert report["labels"]["n"] == 2 * n_votes
    assert report["labels"]["identical"] == pytest.approx(0.5)
    assert report["labels"]["cohen_kappa"]["value"] == pytest.approx(cohen_kappa_score(fair_labels, biased_labels))
    assert report["scores"]["pearson"]["value"] is None  # both judges constant per item: undefined, never 0


# ---------------------------------------------------------------- deep research: the answer-level llm_judge
def _digest(text: str) -> int:
    import hashlib

    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


def verdict_a(question: str) -> int:
    return _digest(question) % 2


def verdict_b(question: str) -> int:
    """Judge B: judge A's verdict, flipped on a third of the items."""
    return verdict_a(question) ^ int(_digest("b" + question) % 3 == 0)


def _dr_reply(body: dict) -> str:
    system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
    text = body["messages"][-1]["content"]
    if body["model"] == "answerer":
        return "<answer>7</answer>"  # never an exact match: every item goes to the answer-level judge
    if "<input_text>" in text:
        return "7"
    if "You grade answers" not in system:
        return '[{"solution_step": "s", "reason": "r", "judge": "correct"}]'  # the step judge
    verdict = (verdict_b if body["model"] == "judge-b" else verdict_a)(text)
    return json.dumps({"judge": verdict, "reason": "stub"})


def test_deep_research_llm_judge_kappa_against_sklearn(tmp_path: Path, capsys) -> None:
    import pyarrow.parquet as pq

    from sciprobe.core.registry import get_benchmark
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.data.build import build_benchmark
    from sciprobe.cli import main
    from sciprobe.testing.stub_server import StubServer

    source = write_synthetic_source(tmp_path / "source", n=12)
    data = tmp_path / "built"
    build_benchmark(get_benchmark("sgibench"), source, data, configs=["deep_research"])
    with StubServer(reply=_dr_reply) as stub:
        spec = "openai/{},base_url=" + stub.base_url + ",api_key=x"
        assert main(["evaluate", "sgibench:deep_research", "--model", spec.format("answerer"), "--judge",
                     spec.format("judge-a"), "--data", str(data), "--output-dir", str(tmp_path / "run")]) == 0
        results = next((tmp_path / "run" / "results").rglob("results_*.json"))
        capsys.readouterr()
        assert main(["judge-check", str(results), "--judge", spec.format("judge-b"), "--data", str(data),
                     "--resamples", "100", "--json"]) == 0
    [report] = json.loads(capsys.readouterr().out)
    task = json.loads(results.read_text())["sciprobe"]["tasks"]["sgibench:deep_research|0"]
    details = pq.read_table(results.parents[2] / task["details"]).to_pylist()
    stored = [json.loads(json.loads(d["answer_judge_replies"])["openai/judge-a"])["judge"] for d in details]
    # judge B's verdicts from its rule, on the questions of the same items (read back from the data)
    from sciprobe.benchmarks.sgibench.judge_check import _rows_by_id

    rows = _rows_by_id(details, {"task_key": "sgibench:deep_research", "data": str(data)})
    from sciprobe.benchmarks.sgibench.judged_runners import answer_judge_requests

    messages = answer_judge_requests(rows, details, [d["response"] for d in details])
    expected_b = [verdict_b(m[-1]["content"]) for m in messages]
    assert stored == [verdict_a(m[-1]["content"]) for m in messages] and stored != expected_b
    assert report["labels"]["n"] == len(details) == 12
    assert report["labels"]["cohen_kappa"]["value"] == pytest.approx(cohen_kappa_score(stored, expected_b))
    from scipy.stats import kendalltau

    assert report["scores"]["kendall_tau_b"]["value"] == pytest.approx(
        kendalltau(stored, expected_b, variant="b").statistic)


# ---------------------------------------------------------------- experimental reasoning: reasoning validity
def rating_a(text: str) -> int:
    return _digest(text) % 11


def rating_b(text: str) -> int:
    """Judge B: judge A's 0-10 rating, two points lower (floored at 0) on a third of the items."""
    return max(0, rating_a(text) - 2) if _digest("b" + text) % 3 == 0 else rating_a(text)


def _text(body: dict) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else "\n".join(p["text"] for p in content if p["type"] == "text")


def _judged(body: dict) -> str:
    """What the RV judge is asked about, whole (the items' images included: their texts may coincide)."""
    return json.dumps(body["messages"], sort_keys=True)


def _rv_reply(body: dict) -> str:
    if "Rate how valid the reasoning" not in _text(body):
        return "The images show it.\nAnswer: A"  # the model
    return str((rating_b if body["model"] == "judge-b" else rating_a)(_judged(body)))


def test_reasoning_validity_tau_b_and_kappa(tmp_path: Path, capsys) -> None:
    import pyarrow.parquet as pq
    from scipy.stats import kendalltau

    from sciprobe.core.registry import get_benchmark
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.data.build import build_benchmark
    from sciprobe.cli import main
    from sciprobe.testing.stub_server import StubServer

    source = write_synthetic_source(tmp_path / "source", n=12)
    data = tmp_path / "built"
    build_benchmark(get_benchmark("sgibench"), source, data, configs=["experimental_reasoning"])
    with StubServer(reply=_rv_reply) as stub:
        spec = "openai/{},base_url=" + stub.base_url + ",api_key=x"
        assert main(["evaluate", "sgibench:experimental_reasoning", "--model", spec.format("answerer"), "--judge",
                     spec.format("judge-a"), "--data", str(data), "--output-dir", str(tmp_path / "run")]) == 0
        results = next((tmp_path / "run" / "results").rglob("results_*.json"))
        capsys.readouterr()
        assert main(["judge-check", str(results), "--judge", spec.format("judge-b"), "--data", str(data),
                     "--resamples", "100", "--json"]) == 0
        asked = [_judged(body) for body in stub.requests if body["model"] == "judge-b"]
    [report] = json.loads(capsys.readouterr().out)
    task = json.loads(results.read_text())["sciprobe"]["tasks"]["sgibench:experimental_reasoning|0"]
    details = pq.read_table(results.parents[2] / task["details"]).to_pylist()
    stored = [int(json.loads(d["rv_replies"])["openai/judge-a"]) for d in details]
    # judge B was asked what judge A was asked (only the model differs): both rules on those prompts give the
    # expected pairs; kappa and tau_b do not depend on the order of the pairs
    a, b = [rating_a(m) for m in asked], [rating_b(m) for m in asked]
    assert len(asked) == len(details) == 12 and sorted(stored) == sorted(a)
    assert len(set(a)) > 1 and a != b  # known, partial disagreement
    assert report["labels"]["n"] == 12
    assert report["labels"]["cohen_kappa"]["value"] == pytest.approx(cohen_kappa_score(a, b))
    assert report["scores"]["kendall_tau_b"]["value"] == pytest.approx(kendalltau(a, b, variant="b").statistic)
