"""What ``sciprobe sgibench ...`` runs (wired by :mod:`sciprobe.benchmarks.sgibench.cli`; spec sgibench.md §3.6, §7).

- ``sciprobe sgibench score-overall deep_research=18.48 idea_generation=ig.json ... [--results FILE ...]
  [--mode paper]`` -> :func:`sgi_score_command`: each value is a number or a JSON file holding a component
  report (``ScoreReport.as_dict()``: its headline key and ``coverage`` are read); ``--results`` reads the
  component reports from ``sciprobe evaluate`` results files (:func:`components_from_results`).
- ``sciprobe sgibench check-external [--data DIR]`` -> :func:`check_external_command`: status of the external
  dry-experiment files (pinned sha256), exit status 1 when a pinned file is missing or differs.
- ``sciprobe sgibench build-from-hub --out DIR [--revision SGI-Reasoning=REV ...]`` -> :func:`build_from_hub`: the
  five released hub datasets, downloaded (or taken from the hub cache) and built in one step.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import sciprobe.benchmarks.sgibench.external as external
from sciprobe.errors import SciprobeError
from sciprobe.scoring.sgi.overall import sgi_score


def _component_value(text: str):
    try:
        return float(text)
    except ValueError:
        pass
    path = Path(text)
    if not path.is_file():
        raise SciprobeError(f"{text!r} is neither a number nor a JSON report file")
    try:
        return json.loads(path.read_text("utf-8"))
    except ValueError as exc:
        raise SciprobeError(f"malformed JSON in {path}: {exc}") from None


def components_from_results(paths: Sequence[str | Path], mode: str = "official") -> dict[str, dict]:
    """Component reports (``ScoreReport.as_dict()`` of ``mode``) of the ``sgibench:<component>`` tasks found in
    ``sciprobe evaluate`` results files; a component found in two files is an error."""
    from sciprobe.scoring.sgi.overall import COMPONENTS

    found: dict[str, dict] = {}
    where: dict[str, str] = {}
    for path in map(Path, paths):
        if not path.is_file():
            raise SciprobeError(f"results file {path} not found")
        try:
            tasks = json.loads(path.read_text("utf-8"))["sciprobe"]["tasks"]
        except (ValueError, KeyError, TypeError) as exc:
            raise SciprobeError(f"{path} is not a sciprobe results file ({type(exc).__name__}: {exc})") from None
        for key, entry in tasks.items():
            name = key.split("|")[0]
            bench, _, component = name.partition(":")
            if bench != "sgibench" or component not in COMPONENTS:
                continue
            if component in found:
                raise SciprobeError(f"component {component} is in both {where[component]} and {path}")
            scores = entry.get("scores", {})
            if mode not in scores:
                raise SciprobeError(f"{path}: {name} was not scored in mode {mode!r} (modes: {', '.join(scores)})")
            found[component], where[component] = scores[mode], str(path)
    return found


def sgi_score_command(pairs: Sequence[str], mode: str = "official", results: Sequence[str | Path] = ()) -> str:
    """``["deep_research=18.48", ...]`` (plus components read from ``results`` files) -> the SGI-Score report
    as indented JSON; a component given both ways is an error."""
    components: dict = dict(components_from_results(results, mode)) if results else {}
    from_files = set(components)
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise SciprobeError(f"expected COMPONENT=VALUE, got {pair!r}")
        if name.strip() in from_files:
            raise SciprobeError(f"component {name.strip()} is given both as {pair!r} and in a results file")
        components[name.strip()] = _component_value(value.strip())
    return json.dumps(sgi_score(components, mode=mode).as_dict(), indent=2)


def check_external_command(folder: str | None = None) -> tuple[int, str]:
    """(exit status, report text) for the external dry-experiment files. A ``folder`` that does not exist is a
    user error (one line), not a list of every file as missing."""
    if folder:
        from sciprobe.sources import local_folder

        local_folder(folder, "--data")
    lines, bad = [], False
    for files in external.check_all(folder).values():
        for f in files:
            lines.append(f"{f.status:17} {f.relative}")
            bad |= not f.usable and external.SHA256.get(f.relative) is not None
    if external.data_dir(folder) is None:
        lines.append(f"no folder given: pass --data DIR or set {external.ENV_VAR}")
    return (1 if bad else 0), "\n".join(lines)


#: The released hub datasets (one per config, split ``test``; spec sgibench.md §2). The spec pins no dataset
#: revision: a build records the commit each snapshot resolved to (``--revision NAME=REV`` pins one).
HUB_ORG = "InternScience"


def build_from_hub(out: str | Path, revisions: dict[str, str] | None = None, *, configs: Sequence[str] | None = None,
                   overwrite: bool = False) -> Any:
    """Download (or reuse from the hub cache) the five ``InternScience/SGI-*`` datasets and build them into
    ``out`` in one step; the build records every dataset's resolved commit. ``revisions`` maps a dataset name
    (``SGI-Reasoning``) or a config name (``experimental_reasoning``) to a revision."""
    import tempfile

    from sciprobe.benchmarks import get_benchmark
    from sciprobe.benchmarks.sgibench.source import HUB_DATASETS
    from sciprobe.build import build_benchmark
    import sciprobe.sources as sources

    revisions = dict(revisions or {})
    wanted = list(configs or HUB_DATASETS)
    unknown = [k for k in revisions if k not in HUB_DATASETS and k not in HUB_DATASETS.values()]
    if unknown:
        raise SciprobeError(f"unknown SGI-Bench dataset {unknown[0]!r} in --revision; use one of "
                            f"{', '.join(HUB_DATASETS.values())}")
    resolved = {}
    for config in wanted:
        name = HUB_DATASETS[config]
        revision = revisions.get(name) or revisions.get(config)
        resolved[name] = sources.resolve_source(f"{HUB_ORG}/{name}", revision)
    with tempfile.TemporaryDirectory(prefix="sgibench-hub-") as folder:
        # real folders holding links to the snapshot files: the build reads and fingerprints them in place
        for name, source in resolved.items():
            files = sorted(source.path.rglob("*.parquet"))
            if not files:
                raise SciprobeError(f"hub dataset {source.repo_id}@{source.revision} holds no Parquet files")
            for f in files:
                link = Path(folder) / name / f.relative_to(source.path)
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(f.resolve())
        label = "; ".join(s.describe() for s in resolved.values())
        commits = json.dumps({s.repo_id: s.revision for s in resolved.values()}, sort_keys=True)
        return build_benchmark(get_benchmark("sgibench"), Path(folder), Path(out), configs=wanted,
                               overwrite=overwrite, source_label=label, source_revision=commits)
