"""Real data, one command each (issue 14): the commands the README gives for the released data build from hub
snapshots (served offline here by a stand-in for ``huggingface_hub.snapshot_download`` that returns folders in the
exact released layout), and the bundled samples / fixtures are in the exact released schemas, so the builders are
tested on them (spec sgibench.md §2, prescience.md §1.2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.cli.commands import main

SHA = {"InternScience/SGI-DeepResearch": "1" * 40, "InternScience/SGI-IdeaGeneration": "2" * 40,
       "InternScience/SGI-DryExperiment": "3" * 40, "InternScience/SGI-WetExperiment": "4" * 40,
       "InternScience/SGI-Reasoning": "5" * 40, "allenai/prescience": "6" * 40,
       "skylenage/SciTaste-benchmark": "7" * 40}


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str | None]]:
    """``snapshot_download`` answered from the bundled samples laid out as the released repos; records calls."""
    import huggingface_hub

    calls: list[tuple[str, str | None]] = []
    sgi = get_benchmark("sgibench").sample_source

    def snapshot_download(repo_id: str, repo_type: str, revision: str | None = None, **_: object) -> str:
        assert repo_type == "dataset"
        calls.append((repo_id, revision))
        folder = tmp_path / "hub" / repo_id.replace("/", "--") / "snapshots" / SHA[repo_id]
        if not folder.exists():
            if repo_id.startswith("InternScience/"):
                shutil.copytree(sgi / repo_id.split("/")[1], folder)
            elif repo_id == "allenai/prescience":  # the v1 layout of prepare_for_upload.py@47384ed (no topics)
                from prescience_release_support import write_paper_parquet

                write_paper_parquet(folder)
            else:
                shutil.copytree(get_benchmark("scitaste").sample_source, folder)
        return str(folder)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    return calls


def _build_info(out: Path) -> dict:
    return json.loads((out / "sciprobe_build.json").read_text())


def test_sgibench_builds_from_the_five_hub_datasets_in_one_command(hub, tmp_path: Path, capsys) -> None:
    import datasets

    out = tmp_path / "build" / "sgibench"
    assert main(["sgibench", "build-from-hub", "--out", str(out), "--revision", "SGI-Reasoning=v1.0"]) == 0
    assert sorted(hub) == sorted([(r, "v1.0" if r.endswith("Reasoning") else None)
                                  for r in SHA if r.startswith("InternScience/")])
    info = _build_info(out)
    for repo, sha in SHA.items():
        if repo.startswith("InternScience/"):
            assert f"hf://datasets/{repo}@{sha}" in info["source"]
            assert json.loads(info["source_revision"])[repo] == sha
    for config in get_benchmark("sgibench").configs:
        assert len(datasets.load_dataset(str(out), config, split="test")) >= 2
    assert "experimental_reasoning: test 3" in capsys.readouterr().out
    assert main(["sgibench", "build-from-hub", "--out", str(tmp_path / "x"), "--revision", "SGI-Nope=1"]) == 2
    assert main(["sgibench", "build-from-hub", "--out", str(tmp_path / "x"), "--revision", "SGI-Reasoning"]) == 2


@pytest.mark.parametrize("benchmark,repo", [("prescience", "allenai/prescience"),
                                            ("scitaste", "skylenage/SciTaste-benchmark")])
def test_build_from_a_hub_release_records_its_commit(hub, tmp_path: Path, benchmark: str, repo: str) -> None:
    out = tmp_path / "build" / benchmark
    assert main(["build", benchmark, "--source", repo, "--revision", "main", "--out", str(out)]) == 0
    assert hub == [(repo, "main")]
    info = _build_info(out)
    assert info["source"] == f"hf://datasets/{repo}@{SHA[repo]}" and info["source_revision"] == SHA[repo]


# ---------------------------------------------------------------- the fixtures are in the exact released schemas
def test_sgibench_sample_is_the_exact_hub_schema() -> None:
    """Field names and types of spec sgibench.md §2, per dataset (no extra, none missing)."""
    import pyarrow.parquet as pq
    from datasets import Features

    from sciprobe.benchmarks.sgibench.source import HUB_DATASETS
    from sciprobe.benchmarks.sgibench.synthetic import hub_features

    spec_fields = {
        "deep_research": "idx question steps answer discipline direction type",
        "idea_generation": "idx question related_work challenge limitation motivation task_objective "
                           "existing_solutions keywords core_idea implementation_steps implementation_order data "
                           "evaluation_metrics expected_outcome related_work_test discipline direction",
        "dry_experiment": "idx question data_code main_code incomplete_main_code incomplete_functions "
                          + " ".join(f"unit_test_{i}_{k}" for i in range(5) for k in ("data", "output"))
                          + " function_type runtime discipline direction",
        "wet_experiment": "idx question action_pool answer discipline direction",
        "experimental_reasoning": "idx question images options steps step_images answer image_type discipline "
                                  "direction type",
    }
    sample = get_benchmark("sgibench").sample_source
    for config, name in HUB_DATASETS.items():
        (path,) = (sample / name / "data").glob("test-*.parquet")
        schema = pq.read_schema(path)
        assert schema.names == spec_fields[config].split(), config
        features = Features.from_arrow_schema(schema)
        assert features == hub_features(config), config
    reasoning = pq.read_table(next((sample / "SGI-Reasoning" / "data").glob("*.parquet")))
    assert str(reasoning.schema.field("answer").type) == "int32"
    dry = pq.read_table(next((sample / "SGI-DryExperiment" / "data").glob("*.parquet")))
    assert str(dry.schema.field("runtime").type) == "halffloat"
    idea = pq.read_table(next((sample / "SGI-IdeaGeneration" / "data").glob("*.parquet"))).to_pylist()[0]
    assert idea["related_work"].startswith("{'") and isinstance(idea["keywords"], list)  # stringified dicts


def test_sgibench_sample_builds_and_normalises(tmp_path: Path) -> None:
    import datasets

    from sciprobe.data.build import build_benchmark

    bench = get_benchmark("sgibench")
    out = tmp_path / "sgi"
    build_benchmark(bench, bench.sample_source, out)
    idea = datasets.load_dataset(str(out), "idea_generation", split="test")[0]
    assert idea["parse_errors"] == [] and idea["implementation_steps"][0] == {"key": "1", "value":
                                                                                  "Collect continuous records and a "
                                                                                  "catalogue."}
    er = datasets.load_dataset(str(out), "experimental_reasoning", split="test")
    assert [r["answer_letter"] for r in er] == ["B", "B", "C"] and len(er[1]["images"]) == 2
    assert all(len(r["options"]) == 10 for r in er) and er[1]["step_images"][0].size == (96, 64)
    wet = datasets.load_dataset(str(out), "wet_experiment", split="test")[1]
    assert "Measure Seebeck coefficient" in wet["action_names"]
    dry = datasets.load_dataset(str(out), "dry_experiment", split="test")
    assert all(r["external_files"] == [] and r["id"] == r["idx"] for r in dry)


def test_sgibench_sample_references_match_the_reference_programs() -> None:
    """The stored unit-test outputs are what the complete program prints on each test's data (stdlib only)."""
    import pyarrow.parquet as pq

    from sciprobe.benchmarks.sgibench.sample_writer import run_reference
    from sciprobe.benchmarks.sgibench.scoring.wet_experiment import parse_protocol

    sample = get_benchmark("sgibench").sample_source
    for row in pq.read_table(next((sample / "SGI-DryExperiment" / "data").glob("*.parquet"))).to_pylist():
        assert run_reference(row) == [row[f"unit_test_{i}_output"] for i in range(5)]
        assert "[Final Output]" in row["unit_test_0_output"]
        assert "pass  # Please complete the function" in row["incomplete_main_code"]
    for row in pq.read_table(next((sample / "SGI-WetExperiment" / "data").glob("*.parquet"))).to_pylist():
        assert len(parse_protocol(row["answer"], "official")) >= 4  # the official parser reads every step


