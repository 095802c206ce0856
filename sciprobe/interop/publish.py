"""``sciprobe publish``: stage (and optionally upload) the Hub artifacts of sciprobe.

Kinds and what is staged — with ``dry_run=True`` (the default) the exact folder that would be uploaded is written
to ``out`` and nothing leaves the machine:

* ``dataset`` — the hub layout of a benchmark (:func:`sciprobe.data.build.build_benchmark`: Parquet shards + README
  with ``configs:``/``dataset_info:``), from ``source`` (the benchmark's release files). Repo type ``dataset``;
  the benchmark is ``benchmark=`` or the repo name when that is a registered benchmark. A sample is never passed
  off as the benchmark: building from the bundled synthetic sample is refused unless ``sample=True``
  (``--sample``), and then the card's first line says it is a sample.
* ``metric`` — ``metrics/<name>/`` as an evaluate metric Space (module, card with Space front matter, app,
  requirements) plus a copy of the ``sciprobe`` package next to ``app.py``, named in the requirements and the card
  (version, commit, files digest) instead of a bare ``sciprobe`` requirement. ``evaluate.load`` finds ``<name>.py``
  by the repo's name, so the repo name must be the metric name.
* ``space`` — ``leaderboard_space/`` (README front matter: sdk gradio 6.31.0, app_file app.py, hf_oauth) plus a
  copy of the ``sciprobe`` package next to ``app.py``, so the Space runs without installing the heavy stack.
* ``all`` — every one of the above; ``repo_id`` is then the owner namespace and ``out`` gets
  ``datasets/<bench>/`` (``benchmark`` from ``source``, or with ``sample=True`` every benchmark's sample),
  ``metrics/<name>/`` and ``space/``.

No staged file names a local path (the build records its source as ``folder:<name>`` / ``sample:<bench>``).

Uploads go through :class:`sciprobe.interop.hub_api.HubApi` (``upload_folder``): the real Hub by default,
a :class:`~sciprobe.interop.hub_api.LocalFolderApi` in tests.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.interop.hub_api import HubApi, check_repo_id

KINDS = ("dataset", "metric", "space", "all")
REPO_ROOT = Path(__file__).resolve().parents[2]
SPACE_NAME = "sciprobe-leaderboard"
REQUIRED_SPACE_META = {"sdk": "gradio", "sdk_version": "6.31.0", "app_file": "app.py", "hf_oauth": True}
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "*.egg-info", ".DS_Store")


@dataclass(frozen=True)
class Artifact:
    """One staged folder and where it would go."""

    kind: str
    repo_id: str
    repo_type: str
    folder: Path
    benchmark: str | None = None  # the benchmark of a dataset artifact

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "repo_id": self.repo_id, "repo_type": self.repo_type, "folder": str(self.folder)}


def metric_names() -> list[str]:
    """Complete metric Space folders in the repository: ``metrics/<name>/`` with ``<name>.py``, ``README.md``,
    ``app.py`` and ``requirements.txt`` (folders still being written are skipped)."""
    root = REPO_ROOT / "metrics"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir()
                  if all((p / f).is_file() for f in (f"{p.name}.py", "README.md", "app.py", "requirements.txt")))


def read_front_matter(readme: Path) -> dict[str, Any]:
    import yaml

    if not readme.is_file():
        raise SciprobeError(f"{readme} is missing")
    text = readme.read_text("utf-8")
    if not text.startswith("---\n"):
        raise SciprobeError(f"{readme} has no YAML front matter")
    return yaml.safe_load(text[4:text.index("\n---", 4)]) or {}


def _fresh(folder: Path) -> Path:
    if folder.exists():
        shutil.rmtree(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    return folder


def stage_dataset(out: Path, benchmark: str, source: Path | None = None, *, sample: bool = False) -> Path:
    """Build ``benchmark`` from its release files ``source`` into ``out``; from its bundled sample only when
    ``sample`` (the card then opens by saying it is a synthetic sample)."""
    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.build import build_benchmark, is_sample_source

    bench = get_benchmark(benchmark)
    from sciprobe.data.sources import local_folder

    src = local_folder(source, "--source") if source else bench.sample_source
    if src is None:
        raise SciprobeError(f"{benchmark} has no bundled sample; pass --source RELEASE_DIR")
    if is_sample_source(bench, src) and not sample:
        raise SciprobeError(f"the {benchmark} dataset would be built from sciprobe's bundled synthetic sample, not "
                            f"the {bench.title} release: pass --source RELEASE_DIR, or --sample to publish the sample "
                            "(its card then says so on its first line)")
    if sample and not is_sample_source(bench, src):
        raise SciprobeError("--sample publishes the bundled sample; it does not go with --source")
    build_benchmark(bench, src, Path(out), overwrite=True)
    return Path(out)


#: What the staged copy of sciprobe needs to score a metric (pinned from constraints.txt when it pins them).
SCORING_REQUIREMENTS = ("numpy", "scipy", "scikit-learn")


def stage_metric(out: Path, name: str) -> Path:
    """``metrics/<name>/`` plus a copy of the ``sciprobe`` package next to ``app.py``: the ``sciprobe`` that
    ``requirements.txt`` listed by name alone could have come from anywhere (a registry's unrelated package);
    the staged Space imports the copy, and its README and requirements say which sciprobe it is."""
    source = REPO_ROOT / "metrics" / name
    if name not in metric_names():
        raise SciprobeError(f"unknown metric {name!r}; available: {', '.join(metric_names()) or 'none'}")
    meta = read_front_matter(source / "README.md")
    if meta.get("sdk") != "gradio" or "app_file" not in meta:
        raise SciprobeError(f"metrics/{name}/README.md front matter must declare sdk: gradio and app_file")
    out = _fresh(Path(out))
    shutil.copytree(source, out, ignore=_IGNORE)
    shutil.copytree(REPO_ROOT / "sciprobe", out / "sciprobe", ignore=_IGNORE)
    origin = sciprobe_origin(out / "sciprobe")
    _write_metric_requirements(out / "requirements.txt", origin)
    with (out / "README.md").open("a", encoding="utf-8") as readme:
        readme.write(_origin_section(origin))
    return out


def sciprobe_origin(copy: Path) -> str:
    """``sciprobe 0.1.0, commit <sha>[ with local changes], files sha256 <digest>`` for a staged copy: the
    version, the commit of this checkout when git knows it, and a digest of the copied files (always)."""
    import hashlib
    import subprocess

    from sciprobe import __version__

    digest = hashlib.sha256()
    for path in sorted(p for p in copy.rglob("*") if p.is_file()):
        digest.update(path.relative_to(copy).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    commit = ""
    try:
        head = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=30, check=False)
        dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--", "sciprobe"],
                               capture_output=True, text=True, timeout=30, check=False)
        if head.returncode == 0 and head.stdout.strip():
            commit = f", commit {head.stdout.strip()}" + (" with local changes" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):  # no git here: the digest still identifies the copy
        pass
    return f"sciprobe {__version__}{commit}, files sha256 {digest.hexdigest()}"


def _pins() -> dict[str, str]:
    """``name -> name==version`` from constraints.txt (empty when the checkout has none)."""
    path = REPO_ROOT / "constraints.txt"
    pins = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            name, sep, _ = line.strip().partition("==")
            if sep and name:
                pins[name.lower()] = line.strip()
    return pins


def _write_metric_requirements(path: Path, origin: str) -> None:
    """The metric's requirements with the bare ``sciprobe`` line replaced by what its staged copy needs."""
    pins = _pins()
    kept = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip().lower() != "sciprobe"]
    named = {line.split("=")[0].split("<")[0].split(">")[0].strip().lower() for line in kept}
    added = [pins.get(name, name) for name in SCORING_REQUIREMENTS if name not in named]
    header = [f"# sciprobe is not installed from a package registry: ./sciprobe is {origin},",
              "# imported from this folder by app.py; the lines below are what it needs for this metric."]
    path.write_text("\n".join([*header, *kept, *added]) + "\n", encoding="utf-8")


