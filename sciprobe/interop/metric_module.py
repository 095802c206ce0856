"""What every ``evaluate`` module in ``metrics/`` declares the same way, so each module keeps only its own parts.

    def _info(self):
        return metric_info("prescience", _DESCRIPTION, _KWARGS_DESCRIPTION, FEATURES,
                           codebase_urls=["https://github.com/allenai/prescience"])

The benchmark's citation, homepage and pinned upstream commit (a codebase URL) come from its declaration
(:mod:`sciprobe.benchmarks`): declared once, never copied into a module where it could drift.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def metric_info(benchmark: str, description: str, inputs_description: str, features: Any, *,
                codebase_urls: Sequence[str] = (), reference_urls: Sequence[str] = (), extra_citation: str = "",
                citation: str | None = None) -> Any:
    """An ``evaluate.MetricInfo`` for a metric of ``benchmark``.

    ``extra_citation``: BibTeX appended to the benchmark's (e.g. the paper defining the statistic);
    ``citation``: replaces it (a metric that is not the benchmark's own idea)."""
    import evaluate

    from sciprobe.core.registry import get_benchmark

    declared = get_benchmark(benchmark)
    if declared.upstream is not None and declared.upstream.url not in codebase_urls:
        codebase_urls = [*codebase_urls, declared.upstream.url]  # the pinned commit official mode reproduces
    if citation is None:
        citation = declared.citation.strip() + "\n" + (extra_citation.strip() + "\n" if extra_citation else "")
    return evaluate.MetricInfo(module_type="metric", description=description, citation=citation,
                               inputs_description=inputs_description, features=features,
                               homepage=declared.homepage, codebase_urls=list(codebase_urls),
                               reference_urls=list(reference_urls))
