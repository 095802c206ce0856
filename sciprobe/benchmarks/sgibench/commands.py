"""What ``sciprobe sgibench ...`` runs (wired by :mod:`sciprobe.benchmarks.sgibench.cli`; spec sgibench.md §3.6, §7).

- ``sciprobe sgibench score-overall deep_research=18.48 idea_generation=ig.json ... [--results FILE ...]
  [--mode paper] [--allow-mixed]`` -> :func:`sgi_score_command`: each value is a number or a JSON file holding a
  component report (``ScoreReport.as_dict()``: its headline key and ``coverage`` are read); ``--results`` reads the
  component reports from ``sciprobe evaluate`` results files (:func:`components_from_results`). Components read
  from files must come from one model, one dataset (name, revision, files), one benchmark version, prompt set,
  cutoff and item selection (a ``--limit`` sample is one): otherwise the command refuses, naming each component's
  file and model, unless ``--allow-mixed`` (the report then lists what differs). The report names every
  component's source (``sources``), with its coverage against the dataset (``1/3 (limit)``).
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
from sciprobe.core.errors import SciprobeError
from sciprobe.benchmarks.sgibench.scoring.overall import sgi_score


def _component_value(text: str):
    try:
        return float(text)
    except ValueError:
        pass
    from sciprobe.results.read import read_json_file

    path = Path(text)
    if not path.exists():
        raise SciprobeError(f"{text!r} is neither a number nor a JSON report file")
    return _checked_report(read_json_file(path), path)  # a regular file, capped, with nesting and integer guards


def _checked_report(value: Any, path: Path) -> Any:
    """A component report file's content: a number, or an object (``ScoreReport.as_dict()``) whose score
    (``score`` or a component's headline) is a number or null and whose coverage counts are counts."""
    from sciprobe.core.numbers import count
    from sciprobe.benchmarks.sgibench.scoring.overall import HEADLINE

    def number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    if number(value):
        return value
    if not isinstance(value, dict):
        raise SciprobeError(f"{path}: a component report is a number or a JSON object (ScoreReport.as_dict())")
    for key in sorted({"score", *HEADLINE.values()}):
        if value.get(key) is not None and not number(value[key]):
            raise SciprobeError(f"{path}: {key}: expected a number or null")
    coverage = value.get("coverage")
    if coverage is not None and not isinstance(coverage, dict):
        raise SciprobeError(f"{path}: coverage: expected an object or null")
    for where, block in (("coverage.", coverage or {}), ("", value)):
        for key in ("n_items", "n_scored", "n_failed"):
            if key in block and count(block[key]) is None:
                raise SciprobeError(f"{path}: {where}{key}: expected a count (an integer >= 0)")
    return value


#: what must be the same for components read from results files to make one SGI-Score: (source field, what)
SAME_RUN = (("model_id", "model"), ("dataset", "dataset"), ("dataset_revision", "dataset revision"),
            ("data_files", "dataset files"), ("benchmark_version", "benchmark version"),
            ("prompt_set", "prompt set"), ("cutoff", "cutoff"), ("items", "item selection"))


def _source(path: Path, block: dict, entry: dict, mode: str) -> dict[str, Any]:
    """Where a component comes from: its file, model, data, prompts, cutoff, item selection and coverage."""
    from sciprobe.results.evidence import coverage_text, result_status, subset_of

    prov = entry.get("provenance") if isinstance(entry.get("provenance"), dict) else {}
    cutoff = prov.get("cutoff") if isinstance(prov.get("cutoff"), dict) else {}
    fingerprint = str(prov.get("dataset_fingerprint") or "")
    subset = subset_of(prov)
    return {"file": str(path), "model_id": block.get("model_id"), "dataset": prov.get("dataset"),
            "dataset_revision": prov.get("dataset_revision"),
            # a built folder's fingerprint covers all its configs; a hub one is per config (the revision says it)
            "data_files": None if fingerprint.startswith("hub:") else fingerprint or None,
            "benchmark_version": prov.get("benchmark_version"), "prompt_set": prov.get("prompt_set") or "sciprobe",
            "cutoff": cutoff.get("cutoff"),
            "items": "all" if subset is None or subset["kind"] != "limit" else f"--limit {subset['n']}",
            "status": result_status(prov), "mode": mode,
            "coverage": coverage_text((entry.get("scores", {}).get(mode) or {}).get("coverage"), prov)}


def components_from_results(paths: Sequence[str | Path], mode: str = "official",
                            sources: dict[str, dict[str, Any]] | None = None) -> dict[str, dict]:
    """Component reports (``ScoreReport.as_dict()`` of ``mode``) of the ``sgibench:<component>`` tasks found in
    ``sciprobe evaluate`` results files; a component found in two files is an error. ``sources`` gets each
    component's source (file, model, data, ...: :data:`SAME_RUN`)."""
    from sciprobe.results.read import load_results_file
    from sciprobe.benchmarks.sgibench.scoring.overall import COMPONENTS

    found: dict[str, dict] = {}
    where: dict[str, str] = {}
    sources = {} if sources is None else sources
    for path in map(Path, paths):
        loaded = load_results_file(path)  # one line naming the file and the field when it is malformed
        block, tasks = loaded.block, loaded.tasks
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
            sources[component] = _source(path, block, entry, mode)
    return found


def mixed_sources(sources: dict[str, dict[str, Any]]) -> list[str]:
    """What differs between the components' sources, one line per field (``model: deep_research openai/a
    (FILE), experimental_reasoning openai/b (FILE)``); empty when they are one run's."""
    lines = []
    for field, what in SAME_RUN:
        if len({json.dumps(source.get(field)) for source in sources.values()}) > 1:
            lines.append(f"{what}: " + ", ".join(f"{name} {source.get(field)} ({source['file']})"
                                                 for name, source in sources.items()))
    return lines


def sgi_score_command(pairs: Sequence[str], mode: str = "official", results: Sequence[str | Path] = (),
                      allow_mixed: bool = False) -> str:
    """``["deep_research=18.48", ...]`` (plus components read from ``results`` files) -> the SGI-Score report
    as indented JSON, with each component's source; a component given both ways is an error, and so are
    components of different runs (:func:`mixed_sources`) unless ``allow_mixed``."""
    sources: dict[str, dict[str, Any]] = {}
    components: dict = dict(components_from_results(results, mode, sources)) if results else {}
    mixed = mixed_sources(sources)
    if mixed and not allow_mixed:
        raise SciprobeError("the components come from different runs, which make no one SGI-Score: "
                            + "; ".join(mixed) + " (pass --allow-mixed to combine them anyway)")
    from_files = set(components)
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise SciprobeError(f"expected COMPONENT=VALUE, got {pair!r}")
        if name.strip() in from_files:
            raise SciprobeError(f"component {name.strip()} is given both as {pair!r} and in a results file")
        components[name.strip()] = _component_value(value.strip())
        sources[name.strip()] = {"given": value.strip()}  # a number or a report file named on the command line
    report = sgi_score(components, mode=mode).as_dict()
    report["sources"] = sources
    if mixed:
        report["mixed_sources"] = mixed
    return json.dumps(report, indent=2)


def check_external_command(folder: str | None = None) -> tuple[int, str]:
    """(exit status, report text) for the external dry-experiment files. A ``folder`` that does not exist is a
    user error (one line), not a list of every file as missing."""
    if folder:
        from sciprobe.data.sources import local_folder

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

    from sciprobe.core.registry import get_benchmark
    from sciprobe.benchmarks.sgibench.source import HUB_DATASETS
    from sciprobe.data.build import build_benchmark
    import sciprobe.data.sources as sources

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
