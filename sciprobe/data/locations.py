"""Where a benchmark's data is looked for by default: the bundled sample's build folder (keyed by its content),
else ``$SCIPROBE_HOME/datasets/<name>``."""

from __future__ import annotations

from pathlib import Path

from sciprobe.core.paths import sciprobe_home

TYPE_CHECKING = False  # typing's flag without importing typing: these modules are on the CLI's start-up path

if TYPE_CHECKING:
    from sciprobe.core.declaration import Benchmark


def sample_build_dir(benchmark: Benchmark, options: dict | None = None) -> Path:
    """The folder the bundled sample is built into, keyed by the sample's content and the declaration's version
    (a new version may change the built features; path only, no I/O beyond hashing the small sample files), and
    by the reader ``options`` when they are not the declaration's defaults."""
    from sciprobe.data.build import source_fingerprint

    tag = source_fingerprint(benchmark.sample_source)[:12]
    name = f"{benchmark.name}-{benchmark.version}-sample-{tag}"
    chosen = {**benchmark.source_options, **(options or {})}
    if chosen != dict(benchmark.source_options):
        import hashlib
        import json

        name += "-options-" + hashlib.sha256(json.dumps(chosen, sort_keys=True).encode()).hexdigest()[:8]
    return sciprobe_home() / "datasets" / name


def default_data_dir(benchmark_name: str) -> Path:
    """Where a benchmark's data is looked for by default: its bundled sample's build folder, else
    ``$SCIPROBE_HOME/datasets/<name>`` (build the real data there)."""
    from sciprobe.core.registry import get_benchmark

    benchmark = get_benchmark(benchmark_name)
    if benchmark.sample_source is None:
        return sciprobe_home() / "datasets" / benchmark.name
    return sample_build_dir(benchmark)
