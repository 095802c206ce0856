"""LACER judge scoring with a mock judge (spec prescience.md §3, §8, pitfalls 15–18)."""

from __future__ import annotations


import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.benchmarks.prescience.scoring.lacer import PLACEHOLDERS, LacerTemplate, lacer, parse_score

from golden import REPO, load_cases

CASES = load_cases("prescience_lacer")
SHARED_TEMPLATE = (REPO.parent / "shared" / "data" / "prescience" / "task_followup_prediction"
                   / "evaluate" / "templates" / "lacer_scoring_prompt_percentile50.110.txt")
# The package's own tiny stand-in template (the real one is read from a user-supplied path, never bundled).
TEMPLATE = LacerTemplate("Rate 1-10.\nReference:\n{{reference_title}}\n{{reference_abstract}}\n\nGeneration:\n"
                         "{{generation_title}}\n{{generation_abstract}}\n\nReasoning: ...\nScore: ...\n")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
@pytest.mark.parametrize("mode", ["official", "corrected"])
def test_parse_score(case, mode):
    assert parse_score(case["reply"], mode) == case[mode]


class MockJudge:
    """Scores 9 when the generation repeats the reference title, else 4; replies for 'noscore' lack a score."""

    def __init__(self):
        self.calls = []

    def __call__(self, messages):
        self.calls.append(messages)
        user = messages[-1]["content"]
        assert "{{" not in user and messages[0]["role"] == "system"
        reference, generation = user.split("Generation:\n")
        if "noscore" in generation:
            return "Reasoning: unsure."
        if "boom" in generation:
            raise TimeoutError("judge timed out")
        title = reference.split("Reference:\n")[1].splitlines()[0]
        return f"Reasoning: compared.\nScore: {9 if title in generation else 4}"


GOLD = [{"title": f"Paper {i}", "abstract": f"About topic {i}."} for i in range(6)]


def test_official_and_corrected_means_and_failures():
    gens = [{"title": "Paper 0", "abstract": "x"}, {"title": "Other", "abstract": "y"},
            {"title": "noscore", "abstract": ""}, None, {"title": "boom", "abstract": ""}, {"title": "Paper 5"}]
    judge = MockJudge()
    official = lacer(gens, GOLD, judge=judge, template=TEMPLATE, judge_id="mock-1")
    assert len(judge.calls) == 6
    # scored: 9, 4, (failure), 4 (empty generation is judged), (judge error), 9 -> mean 6.5 over 4
    assert official.values["lacer"] == pytest.approx(6.5)
    assert official.coverage.n_items == 6 and official.coverage.n_scored == 4 and official.coverage.n_failed == 2
    assert official.values["judge_errors"][4].startswith("TimeoutError")
    assert official.values["ci95_low"] <= 6.5 <= official.values["ci95_high"]
    corrected = lacer(gens, GOLD, judge=judge, template=TEMPLATE, judge_id="mock-1", mode="corrected",
                      replies=official.values["raw_replies"])
    assert len(judge.calls) == 6  # stored replies re-scored without new judge calls
    # a reply without a score is a failure in every mode: never a score (issue 22.2: corrected scored it 1)
    assert corrected.values["lacer"] == pytest.approx(6.5) and corrected.values["per_item"][2] is None
    assert corrected.coverage.n_failed == 2 and corrected.coverage.n_scored == 4
    for report in (official, corrected):
        assert report.params["judge_id"] == "mock-1" and len(report.params["template_sha256"]) == 64


def test_bad_input():
    with pytest.raises(SciprobeError, match="exactly once"):
        LacerTemplate("{{reference_title}} only")
    with pytest.raises(SciprobeError, match="judge id"):
        lacer([None], GOLD[:1], judge=MockJudge(), template=TEMPLATE, judge_id="")
    with pytest.raises(SciprobeError, match="differ in length"):
        lacer([None], GOLD, judge=MockJudge(), template=TEMPLATE, judge_id="m")
    with pytest.raises(SciprobeError, match="unknown LACER mode"):
        parse_score("Score: 3", "lenient")
    with pytest.raises(SciprobeError, match="not found"):
        LacerTemplate.from_path("/no/such/template.txt")


def test_upstream_template_structure():
    if not SHARED_TEMPLATE.is_file():
        pytest.skip("PreScience reference template not available in ../shared")
    template = LacerTemplate.from_path(SHARED_TEMPLATE)
    text = template.text
    assert sum("Score:" in line for line in text.splitlines()) == 51
    assert sum(line.startswith(f"Reference {x}:") for line in text.splitlines() for x in "ABCDE") == 5
    filled = template.fill({"title": "T", "abstract": "A"}, {"title": "G", "abstract": "B"})
    assert "{{" not in filled and all(p not in filled for p in PLACEHOLDERS)
