"""PreScience release variants (issue 25): detection, supplied topic labels, the two-domain archive, and what
``sciprobe doctor`` says about each (fixtures: ``prescience_release_support``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from prescience_release_support import write_paper_parquet, write_seven_task, write_two_domain

from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.prescience.releases import resolve
from sciprobe.cli import main
from sciprobe.core.errors import SciprobeError

NO_TOPICS = "no topic labels in this release; see "


@pytest.mark.parametrize("writer,variant,topics", [(write_paper_parquet, "paper_parquet", False),
                                                   (write_seven_task, "seven_task", True),
                                                   (write_two_domain, "two_domain", True)])
def test_each_release_variant_is_detected(tmp_path: Path, writer, variant: str, topics: bool) -> None:
    release = resolve(writer(tmp_path / "release"))
    assert (release.variant, release.has_topics) == (variant, topics)
    assert ("topic_trends" in release.unavailable) is not topics
    assert (release.folder / "test.parquet").is_file()


def test_supplied_topic_labels_give_the_v1_release_its_topic_tasks(tmp_path: Path, capsys) -> None:
    """Labels as upstream's assign_topics.py writes them, one {corpus_id, topics} line per paper."""
    release = write_paper_parquet(tmp_path / "release")
    sample = get_benchmark("prescience").sample_source
    with open(release / "topic_labels.v5.gpt-5.4.full.jsonl", "w") as fh:
        for split in ("train", "test"):
            for paper in pq.read_table(sample / f"{split}.parquet", columns=["corpus_id", "topics"]).to_pylist():
                if paper["topics"]:
                    fh.write(json.dumps({"corpus_id": paper["corpus_id"], "topics": paper["topics"]}) + "\n")
    out = tmp_path / "built"
    assert main(["build", "prescience", "--source", str(release), "--out", str(out),
                 "--config", "topic_trends"]) == 0
    printed = capsys.readouterr().out
    assert "topic labels supplied by topic_labels.v5.gpt-5.4.full.jsonl" in printed and NO_TOPICS not in printed
    info = json.loads((out / "sciprobe_build.json").read_text())
    seven = tmp_path / "seven"
    assert main(["build", "prescience", "--source", str(write_seven_task(tmp_path / "7task")), "--out", str(seven),
                 "--config", "topic_trends"]) == 0
    assert info["rows"] == json.loads((seven / "sciprobe_build.json").read_text())["rows"]  # same labels, same rows


def test_a_topic_task_asked_for_by_name_without_labels_is_a_one_line_error(tmp_path: Path, capsys) -> None:
    release = write_paper_parquet(tmp_path / "release")
    assert main(["build", "prescience", "--source", str(release), "--out", str(tmp_path / "o"),
                 "--config", "topic_pair_trends"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"prescience:topic_pair_trends: {NO_TOPICS}" in err[0]


def test_a_folder_holding_no_release_is_named(tmp_path: Path) -> None:
    (tmp_path / "empty" / "x").mkdir(parents=True)
    with pytest.raises(SciprobeError, match="holds no PreScience release"):
        resolve(tmp_path / "empty")


def _rewrite_gz(path: Path, change) -> None:
    data = json.loads(gzip.decompress(path.read_bytes()))
    change(data["data"])
    path.write_bytes(gzip.compress(json.dumps(data).encode()))


def test_two_domain_targets_outside_this_benchmarks_windows_are_counted(tmp_path: Path) -> None:
    """The archive's own windows (Aug 2024 - Jul 2026) are not this paper version's: the build says how many of
    its targets the task configs cannot place."""
    archive = write_two_domain(tmp_path / "archive")
    assert "0 of 48 targets fall outside them" in " ".join(resolve(archive).notes)

    def move_a_target_to_2026(papers: list[dict]) -> None:
        next(p for p in papers if "target" in p["roles"])["date"] = "2026-03-02"
    _rewrite_gz(archive / "prescience-ai" / "test" / "all_papers.json.gz", move_a_target_to_2026)
    assert "1 of 48 targets fall outside them" in " ".join(resolve(archive).notes)


def test_two_domain_papers_are_the_archive_records(tmp_path: Path) -> None:
    archive = write_two_domain(tmp_path / "archive")
    release = resolve(archive)
    built = pq.read_table(release.folder / "test.parquet").to_pylist()
    raw = json.loads(gzip.decompress((archive / "prescience-ai" / "test" / "all_papers.json.gz").read_bytes()))
    assert [p["corpus_id"] for p in built] == [p["corpus_id"] for p in raw["data"]]
    assert all(b["topics"] == r.get("topics") for b, r in zip(built, raw["data"]))
    assert resolve(archive, {"domain": "prescience-quantum"}).has_topics is False
    with pytest.raises(SciprobeError, match="domain 'cs' is not in"):
        resolve(archive, {"domain": "cs"})




def test_doctor_names_each_planted_difference_of_a_two_domain_archive(tmp_path: Path, capsys) -> None:
    archive = write_two_domain(tmp_path / "archive")
    assert main(["doctor", str(archive), "--benchmark", "prescience"]) == 1  # the fixture is smaller than the paper
    clean = set(capsys.readouterr().out.splitlines())
    assert any("layout two-domain archive" in line for line in clean)

    def plant(papers: list[dict]) -> None:
        papers[0]["date_published"] = papers[0].pop("date")  # renamed column
        papers[1]["title"] = 17  # wrong type
    _rewrite_gz(archive / "prescience-ai" / "test" / "all_papers.json.gz", plant)
    (archive / "prescience-ai" / "train" / "all_papers.json.gz").unlink()  # missing file
    assert main(["doctor", str(archive), "--benchmark", "prescience"]) == 1
    new = [line for line in capsys.readouterr().out.splitlines() if line not in clean]
    wanted = ["prescience-ai/train/all_papers.json.gz: missing", "column 'date' (str) missing in 1 of",
              "column 'date_published' is not declared", "column 'title' is int in 1 of"]
    for text in wanted:
        assert [line for line in new if text in line], (text, new)


def test_doctor_notes_the_topic_tasks_of_the_v1_release_without_counting_them(tmp_path: Path, capsys) -> None:
    release = write_paper_parquet(tmp_path / "release")
    main(["doctor", str(release), "--benchmark", "prescience"])
    out = capsys.readouterr().out
    assert f"prescience:topic_trends: {NO_TOPICS}" in out
    assert "topic_trends test:" not in out  # not counted: the release cannot give it
    assert "prescience:papers test: 132 rows" in out  # rows, not Arrow tables
