"""A built folder's split read with pyarrow alone: the part of ``datasets.Dataset`` a task's load uses.

``datasets.load_dataset("parquet", ...)`` on a local build costs ~1 s of CPU in imports (datasets, pandas,
huggingface_hub) and writes an Arrow cache on every new fingerprint (issue 28). A sciprobe build declares its
configs' files in its README (the ``configs`` front matter) and its shards are plain Parquet, so reading them
needs only ``pyarrow.parquet``. Hub ids, and folders whose README does not declare the config, still go
through ``datasets``.
"""

from __future__ import annotations

import glob
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class ParquetSplit:
    """One split as a pyarrow Table, with the ``datasets.Dataset`` members task loading uses: ``data``,
    ``column_names``, ``num_rows``, ``len``, iteration over row dicts, ``select`` and ``to_list``."""

    def __init__(self, table: Any) -> None:
        self.data = table

    @property
    def column_names(self) -> list[str]:
        return list(self.data.column_names)

    @property
    def num_rows(self) -> int:
        return int(self.data.num_rows)

    def __len__(self) -> int:
        return self.num_rows

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.data.to_pylist())

    def select(self, indices: list[int]) -> ParquetSplit:
        """The rows at ``indices``, in that order. One-row slices joined, not ``Table.take``: take goes through
        ``pyarrow.compute``, whose first use imports pandas (~0.3 s of CPU, more than a dry run should cost)."""
        import pyarrow as pa

        if not indices:
            return ParquetSplit(self.data.slice(0, 0))
        return ParquetSplit(pa.concat_tables([self.data.slice(i, 1) for i in indices]))

    def to_list(self) -> list[dict[str, Any]]:
        return self.data.to_pylist()


def declared_data_files(root: Path, config: str) -> dict[str, list[str]] | None:
    """``{split: [glob pattern, ...]}`` of ``config`` from a built folder's README front matter, patterns
    glob-escaped at the root (a folder named ``a[1]`` is not a character class); None when the README does not
    declare the config."""
    readme = root / "README.md"
    if not readme.is_file():
        return None
    text = readme.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return None
    import yaml

    # libyaml's loader where PyYAML has it: the pure-Python one takes ~40 ms on a build's README (its features)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    front = yaml.load(text.split("---", 2)[1], Loader=loader) or {}  # noqa: S506 - a safe loader
    declared = next((c for c in front.get("configs") or [] if isinstance(c, dict) and c.get("config_name") == config),
                    None)
    if not declared or not isinstance(declared.get("data_files"), list):
        return None
    files: dict[str, list[str]] = {}
    for entry in declared["data_files"]:
        paths = entry["path"] if isinstance(entry["path"], list) else [entry["path"]]
        files.setdefault(entry["split"], []).extend(f"{glob.escape(str(root))}/{p}" for p in paths)
    return files


def read_splits(data_files: dict[str, list[str]]) -> dict[str, ParquetSplit]:
    """Every split's shards, in name order (as ``datasets`` resolves them), concatenated into one table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    splits = {}
    for split, patterns in data_files.items():
        paths = sorted({p for pattern in patterns for p in glob.glob(pattern)})
        if not paths:
            raise FileNotFoundError(f"no file matches {patterns[0]}")
        # ParquetFile, not read_table: read_table loads pyarrow.dataset (~0.2 s of CPU in imports) to read a file
        tables = [pq.ParquetFile(p).read() for p in paths]
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="default")
        splits[split] = ParquetSplit(table)
    return splits
