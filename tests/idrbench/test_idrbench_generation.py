"""IDRBench idea generation (paper §5.3): upstream's answer pattern (and the tolerant reading), the judge's two
ratings, the panel score with its coverage; cases in tests/cases/idrbench_generation.json."""

from __future__ import annotations

import json

import pytest

from golden import load_cases
from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.idrbench.generation import idea_messages, parse_idea, parse_rating, score_generation

PARSE = load_cases("idrbench_generation", "parse")
RATING = load_cases("idrbench_generation", "rating")
SCORE = load_cases("idrbench_generation", "score")


@pytest.mark.parametrize("case", PARSE, ids=[c["text"][:30] or "empty" for c in PARSE])
def test_the_answer_is_read_as_upstream_reads_it(case) -> None:
    parsed = parse_idea(case["text"])
    assert (parsed.value, parsed.extra["official"], parsed.path) == (case["value"], case["official"], case["path"])
    assert parsed.extra.get("confidence") == case["confidence"]


@pytest.mark.parametrize("case", RATING, ids=[str(c["reply"])[:30] for c in RATING])
def test_a_judge_reply_gives_both_ratings_or_none(case) -> None:
    assert parse_rating(case["reply"]) == case["ratings"]


@pytest.mark.parametrize("case", SCORE, ids=[c["name"] for c in SCORE])
def test_the_score_is_the_panel_mean_with_its_coverage(case) -> None:
    report = score_generation(case["records"], "paper")
    for key, want in case["values"].items():
        assert report.values[key] == (pytest.approx(want) if isinstance(want, float) else want), key
    assert report.coverage.as_dict().items() >= case["coverage"].items()


def test_an_unknown_mode_is_one_line() -> None:
    with pytest.raises(Exception, match="unknown mode 'official' for idea generation"):
        score_generation([], "official")


def test_the_prompt_shows_both_sides_before_the_instruction(tmp_path) -> None:
    from sciprobe.data.build import build_benchmark
    from sciprobe.data.task_data import load_task_data

    bench = get_benchmark("idrbench")
    build_benchmark(bench, bench.sample_source, tmp_path / "b", configs=["idea_generation"])
    rows = load_task_data(bench, bench.task("idea_generation"), str(tmp_path / "b")).rows
    assert len(rows) == 15 and sum(r["label"] for r in rows) == 5
    assert len({r["id"] for r in rows}) == 15 and {r["pa_id"] for r in rows} == {r["id"] for r in rows if r["label"]}
    (message,) = idea_messages(rows[0])
    text = message["content"]
    first_title = rows[0]["side_b"][0]["title"]
    assert text.index(first_title) < text.index(rows[0]["side_c"][0]["title"]) < text.index("Your abstract:")
    assert json.dumps(message)  # plain JSON-able chat message
