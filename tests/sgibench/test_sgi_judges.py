"""Judges as injected callables (spec sgibench.md §3.1, §3.2, §3.5, §4): deterministic fakes, garbage
replies, exceptions, position swapping, retries; and the real offline MiniLM embedder."""

from __future__ import annotations

from typing import Any

import pytest

from sciprobe.benchmarks.sgibench.scoring import deep_research, idea, reasoning
from sciprobe.benchmarks.sgibench.scoring._common import call_judge, judge_from_client

ROW = {"related_work": "{'W1': 'rw one'}", "challenge": "c", "limitation": "l", "motivation": "m",
       "task_objective": "t", "existing_solutions": "{'S1': 'sol one'}", "keywords": ["alpha"],
       "core_idea": "REFERENCE IDEA", "implementation_steps": "{'1': 'a'}", "implementation_order": ["1"],
       "data": "d", "evaluation_metrics": "{}", "expected_outcome": "o", "related_work_test": "{'T': 'x'}"}
GENERATED = {"Idea": "GENERATED IDEA", "ImplementationSteps": {"1": "a"}, "ImplementationOrder": ["1"]}


def _text(messages: list[dict[str, Any]]) -> str:
    content = messages[-1]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


def prefers_generated(messages):
    """Always votes for the hypothesis holding the generated idea, wherever it is placed."""
    text = _text(messages)
    a_part = text.split("##Hypothesis A:")[1].split("##Hypothesis B:")[0]
    winner = "A" if "GENERATED IDEA" in a_part else "B"
    return "\n".join(f"{d}: [Win {winner}] because it is better." for d in
                     ("Effectiveness", "Novelty", "Detailedness", "Feasibility", "Overall"))


def always_a(messages):
    return "\n".join(f"{d}: Win A because."
                     for d in ("Effectiveness", "Novelty", "Detailedness", "Feasibility", "Overall"))


def test_position_swapped_votes_are_flipped_back() -> None:
    reference = idea.reference_idea(ROW)
    votes = idea.collect_votes([("j1", prefers_generated), ("j2", prefers_generated), ("j3", prefers_generated)],
                               ROW, GENERATED, reference)
    assert votes.generated["novelty"] == 6 and votes.cast["novelty"] == 6
    # a judge with a position bias splits its two votes: 1 of 2 for the generated idea
    biased = idea.collect_votes([("j", always_a)] * 3, ROW, GENERATED, reference)
    assert biased.generated["effectiveness"] == 3 and biased.cast["effectiveness"] == 6
    assert idea.subjective_score(biased, "effectiveness", "official") == 0.0  # 3/6 is a tie = loss
    assert idea.subjective_score(biased, "effectiveness", "paper") == 50.0
    assert idea.verdict_label(3, "effectiveness") == "tie" and idea.verdict_label(4, "novelty") == "tie"


def test_garbage_and_failing_judges_cast_fewer_votes() -> None:
    calls = {"n": 0}

    def garbage(messages):
        calls["n"] += 1
        return "Hypothesis A is nicer overall."

    def broken(messages):
        raise TimeoutError("gateway timeout")

    reference = idea.reference_idea(ROW)
    votes = idea.collect_votes([("good", prefers_generated), ("garbage", garbage), ("broken", broken)],
                               ROW, GENERATED, reference, max_attempts=5)
    assert calls["n"] == 10  # two positions x five attempts
    assert votes.failed_calls == 4
    assert votes.cast["novelty"] == 2 and votes.generated["novelty"] == 2
    # absolute gates: 2 generated votes never win officially, even if all cast votes agree
    assert idea.subjective_score(votes, "novelty", "official") == 0.0
    assert idea.subjective_score(votes, "novelty", "paper") == 100.0


def test_run_panel_skips_items_that_fail_before_judging() -> None:
    import json

    panel = [("j1", prefers_generated), ("j2", prefers_generated)]
    preds = [json.dumps(GENERATED), None, "[1, 2]", "not json at all"]
    votes = idea.run_panel(panel, preds, [ROW] * 4)
    assert votes[1] is None and votes[2] is None
    assert votes[0].generated["feasibility"] == 4 and votes[3].cast["feasibility"] == 4  # unparsable is judged