def _origin_section(origin: str) -> str:
    return (
        "\n## Where `sciprobe` comes from\n\n"
        "This Space does not install `sciprobe` from a package registry. The `sciprobe/` folder next to `app.py` "
        f"is a copy of the package that `sciprobe publish` staged: {origin}. `app.py` imports it from its own "
        "folder, and `requirements.txt` lists what it needs. To `evaluate.load` this metric elsewhere, install the "
        "same sciprobe first (`pip install .` in a checkout of that commit), or put a copy of this repository's "
        "`sciprobe/` folder on `PYTHONPATH`.\n")


def stage_space(out: Path) -> Path:
    source = REPO_ROOT / "leaderboard_space"
    if not (source / "app.py").is_file():
        raise SciprobeError(f"{source} is missing (publish runs from a sciprobe source checkout)")
    meta = read_front_matter(source / "README.md")
    wrong = {k: meta.get(k) for k, v in REQUIRED_SPACE_META.items() if meta.get(k) != v}
    if wrong:
        raise SciprobeError(f"leaderboard_space/README.md front matter: expected {REQUIRED_SPACE_META}, got {wrong}")
    out = _fresh(Path(out))
    shutil.copytree(source, out, ignore=_IGNORE)
    shutil.copytree(REPO_ROOT / "sciprobe", out / "sciprobe", ignore=_IGNORE)
    return out


