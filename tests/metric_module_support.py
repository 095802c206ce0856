"""What the tests of the evaluate modules in metrics/ share: loading a module's files by path, the expected
flat result of a sciprobe report, and the metric-card sections every README must have."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

#: The sections of evaluate's metric-card template, in order.
README_SECTIONS = ("Metric Description", "How to Use", "Inputs", "Output Values", "Values from Popular Papers",
                   "Examples", "Limitations and Bias", "Citation", "Further References")


def import_file(path: Path, name: str) -> ModuleType:
    """Import one file of a metric folder (the module, its app.py or tests.py) under ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flat(report: Any) -> dict[str, Any]:
    """A ScoreReport as a module's ``compute`` should return it, built here independently of ``report.flat()``."""
    return {"mode": report.mode, **report.values, **report.coverage.as_dict()}