def test_prescience_sample_is_the_exact_release_schema() -> None:
    import pyarrow.parquet as pq

    from sciprobe.benchmarks.prescience.schema import PAPER_SCHEMA

    sample = get_benchmark("prescience").sample_source
    for split in ("train", "test"):
        schema = pq.read_schema(sample / f"{split}.parquet")
        assert schema.names == PAPER_SCHEMA.names
        for field in PAPER_SCHEMA:
            assert schema.field(field.name).type == field.type, field.name
    for name, value in (("author_publications.jsonl", "value"), ("author_disambiguation.jsonl", "value")):
        first = json.loads((sample / name).read_text().splitlines()[0])
        assert set(first) == {"key", value} and isinstance(first[value], list)


# ---------------------------------------------------------------- IDRBench: the README line, as printed, on a checkout
PINNED_IDRBENCH = "aa621e46dc5f1d85e6b20952c2acee3a59c44e65"


def _readme_idrbench_command() -> str:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")
    (row,) = [line for line in readme.splitlines() if line.startswith("| IDRBench | ") and "git clone" in line]
    return row.rstrip(" |").rsplit("| ", 1)[1].strip().strip("`")


def _git(*args: str, cwd: Path) -> None:
    import subprocess

    subprocess.run(["git", "-c", "user.name=fixture", "-c", "user.email=fixture@example.org", *args], cwd=cwd,
                   check=True, capture_output=True)


