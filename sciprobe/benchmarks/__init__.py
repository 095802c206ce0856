"""The benchmarks: one package per benchmark, each exposing ``BENCHMARK`` (its declaration). The registry that finds
them is :mod:`sciprobe.core.registry`; the names it defines are still importable from here for one release
(deprecated)."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from sciprobe import _compat

    return _compat.moved_attribute("sciprobe.benchmarks", "sciprobe.core.registry", name)
