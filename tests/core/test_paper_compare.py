"""``sciprobe compare RESULTS --paper``: each published number beside the run's, with a verdict and its reasons
(golden cases: tests/cases/paper_compare.json, one per *not comparable* reason), models matched through the alias
table only, and the minimum detectable effect of ``sciprobe compare``."""

from __future__ import annotations

import copy
import dataclasses
import json
import math

import pytest

from sciprobe.run.baselines import run_baselines
from sciprobe.cli import main
from sciprobe.results.compare import compare_results
from sciprobe.results.paper_compare import (
    CONSISTENT, NOT_COMPARABLE, REASONS, compare_with_paper, model_aliases, same_model)
from sciprobe.scoring.item_scores import mean_items
from sciprobe.scoring.power import detectable, minimum_detectable_effect, required_n, se_from_interval

from golden import case_ids, load_cases

CASES = load_cases("paper_compare")


def _apply(base: dict, sets: list) -> dict:
    data = copy.deepcopy(base)
    for path, value in sets:
        *parents, last = path
        node = data
        for key in parents:
            node = node[key]
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    return data


def _with_setting(monkeypatch: pytest.MonkeyPatch, overrides: dict) -> None:
    """Every published number of the run's benchmark, with ``overrides`` in its setting."""
    import sciprobe.results.published as published

    real = published.published_results

    def changed(benchmark: str):
        return tuple(dataclasses.replace(r, setting=dataclasses.replace(r.setting, **overrides))
                     for r in real(benchmark))

    monkeypatch.setattr(published, "published_results", changed)


