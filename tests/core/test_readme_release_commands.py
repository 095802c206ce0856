"""The README's "Real data, one command each" commands, run exactly as printed (issue 25): every ``sciprobe ...``
cell of the table is split like a shell would and given to the CLI, in a scratch folder, with the hub answered
offline from fixtures in the exact released layouts (``prescience_release_support`` for the three PreScience
releases; the bundled samples for SGI-Bench and SciTaste). IDRBench's command starts with ``git clone`` and is
served by its own checkout fixture."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
from golden import REPO
from prescience_release_support import WRITERS

from sciprobe.core.registry import get_benchmark
from sciprobe.cli import main

NO_TOPICS = "no topic labels in this release; see "


def readme_commands() -> dict[str, str]:
    """Row label -> the one command of that row (only rows whose command is a single ``sciprobe`` call)."""
    text = (REPO / "README.md").read_text("utf-8")
    section = text.split("## Real data, one command each", 1)[1].split("\n## ", 1)[0]
    commands = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        command = re.fullmatch(r"`(sciprobe [^`]+)`", cells[-1]) if len(cells) >= 4 else None
        if command:
            commands[cells[0]] = command.group(1)
    return commands


def _sha(repo_id: str) -> str:
    return format(sum(map(ord, repo_id)), "x").rjust(40, "0")


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import huggingface_hub

    calls: list[str] = []

    def snapshot_download(repo_id: str, repo_type: str, revision: str | None = None, **_: object) -> str:
        assert repo_type == "dataset"
        calls.append(repo_id)
        folder = tmp_path / "hub" / repo_id.replace("/", "--") / "snapshots" / _sha(repo_id)
        if not folder.exists():
            if repo_id in WRITERS:
                WRITERS[repo_id](folder)
            elif repo_id.startswith("InternScience/"):
                shutil.copytree(get_benchmark("sgibench").sample_source / repo_id.split("/")[1], folder)
            elif repo_id == "skylenage/SciTaste-benchmark":
                shutil.copytree(get_benchmark("scitaste").sample_source, folder)
            else:
                raise AssertionError(f"the README names a hub dataset with no fixture: {repo_id}")
        return str(folder)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    monkeypatch.chdir(tmp_path)
    return calls


def _run(command: str, capsys: pytest.CaptureFixture) -> str:
    """The command's printed lines, stdout then stderr (warnings)."""
    argv = shlex.split(command)
    assert argv[0] == "sciprobe"
    assert main(argv[1:]) == 0, command
    printed = capsys.readouterr()
    return printed.out + printed.err


def _out_dir(command: str) -> Path:
    argv = shlex.split(command)
    return Path(argv[argv.index("--out") + 1])


def test_every_benchmark_but_idrbench_has_a_sciprobe_command_in_the_table() -> None:
    labels = readme_commands()
    for label in ("SGI-Bench", "SciTaste-Bench", "PreScience (v1)", "PreScience (7-task)", "PreScience (two-domain)"):
        assert label in labels, label


def test_prescience_v1_says_it_has_no_topic_labels(hub, capsys) -> None:
    command = readme_commands()["PreScience (v1)"]
    out = _run(command, capsys)
    folder = _out_dir(command)
    info = json.loads((folder / "sciprobe_build.json").read_text())
    assert hub == ["allenai/prescience"] and info["source"] == f"hf://datasets/allenai/prescience@{_sha(hub[0])}"
    assert info["release"]["variant"] == "paper_parquet"
    for config in ("topic_trends", "topic_pair_trends"):
        assert [line for line in out.splitlines() if f"prescience:{config}: {NO_TOPICS}" in line]
        assert f"{config}: {NO_TOPICS}" in (folder / "README.md").read_text()
        assert not (folder / config).exists() and config not in info["rows"]
    assert "topic_labels*.jsonl" in out  # how to supply them
    assert {"collaborator_prediction", "contribution_generation", "author_disambiguation"} <= set(info["rows"])
    # evaluating a topic task on this build says why it is not there
    assert main(["evaluate", "prescience:topic_trends", "--data", str(folder), "--model", "local/smollm2",
                 "--dry-run"]) == 2
    assert f"has no config 'topic_trends': {NO_TOPICS}" in capsys.readouterr().err


def test_prescience_seven_task_release_builds_the_topic_tasks(hub, capsys) -> None:
    import datasets

    command = readme_commands()["PreScience (7-task)"]
    out = _run(command, capsys)
    folder = _out_dir(command)
    info = json.loads((folder / "sciprobe_build.json").read_text())
    assert info["release"]["variant"] == "seven_task" and NO_TOPICS not in out
    topics = datasets.load_dataset(str(folder), "topic_trends", split="test")
    assert len(topics) == info["rows"]["topic_trends"]["test"] and sum(topics["forecast_count"]) > 0


def test_prescience_two_domain_archive_reads_the_ai_domain(hub, capsys) -> None:
    import pyarrow.parquet as pq

    command = readme_commands()["PreScience (two-domain)"]
    out = _run(command, capsys)
    folder = _out_dir(command)
    info = json.loads((folder / "sciprobe_build.json").read_text())
    assert info["release"]["variant"] == "two_domain"
    assert "domain prescience-ai (of prescience-ai, prescience-quantum)" in out
    assert "author_disambiguation" in info["release"]["unavailable"] and "author_disambiguation" not in info["rows"]
    sample = get_benchmark("prescience").sample_source
    for split in ("train", "test"):  # every paper of the archive, and only those
        assert info["rows"]["papers"][split] == pq.read_metadata(sample / f"{split}.parquet").num_rows
    assert info["rows"]["topic_trends"]["test"] > 0  # PreScience-AI targets carry topics


def test_sgibench_and_scitaste_commands_run_as_printed(hub, capsys) -> None:
    commands = readme_commands()
    out = _run(commands["SGI-Bench"], capsys)
    info = json.loads((_out_dir(commands["SGI-Bench"]) / "sciprobe_build.json").read_text())
    assert set(json.loads(info["source_revision"])) == {f"InternScience/{n}" for n in
                                                        ("SGI-DeepResearch", "SGI-IdeaGeneration",
                                                         "SGI-DryExperiment", "SGI-WetExperiment", "SGI-Reasoning")}
    assert "experimental_reasoning: test 3" in out
    assert "warning: sgibench:wet_experiment test has 2 rows, declared 68" in out
    card = (_out_dir(commands["SGI-Bench"]) / "README.md").read_text()
    assert "## Declared counts" in card and "| `deep_research` | test | 318 | 3 | **no** |" in card
    _run(commands["SciTaste-Bench"], capsys)
    assert (_out_dir(commands["SciTaste-Bench"]) / "sciprobe_build.json").is_file()
