"""SGI-Bench soft wet-experiment scores (issue 27 item 3; upstream SGI-Bench@3854aa9 ``compare_exp_steps_soft``):
where they show up (results files with their intervals and breakdowns, the flat block), that the SGI-Score keeps
the strict ``final``, and that every card names the later commit they follow. The arithmetic itself is pinned by
the parity cases (tests/parity/cases/sgi_wet_soft*.json) and the golden cases (tests/cases/sgi_wet_experiment.json).
"""

from __future__ import annotations

import json

import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.sgibench.upstream import WET_SOFT_COMMIT
from sciprobe.data.cards import upstream_section
from sciprobe.cli.commands import main
from sciprobe.benchmarks.sgibench.scoring.overall import sgi_score
from sciprobe.benchmarks.sgibench.scoring.wet_experiment import SOFT_COMMIT, wet_experiment_scores

from golden import REPO

SOFT = ("soft_final", "soft_ss", "soft_pa")
SGI = get_benchmark("sgibench")


def _sample_references() -> dict[str, dict]:
    from sciprobe.benchmarks.sgibench.sample_writer import WET_EXPERIMENT

    return {row["idx"]: row for row in WET_EXPERIMENT}


def _drop_last_step(protocol: str) -> str:
    """The protocol without its last step (the official parser closes a step at a line holding only ``)``)."""
    lines = protocol.rstrip().splitlines()
    closers = [i for i, line in enumerate(lines) if line.strip() == ")"]
    return "\n".join(lines[: closers[-2] + 1])


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    """`sciprobe score sgibench:wet_experiment` on the bundled sample: one answer lacks its last step (strict SS
    0, soft SS high), the other is the reference itself."""
    rows = _sample_references()
    first, second = sorted(rows)
    tmp = tmp_path_factory.mktemp("wet-soft")
    preds = tmp / "preds.jsonl"
    answers = {first: f"<answer>\n{_drop_last_step(rows[first]['answer'])}\n</answer>",
               second: f"<answer>\n{rows[second]['answer']}\n</answer>"}
    preds.write_text("".join(json.dumps({"id": i, "response": a}) + "\n" for i, a in answers.items()))
    assert main(["score", "sgibench:wet_experiment", "--predictions", str(preds), "--output-dir",
                 str(tmp / "out")]) == 0
    data = json.loads(next((tmp / "out" / "results").rglob("results_*.json")).read_text())
    return data, answers


def test_results_file_carries_the_soft_scores_with_intervals_and_breakdowns(scored: tuple[dict, dict]) -> None:
    data, answers = scored
    entry = data["sciprobe"]["tasks"]["sgibench:wet_experiment|0"]
    rows = _sample_references()
    for mode, score in entry["scores"].items():
        direct = wet_experiment_scores(list(answers.values()), [rows[i]["answer"] for i in answers], mode=mode)
        for key in SOFT:
            assert score[key] == direct.values[key] and 0.0 <= score[key] <= 100.0
            ci = score["other_ci"][key]
            assert ci["metric"] == key and "reason" not in ci and ci["estimate"] == score[key]
            assert ci["low"] <= score[key] + 1e-9 <= ci["high"] + 2e-9
            groups = score["other_breakdowns"][key]["discipline"]["groups"]
            per_item = {it_id: it[key] for it_id, it in zip(answers, direct.values["per_item"])}
            for it_id, row in rows.items():  # one item per discipline in the sample: its own score
                assert groups[row["discipline"]]["score"] == pytest.approx(100.0 * per_item[it_id])
                assert groups[row["discipline"]]["n_items"] == 1
            assert set(score["other_breakdowns"][key]) == {"discipline", "direction"}
        assert score["breakdowns"] and score["ci"]["metric"] == "final"  # the headline's own blocks are kept
    official = entry["scores"]["official"]
    assert official["params"]["soft_upstream_commit"] == SOFT_COMMIT
    assert official["soft_ss"] > official["ss"]  # a missing last step zeroes strict SS, not soft SS
    assert official["n_length_mismatch"] == 1 and official["n_length_mismatch_soft_ss_nonzero"] == 1
    flat = data["results"]["sgibench:wet_experiment|0"]
    for key in SOFT:
        assert flat[key] == official[key] and flat[f"{key}_ci_low"] == official["other_ci"][key]["low"]
        assert flat[f"{key}:paper"] == entry["scores"]["paper"][key]


def test_the_sgi_score_keeps_the_strict_final() -> None:
    rows = _sample_references()
    first = sorted(rows)[0]
    report = wet_experiment_scores([f"<answer>\n{_drop_last_step(rows[first]['answer'])}\n</answer>"],
                                   [rows[first]["answer"]])
    assert report.values["soft_final"] != report.values["final"]
    others = {"deep_research": 10.0, "idea_generation": 20.0, "dry_experiment": 30.0, "experimental_reasoning": 40.0}
    overall = sgi_score({**others, "wet_experiment": report})
    assert overall.values["components"]["wet_experiment"] == round(report.values["final"], 2)


def test_every_card_names_the_commit_the_soft_scores_follow() -> None:
    assert WET_SOFT_COMMIT == SOFT_COMMIT and WET_SOFT_COMMIT.startswith("3854aa9")
    assert SGI.upstream.commit.startswith("8268d43")  # the rest of SGI-Bench stays on the pin
    assert "3854aa9" in upstream_section(SGI)  # the dataset card
    assert "3854aa9" in SGI.card_sections["Deviations and decisions"]
    metric_card = (REPO / "metrics" / "sgi_score" / "README.md").read_text()
    pinned = next(line for line in metric_card.splitlines() if line.startswith("**Pinned upstream:**"))
    assert WET_SOFT_COMMIT in pinned and "soft_final" in metric_card
    readme = (REPO / "sciprobe" / "benchmarks" / "sgibench" / "README.md").read_text()
    assert "3854aa9" in readme and "soft_final" in readme


def test_soft_scores_are_declared_with_their_ranges() -> None:
    from sciprobe.scoring.ranges import out_of_range, score_range

    task = SGI.task("wet_experiment")
    assert set(SOFT) <= {key for key, _ in task.corpus_metrics} and task.analysed_metrics == SOFT
    for key in SOFT:
        assert score_range("sgi_score", key, "official").describe() == "[0, 100]"
    assert out_of_range("sgi_score", "official", {"soft_final": 100.5}) is not None
