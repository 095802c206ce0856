"""Building IDRBench into the hub layout and reading it back with plain `load_dataset`."""

import json
import shutil
from pathlib import Path

import datasets
import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.data.build import build_benchmark
from sciprobe.data.cutoffs import parse_cutoff
from sciprobe.core.errors import SciprobeError

IDR = get_benchmark("idrbench")


def test_release_counts_and_features(idrbench_release_built):
    expected = {"ipi": (1120, 120), "i3_set1": (1120, 120), "i3_set2": (1120, 120), "idea_generation": (300, 120)}
    # the pinned layout: every config but the historical variant (data_exp_2_3.json is not a file of the pin)
    assert datasets.get_dataset_config_names(str(idrbench_release_built)) == sorted(set(IDR.configs)
                                                                                    - {"i3_set2_5195b17"})
    assert datasets.load_dataset(str(idrbench_release_built), "i2r_level2", split="test").num_rows == 188
    for config, (rows, positives) in expected.items():
        dd = datasets.load_dataset(str(idrbench_release_built), config)
        assert dd["test"].num_rows == rows
        assert sum(dd["test"]["label"]) == positives
        assert dd["test"].features == IDR.configs[config].features()
        assert dd["test"].features["label"].names == ["no", "yes"]
    i2r = datasets.load_dataset(str(idrbench_release_built), "i2r", split="test")
    assert i2r.num_rows == 253
    assert len(set(i2r["pa_id"])) == 120
    assert sorted(set(i2r["n_players"])) == [30, 31]


def test_release_quirks_are_normalised(idrbench_release_built):
    ipi = datasets.load_dataset(str(idrbench_release_built), "ipi", split="test").to_pandas().set_index("id")
    assert "2412.20620" in ipi.index  # corrupted 4-digit suffix, zero-padded
    assert ipi.loc["2412.11084", "date"] == "2024-12-01" and ipi.loc["2412.11084", "date_precision"] == "month"
    assert ipi.loc["2503.02738", "date"] == "2025-03-04" and ipi.loc["2503.02738", "date_precision"] == "day"
    assert not ipi["title"].str.contains("\n").any()
    assert int(ipi["is_fewshot_example"].sum()) == 5
    set2 = datasets.load_dataset(str(idrbench_release_built), "i3_set2", split="test")
    positive_ids = [r["id"] for r in set2 if r["label"] == 1]
    assert all(len(i.split(".")[1]) == 5 for i in positive_ids)  # float-stored ids zero-padded
    set1 = datasets.load_dataset(str(idrbench_release_built), "i3_set1")
    row = next(r for r in set1["test"] if r["id"] == "2411.14752")
    assert [p["id"] for p in row["side_c"]] == ["b5", ""]  # two papers, one id in the release
    fewshot = set1["fewshot"]
    assert [r["label"] for r in fewshot] == [1, 1, 0]
    assert fewshot[2]["id"] == "fewshot-neg-d21-554+neg-d21-518"


def test_cutoff_keeps_rows_strictly_after(idrbench_release, tmp_path):
    report = build_benchmark(IDR, idrbench_release, tmp_path / "out", configs=["ipi"],
                             cutoff=parse_cutoff("2025-01"), cutoff_source="explicit")
    ipi = datasets.load_dataset(str(tmp_path / "out"), "ipi", split="test")
    assert all(d > "2025-01-31" for d in ipi["date"])
    assert report.cutoff["counts"]["ipi"]["n_items_before"] == 1120
    assert report.cutoff["counts"]["ipi"]["n_items_after"] == ipi.num_rows < 1000
    info = json.loads((tmp_path / "out" / "sciprobe_build.json").read_text())
    assert info["cutoff"]["cutoff"] == "2025-01-31"


def test_raw_whitespace_option_keeps_release_text(idrbench_release, tmp_path):
    build_benchmark(IDR, idrbench_release, tmp_path / "raw", configs=["ipi"], options={"normalize_whitespace": False})
    ipi = datasets.load_dataset(str(tmp_path / "raw"), "ipi", split="test")
    assert any("\n" in a for a in ipi["abstract"])


