"""``sciprobe export``: a real results file (``sciprobe.results.write.write_run``) to the Hugging Face model-index
front
matter and the ``.eval_results/*.yaml`` format, checked by parsing the output back with huggingface_hub."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml
from huggingface_hub import ModelCard, parse_eval_result_entries
from huggingface_hub.repocard_data import model_index_to_eval_results

from sciprobe.cli.commands import main
from sciprobe.core.errors import SciprobeError
from sciprobe.results.export import export_results
from sciprobe.results.write import RunInfo, TaskResult, write_run
from sciprobe.scoring.score_report import Coverage, ScoreReport

FP = "837ab983a1e85adfa69c6df2c2722252328c4d0cb145f1a40f2c4b2cd1010660"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
START = dt.datetime(2026, 11, 29, 12, 0, 0, tzinfo=dt.UTC)


def _prov(revision: str | None = None, fingerprint: str = FP, dataset: str = "/data/idrbench", **extra) -> dict:
    return {"benchmark": "idrbench", "benchmark_version": "1.0.0", "dataset": dataset,
            "dataset_fingerprint": fingerprint, "dataset_revision": revision, "prompt_version": "1",
            "cutoff": {"cutoff": "2024-06-30", "source": "model"}, "limit": None, **extra}


def write_results(out: Path, *, revision: str | None = None, fingerprint: str = FP, dataset: str = "/data/idrbench",
                  ) -> Path:
    ipi = {mode: ScoreReport("binary_classification", mode, {"macro_f1": value, "accuracy": value + 0.1,
                                                             "n_parsed": 16}, Coverage(16, 15, 1))
           for mode, value in (("official", 0.625), ("strict", 0.5))}
    i2r = ScoreReport("swiss_ranking", "official", {"mrr": 0.4, "hits@1": 0.25}, Coverage(8, 8, 0))
    i2r_corrected = ScoreReport("swiss_ranking", "corrected", {"mrr": 0.45}, Coverage(8, 8, 0))
    records = [{"id": "a", "response": "x"}]
    prov = _prov(revision, fingerprint, dataset)
    tasks = [TaskResult("idrbench:ipi", 0, ipi, records, prov, "macro_f1"),
             TaskResult("idrbench:i2r", 0, {"official": i2r}, records, prov, "mrr"),
             TaskResult("idrbench:i2r:corrected", 0, {"corrected": i2r_corrected}, records, prov, "mrr",
                        default_mode="corrected")]
    return write_run(out, RunInfo("openai/gpt-4o-mini", {"temperature": 0.0}, judge_ids=["openai/gpt-4o"],
                                  clock=lambda: START), tasks)


def test_model_index_round_trip(tmp_path):
    path = write_results(tmp_path / "runs")
    text = export_results(path, "model-index", source_url="https://example.org/runs/1")
    data = yaml.safe_load(text)
    name, results = model_index_to_eval_results(data["model-index"])
    assert name == "openai/gpt-4o-mini"
    by_name = {(r.task_name, r.metric_name): r for r in results}
    ipi = by_name[("IDRBench ipi", "macro_f1 (official)")]
    assert ipi.metric_type == "macro_f1" and ipi.metric_value == 0.625
    assert ipi.task_type == "text-generation" and ipi.dataset_name == "IDRBench" and ipi.dataset_type == "idrbench"
    assert ipi.dataset_config == "ipi" and ipi.dataset_split == "test" and ipi.dataset_revision == FP
    assert ipi.source_url == "https://example.org/runs/1" and ipi.source_name == "sciprobe"
    assert by_name[("IDRBench ipi", "macro_f1 (strict)")].metric_value == 0.5
    assert by_name[("IDRBench ipi", "accuracy (official)")].metric_value == 0.725
    assert ("IDRBench ipi", "n_parsed (official)") not in by_name  # counts are not metrics
    assert by_name[("IDRBench i2r", "mrr (official)")].metric_value == 0.4
    assert by_name[("IDRBench i2r", "mrr (corrected)")].metric_value == 0.45  # I2R's second tournament
    assert len(data["model-index"][0]["results"]) == 2  # one group per task (and dataset config)
    # and it is valid model card front matter
    card = ModelCard(f"---\n{text}---\n\n# model\n")
    assert card.data.eval_results and card.data.model_name == "openai/gpt-4o-mini"


def test_eval_results_with_a_hub_revision(tmp_path):
    path = write_results(tmp_path / "runs", revision=COMMIT, fingerprint=f"hub:sciprobe/idrbench@{COMMIT}:abcd",
                         dataset="sciprobe/idrbench")
    entries = parse_eval_result_entries(yaml.safe_load(export_results(path, "eval-results")))
    assert [(e.dataset_id, e.task_id, e.value) for e in entries] == [
        ("sciprobe/idrbench", "ipi", 0.625), ("sciprobe/idrbench", "i2r", 0.4), ("sciprobe/idrbench", "i2r", 0.45)]
    assert {e.dataset_revision for e in entries} == {COMMIT}
    assert entries[0].date.startswith("2026-11-29") and "coverage 15/16" in entries[0].notes
    assert "macro_f1 (official mode)" in entries[0].notes and "judges openai/gpt-4o" in entries[0].notes
    assert "mrr (corrected mode)" in entries[2].notes


def test_eval_results_needs_a_hub_dataset_for_local_files(tmp_path):
    path = write_results(tmp_path / "runs")
    with pytest.raises(SciprobeError, match="--dataset-id idrbench=OWNER/NAME"):
        export_results(path, "eval-results")
    text = export_results(path, "eval-results", dataset_ids=["idrbench=me/idrbench-release"])
    entries = parse_eval_result_entries(yaml.safe_load(text))
    assert {e.dataset_id for e in entries} == {"me/idrbench-release"}
    assert all(e.dataset_revision is None for e in entries)  # never a file checksum where a git sha belongs
    assert f"data {FP[:16]}" in entries[0].notes


def test_cli_writes_atomically(tmp_path, capsys):
    path = write_results(tmp_path / "runs")
    out = tmp_path / "card" / ".eval_results" / "idrbench.yaml"
    assert main(["export", str(path), "--format", "eval-results", "--dataset-id", "me/idr", "-o", str(out)]) == 0
    assert parse_eval_result_entries(yaml.safe_load(out.read_text()))[0].dataset_id == "me/idr"
    assert [p.name for p in out.parent.iterdir()] == ["idrbench.yaml"]  # no temporary file left behind
    assert main(["export", str(path)]) == 0  # default: model-index on stdout
    assert capsys.readouterr().out.startswith("model-index:\n")


@pytest.mark.parametrize("content, message", [
    (None, "no such results file"),
    ("{not json", "not valid JSON"),
    ("[1, 2]", "not a sciprobe results file"),
    ('{"results": {"x|0": {"acc": 1}}}', "not a sciprobe results file"),
    ('{"sciprobe": {"model_id": "m", "tasks": {}}}', "sciprobe.tasks: holds no task"),
    ('{"sciprobe": {"model_id": "m", "tasks": {"idrbench:ipi|0": {"scores": "x"}}}}',
     'sciprobe.tasks["idrbench:ipi|0"].scores: expected an object, got a string'),
    ('{"sciprobe": {"model_id": "m", "tasks": {"ipi|0": {"scores": {"official": {"macro_f1": 1}}}}}}',
     "a task key is BENCHMARK:TASK|SHOTS"),
    ('{"sciprobe": {"model_id": "m", "tasks": {"idrbench:ipi|0": {"scores": {"official": {"macro_f1": null, '
     '"coverage": {"n_items": 2, "n_scored": 0, "n_failed": 2}}}}}}}', "no numeric score"),
])
def test_bad_input_is_one_line_error(tmp_path, capsys, content, message):
    path = tmp_path / "results.json"
    if content is not None:
        path.write_text(content)
    out = tmp_path / "out.yaml"
    assert main(["export", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert not out.exists()


def test_incomplete_runs_are_refused_unless_asked(tmp_path, capsys):
    path = write_results(tmp_path / "runs")
    data = json.loads(path.read_text())
    data["sciprobe"]["incomplete"] = {"reason": "max-cost 2.0 reached", "skipped_calls": 3, "tasks_not_run": []}
    for task in data["sciprobe"]["tasks"].values():
        task["provenance"]["incomplete"] = "max-cost 2.0 reached"
    path.write_text(json.dumps(data))
    assert main(["export", str(path), "--format", "eval-results", "--dataset-id", "me/idr"]) == 2
    assert "incomplete run" in capsys.readouterr().err
    assert main(["export", str(path), "--format", "eval-results", "--dataset-id", "me/idr", "--allow-incomplete"]) == 0
    assert "INCOMPLETE run (max-cost 2.0 reached)" in capsys.readouterr().out


def test_bad_dataset_id_and_directory(tmp_path, capsys):
    path = write_results(tmp_path / "runs")
    assert main(["export", str(path), "--dataset-id", "not a repo"]) == 2
    assert "--dataset-id" in capsys.readouterr().err
    assert main(["export", str(tmp_path / "runs")]) == 2
    assert "is a folder" in capsys.readouterr().err
