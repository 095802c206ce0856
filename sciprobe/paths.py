"""Where sciprobe keeps things on disk: ``$SCIPROBE_HOME`` (default ``~/.cache/sciprobe``)."""

from __future__ import annotations

import os
from pathlib import Path

from sciprobe.declaration import Benchmark


def sciprobe_home() -> Path:
    return Path(os.environ.get("SCIPROBE_HOME") or Path.home() / ".cache" / "sciprobe")


def sample_build_dir(benchmark: Benchmark) -> Path:
    """The folder the bundled sample is built into, keyed by the sample's content (path only, no I/O
    beyond hashing the small sample files)."""
    from sciprobe.build import source_fingerprint

    tag = source_fingerprint(benchmark.sample_source)[:12]
    return sciprobe_home() / "datasets" / f"{benchmark.name}-sample-{tag}"


def default_data_dir(benchmark_name: str) -> Path:
    from sciprobe.benchmarks import get_benchmark

    return sample_build_dir(get_benchmark(benchmark_name))
