"""SGI-Bench's declared release (issue 25): the hub layout the pinned step_* scripts load, the paper's counts, and
what ``sciprobe doctor`` names when a field is renamed or retyped."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sciprobe.core.registry import get_benchmark
from sciprobe.cli import main


def _sample_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "sgi"
    shutil.copytree(get_benchmark("sgibench").sample_source, folder, ignore=shutil.ignore_patterns("README.md"))
    return folder


def test_the_paper_counts_are_declared_per_config() -> None:
    counts = {name: spec.paper_count.rows for name, spec in get_benchmark("sgibench").configs.items()}
    assert counts == {"deep_research": 318, "idea_generation": 315, "dry_experiment": 271, "wet_experiment": 68,
                      "experimental_reasoning": 291}


def test_doctor_finds_the_sample_in_the_hub_schema_and_short_of_the_paper(tmp_path: Path, capsys) -> None:
    assert main(["doctor", str(_sample_copy(tmp_path)), "--benchmark", "sgibench"]) == 1
    differences = capsys.readouterr().out.splitlines()
    assert not [line for line in differences if "column" in line]  # fields and types as the scripts read them
    assert [line for line in differences if line.startswith("sgibench:wet_experiment: test has 2 rows, declared 68")]


def test_doctor_names_a_renamed_wet_field_and_a_retyped_reasoning_answer(tmp_path: Path, capsys) -> None:
    folder = _sample_copy(tmp_path)
    wet = next((folder / "SGI-WetExperiment" / "data").glob("*.parquet"))
    pq.write_table(pq.read_table(wet).rename_columns(
        ["protocol" if n == "answer" else n for n in pq.read_schema(wet).names]), wet)
    reasoning = next((folder / "SGI-Reasoning" / "data").glob("*.parquet"))
    table = pq.read_table(reasoning)
    index = table.schema.get_field_index("answer")
    pq.write_table(table.set_column(index, "answer", pa.array(["B"] * table.num_rows)), reasoning)
    assert main(["doctor", str(folder), "--benchmark", "sgibench"]) == 1
    out = capsys.readouterr().out
    assert "column 'answer' (str) missing in 2 of 2 records" in out and "column 'protocol' is not declared" in out
    assert "column 'answer' is str in 3 of 3 records (declared int" in out
