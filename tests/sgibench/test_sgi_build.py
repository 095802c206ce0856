"""SGI-Bench declaration, source reader, builder and external files (spec sgibench.md §2, §7, §9), on small
synthetic fixtures in the released hub schemas."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
from pathlib import Path

import datasets
import pytest

from sciprobe.core.registry import get_benchmark, resolve_task
from sciprobe.benchmarks.sgibench import external, prompts
from sciprobe.benchmarks.sgibench.source import normalise, parse_dict_field, read_source
from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
from sciprobe.data.build import build_benchmark
from sciprobe.core.errors import SciprobeError

from golden import REPO

SHARED_DRY = REPO.parent / "shared" / "data" / "sgibench" / "evaluation" / "task_3_dry_experiment" / "data"
SGI = get_benchmark("sgibench")
CONFIGS = ("deep_research", "idea_generation", "dry_experiment", "wet_experiment", "experimental_reasoning")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_synthetic_source(tmp_path_factory.mktemp("sgi-src") / "src", n=4)


@pytest.fixture(scope="module")
def built(synthetic: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sgi-build") / "sgibench"
    build_benchmark(SGI, synthetic, out)
    return out


def test_registry_and_declaration() -> None:
    assert tuple(SGI.configs) == CONFIGS and tuple(SGI.tasks) == CONFIGS
    bench, task = resolve_task("sgibench:wet_experiment")
    assert bench is SGI and task.modes == ("official", "paper") and task.headline == "final"
    assert SGI.tasks["dry_experiment"].runner.name == "sandbox"
    assert SGI.tasks["idea_generation"].runner.name == "idea_panel"


def test_build_and_load_every_config(built: Path) -> None:
    assert datasets.get_dataset_config_names(str(built)) == sorted(CONFIGS)
    for config in CONFIGS:
        dd = datasets.load_dataset(str(built), config)
        assert list(dd) == ["test"] and dd["test"].num_rows == 4
        assert dd["test"].features == SGI.configs[config].features()
        assert dd["test"]["date"] == [None] * 4
    info = json.loads((built / "sciprobe_build.json").read_text())
    assert info["benchmark"] == "sgibench" and info["rows"]["wet_experiment"] == {"test": 4}
    card = (built / "README.md").read_text()
    assert "ast.literal_eval" in card and "answer_letter" in card and "SCIPROBE_SGIBENCH_DRY_DATA" in card


def test_reasoning_images_and_answer_letter(built: Path) -> None:
    er = datasets.load_dataset(str(built), "experimental_reasoning", split="test")
    assert isinstance(er.features["images"], datasets.List)
    assert isinstance(er.features["images"].feature, datasets.Image)
    row = er[3]
    assert row["answer"] == 3 and row["answer_letter"] == "D"
    assert len(row["images"]) == 3 and row["images"][0].size == (32, 32)
    assert len(row["step_images"]) == 1 and er[0]["step_images"] == []


def test_idea_dicts_parsed_without_eval(built: Path) -> None:
    ig = datasets.load_dataset(str(built), "idea_generation", split="test")
    assert ig[0]["related_work"][0] == {"key": "Smith (2020)", "value": "used method A; it is slow."}
    assert ig[0]["implementation_steps"][1] == {"key": "2", "value": "Train the denoiser."}
    assert ig[0]["parse_errors"] == [] and ig[1]["parse_errors"] == ["related_work_test"]
    assert ig[1]["related_work_test"] == [] and ig[0]["implementation_order"] == ["1-2", "2-3"]
    assert parse_dict_field("__import__('os').system('echo pwned')") is None
    assert parse_dict_field("[1, 2]") is None and parse_dict_field("") == []


def test_dry_wet_normalisation(built: Path) -> None:
    dry = datasets.load_dataset(str(built), "dry_experiment", split="test")
    assert dry[0]["idx"] == "SGI_DryExperiment_0200"
    assert dry[0]["external_files"] == list(external.EXTERNAL_FILES["SGI_DryExperiment_0200"])
    assert dry[1]["external_files"] == [] and dry[0]["runtime"] == pytest.approx(1.25)
    assert dry[0]["unit_test_4_output"].startswith("[Final Output]")
    wet = datasets.load_dataset(str(built), "wet_experiment", split="test")
    assert wet[0]["action_names"] == ["Collect soil sample", "Extract DNA", "Sequence DNA", "Dry sample"]


def test_reader_errors_are_one_line(tmp_path: Path, synthetic: Path) -> None:
    with pytest.raises(SciprobeError, match="no Parquet for wet_experiment"):
        list(read_source(tmp_path, "wet_experiment", {}))
    with pytest.raises(SciprobeError, match="0-based option index"):
        normalise({"idx": "x", "answer": 30}, "experimental_reasoning")
    with pytest.raises(SciprobeError, match="cutoff"):
        build_benchmark(SGI, synthetic, tmp_path / "cut", configs=["deep_research"], cutoff=dt.date(2024, 1, 1))


def test_the_generic_builder_builds_sgibench(synthetic: Path, tmp_path: Path) -> None:
    path = REPO / "dataset_builders" / "builder.py"
    spec = importlib.util.spec_from_file_location("sciprobe_builders", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    b = module.builder("sgibench")(config_name="wet_experiment", dataset_name="sgibench", cache_dir=str(tmp_path),
                                   source=str(synthetic))
    b.download_and_prepare()
    assert b.as_dataset(split="test").num_rows == 4


def test_prompts_and_parsers_round_trip(built: Path) -> None:
    wet = datasets.load_dataset(str(built), "wet_experiment", split="test")[0]
    messages = prompts.wet_experiment_messages(wet)
    assert messages[0]["content"] == prompts.SYSTEM and "<answer>" in messages[1]["content"]
    task = SGI.tasks["wet_experiment"]
    gold_answer = f"Here is the plan.\n<answer>\n{wet['answer']}\n</answer>"
    parsed = task.parse(gold_answer)
    assert parsed.path == "official" and parsed.extra["n_steps_official"] == 3
    records = [{"response": gold_answer, "gold": task.gold(wet)}, {"response": None, "gold": task.gold(wet)}]
    report = task.score(records, "official")
    assert report.values["final"] == 50.0 and report.coverage.n_failed == 1
    # the prompt's own example obeys the strict parser
    assert len(SGI.tasks["wet_experiment"].parse(f"<answer>\n{prompts.WET_EXAMPLE}\n</answer>").value.split("<")) == 3

    er = datasets.load_dataset(str(built), "experimental_reasoning", split="test")[2]
    text = prompts.reasoning_text(er)
    assert "Options:\nA. Option A\n" in text and "J. Option J" in text
    parsed = SGI.tasks["experimental_reasoning"].parse("so \\boxed{\\text{C}}")
    assert parsed.value == "C" and parsed.extra["official"] is None and parsed.path == "tolerant:last_box"
    report = SGI.tasks["experimental_reasoning"].score([{"response": "\\boxed{C}", "gold": er["answer"]}], "official")
    assert report.values["mca"] == 100.0

    dr = datasets.load_dataset(str(built), "deep_research", split="test")[1]
    parsed = SGI.tasks["deep_research"].parse(f"Step 1. ...\n<answer>{dr['answer']}</answer>")
    assert parsed.value == dr["answer"] and parsed.path == "official"
    assert SGI.tasks["deep_research"].parse("just 33").path == "official:no_tag"


def test_idea_and_dry_tasks_score_records(built: Path) -> None:
    from sciprobe.benchmarks.sgibench.scoring.dry_experiment import RunResult, assemble_program

    dry = datasets.load_dataset(str(built), "dry_experiment", split="test")[2]
    answer = "<answer>\ndef scale(values, factor):\n    return [v * factor for v in values]\n</answer>"
    program, info = assemble_program(dry["incomplete_main_code"], answer, dry["incomplete_functions"])
    assert info == {"source": "answer", "replaced": ["scale"], "missing": []}
    assert "Please complete" not in program and "return [v * factor for v in values]" in program
    compile(program, "main.py", "exec")
    runs = [RunResult(stdout=dry[f"unit_test_{i}_output"], wall_time=0.5) for i in range(5)]
    report = SGI.tasks["dry_experiment"].score([{"runs": runs, "gold": SGI.tasks["dry_experiment"].gold(dry)}])
    assert report.values["passall_at_5"] == 100.0 and report.values["aet"] == 0.5


def test_external_files_located_by_path_with_checksums(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(external.ENV_VAR, raising=False)
    assert {f.status for f in external.locate("SGI_DryExperiment_0200")} == {"no_folder"}
    assert external.locate("SGI_DryExperiment_0001", tmp_path) == []
    bad = tmp_path / "SGI_DryExperiment_0200"
    bad.mkdir()
    (bad / "adult.data").write_text("tampered")
    statuses = {f.relative.split("/")[-1]: f.status for f in external.locate("SGI_DryExperiment_0200", tmp_path)}
    assert statuses == {"adult.data": "checksum_mismatch", "adult.test": "missing"}


def test_external_reference_copies_match_pinned_checksums(monkeypatch: pytest.MonkeyPatch) -> None:
    if not (SHARED_DRY / "SGI_DryExperiment_0200" / "adult.data").is_file():
        pytest.skip("SGI-Bench dry-experiment reference files not available in ../shared")
    monkeypatch.setenv(external.ENV_VAR, str(SHARED_DRY))
    found = external.check_all()
    assert [f.status for f in found["SGI_DryExperiment_0200"]] == ["ok", "ok"]
    status_0206 = {f.relative.split("/")[-1]: f.status for f in found["SGI_DryExperiment_0206"]}
    assert status_0206["t10k-images-idx3-ubyte.gz"] == "ok" and status_0206["train-labels-idx1-ubyte.gz"] == "ok"
    assert status_0206["train-images-idx3-ubyte.gz"] in ("missing", "unpinned")
    # never copied into the repository
    assert not list(REPO.rglob("adult.data")) and not list(REPO.rglob("*idx1-ubyte.gz"))


def test_cli_functions(tmp_path: Path) -> None:
    from sciprobe.benchmarks.sgibench.commands import (
        check_external_command,
        sgi_score_command,
    )

    report = tmp_path / "dr.json"
    report.write_text(json.dumps({"metric": "sgi_deep_research", "mode": "official", "exact_match": 18.48,
                                  "coverage": {"n_items": 318, "n_scored": 303, "n_failed": 15}}))
    out = json.loads(sgi_score_command([f"deep_research={report}", "idea_generation=39.68", "dry_experiment=36.64",
                                        "wet_experiment=32.45", "experimental_reasoning=41.92"]))
    assert out["sgi_score"] == 33.83 and out["incomplete_components"] == ["deep_research"]
    with pytest.raises(SciprobeError, match="COMPONENT=VALUE"):
        sgi_score_command(["deep_research"])
    status, text = check_external_command(str(tmp_path))
    assert status == 1 and "missing" in text


def test_missing_images_survive_the_reader() -> None:
    """A null image stays null in the row (the task card skips it; spec §8 'missing images')."""
    from sciprobe.benchmarks.sgibench import reasoning_features
    from sciprobe.benchmarks.sgibench.synthetic import _png

    row = normalise({"idx": "r1", "question": "q", "images": [{"bytes": _png(1), "path": None}, None],
                     "options": ["a", "b"], "steps": None, "step_images": None, "answer": 1}, "experimental_reasoning")
    ds = datasets.Dataset.from_list([row], features=reasoning_features())
    assert ds[0]["images"][1] is None and ds[0]["answer_letter"] == "B" and ds[0]["step_images"] == []


def test_built_idea_rows_feed_the_idea_scorer(built: Path) -> None:
    """Rows in the builder's [{key, value}] form (with parse_errors) score like the hub's stringified dicts."""
    import hashlib

    import numpy as np

    from sciprobe.benchmarks.sgibench.scoring.idea import idea_generation_scores

    class HashEmbedder:
        def encode(self, texts):
            return np.array([[b / 255 for b in hashlib.sha256(t.encode()).digest()[:8]] for t in texts])

    rows = datasets.load_dataset(str(built), "idea_generation", split="test").to_list()[:2]
    answer = json.dumps({"Idea": "Denoise weak signals with a learned model and robust estimation. " * 6,
                         "ImplementationSteps": {"1": "Collect data.", "2": "Train the denoiser."},
                         "ImplementationOrder": ["1-2"]})
    report = idea_generation_scores([answer, answer], rows, embedder=HashEmbedder())
    first, second = report.values["per_item"]
    assert first["status"] == second["status"] == "ok"
    assert second["objective"]["novelty"] == 0.0 and first["objective"]["novelty"] > 0  # malformed related_work_test
    assert first["objective"]["feasibility"] > 0 and report.values["final"] is None
