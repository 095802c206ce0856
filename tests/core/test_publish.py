"""``sciprobe publish --dry-run``: the staged folders are exactly what the Hub would get and they load with the
libraries that read them (datasets, evaluate, the Space's app.py); a real run uploads through the api object."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.interop.hub_api import LocalFolderApi
from sciprobe.interop.publish import metric_names, publish, read_front_matter

from golden import REPO


def test_dataset_dry_run_loads_with_datasets(tmp_path):
    import datasets

    [artifact] = publish("dataset", "sciprobe/idrbench", dry_run=True, out=tmp_path / "ds", sample=True)
    assert artifact.repo_type == "dataset" and artifact.folder == tmp_path / "ds"
    assert (tmp_path / "ds" / "README.md").is_file() and list((tmp_path / "ds").rglob("*.parquet"))
    meta = read_front_matter(tmp_path / "ds" / "README.md")
    assert {c["config_name"] for c in meta["configs"]} >= {"ipi", "i2r"}
    ipi = datasets.load_dataset(str(tmp_path / "ds"), "ipi", split="test")
    assert len(ipi) == 16 and "id" in ipi.column_names


def _offline_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "HF_HOME": str(tmp_path / "hf_home"), "HF_EVALUATE_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1", **extra}


def test_metric_dry_run_loads_with_evaluate(tmp_path):
    """Each staged metric Space loads with ``evaluate.load(folder)`` (in a fresh interpreter: evaluate caches
    imported modules per process)."""
    staged = {}
    for name in ("idr_classification", "ranking"):
        assert name in metric_names()
        [artifact] = publish("metric", f"sciprobe/{name}", dry_run=True, out=tmp_path / name)
        assert artifact.repo_type == "space" and artifact.folder == tmp_path / name
        source = REPO / "metrics" / name
        assert sorted(p.name for p in artifact.folder.iterdir()) == sorted(
            [*(p.name for p in source.iterdir() if p.name != "__pycache__"), "sciprobe"])
        meta = read_front_matter(artifact.folder / "README.md")
        assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py"
        staged[name] = artifact.folder
    code = (
        "import sys, evaluate\n"
        "clf = evaluate.load(sys.argv[1]); rank = evaluate.load(sys.argv[2])\n"
        "out = clf.compute(predictions=['yes', 'no', 'yes'], references=['yes', 'no', 'no'])\n"
        "assert 0 <= out['macro_f1'] <= 1, out\n"
        "print(clf.name, rank.name)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(staged["idr_classification"]), str(staged["ranking"])],
                          env=_offline_env(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["idr_classification", "ranking"]


def test_a_staged_metric_space_says_which_sciprobe_it_runs(tmp_path):
    """Issue 23.12: requirements.txt listed a bare `sciprobe`, which pip would take from wherever a package of that
    name is. The staged Space carries its copy of sciprobe, and its requirements and card name it."""
    from sciprobe import __version__

    [artifact] = publish("metric", "sciprobe/idr_classification", dry_run=True, out=tmp_path / "m")
    folder = artifact.folder
    requirements = (folder / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert "sciprobe" not in [line.strip().lower() for line in requirements]
    assert requirements[0].startswith(f"# sciprobe is not installed from a package registry: ./sciprobe is "
                                      f"sciprobe {__version__}")
    assert "evaluate==0.4.6" in requirements and any(line.startswith("scikit-learn==") for line in requirements)
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "## Where `sciprobe` comes from" in readme and f"sciprobe {__version__}" in readme
    digest = readme.split("files sha256 ")[1][:64]
    assert digest in requirements[0] and len(digest) == 64
    assert (folder / "sciprobe" / "scoring" / "classification.py").is_file()
    # the app's folder is first on sys.path when a Space runs `python app.py`: the copy is the sciprobe imported
    code = "import sciprobe, sciprobe.scoring.classification; print(sciprobe.__file__)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=folder, env=_offline_env(tmp_path), capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().startswith(str(folder / "sciprobe"))


def test_metric_repo_name_must_be_a_metric(tmp_path):
    with pytest.raises(SciprobeError, match="unknown metric"):
        publish("metric", "sciprobe/not-a-metric", dry_run=True, out=tmp_path / "m")


def test_space_dry_run_imports_and_builds(tmp_path):
    [artifact] = publish("space", "sciprobe/sciprobe-leaderboard", dry_run=True, out=tmp_path / "space")
    folder = artifact.folder
    meta = read_front_matter(folder / "README.md")
    assert meta["sdk"] == "gradio" and str(meta["sdk_version"]) == "6.31.0"
    assert meta["app_file"] == "app.py" and meta["hf_oauth"] is True
    assert (folder / "requirements.txt").is_file() and (folder / "sciprobe" / "leaderboard" / "app.py").is_file()
    assert not list(folder.rglob("__pycache__"))
    # the staged Space imports its own copy of sciprobe and builds the UI from the registered benchmarks
    code = ("import app, sciprobe, gradio as gr; assert isinstance(app.demo, gr.Blocks); "
            "print(sciprobe.__file__); print(sorted(app.demo.sciprobe_service.benchmarks))")
    env = {**os.environ, "SCIPROBE_LEADERBOARD_DIR": str(tmp_path / "store"), "SCIPROBE_LEADERBOARD_AUTH": "local",
           "PYTHONPATH": str(folder), "SCIPROBE_HOME": str(tmp_path / "home")}
    proc = subprocess.run([sys.executable, "-c", code], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert lines[-2].startswith(str(folder / "sciprobe"))
    from sciprobe.core.registry import benchmark_names

    assert lines[-1] == str(sorted(benchmark_names()))


def test_dry_run_needs_out():
    with pytest.raises(SciprobeError, match="--out"):
        publish("space", "sciprobe/x", dry_run=True)


def test_unknown_kind(tmp_path):
    with pytest.raises(SciprobeError, match="unknown publish kind"):
        publish("model", "sciprobe/x", out=tmp_path)


def test_upload_goes_through_the_api(tmp_path):
    api = LocalFolderApi(tmp_path / "hub")
    artifacts = publish("all", "sciprobe", dry_run=False, api=api, sample=True)
    kinds = {(a.kind, a.repo_id, a.repo_type) for a in artifacts}
    assert ("dataset", "sciprobe/idrbench", "dataset") in kinds
    assert ("space", "sciprobe/sciprobe-leaderboard", "space") in kinds
    assert {("metric", f"sciprobe/{m}", "space") for m in metric_names()} <= kinds
    assert (tmp_path / "hub" / "datasets" / "sciprobe" / "idrbench" / "README.md").is_file()
    assert (tmp_path / "hub" / "spaces" / "sciprobe" / "sciprobe-leaderboard" / "app.py").is_file()
    assert (tmp_path / "hub" / "spaces" / "sciprobe" / "idr_classification" / "idr_classification.py").is_file()


def test_publish_command_handler(tmp_path, capsys):
    """The handler `sciprobe publish` will call (wired in cli.py via sciprobe.leaderboard.commands)."""
    import argparse

    from sciprobe.leaderboard.commands import cmd_publish, configure_publish_parser

    parser = argparse.ArgumentParser()
    configure_publish_parser(parser)
    args = parser.parse_args(["space", "sciprobe/sciprobe-leaderboard", "--dry-run", "--out", str(tmp_path / "s")])
    assert cmd_publish(args) == 0
    assert "staged space" in capsys.readouterr().out and (tmp_path / "s" / "app.py").is_file()
