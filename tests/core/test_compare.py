"""``sciprobe compare``: the paired difference on the items both runs scored, the test that fits the metric, and
warnings when the runs are not comparable."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sciprobe.run.baselines import run_baselines
from sciprobe.cli.commands import main
from sciprobe.results.compare import compare_results
from sciprobe.scoring.item_scores import binary_f1_items, mean_items


def _results(key: str, headline: str, ids: list[str], items_by_mode: dict, *, fingerprint: str = "f" * 64,
             clusters: list | None = None) -> dict:
    """A minimal results file: one task, its scores recomputed from the item statistic."""
    scores = {mode: {headline: items.value(), "coverage": {"n_items": len(ids)}}
              for mode, items in items_by_mode.items()}
    tables = {m: i.as_json() for m, i in items_by_mode.items()}
    return {"config_tasks": {key: {"headline": headline, "default_mode": next(iter(items_by_mode))}},
            "sciprobe": {"model_id": "m", "reference_baseline": None, "tasks": {key: {
                "scores": scores, "provenance": {"dataset_fingerprint": fingerprint, "benchmark_version": "1"},
                "items": {"ids": ids, "clusters": clusters, "modes": tables}}}}}


def test_accuracy_like_scores_get_mcnemar_on_the_common_items() -> None:
    a = _results("b:t|0", "acc", ["1", "2", "3", "4", "5"], {"official": mean_items([1, 1, 1, 0, 1], [False] * 5)})
    b = _results("b:t|0", "acc", ["2", "3", "4", "5", "6"], {"official": mean_items([0, 0, 0, 1, 0], [False] * 5)})
    [c], general = compare_results(a, b)
    assert general == []
    assert c.n_common == 4 and c.a == 0.75 and c.b == 0.25 and c.difference == -0.5
    assert c.test["test"].startswith("McNemar") and (c.test["only_a_correct"], c.test["only_b_correct"]) == (2, 0)
    assert c.p_value == c.test["p_value"] == pytest.approx(0.5)  # exact: both discordant pairs favour A
    assert any("1 item(s) only in A, 1 only in B" in w for w in c.warnings)


def test_macro_f1_gets_a_paired_bootstrap_and_unscored_items_are_left_out() -> None:
    rng = np.random.default_rng(0)
    gold = list(rng.random(60) < 0.3)
    pred_a = [g if rng.random() < 0.9 else not g for g in gold]
    pred_b: list = [bool(rng.random() < 0.5) for _ in gold]
    pred_b[0] = None  # dropped by B's official scoring
    ids = [f"q{i}" for i in range(60)]
    a = _results("b:t|0", "macro_f1", ids, {"official": binary_f1_items(gold, pred_a, [False] * 60, official=True)})
    b = _results("b:t|0", "macro_f1", ids, {"official": binary_f1_items(gold, pred_b, [p is None for p in pred_b],
                                                                        official=True)})
    [c], _ = compare_results(a, b)
    assert c.n_common == 59 and c.test is None and c.test_name == "paired bootstrap"
    assert c.difference < 0 and c.ci_high < 0 and c.p_value < 0.05  # B guesses: clearly worse
    assert any("scored by one run only" in w for w in c.warnings)
    assert c.a_full == pytest.approx(a["sciprobe"]["tasks"]["b:t|0"]["scores"]["official"]["macro_f1"])


def test_wilcoxon_where_the_paper_uses_it_and_clusters_resample_together() -> None:
    ids = [f"q{i}" for i in range(12)]
    rr_a = [1.0, 0.5, 1.0, 1.0, 0.33, 1.0, 0.5, 1.0, 1.0, 0.25, 1.0, 1.0]
    rr_b = [0.2, 0.1, 0.5, 0.25, 0.33, 0.1, 0.2, 0.5, 0.1, 0.05, 0.5, 0.2]
    clusters = [f"p{i // 3}" for i in range(12)]
    a = _results("b:i2r|0", "mrr", ids, {"official": mean_items(rr_a, [False] * 12, test="wilcoxon")},
                 clusters=clusters)
    b = _results("b:i2r|0", "mrr", ids, {"official": mean_items(rr_b, [False] * 12, test="wilcoxon")},
                 clusters=clusters, fingerprint="e" * 64)
    [c], _ = compare_results(a, b)
    assert c.test["test"].startswith("Wilcoxon") and c.test["n"] == 12 and c.test["mean_difference"] < 0
    assert c.ci_low < c.difference < c.ci_high
    assert any("different dataset files" in w for w in c.warnings)


def test_files_without_item_tables_compare_headlines_only() -> None:
    a = _results("b:t|0", "acc", ["1"], {"official": mean_items([1], [False])})
    b = _results("b:t|0", "acc", ["1"], {"official": mean_items([0], [False])})
    del b["sciprobe"]["tasks"]["b:t|0"]["items"]
    [c], _ = compare_results(a, b)
    assert c.n_common == 0 and c.difference is None and c.p_value is None
    assert any("headlines only" in w for w in c.warnings)


def test_compare_cli_on_baseline_runs(tmp_path, capsys) -> None:
    runs = {b.name: path for b, path, _ in run_baselines("idrbench", names=["random", "majority"],
                                                         output_dir=tmp_path / "full")}
    short = {b.name: path for b, path, _ in run_baselines("idrbench", names=["random"], limit=5,
                                                          output_dir=tmp_path / "short")}
    assert main(["compare", str(runs["majority"]), str(runs["random"])]) == 0
    out = capsys.readouterr().out
    assert "idrbench:ipi" in out and "paired bootstrap" in out
    assert "tasks only in B (not compared): idrbench:i2r|0" in out
    assert main(["compare", str(short["random"]), str(runs["random"]), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    ipi = next(c for c in report["comparisons"] if c["task"] == "idrbench:ipi" and c["mode"] == "official")
    assert ipi["n_common"] == 5 and ipi["difference"] == pytest.approx(ipi["b"] - ipi["a"])
    assert any("item limits" in w for w in ipi["warnings"]) and any("only in B" in w for w in ipi["warnings"])
    i2r = next(c for c in report["comparisons"] if c["task"] == "idrbench:i2r")
    assert i2r["test"]["test"].startswith("Wilcoxon")


def test_compare_errors_are_one_line(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["compare", str(bad), str(bad)]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert main(["compare", str(tmp_path / "missing.json"), str(bad)]) == 2
    assert "no such results file" in capsys.readouterr().err
