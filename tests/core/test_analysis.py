"""Every results file carries the headline's bootstrap interval and per-group breakdowns with coverage, computed
from the task's declared item statistic (sciprobe.results.analysis); the evaluate, score and baselines paths all get
them."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sciprobe.results.analysis import analyse, attach_row_fields, group_labels
from sciprobe.run.baselines import run_baselines
from sciprobe.core.registry import get_benchmark
from sciprobe.cli.commands import main
from sciprobe.core.declaration import Breakdown, TaskSpec
from sciprobe.testing.stub_server import StubServer
from sciprobe.results.write import TaskResult
from sciprobe.scoring.classification import binary_classification
from sciprobe.scoring.item_scores import mean_items


def _files(out: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in sorted((out / "results").rglob("results_*.json"))}


def check_results_file(data: dict, out: Path) -> int:
    """Every mode with a headline number has a consistent interval, breakdowns with coverage and an item table;
    returns how many intervals it checked."""
    checked = 0
    for key, entry in data["sciprobe"]["tasks"].items():
        spec = get_benchmark(key.split(":")[0]).task(key.split(":")[1].split("|")[0])
        headline = data["config_tasks"][key]["headline"]
        details = pq.read_table(out / entry["details"]).to_pylist()
        assert entry["items"]["ids"] == [str(r["id"]) for r in details]
        for mode, score in entry["scores"].items():
            ci = score["ci"]
            assert ci["metric"] == headline and ci["n_resamples"] == 1000 and ci["seed"] == 0
            value = score.get(headline)
            if not isinstance(value, (int, float)) or value != value:
                assert ci["low"] is None and ci["reason"] == "no headline number in this mode"
                continue
            assert "reason" not in ci, ci  # the item statistic reproduces the scorer's number
            assert ci["estimate"] == value and ci["low"] <= value + 1e-9 and value <= ci["high"] + 1e-9
            suffix = "" if mode == data["config_tasks"][key]["default_mode"] else f":{mode}"
            assert data["results"][key][f"{headline}_ci_low{suffix}"] == ci["low"]
            assert set(score["breakdowns"]) == {b.name for b in spec.breakdowns}
            for name, breakdown in score["breakdowns"].items():
                groups = breakdown["groups"]
                assert sum(g["n_items"] for g in groups.values()) >= score["coverage"]["n_items"]
                assert all(g["n_scored"] <= g["n_items"] and g["n_failed"] <= g["n_items"] for g in groups.values())
                if all(len(labels) == 1 for labels in entry["items"]["groups"][name]):
                    assert sum(g["n_items"] for g in groups.values()) == len(details)
            checked += 1
    return checked


def test_idrbench_baselines_carry_intervals_breakdowns_and_the_flag(tmp_path) -> None:
    runs = run_baselines("idrbench", output_dir=tmp_path)
    assert [b.name for b, _, _ in runs] == ["random", "majority", "title-similarity"]
    files = _files(tmp_path)
    assert set(files) == {"reference-baseline__random", "reference-baseline__majority",
                          "reference-baseline__title-similarity"}
    for name, data in files.items():
        assert check_results_file(data, tmp_path) > 0
        flag = data["sciprobe"]["reference_baseline"]
        assert flag["name"] == name.split("__")[1] and flag["benchmark"] == "idrbench"
        assert all(t["provenance"]["reference_baseline"]["name"] == flag["name"]
                   for t in data["sciprobe"]["tasks"].values())
    i2r = files["reference-baseline__random"]["sciprobe"]["tasks"]["idrbench:i2r|0"]
    assert i2r["scores"]["official"]["ci"]["unit"] == "cluster:pa_id"  # instances of one seed paper move together
    assert i2r["items"]["clusters"] and i2r["items"]["cluster_field"] == "pa_id"
    # the majority baseline answers "no" everywhere: macro-F1 = F1(no) / 2 over the sample's labels
    ipi = files["reference-baseline__majority"]["sciprobe"]["tasks"]["idrbench:ipi|0"]
    gold = [r["gold"] for r in pq.read_table(tmp_path / ipi["details"]).to_pylist()]
    expected = binary_classification(["no"] * len(gold), gold, mode="strict").values["macro_f1"]
    assert ipi["scores"]["strict"]["macro_f1"] == pytest.approx(expected)
    # a group's score is the headline on the group's items
    groups = ipi["scores"]["strict"]["breakdowns"]["disciplines"]["groups"]
    assert set(groups) >= {"Physics"} and all(g["n_items"] >= 1 for g in groups.values())


def test_baselines_are_deterministic(tmp_path) -> None:
    first = run_baselines("idrbench", names=["random"], output_dir=tmp_path / "a")
    again = run_baselines("idrbench", names=["random"], output_dir=tmp_path / "b")
    assert [[r.records for r in results] for _, _, results in first] == \
        [[r.records for r in results] for _, _, results in again]


def test_scitaste_baselines(tmp_path) -> None:
    run_baselines("scitaste", output_dir=tmp_path)
    files = _files(tmp_path)
    assert set(files) == {"reference-baseline__mean", "reference-baseline__discipline-mean"}
    for data in files.values():
        assert check_results_file(data, tmp_path) == 2
    task = files["reference-baseline__discipline-mean"]["sciprobe"]["tasks"]["scitaste:pure_qa|0"]
    groups = task["scores"]["paper"]["breakdowns"]["discipline"]["groups"]
    assert len(groups) == 6 and sum(g["n_items"] for g in groups.values()) == 24


def test_prescience_ranking_and_citation_baselines(tmp_path) -> None:
    runs = run_baselines("prescience", names=["history-frequency", "mean"], output_dir=tmp_path, log=lambda _: None)
    assert {b.name for b, _, _ in runs} == {"history-frequency", "mean"}
    files = _files(tmp_path)
    for data in files.values():
        assert check_results_file(data, tmp_path) >= 1
    tasks = files["reference-baseline__history-frequency"]["sciprobe"]["tasks"]
    collab = tasks["prescience:collaborator_prediction|0"]
    assert "team_size" in collab["scores"]["official"]["breakdowns"]


def test_sgi_baselines_on_synthetic_data(tmp_path) -> None:
    from sciprobe.data.build import build_benchmark
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source

    write_synthetic_source(tmp_path / "src")
    build_benchmark(get_benchmark("sgibench"), tmp_path / "src", tmp_path / "build")
    run_baselines("sgibench", tasks=["experimental_reasoning", "deep_research", "wet_experiment"],
                  data=str(tmp_path / "build"), output_dir=tmp_path / "out")
    files = _files(tmp_path / "out")
    for data in files.values():
        assert check_results_file(data, tmp_path / "out") >= 2
    reasoning = files["reference-baseline__majority-option"]["sciprobe"]["tasks"]["sgibench:experimental_reasoning|0"]
    assert reasoning["items"]["modes"]["official"]["test"] == "mcnemar"
    assert set(reasoning["scores"]["official"]["breakdowns"]) == {"discipline", "direction", "type", "image_type"}


@pytest.mark.slow
def test_every_baseline_of_every_benchmark_then_compare_and_report(tmp_path) -> None:
    """Every declared baseline runs on the bundled samples (SGI-Bench: its synthetic source) with intervals; any two
    runs of a benchmark compare; one report shows them all."""
    import re

    from sciprobe.data.build import build_benchmark
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.results.compare import compare_files
    from sciprobe.results.html_report import build_report

    write_synthetic_source(tmp_path / "sgi-src")
    build_benchmark(get_benchmark("sgibench"), tmp_path / "sgi-src", tmp_path / "sgi")
    for bench in ("idrbench", "scitaste", "prescience", "sgibench"):
        out = tmp_path / "runs" / bench
        runs = run_baselines(bench, data=str(tmp_path / "sgi") if bench == "sgibench" else None, output_dir=out,
                             log=lambda _: None)
        for data in _files(out).values():
            check_results_file(data, out)
        shared = [(a, b) for i, (_, a, ra) in enumerate(runs) for _, b, rb in runs[i + 1:]
                  if {r.key for r in ra} & {r.key for r in rb}]
        assert shared, bench
        for a, b in shared:
            comparisons, _ = compare_files(a, b)
            assert comparisons and all(c.n_common > 0 for c in comparisons if c.a_full is not None
                                       and c.b_full is not None)
    index = build_report([tmp_path / "runs"], tmp_path / "report")
    images = re.findall(r'<img src="([^"]+)"', index.read_text())
    assert all((index.parent / src).is_file() for src in images)
    for bench in ("idrbench", "scitaste", "prescience", "sgibench"):
        assert any(f"-{bench}-" in src for src in images), bench


def _task(item_scores, breakdowns=()) -> TaskSpec:
    def score(records, mode="official"):
        return binary_classification([r["prediction"] for r in records], [r["gold"] for r in records], mode="strict")

    return TaskSpec("t", "c", "d", "m", score, headline="macro_f1", item_scores=item_scores, breakdowns=breakdowns)


def test_a_statistic_that_disagrees_with_its_scorer_gives_no_interval() -> None:
    records = [{"id": str(i), "gold": g, "prediction": p}
               for i, (g, p) in enumerate([("yes", "yes"), ("no", "yes"), ("no", "no"), ("yes", "no")])]
    task = _task(lambda recs, mode, report, headline: mean_items([1.0] * len(recs), [False] * len(recs)))
    result = TaskResult("b:t", 0, {"strict": task.score(records)}, records, {}, "macro_f1", "strict")
    ci = analyse(task, result)["modes"]["strict"]["ci"]
    assert ci["low"] is None and "gives 1.0, the scorer 0.5: no interval" in ci["reason"]
    silent = _task(None)
    assert "declares no item statistic" in analyse(silent, result)["notes"][0]


def test_analysed_metrics_get_their_own_interval_and_breakdowns() -> None:
    """TaskSpec.analysed_metrics: each metric besides the headline gets other_ci and other_breakdowns from its own
    item statistic (asked for by name), checked against the scorer's number like the headline; the results file
    and its flat block carry them."""
    from sciprobe.scoring.score_report import Coverage, ScoreReport

    per_item = [{"a": 1.0, "b": 0.0}, {"a": 0.0, "b": 1.0}, {"a": 1.0, "b": 1.0}]

    def score(records, mode="official"):
        return ScoreReport("m", mode, {"a": 100 * 2 / 3, "b": 100 * 2 / 3, "c": 50.0}, Coverage(3, 3, 0))

    def items(records, mode, report, metric):
        values = [1.0] * 3 if metric == "c" else [it[metric] for it in per_item]  # "c" disagrees with its scorer
        return mean_items(values, [False] * 3, scale=100.0)

    task = TaskSpec("t", "c", "d", "m", score, headline="a", item_scores=items, breakdowns=(Breakdown("kind"),),
                    analysed_metrics=("b", "c"))
    records = [{"id": str(i), "kind": k} for i, k in enumerate(["x", "y", "x"])]
    result = TaskResult("b:t", 0, {"official": score(records)}, records, {}, "a", "official")
    result.analysis = analyse(task, result)
    mode = result.analysis["modes"]["official"]
    assert mode["ci"]["metric"] == "a" and mode["breakdowns"]["kind"]["groups"]["x"]["score"] == 100.0
    b_ci = mode["other_ci"]["b"]
    assert b_ci["metric"] == "b" and "reason" not in b_ci and b_ci["low"] <= 100 * 2 / 3 <= b_ci["high"]
    b_groups = mode["other_breakdowns"]["b"]["kind"]["groups"]
    assert b_groups["x"]["score"] == 50.0 and b_groups["y"]["score"] == 100.0 and b_groups["x"]["n_items"] == 2
    assert "gives 100.0, the scorer 50.0: no interval" in mode["other_ci"]["c"]["reason"]  # checked like the headline
    assert mode["other_breakdowns"]["c"] == {}
    entry = result.score_dicts()["official"]
    assert entry["other_breakdowns"]["b"] == mode["other_breakdowns"]["b"]
    assert result.flat_metrics()["b_ci_low"] == b_ci["low"]


def test_records_get_their_rows_fields_and_groups() -> None:
    task = TaskSpec("t", "c", "d", "m", lambda r, m: None, record_fields=("kind",),
                    breakdowns=(Breakdown("size", "size", lambda row: len(row["authors"])), Breakdown("kind")))
    rows = [{"key": "a", "kind": "x", "authors": [1, 2], "date": "2025-01-01"}, {"key": "b", "kind": None,
                                                                                  "authors": []}]
    records = [{"id": "b", "kind": "kept"}, {"id": "a"}, {"id": "zz"}]
    attach_row_fields(task, "key", rows, records)
    assert records == [{"id": "b", "kind": "kept", "size": 0, "date": None},
                       {"id": "a", "kind": "x", "size": 2, "date": "2025-01-01"}, {"id": "zz"}]
    assert group_labels(["B", "A", "B"]) == ["B", "A"] and group_labels(None) == ["unknown"]
    assert group_labels(True) == ["yes"] and group_labels('["x", "y"]') == ["x", "y"]
    assert group_labels([]) == ["unknown"]


def _reply(body: dict) -> str:
    prompt = body["messages"][-1]["content"]
    if "Your choice:" in prompt:
        return "Your choice: Paper 1\nConfidence score: 60"
    return 'Your verdict: Yes\nConfidence score: 80\nSubject: ["Physics"]'


def test_evaluate_and_score_write_intervals_and_print_them(tmp_path, capsys) -> None:
    with StubServer(reply=_reply) as stub:
        model = f"openai/stub,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", "idrbench:ipi", "idrbench:i2r", "--model", model, "--output-dir",
                     str(tmp_path / "e")]) == 0
    printed = capsys.readouterr().out
    assert "95% CI" in printed and "[" in printed.split("95% CI")[1]
    data = next(iter(_files(tmp_path / "e").values()))
    assert check_results_file(data, tmp_path / "e") == 4
    i2r = pq.read_table(tmp_path / "e" / data["sciprobe"]["tasks"]["idrbench:i2r|0"]["details"]).to_pylist()
    assert all("research_type" in r and "seed_disciplines" in r and r["date"] for r in i2r)  # added from the rows
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": r, "prediction": "yes"}) + "\n"
                             for r in data["sciprobe"]["tasks"]["idrbench:ipi|0"]["items"]["ids"]))
    assert main(["score", "idrbench:ipi", "--predictions", str(preds), "--output-dir", str(tmp_path / "s")]) == 0
    scored = next(iter(_files(tmp_path / "s").values()))
    assert check_results_file(scored, tmp_path / "s") == 2
