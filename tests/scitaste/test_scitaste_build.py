"""Building SciTaste-Bench from the release layout into the hub layout and reading it back (spec scitaste.md
§1.5, §6.12-§6.15, §8)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.scitaste.source import DISCIPLINES
from sciprobe.benchmarks.scitaste.synthetic import release_records, write_release
from sciprobe.data.build import build_benchmark
from sciprobe.data.cutoffs import parse_cutoff
from sciprobe.core.errors import SciprobeError
from sciprobe.benchmarks.scitaste.scoring.composite import DIMENSIONS

from golden import REPO

TASTE = get_benchmark("scitaste")


@pytest.fixture(scope="module")
def sample_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("scitaste") / "sample"
    build_benchmark(TASTE, TASTE.sample_source, out)
    return out


def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")


def test_bundled_sample_is_the_generator_output(tmp_path: Path) -> None:
    write_release(tmp_path)
    for pool in ("selected", "backup"):
        assert (tmp_path / f"{pool}.jsonl").read_bytes() == (TASTE.sample_source / f"{pool}.jsonl").read_bytes()


def test_sample_builds_every_config(sample_built: Path) -> None:
    assert sorted(datasets.get_dataset_config_names(str(sample_built))) == sorted(TASTE.configs)
    selected = datasets.load_dataset(str(sample_built), "selected", split="test")
    assert selected.num_rows == 24 and selected.features == TASTE.configs["selected"].features()
    assert selected.features["discipline"].names == list(DISCIPLINES)
    assert set(selected["pool"]) == {"selected"}
    backup = datasets.load_dataset(str(sample_built), "backup", split="test")
    assert backup.num_rows == 18 and set(backup["pool"]) == {"backup"}
    assert None in backup["subcategory_id"]  # unclassified physics papers stay in backup
    for name in DISCIPLINES:
        view = datasets.load_dataset(str(sample_built), name, split="test")
        assert view.num_rows == 4
        assert {view.features["discipline"].int2str(d) for d in view["discipline"]} == {name}
    card = (sample_built / "README.md").read_text()
    assert "configs:" in card and "dataset_info:" in card
    assert "snapshot date" in card.lower() and "Reconstructed" in card


def test_record_fields_and_gold(sample_built: Path) -> None:
    row = datasets.load_dataset(str(sample_built), "selected", split="test")[0]
    raw = json.loads((TASTE.sample_source / "selected.jsonl").read_text().splitlines()[0])
    assert row["id"] == row["bibcode"] == raw["bibcode"]
    assert row["gold_total"] == raw["innovation_score"]
    assert row["gold_dims"] == raw["dimension_scores"] and list(row["gold_dims"]) == list(DIMENSIONS)
    assert row["date"] == f"{raw['year']}-01-01" and row["date_precision"] == "year"
    for key in ("openalex_id", "title", "abstract", "year", "subcategory_id", "subcategory_name", "journal_name",
                "journal_tier"):
        assert row[key] == raw[key], key


def test_cutoff_keeps_papers_strictly_after(tmp_path: Path) -> None:
    report = build_benchmark(TASTE, TASTE.sample_source, tmp_path / "out", configs=["selected"],
                             cutoff=parse_cutoff("2010-12-31"), cutoff_source="explicit")
    kept = datasets.load_dataset(str(tmp_path / "out"), "selected", split="test")
    assert all(y >= 2011 for y in kept["year"])
    counts = report.cutoff["counts"]["selected"]
    assert counts["n_items_before"] == 24 and counts["n_items_after"] == kept.num_rows < 24


def test_alternative_names_and_parquet_release(tmp_path: Path) -> None:
    pools = release_records(n_selected=2, n_backup=1, seed=11)
    renamed = []
    for r in pools["selected"]:
        r = dict(r)
        r["gold_total"] = r.pop("innovation_score")
        r.update({"Citation Dynamics" if k == "citation_impact" else k: v
                  for k, v in r.pop("dimension_scores").items()})
        renamed.append(r)
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = tmp_path / "release"
    (src / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(renamed), src / "data" / "selected-00000.parquet")
    build_benchmark(TASTE, src, tmp_path / "out", configs=["selected"])
    rows = datasets.load_dataset(str(tmp_path / "out"), "selected", split="test")
    assert rows.num_rows == 12
    assert rows[0]["gold_dims"]["citation_impact"] == pools["selected"][0]["dimension_scores"]["citation_impact"]


# ---------------------------------------------------------------- bad input: one-line error, nothing written

def _broken_release(tmp_path: Path, edit) -> Path:
    pools = release_records(n_selected=1, n_backup=1)
    edit(pools)
    src = tmp_path / "broken"
    src.mkdir()
    for pool, records in pools.items():
        _write_jsonl(src / f"{pool}.jsonl", records)
    return src


@pytest.mark.parametrize(("edit", "message"), [
    (lambda p: p["selected"][0]["dimension_scores"].pop("disruptiveness"), "missing dimension scores disruptiveness"),
    (lambda p: p["selected"][0].update(innovation_score=104.0), "outside [0, 100]"),
    (lambda p: p["selected"][0]["dimension_scores"].update(journal_impact=-2), "outside [0, 100]"),
    (lambda p: p["selected"][0].pop("innovation_score"), "missing gold composite"),
    (lambda p: p["selected"][0].update(innovation_score="high"), "must be a number"),
    (lambda p: p["selected"][0].update(discipline="geology"), "unknown discipline 'geology'"),
    (lambda p: p["selected"][0].pop("bibcode"), "missing bibcode"),
    (lambda p: p["backup"][0].update(bibcode=p["selected"][0]["bibcode"]), "duplicate bibcode"),
    (lambda p: p["selected"][1].update(year="n.d."), "year must be an integer"),
])
def test_bad_release_gives_one_line_error(tmp_path: Path, edit, message: str) -> None:
    src = _broken_release(tmp_path, edit)
    with pytest.raises(SciprobeError) as excinfo:
        build_benchmark(TASTE, src, tmp_path / "out", configs=["selected"])
    assert message in str(excinfo.value) and "\n" not in str(excinfo.value)
    assert not (tmp_path / "out").exists()


def test_missing_pool_file_and_malformed_json(tmp_path: Path) -> None:
    src = tmp_path / "empty"
    src.mkdir()
    (src / "notes.txt").write_text("x")
    with pytest.raises(SciprobeError, match="missing SciTaste selected file"):
        build_benchmark(TASTE, src, tmp_path / "out", configs=["selected"])
    (src / "selected.jsonl").write_text("{not json}\n")
    with pytest.raises(SciprobeError, match="malformed JSON"):
        build_benchmark(TASTE, src, tmp_path / "out", configs=["selected"])


def test_builder_module_is_thin_and_works(tmp_path: Path) -> None:
    import importlib.util

    path = REPO / "dataset_builders" / "builder.py"
    spec = importlib.util.spec_from_file_location("sciprobe_builders", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    builder = module.BUILDERS["scitaste"](config_name="finance", dataset_name="scitaste", cache_dir=str(tmp_path),
                                          source=str(TASTE.sample_source))
    builder.download_and_prepare()
    ds = builder.as_dataset(split="test")
    assert ds.num_rows == 4 and len(path.read_text().splitlines()) < 30
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_snapshot_date_is_recorded_in_build_info_and_card(tmp_path: Path) -> None:
    build_benchmark(TASTE, TASTE.sample_source, tmp_path / "out", configs=["finance"],
                    options={"snapshot_date": "2025-06-01"})
    info = json.loads((tmp_path / "out" / "sciprobe_build.json").read_text())
    assert info["options"]["snapshot_date"] == "2025-06-01"
    assert "2025-06-01" in (tmp_path / "out" / "README.md").read_text()
