"""`sciprobe doctor SOURCE` (issue 25): the release files checked against the declared layout, columns, types and
paper counts without building; one line per difference, exit 1 when there is any. Fixtures: the bundled invented
sample laid out as irllm-framework@aa621e4 (tests/idrbench_release_support.py), and the reference files in that
layout when ../shared is there."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from idrbench_release_support import PINNED_FILES, pinned_fixture, pinned_layout, write_release_json
from sciprobe.core.registry import get_benchmark
from sciprobe.cli import main
from sciprobe.data.doctor import column_differences, doctor

SHARED = Path(__import__("os").environ.get("SCIPROBE_SHARED_DIR") or Path(__file__).resolve().parents[3] / "shared")


@pytest.fixture
def small(tmp_path: Path) -> Path:
    return pinned_fixture(get_benchmark("idrbench").sample_source, tmp_path / "data")


@pytest.fixture
def reference(tmp_path: Path) -> Path:
    if not (SHARED / "data" / "idrbench" / "data" / "data_exp_1.json").is_file():
        pytest.skip("IDRBench reference data not available in ../shared/data/idrbench")
    return pinned_layout(SHARED / "data" / "idrbench", tmp_path / "reference")


def test_the_small_fixture_has_the_pinned_files_and_schema_and_differs_only_in_counts(small: Path) -> None:
    report = doctor(get_benchmark("idrbench"), small)
    assert sorted(report.files_read) == sorted(PINNED_FILES)
    assert report.layout.startswith("irllm-framework@aa621e4")
    assert {d.kind for d in report.differences} == {"count"}
    assert {c.config for c in report.counts} == {"ipi", "i3_set1", "i2r", "i2r_level2", "idea_generation"}


def test_a_git_checkout_is_read_under_its_data_folder(small: Path, tmp_path: Path) -> None:
    checkout = tmp_path / "irllm-framework"
    shutil.copytree(small, checkout / "data")
    (checkout / "README.md").write_text("fixture\n")
    report = doctor(get_benchmark("idrbench"), checkout)
    assert report.folder == checkout / "data" and sorted(report.files_read) == sorted(PINNED_FILES)


def test_doctor_names_each_planted_difference_in_one_line(small: Path, capsys) -> None:
    (small / "data_exp_4_1.json").unlink()                                   # missing file
    ipi = json.loads((small / "data_exp_1.json").read_text())
    write_release_json(small / "data_exp_1.json",
                       [{("name" if k == "title" else k): v for k, v in r.items()} for r in ipi])  # renamed column
    level2 = json.loads((small / "data_exp_3_2.json").read_text())
    level2[1]["start_id"] = 7                                                 # wrong type
    write_release_json(small / "data_exp_3_2.json", level2)
    level1 = json.loads((small / "data_exp_3_1.json").read_text())
    write_release_json(small / "data_exp_3_1.json", level1[:-1])             # short count
    (small / "notes.txt").write_text("x")                                     # extra file
    assert main(["doctor", str(small)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert "data_exp_4_1.json: missing (read for idea_generation)" in lines
    assert any(line.startswith("data_exp_1.json: column 'title' (str) missing in 16 of 16 records") for line in lines)
    assert any(line.startswith("data_exp_1.json: column 'name' is not declared") for line in lines)
    assert any(line.startswith("data_exp_3_2.json: column 'start_id' is int in 1 of 3 records (declared str; "
                               "first: record 1, 7)") for line in lines)
    assert any(line.startswith(f"idrbench:i2r: test has {len(level1) - 1} rows, declared 253") for line in lines)
    assert "notes.txt: not a file of layout irllm-framework@aa621e4 data/" in lines


def test_a_column_check_names_type_and_missing_fields_once_each() -> None:
    records = [{"id": "a", "n": 1}, {"id": 2.5}, {"id": None, "n": "x", "extra": True}]
    lines = [d.line() for d in column_differences(records, {"id": "str|float", "n": "int|absent"}, "f.json")]
    assert lines == ["f.json: column 'id' is null in 1 of 3 records (declared str|float; first: record 2, None)",
                     "f.json: column 'n' is str in 1 of 3 records (declared int|absent; first: record 2, 'x')",
                     "f.json: column 'extra' is not declared (1 of 3 records have it)"]


def test_doctor_without_a_matching_benchmark_is_one_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "x.json").write_text("[]")
    assert main(["doctor", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().endswith("pass --benchmark NAME")


def test_the_reference_release_in_the_pinned_layout_matches_every_declared_count(reference: Path, capsys) -> None:
    """253 Level-1 records in one data_exp_3_1.json: 253 I2R rows; every declared count holds."""
    assert main(["doctor", str(reference), "--benchmark", "idrbench"]) == 0
    out = capsys.readouterr().out
    assert "idrbench:i2r test: 253 rows, declared 253" in out and out.rstrip().endswith("no differences")


def test_build_skips_a_missing_pinned_file_unless_its_config_is_asked_for(small: Path, tmp_path: Path,
                                                                         capsys) -> None:
    (small / "data_exp_3_2.json").unlink()
    out = tmp_path / "build"
    assert main(["build", "idrbench", "--source", str(small), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "idrbench:i2r_level2: skipped, the source has no data_exp_3_2.json" in captured.out
    assert "warning: idrbench:i2r test has 3 rows, declared 253" in captured.err
    card = (out / "README.md").read_text()
    assert "## Declared counts" in card and "| `i2r` | test | 253 | 3 | **no** |" in card
    info = json.loads((out / "sciprobe_build.json").read_text())
    assert info["paper_counts"]["idea_generation"]["found"] == 15 and info["missing_files"] == {
        "i3_set2_5195b17": ["data_exp_2_3.json"], "i2r_level2": ["data_exp_3_2.json"]}
    assert main(["build", "idrbench", "--source", str(small), "--out", str(tmp_path / "b2"),
                 "--config", "i2r_level2"]) == 2
    assert capsys.readouterr().err.strip() == (f"error: idrbench:i2r_level2 needs data_exp_3_2.json, which {small} "
                                               "does not hold")


def test_a_checkout_of_upstream_at_another_commit_is_named(small: Path, tmp_path: Path) -> None:
    import subprocess

    checkout = tmp_path / "irllm-framework"
    shutil.copytree(small, checkout / "data")
    for args in (["init", "-q"], ["remote", "add", "origin", "https://github.com/project-ai4science/irllm-framework"],
                 ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=checkout, check=True, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True, text=True).stdout.strip()
    lines = [d.line() for d in doctor(get_benchmark("idrbench"), checkout).differences if d.kind == "revision"]
    assert lines == [f"git checkout: at {head[:12]}, the declared release is at aa621e46dc5f "
                     "(project-ai4science/irllm-framework)"]
