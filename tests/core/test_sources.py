"""Release files from a local folder or a hub dataset repo at a pinned revision (recorded in the build)."""

import json
import shutil

import huggingface_hub
import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.cli.commands import main
from sciprobe.core.errors import SciprobeError
from sciprobe.data.sources import resolve_source

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def fake_hub(tmp_path, monkeypatch):
    """snapshot_download stand-in: a snapshot folder named by its commit, as huggingface_hub lays it out."""
    calls = []

    def snapshot_download(repo_id, repo_type, revision=None):
        calls.append((repo_id, repo_type, revision))
        folder = tmp_path / "hub" / repo_id.replace("/", "--") / "snapshots" / SHA
        if not folder.exists():
            shutil.copytree(get_benchmark("idrbench").sample_source, folder)
        return str(folder)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    return calls


def test_hub_source_records_the_commit(fake_hub, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["build", "idrbench", "--source", "someone/idrbench-release", "--revision", "v1",
                 "--out", "built", "--config", "ipi"]) == 0
    assert fake_hub == [("someone/idrbench-release", "dataset", "v1")]
    info = json.loads((tmp_path / "built" / "sciprobe_build.json").read_text())
    assert info["source_revision"] == SHA
    assert info["source"] == f"hf://datasets/someone/idrbench-release@{SHA}"
    assert SHA in (tmp_path / "built" / "README.md").read_text()


def test_local_folder_and_bad_sources(tmp_path):
    assert resolve_source(tmp_path).path == tmp_path and resolve_source(tmp_path).revision is None
    with pytest.raises(SciprobeError, match="applies to hub sources"):
        resolve_source(tmp_path, revision="main")
    with pytest.raises(SciprobeError, match="no such folder: no such file or folder"):
        resolve_source("no such folder")


def test_offline_hub_source_fails_with_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(SciprobeError, match="not in the local cache") as info:
        resolve_source("someone/not-cached")
    assert "\n" not in str(info.value)
