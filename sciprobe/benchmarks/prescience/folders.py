"""Where the PreScience commands read release files from (light: the command line imports it)."""

from __future__ import annotations

from pathlib import Path


def source_folder(arg: str | None) -> Path:
    """``--source``: a local release folder, else the bundled sample."""
    if arg:
        from sciprobe.data.sources import local_folder

        return local_folder(arg, "--source")
    from sciprobe.core.registry import get_benchmark

    return get_benchmark("prescience").sample_source