def test_sample_builds_every_config(tmp_path):
    report = build_benchmark(IDR, IDR.sample_source, tmp_path / "sample")
    # the sample holds the files of the pinned layout's scored configs; the others are skipped, each named
    assert report.missing_files == {"i3_set2_5195b17": ["data_exp_2_3.json"], "i2r_level2": ["data_exp_3_2.json"]}
    for config in report.rows:
        dd = datasets.load_dataset(str(tmp_path / "sample"), config)
        assert dd["test"].num_rows > 0
        assert dd["test"].features == IDR.configs[config].features()
    card = (tmp_path / "sample" / "README.md").read_text()
    assert "configs:" in card and "dataset_info:" in card and "Whitespace normalisation" in card


def test_the_sample_names_no_real_arxiv_paper(tmp_path):
    """Issue 23.12: the bundled sample gave invented text real arXiv ids. Every arXiv-shaped id in it (strings and
    JSON floats, zero-padded as the builder reads them) has a number of 90000 or more, which arXiv never issued in
    those months; the few-shot examples are found through their stand-ins."""
    import re

    from sciprobe.benchmarks.idrbench.source import IPI_FEWSHOT_IDS, normalize_id, sample_stand_in

    ids = set()
    for file in IDR.sample_source.glob("*.json"):
        text = file.read_text(encoding="utf-8")
        ids |= {normalize_id(token) for token in re.findall(r"(?<![\d.])\d{4}\.\d{1,5}(?!\d)", text)}
    assert len(ids) > 40
    real_looking = sorted(i for i in ids if int(i.split(".")[1]) < 90000)
    assert not real_looking
    build_benchmark(IDR, IDR.sample_source, tmp_path / "sample", configs=["ipi"])
    shots = datasets.load_dataset(str(tmp_path / "sample"), "ipi", split="fewshot")
    assert shots["id"] == [sample_stand_in(i) for i in IPI_FEWSHOT_IDS]


# ---------------------------------------------------------------- bad input: one-line error, nothing written

def _copy_sample(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(IDR.sample_source, src)
    return src


@pytest.mark.parametrize("damage, message", [
    (lambda src: (src / "data_exp_1.json").unlink(), "idrbench:ipi needs data_exp_1.json"),
    (lambda src: (src / "data_exp_1.json").write_text("[{\"id\": 1,"), "malformed JSON"),
    (lambda src: (src / "data_exp_1.json").write_text("{\"id\": 1}"), "must hold a JSON list"),
    (lambda src: (src / "data_exp_1.json").write_text("[{\"id\": \"1\"}]"), "missing field 'title'"),
    (lambda src: (src / "data_exp_1.json").write_text(
        '[{"id": "1", "title": "t", "abstract": "a", "y_true": "yes"}]'), "y_true must be true/false"),
])
def test_broken_source_fails_cleanly(tmp_path, damage, message):
    src = _copy_sample(tmp_path)
    damage(src)
    with pytest.raises(SciprobeError, match=message) as info:
        build_benchmark(IDR, src, tmp_path / "out", configs=["ipi"])
    assert "\n" not in str(info.value)
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["src"]  # no staging folder left behind


def test_cutoff_that_leaves_nothing(tmp_path):
    with pytest.raises(SciprobeError, match="leaves no items"):
        build_benchmark(IDR, IDR.sample_source, tmp_path / "out", cutoff=parse_cutoff("2030-01-01"))
    assert not (tmp_path / "out").exists()


def test_unknown_config_and_existing_output(tmp_path):
    with pytest.raises(SciprobeError, match="unknown config 'ipx'"):
        build_benchmark(IDR, IDR.sample_source, tmp_path / "out", configs=["ipx"])
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    with pytest.raises(SciprobeError, match="exists"):
        build_benchmark(IDR, IDR.sample_source, tmp_path / "out")
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"
