"""A task's rows: the built dataset (a folder, a hub id, or the bundled sample built on first use), its test
split filtered by the temporal cutoff with Arrow compute, then limited; plus the fixed few-shot examples and
the dataset fingerprint results record. Every row carries ``id`` (copied from the config's ``id_field``).

``--limit N`` never takes the first N rows: release files are ordered (the IDRBench IPI file starts with 120 gold
"no" labels), so a prefix is a biased subset. It takes a seeded sample (:data:`LIMIT_SEED`), stratified by the gold
label for classification tasks (those that declare ``prediction_labels``: each label keeps its share, largest
remainders first) and uniform otherwise, kept in the data's order. Results record it (``provenance["limit"] =
{"n", "seed", "strategy"}``) and the subset (``provenance["subset"]``, see :mod:`sciprobe.results.evidence`); the CLI
says
so on stderr when the run ends (``LIMITED: ...``)."""

from __future__ import annotations

import datetime as dt
import glob
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciprobe.data.build import (BUILD_INFO_FILE, build_benchmark, check_unique_column, dataset_fingerprint,
                            read_build_info)
from sciprobe.data.cutoffs import CutoffReport, filter_dataset
from sciprobe.core.declaration import Benchmark, TaskSpec
from sciprobe.core.errors import SciprobeError
from sciprobe.data.locations import sample_build_dir
from sciprobe.data.sources import hub_offline, locate, not_cached_message
from sciprobe.data.parquet_split import declared_data_files, read_splits


def sample_dataset_dir(benchmark: Benchmark, options: dict[str, Any] | None = None) -> Path:
    """The bundled sample, built once per sample version (and reader ``options``) into ``$SCIPROBE_HOME/datasets``."""
    if benchmark.sample_source is None:
        raise SciprobeError(f"{benchmark.name} has no bundled sample; pass --data DIR_OR_HUB_ID")
    out = sample_build_dir(benchmark, options)
    if not (out / BUILD_INFO_FILE).is_file():
        build_benchmark(benchmark, benchmark.sample_source, out, overwrite=True, options=options)
    return out


def _load(target: str, config: str, local: bool, revision: str | None) -> Any:
    """The config's splits: a sciprobe build's declared Parquet files with pyarrow alone
    (:mod:`sciprobe.data.parquet_split`), anything else with ``datasets``."""
    data_files = declared_data_files(Path(target), config) if local else None
    if data_files is not None:
        return read_splits(data_files)
    import datasets

    if local and glob.has_magic(target):
        raise SciprobeError(f"{target} declares no config {config!r} in its README.md (a folder whose name holds "
                            "glob characters must be a sciprobe build)")
    return datasets.load_dataset(target, config, revision=None if local else revision)


#: the seed of every ``--limit`` sample (recorded in provenance; the same limit gives every model the same items)
LIMIT_SEED = 0
STRATIFIED, UNIFORM = "stratified by gold label", "uniform"


@dataclass
class TaskData:
    rows: list[dict[str, Any]]
    fewshot: list[dict[str, Any]]
    fingerprint: str
    source: str            # what results record as the dataset: a hub id, ``sample:<bench>`` or ``folder:<name>``
    cutoff: dict[str, Any]
    revision: str | None = None  # the hub revision loaded (None: local files)
    # where the rows were loaded from (a local folder or a hub id), for runners that read more of the dataset;
    # never recorded in results (``source`` is)
    location: str = ""
    # ``{"n", "seed", "strategy"}`` of a ``--limit`` (None: no limit); ``{"kind", "n", "of"}`` when the rows are
    # part of the test split only (a limit sample or a cutoff; sciprobe.results.evidence.subset_of)
    limit: dict[str, Any] | None = None
    subset: dict[str, Any] | None = None


def stratified_sample(labels: list[Any], n: int, seed: int = LIMIT_SEED) -> list[int]:
    """Indices (ascending) of a seeded sample of ``n`` of the items, stratified by ``labels`` (one per item): each
    label keeps its share of the sample, the remainders going to the largest fractions (ties by label)."""
    import numpy as np

    total = len(labels)
    rng = np.random.default_rng(seed)
    strata: dict[str, list[int]] = {}
    for index, label in enumerate(labels):
        strata.setdefault(repr(label), []).append(index)
    keys = sorted(strata)
    exact = {k: n * len(strata[k]) / total for k in keys}
    quota = {k: int(exact[k]) for k in keys}
    for k in sorted(keys, key=lambda k: (-(exact[k] - quota[k]), k))[: n - sum(quota.values())]:
        quota[k] += 1
    chosen = [int(i) for k in keys for i in rng.permutation(strata[k])[: quota[k]]]
    return sorted(chosen)


def uniform_sample(total: int, n: int, seed: int = LIMIT_SEED) -> list[int]:
    """Indices (ascending) of a seeded uniform sample of ``n`` of ``total`` items."""
    import numpy as np

    return sorted(int(i) for i in np.random.default_rng(seed).permutation(total)[:n])


