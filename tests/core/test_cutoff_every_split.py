"""A temporal cutoff holds in every split of every config of every benchmark (issue 22.4: `--cutoff` filtered
PreScience's `test` split, 20 of 31 kept, but not `test_sample_500` / `test_sample_5000`, 31 of 31 kept).

Driven by the registry: each benchmark's bundled sample is built with a cutoff in the middle of its own dates, and
no row dated on or before it may survive in any split of items, at build time or when a task loads its rows. The
only splits a cutoff keeps whole are the declared context (history corpora, few-shot demonstrations), listed
here so that a new exemption is a visible decision."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from sciprobe.core.registry import benchmark_names, get_benchmark
from sciprobe.core.errors import SciprobeError

#: (benchmark, config) -> the splits a cutoff keeps whole; every other split of every config is filtered
CONTEXT = {
    ("prescience", "papers"): {"train", "test"},
    ("prescience", "author_publications"): {"full"},
    ("prescience", "author_disambiguation"): {"full"},
    ("idrbench", "ipi"): {"fewshot"},
    ("idrbench", "i3_set1"): {"fewshot"},
    ("idrbench", "i3_set2"): {"fewshot"},
}


def _rows(build: Path, config: str, split: str) -> int | None:
    """How many rows a built split holds (None: the split was not written)."""
    import pyarrow.parquet as pq

    files = sorted((build / config).glob(f"{split}-*.parquet"))
    return sum(pq.read_metadata(f).num_rows for f in files) if files else None


def _split_dates(build: Path, config: str, split: str) -> list[dt.date | None] | None:
    """The dates of a built split of items (None: the split was not written)."""
    import pyarrow.parquet as pq

    files = sorted((build / config).glob(f"{split}-*.parquet"))
    if not files:
        return None
    dates: list[dt.date | None] = []
    for file in files:
        table = pq.read_table(file)
        assert "date" in table.column_names, f"{config}/{split} has no date: a cutoff could not hold"
        dates += [dt.date.fromisoformat(d) if d else None for d in table.column("date").to_pylist()]
    return dates


def _middle_cutoff(benchmark, build: Path) -> dt.date:
    """A cutoff in the middle of the sample's item dates, so that it keeps some rows and drops others."""
    dates = sorted(d for name, config in benchmark.configs.items() for split in config.splits
                   if config.cutoff_applies(split) for d in (_split_dates(build, name, split) or []) if d)
    return dates[len(dates) // 2] if dates else dt.date(2020, 1, 1)


@pytest.mark.parametrize("name", benchmark_names())
def test_no_row_at_or_before_the_cutoff_survives_in_any_split(name: str, tmp_path: Path) -> None:
    from sciprobe.data.build import build_benchmark
    from sciprobe.data.task_data import load_task_data, sample_dataset_dir

    benchmark = get_benchmark(name)
    declared = {(name, c): {s for s in spec.splits if not spec.cutoff_applies(s)}
                for c, spec in benchmark.configs.items()}
    assert {k: v for k, v in declared.items() if v} == {k: v for k, v in CONTEXT.items() if k[0] == name}
    full = sample_dataset_dir(benchmark)
    cutoff = _middle_cutoff(benchmark, full)
    try:
        report = build_benchmark(benchmark, benchmark.sample_source, tmp_path / "cut", cutoff=cutoff)
    except SciprobeError as exc:  # undated items (SGI-Bench): every row dropped, nothing written
        assert "leaves no items" in str(exc) and not (tmp_path / "cut").exists()
        report = None
    dropped = 0
    for config, spec in benchmark.configs.items():
        for split in spec.splits:
            if not spec.cutoff_applies(split):
                assert not report or _rows(tmp_path / "cut", config, split) == _rows(full, config, split), \
                    f"{config}/{split}: context is kept whole"
                continue
            before = _split_dates(full, config, split) or []
            after = _split_dates(tmp_path / "cut", config, split) if report else None
            survivors = [d for d in after or [] if d is None or d <= cutoff]
            assert not survivors, f"{name}:{config}/{split}: {len(survivors)} row(s) at or before {cutoff}"
            assert len(after or []) == sum(1 for d in before if d and d > cutoff), f"{config}/{split}"
            dropped += len(before) - len(after or [])
    assert dropped > 0  # the cutoff was in the middle of the dates: the check was not vacuous
    for task in benchmark.tasks.values():  # and the rows a task evaluates, loaded with the same cutoff
        try:
            rows = load_task_data(benchmark, task, str(full), cutoff=cutoff).rows
        except SciprobeError as exc:
            assert "leaves no items" in str(exc), exc
            continue
        assert rows and all(row["date"] and dt.date.fromisoformat(row["date"]) > cutoff for row in rows), task.name
