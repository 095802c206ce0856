"""SGI-Bench scoring (shared/spec/sgibench.md §3): one module per component, each with ``mode="official"``
(SGI-Bench@8268d43, quirks included) and ``mode="paper"``; judges are injected callables."""

from sciprobe.benchmarks.sgibench.scoring._common import MODES, Judge, judge_from_client

__all__ = ["MODES", "Judge", "judge_from_client"]