def _take_limit(task: TaskSpec, kept: Any, limit: int) -> tuple[Any, dict[str, Any]]:
    """The ``limit`` rows of ``kept`` a ``--limit`` run asks (see the module docstring) and its record."""
    if limit >= len(kept):
        return kept, {"n": limit, "seed": LIMIT_SEED, "strategy": "all items (the limit is not below their count)"}
    if task.prediction_labels and task.gold is not None:
        indices, strategy = stratified_sample([task.gold(row) for row in kept], limit), STRATIFIED
    else:
        indices, strategy = uniform_sample(len(kept), limit), UNIFORM
    return kept.select(indices), {"n": limit, "seed": LIMIT_SEED, "strategy": strategy}


def split_revision(data: str, revision: str | None = None) -> tuple[str, str | None]:
    """``owner/name@rev`` -> (``owner/name``, ``rev``) for a hub id that is not a local folder; ``revision``
    given explicitly wins. Anything else comes back as is."""
    if "@" in data and not Path(data).exists():
        repo, _, pinned = data.rpartition("@")
        if "/" in repo and pinned:
            return repo, revision or pinned
    return data, revision


def dataset_label(benchmark: Benchmark, location: Path | str, local: bool) -> str:
    """How results name the dataset, never by a local path (results files are shared, published and shown):
    a hub id as is, the bundled sample as ``sample:<bench>``, another folder as ``folder:<its name>``."""
    if not local:
        return str(location)
    if read_build_info(Path(location)).get("sample"):
        return f"sample:{benchmark.name}"
    return f"folder:{Path(location).resolve().name}"


def load_task_data(benchmark: Benchmark, task: TaskSpec, data: str | None, *, cutoff: dt.date | None = None,
                   cutoff_source: str = "none", limit: int | None = None, revision: str | None = None,
                   sample_options: dict[str, Any] | None = None) -> TaskData:
    """Rows of the task's config (test split), cutoff-filtered with Arrow compute, then limited. ``data`` is a
    built folder or a hub id, optionally pinned as ``owner/name@revision``; without it, the bundled sample built
    with the reader options ``sample_options`` (default: the declaration's)."""
    if data:
        data, revision = split_revision(data, revision)
        where = locate(data, "--data")  # a missing path is an error here, never a hub lookup
        location: Path | str = where.path if where.path is not None else str(where.repo_id)
        local = where.path is not None
    else:
        location, local = sample_dataset_dir(benchmark, sample_options), True
    target = str(location)
    if local:  # a config the build could not give says why (e.g. a release without topic labels)
        reason = read_build_info(Path(location)).get("release", {}).get("unavailable", {}).get(task.config)
        if reason:
            raise SciprobeError(f"{target} has no config {task.config!r}: {reason}")
    try:
        dd = _load(target, task.config, local, revision)
    except ValueError as exc:
        raise SciprobeError(f"cannot load config {task.config!r} from {target}: {str(exc).splitlines()[0]}") from None
    except OSError as exc:  # datasets' missing files, unreachable or uncached hub ids (ConnectionError)
        if not local and hub_offline():
            raise SciprobeError(not_cached_message(target)) from None
        raise SciprobeError(f"cannot load config {task.config!r} from {target}: "
                            f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    if "test" not in dd:
        raise SciprobeError(f"{target} config {task.config!r} has no test split")
    test = dd["test"]
    check_unique_column(test, benchmark.config(task.config).id_field, f"{target} config {task.config!r}")
    kept = filter_dataset(test, cutoff, f"{target} config {task.config!r}")
    report = CutoffReport(cutoff.isoformat() if cutoff else None, cutoff_source, len(test), len(kept)).as_dict()
    if len(test) == 0:
        raise SciprobeError(f"{target} config {task.config!r} has no items in its test split")
    if len(kept) == 0:
        raise SciprobeError(f"cutoff {report['cutoff']} leaves no items in {benchmark.name}:{task.config}")
    limit_record = None
    if limit is not None:
        kept, limit_record = _take_limit(task, kept, limit)
    subset = None
    if len(kept) < len(test):  # part of the test split only: shown against the whole of it (sciprobe.results.evidence)
        subset = {"kind": "limit" if len(kept) < report["n_items_after"] else "cutoff", "n": len(kept),
                  "of": len(test)}
    fewshot = dd[task.fewshot_split].to_list() if task.fewshot_split and task.fewshot_split in dd else []
    if task.num_fewshot and len(fewshot) < task.num_fewshot:
        raise SciprobeError(f"{target} config {task.config!r} has {len(fewshot)} few-shot examples, "
                            f"task {task.name} needs {task.num_fewshot}")
    fingerprint = (dataset_fingerprint(Path(location)) if local
                   else f"hub:{data}@{revision or 'main'}:{test._fingerprint}")
    rows = kept.to_list()
    id_field = benchmark.config(task.config).id_field
    if id_field != "id":  # every row a runner gets is identified by ``id`` (the config's own id field's value)
        for row in rows:
            row.setdefault("id", str(row[id_field]))
    return TaskData(rows, fewshot, fingerprint, dataset_label(benchmark, location, local), report,
                    None if local else revision, target, limit_record, subset)