def _upstream_mirror(tmp_path: Path) -> Path:
    """A git repository standing in for github.com/project-ai4science/irllm-framework: ``data/`` laid out as at
    ``aa621e4`` (tests/idrbench_release_support.py), its commit answering to the pinned sha through a replace ref
    (published as the branch ``replace/<sha>``; the clone reads it with ``GIT_REPLACE_REF_BASE``)."""
    from idrbench_release_support import pinned_fixture

    repo = tmp_path / "upstream-irllm-framework"
    pinned_fixture(get_benchmark("idrbench").sample_source, repo / "data")
    (repo / "README.md").write_text("fixture standing in for irllm-framework@aa621e4 (invented data)\n")
    _git("init", "-q", "-b", "main", cwd=repo)
    _git("add", "-A", cwd=repo)
    _git("commit", "-qm", "data/ as at aa621e4", cwd=repo)
    _git("branch", f"replace/{PINNED_IDRBENCH}", "main", cwd=repo)
    return repo


def test_the_readme_idrbench_line_builds_every_pinned_config_from_a_checkout(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    import datasets

    command = _readme_idrbench_command()
    assert command.startswith("git clone https://github.com/project-ai4science/irllm-framework && ")
    mirror = _upstream_mirror(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"url.{mirror}.insteadOf",
           "GIT_CONFIG_VALUE_0": "https://github.com/project-ai4science/irllm-framework",
           "GIT_REPLACE_REF_BASE": "refs/remotes/origin/replace/"}
    done = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    built = work / "build" / "idrbench"
    rows = _build_info(built)["rows"]
    assert sorted(rows) == ["i2r", "i2r_level2", "i3_set1", "i3_set2", "idea_generation", "ipi"]
    assert "idrbench:i3_set2_5195b17: skipped, the source has no data_exp_2_3.json" in done.stdout
    assert len(datasets.load_dataset(str(built), "idea_generation", split="test")) == rows["idea_generation"]["test"]
    # the checkout itself: doctor reads data/ and finds only the counts of this small fixture different
    doctor = subprocess.run(["sciprobe", "doctor", "irllm-framework"], cwd=work, env=env, capture_output=True,
                            text=True, timeout=600)
    assert doctor.returncode == 1 and "(layout irllm-framework@aa621e4 data/), 6 files read" in doctor.stdout
    differences = doctor.stdout.splitlines()[-6:-1]
    assert all(": test has " in line for line in differences), doctor.stdout
