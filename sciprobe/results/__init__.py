"""Results: writing and reading results files, their analysis, summaries, comparisons, the HTML report, its
figures, export to the Hub, and the papers' published numbers.

``sciprobe.results`` was a module before the layer reorganisation: its names are still importable from here for one
release
(deprecated; they live in ``sciprobe.results.write``)."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from sciprobe import _compat

    return _compat.moved_attribute("sciprobe.results", "sciprobe.results.write", name)
