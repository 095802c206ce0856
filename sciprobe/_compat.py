"""Old module paths, importable for one release after the layer reorganisation (issue 24), each with a
DeprecationWarning naming its new home. Only imports of the old names pay anything: the finder answers
``None`` for every other module at the cost of one dict lookup."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType
from typing import Any

#: old dotted path -> new dotted path (``sciprobe.results`` and ``sciprobe.cli`` are packages now: their
#: ``__getattr__`` forwards the old module's names instead)
MOVED_MODULES = {
    "sciprobe.analysis": "sciprobe.results.analysis",
    "sciprobe.baselines": "sciprobe.run.baselines",
    "sciprobe.benchmarks.prescience.evaluation": "sciprobe.benchmarks.prescience.offline_scoring",
    "sciprobe.benchmarks.prescience.lacer": "sciprobe.benchmarks.prescience.lacer_judge",
    "sciprobe.benchmarks.prescience.ranking": "sciprobe.benchmarks.prescience.scoring.ranking_tasks",
    "sciprobe.build": "sciprobe.data.build",
    "sciprobe.cards": "sciprobe.data.cards",
    "sciprobe.cli_index": "sciprobe.cli.index",
    "sciprobe.compare": "sciprobe.results.compare",
    "sciprobe.cutoffs": "sciprobe.data.cutoffs",
    "sciprobe.declaration": "sciprobe.core.declaration",
    "sciprobe.errors": "sciprobe.core.errors",
    "sciprobe.evaluation": "sciprobe.run.evaluation",
    "sciprobe.evidence": "sciprobe.results.evidence",
    "sciprobe.executors": "sciprobe.core.executors",
    "sciprobe.leaderboard.hub_api": "sciprobe.interop.hub_api",
    "sciprobe.export": "sciprobe.results.export",
    "sciprobe.lazy": "sciprobe.core.lazy",
    "sciprobe.lighteval_adapter": "sciprobe.interop.lighteval_tasks",
    "sciprobe.lighteval_cli": "sciprobe.interop.lighteval_cli",
    "sciprobe.lighteval_results": "sciprobe.interop.lighteval_results",
    "sciprobe.llm.stub_bodies": "sciprobe.testing.stub_bodies",
    "sciprobe.llm.stub_server": "sciprobe.testing.stub_server",
    "sciprobe.metric_module": "sciprobe.interop.metric_module",
    "sciprobe.metric_space": "sciprobe.interop.metric_space",
    "sciprobe.numbers": "sciprobe.core.numbers",
    "sciprobe.paths": "sciprobe.core.paths",
    "sciprobe.plan": "sciprobe.run.plan",
    "sciprobe.predictions": "sciprobe.data.predictions",
    "sciprobe.publish": "sciprobe.interop.publish",
    "sciprobe.published": "sciprobe.results.published",
    "sciprobe.release_files": "sciprobe.data.release_files",
    "sciprobe.replay": "sciprobe.run.replay",
    "sciprobe.report": "sciprobe.results.html_report",
    "sciprobe.report_figures": "sciprobe.results.figures",
    "sciprobe.results_file": "sciprobe.results.read",
    "sciprobe.runners.sandbox": "sciprobe.sandbox.runner",
    "sciprobe.runners.sandbox_bwrap": "sciprobe.sandbox.bwrap",
    "sciprobe.runners.sandbox_env": "sciprobe.sandbox.env",
    "sciprobe.runners.sandbox_host": "sciprobe.sandbox.host",
    "sciprobe.runners.sandbox_ship": "sciprobe.sandbox.ship",
    "sciprobe.runners.sandbox_supervise": "sciprobe.sandbox.supervise",
    "sciprobe.runners.sandbox_tree": "sciprobe.sandbox.tree",
    "sciprobe.runners.single_call": "sciprobe.run.runners.single_call",
    "sciprobe.runners.swiss": "sciprobe.run.runners.swiss",
    "sciprobe.scaffold": "sciprobe.cli.scaffold",
    "sciprobe.scoring.composite": "sciprobe.benchmarks.scitaste.scoring.composite",
    "sciprobe.scoring.forecast": "sciprobe.benchmarks.prescience.scoring.forecast",
    "sciprobe.scoring.lacer": "sciprobe.benchmarks.prescience.scoring.lacer",
    "sciprobe.scoring.lacer_validation": "sciprobe.benchmarks.prescience.scoring.lacer_validation",
    "sciprobe.scoring.report": "sciprobe.scoring.score_report",
    "sciprobe.scoring.sgi": "sciprobe.benchmarks.sgibench.scoring",
    "sciprobe.scoring.sgi._common": "sciprobe.benchmarks.sgibench.scoring._common",
    "sciprobe.scoring.sgi.deep_research": "sciprobe.benchmarks.sgibench.scoring.deep_research",
    "sciprobe.scoring.sgi.dry_experiment": "sciprobe.benchmarks.sgibench.scoring.dry_experiment",
    "sciprobe.scoring.sgi.idea": "sciprobe.benchmarks.sgibench.scoring.idea",
    "sciprobe.scoring.sgi.overall": "sciprobe.benchmarks.sgibench.scoring.overall",
    "sciprobe.scoring.sgi.reasoning": "sciprobe.benchmarks.sgibench.scoring.reasoning",
    "sciprobe.scoring.sgi.wet_experiment": "sciprobe.benchmarks.sgibench.scoring.wet_experiment",
    "sciprobe.scoring.taste_dimensions": "sciprobe.benchmarks.scitaste.scoring.taste_dimensions",
    "sciprobe.scoring.topic_trend": "sciprobe.benchmarks.prescience.scoring.topic_trend",
    "sciprobe.scoring.wape": "sciprobe.benchmarks.scitaste.scoring.wape",
    "sciprobe.scoring_cli": "sciprobe.run.score_predictions",
    "sciprobe.sources": "sciprobe.data.sources",
    "sciprobe.summary": "sciprobe.results.summary",
    "sciprobe.task_data": "sciprobe.data.task_data",
    "sciprobe.task_listing": "sciprobe.cli.task_listing",
    "sciprobe.task_runner": "sciprobe.run.task_runner",
    "sciprobe.upstream": "sciprobe.run.upstream",
    "sciprobe.upstream_import": "sciprobe.run.upstream_import",
}


def _warn(old: str, new: str) -> None:
    warnings.warn(f"{old} moved to {new}; the old path will be removed in the next release",
                  DeprecationWarning, stacklevel=3)


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: Any) -> ModuleType:
        _warn(spec.name, self.new)
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:  # the new module ran when it was imported
        return None


class _MovedModuleFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        new = MOVED_MODULES.get(fullname)
        return None if new is None else importlib.util.spec_from_loader(fullname, _AliasLoader(new))


def install() -> None:
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder())


def moved_attribute(old_module: str, new_module: str, name: str) -> Any:
    """``name`` of a module whose contents moved, with a DeprecationWarning (a module ``__getattr__`` calls this)."""
    if name.startswith("__"):
        raise AttributeError(name)
    value = getattr(importlib.import_module(new_module), name, _MISSING)
    if value is _MISSING:
        raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
    _warn(f"{old_module}.{name}", f"{new_module}.{name}")
    return value


_MISSING = object()