def _dataset_benchmarks(benchmark: str | None, source: Path | None, sample: bool) -> list[str]:
    """The benchmarks ``publish all`` stages datasets of: ``benchmark`` (from ``source``, or its sample with
    ``sample``), or with ``sample`` alone every benchmark that has a bundled sample."""
    from sciprobe.core.registry import benchmark_names, get_benchmark

    if benchmark:
        return [benchmark]
    if source is not None:
        raise SciprobeError("--source is one benchmark's release files: name it with --benchmark")
    if not sample:
        raise SciprobeError("publish all needs the datasets' release files: --benchmark NAME --source RELEASE_DIR; "
                            "or --sample to publish every benchmark's bundled synthetic sample, labelled as such")
    return [b for b in benchmark_names() if get_benchmark(b).sample_source is not None]


def plan(kind: str, repo_id: str, out: Path, *, benchmark: str | None = None, source: Path | None = None,
         sample: bool = False) -> list[Artifact]:
    """Stage the folders of ``kind`` under ``out`` and say where each would be uploaded."""
    from sciprobe.core.registry import benchmark_names

    if kind not in KINDS:
        raise SciprobeError(f"unknown publish kind {kind!r}; use one of {', '.join(KINDS)}")
    out = Path(out)
    if kind == "all":
        owner = repo_id.strip("/")
        if not owner or "/" in owner:
            raise SciprobeError("publish all takes an owner namespace (e.g. sciprobe), not owner/name")
        artifacts = [Artifact("dataset", f"{owner}/{b}", "dataset",
                              stage_dataset(out / "datasets" / b, b, source, sample=sample), b)
                     for b in _dataset_benchmarks(benchmark, source, sample)]
        artifacts += [Artifact("metric", f"{owner}/{m}", "space", stage_metric(out / "metrics" / m, m))
                      for m in metric_names()]
        artifacts.append(Artifact("space", f"{owner}/{SPACE_NAME}", "space", stage_space(out / "space")))
        return artifacts
    check_repo_id(repo_id)
    name = repo_id.split("/")[1]
    if kind == "dataset":
        bench = benchmark or (name if name in benchmark_names() else None)
        if bench is None:
            raise SciprobeError(f"which benchmark is {repo_id}? pass --benchmark NAME (the repo name {name!r} is not "
                                f"one of: {', '.join(benchmark_names())})")
        return [Artifact(kind, repo_id, "dataset", stage_dataset(out, bench, source, sample=sample), bench)]
    if kind == "metric":
        return [Artifact(kind, repo_id, "space", stage_metric(out, name))]
    return [Artifact(kind, repo_id, "space", stage_space(out))]


def publish(kind: str, repo_id: str, dry_run: bool = True, out: Path | str | None = None, *,
            benchmark: str | None = None, source: Path | str | None = None, api: HubApi | None = None,
            token: str | None = None, sample: bool = False) -> list[Artifact]:
    """Stage ``kind`` (dataset | metric | space | all) and, unless ``dry_run``, upload it with ``upload_folder``.

    Dry runs need ``out`` (the folder to write); real runs stage into a temporary folder unless ``out`` is given.
    """
    if dry_run and out is None:
        raise SciprobeError("--dry-run needs --out DIR (the folder that would be uploaded)")
    if dry_run:
        return plan(kind, repo_id, Path(out), benchmark=benchmark, source=Path(source) if source else None,
                    sample=sample)
    if api is None:
        from sciprobe.interop.hub_api import HfHubApi

        api = HfHubApi(token=token)
    with tempfile.TemporaryDirectory(prefix="sciprobe-publish-") as tmp:
        artifacts = plan(kind, repo_id, Path(out) if out else Path(tmp) / "stage", benchmark=benchmark,
                         source=Path(source) if source else None, sample=sample)
        for artifact in artifacts:
            api.upload_folder(artifact.repo_id, artifact.folder, artifact.repo_type,
                              f"Publish {artifact.kind} with sciprobe publish")
    return artifacts