@pytest.mark.parametrize("case", CASES["cases"], ids=case_ids(CASES["cases"]))
def test_verdict_and_reasons(case: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    if case.get("published_setting"):
        _with_setting(monkeypatch, case["published_setting"])
    report = compare_with_paper(_apply(CASES["base"], case["set"]))
    [found] = [c for c in report.comparisons if c.task == "ipi" and c.metric == "macro_f1"]
    expect = case["expect"]
    assert found.published.model == expect.get("paper_model", "gpt-4o-mini")
    assert found.verdict == expect["verdict"], found.reasons
    assert sorted(found.reason_kinds) == sorted(expect["kinds"]), found.reasons
    assert all(reason.strip() for reason in found.reasons)  # a verdict always says why
    if found.verdict == CONSISTENT:
        assert found.ci_low - 0.0005 <= found.published.value <= found.ci_high + 0.0005
    if "note" in expect:
        assert any(n.startswith(expect["note"]) for n in found.notes), found.notes
    if "no_note" in expect:
        assert not any(n.startswith(expect["no_note"]) for n in found.notes), found.notes
    if found.verdict != NOT_COMPARABLE:  # the paper's data release is named, and said to be unchecked
        assert any(n.startswith("data: the paper's is v3 release") for n in found.notes), found.notes


def test_every_not_comparable_reason_has_a_case() -> None:
    covered = {kind for case in CASES["cases"] for kind in case["expect"]["kinds"]}
    assert covered == set(REASONS)


@pytest.mark.parametrize("case", CASES["unmatched"], ids=case_ids(CASES["unmatched"], "model"))
def test_models_are_matched_through_the_alias_table_only(case: dict) -> None:
    data = _apply(CASES["base"], [[["sciprobe", "model_id"], case["model"]]])
    report = compare_with_paper(data)
    assert bool(report.unmatched) == case["expect_unmatched"]
    if case["expect_unmatched"]:
        assert report.comparisons == []
        [line] = report.unmatched
        assert case["model"] in line and "gpt-4o-mini" in line and "paper_models.yaml" in line


def test_alias_table_entries_are_distinct_models() -> None:
    aliases = model_aliases()
    assert same_model("openai/gpt-4o-mini", "gpt-4o-mini") and not same_model("openai/gpt-4o", "gpt-4o-mini")
    for i, names in enumerate(aliases):  # one name in two entries would make two models one
        for other in aliases[i + 1:]:
            assert not names & other, sorted(names & other)


def test_mde_formula_and_required_n() -> None:
    se = se_from_interval(0.5, 0.5 + 2 * 1.959963984540054 * 0.02)
    assert se == pytest.approx(0.02)
    mde = minimum_detectable_effect(se, alpha=0.05, power=0.8)
    assert mde == pytest.approx((1.959963984540054 + 0.8416212335729143) * 0.02)
    assert minimum_detectable_effect(se, test="wilcoxon") == pytest.approx(mde / math.sqrt(3 / math.pi))
    assert required_n(100, mde, mde / 2) == 400  # half the effect: four times the items
    assert detectable(se, 100, target=mde).n_required == 100
    assert minimum_detectable_effect(se, power=0.9) > mde and minimum_detectable_effect(se, alpha=0.01) > mde


def test_compare_reports_the_mde_of_its_test() -> None:
    ids = [str(i) for i in range(200)]
    a = {"config_tasks": {"b:t|0": {"headline": "acc"}}, "sciprobe": {"model_id": "a", "tasks": {"b:t|0": {
        "scores": {"official": {"acc": 0.5}}, "provenance": {},
        "items": {"ids": ids, "clusters": None,
                  "modes": {"official": mean_items([i % 2 for i in range(200)], [False] * 200).as_json()}}}}}}
    b = copy.deepcopy(a)
    b["sciprobe"]["tasks"]["b:t|0"]["items"]["modes"]["official"] = mean_items(
        [1 if i % 4 else 0 for i in range(200)], [False] * 200).as_json()
    [c], _ = compare_results(a, b)
    found = c.detectable
    assert found is not None and 0 < found.mde < 1 and found.n == 200
    assert found.target == pytest.approx(abs(c.difference))
    # 50 discordant pairs of 200, difference 0.25: the McNemar approximation SE = sqrt((p_d - d^2) / n)
    analytic = minimum_detectable_effect(math.sqrt((0.25 - 0.25 ** 2) / 200))
    assert c.difference == pytest.approx(0.25) and found.mde == pytest.approx(analytic, rel=0.15)
    assert found.n_required == required_n(200, found.mde, c.difference) < 200  # detectable with fewer items


def test_compare_paper_cli_on_a_baseline_run(tmp_path, capsys) -> None:
    [(_, path, _)] = run_baselines("idrbench", names=["random"], output_dir=tmp_path)
    assert main(["compare", str(path), "--paper"]) == 0
    out = capsys.readouterr().out
    assert "random guessing" in out and "not comparable [1]" in out and "data variant" in out
    assert main(["compare", str(path), "--paper", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    [row] = report["comparisons"]
    assert row["verdict"] == NOT_COMPARABLE and row["source"]["table"].startswith("§5.1")
    assert row["paper"] == pytest.approx(0.176) and row["ci_low"] <= row["ours"] <= row["ci_high"]


def test_compare_paper_arguments_are_one_line_errors(tmp_path, capsys) -> None:
    [(_, path, _)] = run_baselines("idrbench", names=["random"], output_dir=tmp_path)
    assert main(["compare", str(path), str(path), "--paper"]) == 2
    assert capsys.readouterr().err.startswith("error: --paper compares one results file")
    assert main(["compare", str(path)]) == 2
    assert "two results files" in capsys.readouterr().err
    assert main(["compare", str(path), str(path), "--power", "1.5"]) == 2
    assert "--power" in capsys.readouterr().err


def test_compare_cli_reports_the_mde_for_the_asked_effect(tmp_path, capsys) -> None:
    runs = {b.name: path for b, path, _ in run_baselines("idrbench", names=["random", "majority"],
                                                         output_dir=tmp_path)}
    assert main(["compare", str(runs["majority"]), str(runs["random"]), "--effect", "0.05", "--power", "0.9",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    ipi = next(c for c in report["comparisons"] if c["task"] == "idrbench:ipi" and c["mode"] == "official")
    found = ipi["detectable"]
    assert found["power"] == 0.9 and found["target"] == 0.05 and found["n"] == ipi["n_common"]
    assert found["n_required"] == required_n(found["n"], found["mde"], 0.05) > found["n"]  # 0.05 needs more items
    assert main(["compare", str(runs["majority"]), str(runs["random"])]) == 0
    assert "MDE" in capsys.readouterr().out