def test_pairwise_verdict_patterns() -> None:
    text = "Effectiveness: [Win B] because x\nNovelty: Win A because y\nDetailedness - I pick Win B\n" \
           "Feasibility: [ Win  A ] ok\nOverall: win b "
    assert idea.parse_pairwise_verdict(text) == {"effectiveness": "B", "novelty": "A", "detailedness": "B",
                                                 "feasibility": "A", "overall": "B"}
    assert idea.parse_pairwise_verdict("Effectiveness: [Win B]") is None  # all five must parse
    assert idea.parse_pairwise_verdict(None) is None


def test_step_judge_with_fake_and_failures() -> None:
    rows = [{"question": "Q?", "steps": ["Step 1. find paper"], "answer": "46"}] * 3

    def judge(messages):
        assert "## Reference Answer\n46" in messages[1]["content"]
        return '[{"solution_step": "s", "reason": "r", "judge": "correct"}]'

    outputs = deep_research.run_step_judge(judge, rows, ["<answer>46</answer>", None, "x"])
    assert outputs[1] is None
    report = deep_research.step_level_accuracy(outputs)
    assert report.values["per_item"] == [1.0, 0.0, 1.0] and report.coverage.n_failed == 1


def test_answer_parser_judge_feeds_exact_match() -> None:
    parsed = deep_research.run_answer_parser(lambda m: " 46 ", ["<answer>about forty-six</answer>"], ["46"])
    assert parsed == ["46"]
    assert deep_research.exact_match(["<answer>about forty-six</answer>"], ["46"], parsed_answers=parsed).values[
        "exact_match"] == 100.0
    assert "0.25" in deep_research.reformat_messages("x", "46")[0]["content"]
    assert "T cell and B cell" in deep_research.reformat_messages("x", "Increase")[0]["content"]


def test_rv_judge_receives_images_first() -> None:
    from PIL import Image

    seen = {}

    def judge(messages):
        seen["content"] = messages[0]["content"]
        return "8"

    img = Image.new("RGB", (4, 4), (255, 0, 0))
    out = reasoning.run_rv_judge(judge, ["Question: which?"], [{"steps": ["look", "compare"], "images": [img, img]}],
                                 ["\\boxed{A}"])
    assert out == ["8"]
    assert [p["type"] for p in seen["content"]] == ["image_url", "image_url", "text"]
    assert seen["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "1. look\n2. compare" in seen["content"][2]["text"]
    broken = reasoning.run_rv_judge(judge, ["q"], [{"steps": [], "images": [object()]}], ["x"])
    assert broken == [None]


def test_call_judge_never_raises_and_client_adapter() -> None:
    assert call_judge(None, [])[0] is None
    assert call_judge(lambda m: None, [])[1] == "judge returned no text"
    text, error = call_judge(lambda m: 1 / 0, [])
    assert text is None and "ZeroDivisionError" in error

    class Completion:
        def __init__(self, text, error=None):
            self.text, self.error = text, error

        @property
        def ok(self):
            return self.error is None

    class Client:
        def __init__(self, reply):
            self.reply, self.requests = reply, []

        def complete_many(self, requests):
            self.requests.extend(requests)
            return [self.reply]

    client = Client(Completion("7"))
    judge = judge_from_client(client, {"temperature": 0})
    assert judge([{"role": "user", "content": "hi"}]) == "7"
    assert client.requests[0].params == {"temperature": 0}
    failing = judge_from_client(Client(Completion(None, "rate limited")))
    assert call_judge(failing, [])[0] is None


@pytest.mark.slow
def test_real_minilm_objective_terms() -> None:
    """The offline all-MiniLM-L6-v2 wheel: identical texts have cosine 1; terms stay within 0-10."""
    embedder = idea.default_embedder()
    vecs = embedder.encode(["protein structure prediction", "protein structure prediction", "ocean heat"])
    sims = idea.cosine_matrix(vecs, vecs)
    assert sims[0][1] == pytest.approx(1.0, abs=1e-5) and sims[0][2] < 0.5
    row = {**ROW, "keywords": ["protein folding", "deep learning"]}
    generated = {"Idea": "We predict protein structures with deep learning. " * 3,
                 "ImplementationSteps": {"1": "a"}, "ImplementationOrder": ["1"]}
    terms = idea.objective_terms(generated, idea.reference_idea(row), embedder=embedder)
    for key in idea.DIMENSIONS:
        assert 0.0 <= terms[key] <= 10.0
    assert terms["repetition_penalty"] > 5  # three identical sentences
    # official terms are left unrounded, as upstream (SGI-Bench@8268d43 rounds only the final means)
    assert terms["effectiveness"] > 0 and terms["effectiveness"] != round(terms["effectiveness"], 2)
