"""The `sgi_score` evaluate module (spec sgibench.md §9; ecosystem.md §3): one module, one config per component
plus `overall`, loaded offline; results equal the sciprobe functions; docstring and README examples pass; the
hand-built Gradio app builds."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest
from metric_module_support import flat, import_file

from sciprobe.benchmarks.sgibench.scoring import deep_research, overall, reasoning, wet_experiment

from golden import REPO, load_cases

METRICS_DIR = REPO / "metrics"
FOLDER = METRICS_DIR / "sgi_score"
CONFIGS = ("deep_research", "idea_generation", "dry_experiment", "wet_experiment", "experimental_reasoning", "overall")


@pytest.fixture(scope="module")
def loaded(offline_evaluate: ModuleType) -> dict[str, Any]:
    return {c: offline_evaluate.load(str(FOLDER), c) for c in CONFIGS}


def test_one_module_with_a_config_per_component(loaded: dict[str, Any]) -> None:
    for config, module in loaded.items():
        assert module.name == "sgi_score" and module.config_name == config
        assert "Scientific General Intelligence" in module.citation
        assert module.codebase_urls and module.reference_urls


_FUNCTIONS = {"exact_match": ("deep_research", deep_research.exact_match),
              "wet_experiment_scores": ("wet_experiment", wet_experiment.wet_experiment_scores),
              "multiple_choice_accuracy": ("experimental_reasoning", reasoning.multiple_choice_accuracy)}


def test_compute_equals_sciprobe_functions(loaded: dict[str, Any]) -> None:
    checked = 0
    for stem in ("sgi_deep_research", "sgi_wet_experiment", "sgi_reasoning"):
        for case in load_cases(stem):
            if "expected_error" in case or case["function"] not in _FUNCTIONS:
                continue
            config, fn = _FUNCTIONS[case["function"]]
            kwargs = dict(case["kwargs"])
            preds, refs = kwargs.pop("predictions"), kwargs.pop("references")
            got = loaded[config].compute(predictions=preds, references=refs, **kwargs)
            assert got == flat(fn(preds, refs, **kwargs)), case["name"]
            checked += 1
    assert checked >= 20


def test_wet_config_returns_the_soft_scores(loaded: dict[str, Any]) -> None:
    """config wet_experiment: soft_ss / soft_pa / soft_final (SGI-Bench@3854aa9) next to the strict numbers; an
    inserted step costs its share instead of zeroing official SS."""
    step = lambda out, name: f"{out} = <{name}>(\n    p=1\n)"  # noqa: E731
    ref = "\n".join(step(f"s{i}", n) for i, n in enumerate("ABC"))
    pred = "<answer>\n" + "\n".join(step(f"t{i}", n) for i, n in enumerate("AXBC")) + "\n</answer>"
    for mode in ("official", "paper"):
        got = loaded["wet_experiment"].compute(predictions=[pred, None], references=[ref, ref], mode=mode)
        # item 1: 3 of 3 matched among 4 -> 3/3 x 3/4 for SS and PA; item 2 (failed generation): 0
        assert (got["soft_ss"], got["soft_pa"], got["soft_final"]) == (37.5, 37.5, 37.5)
        assert got["ss"] == (0.0 if mode == "official" else 37.5) and got["n_failed"] == 1  # strict: lengths differ
        assert got["per_item"][0]["soft_matched"] == 3


def test_overall_with_coverage(loaded: dict[str, Any]) -> None:
    names = list(overall.COMPONENTS)
    got = loaded["overall"].compute(predictions=[50.0, 40.0, 30.0, 20.0, 10.0], references=names,
                                    coverage=[{"n_items": 318, "n_scored": 300, "n_failed": 18}] + [None] * 4)
    assert got["sgi_score"] == 30.0 and got["incomplete_components"] == ["deep_research"]


def test_idea_config_takes_json_rows_and_votes(loaded: dict[str, Any]) -> None:
    case = next(c for c in load_cases("sgi_idea")
                if c["name"] == "official_objective_gates_and_quirks")
    rows = [json.dumps(r) for r in case["kwargs"]["rows"][:1]]
    got = loaded["idea_generation"].compute(predictions=case["kwargs"]["predictions"][:1], references=rows,
                                            votes=case["kwargs"]["votes"][:1])
    assert 0.0 <= got["final"] <= 100.0 and got["n_scored"] == 1
    with pytest.raises(ValueError, match="encoded as JSON"):
        loaded["idea_generation"].compute(predictions=["x"], references=["not json"])


def test_dry_config_with_judge(loaded: dict[str, Any]) -> None:
    run = {"stdout": "[Final Output]\n0.51", "stderr": "", "returncode": 0, "wall_time": 1.0, "timed_out": False}
    refs = [["[Final Output]\n0.5"] * 5]
    assert loaded["dry_experiment"].compute(predictions=[[run] * 5], references=refs)["passall_at_1"] == 0.0
    judged = loaded["dry_experiment"].compute(predictions=[[run] * 5], references=refs,
                                              judge=lambda m: '{"judgment": "correct"}')
    assert judged["passall_at_5"] == 100.0 and judged["test_outcomes"] == {"judge": 5}


def test_judge_outputs_add_sla_and_rv(loaded: dict[str, Any]) -> None:
    dr = loaded["deep_research"].compute(predictions=["<answer>46</answer>", "<answer>1</answer>"],
                                         references=["46", "2"], judge_outputs=['[{"judge": "correct"}]', "garbage"])
    assert dr["exact_match"] == 50.0 and dr["step_level_accuracy"] == 50.0 and dr["judge_n_failed"] == 1
    er = loaded["experimental_reasoning"].compute(predictions=["\\boxed{B}"], references=[1], judge_outputs=["85"],
                                                  mode="paper")
    assert er["mca"] == 100.0 and er["rv"] == 0.0 and er["judge_n_failed"] == 1
    with pytest.raises(ValueError, match="judge_outputs has 1 items for 2"):
        loaded["deep_research"].compute(predictions=["a", "b"], references=["a", "b"], judge_outputs=["x"])


def test_card_has_the_official_vs_paper_section() -> None:
    readme = (FOLDER / "README.md").read_text(encoding="utf-8")
    assert "# Official vs paper mode" in readme


def test_app_knows_every_config() -> None:
    app = import_file(FOLDER / "app.py", "_sciprobe_sgi_score_app")
    assert app.demo is not None and set(app.CONFIGS) == set(CONFIGS)
