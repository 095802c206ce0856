"""SGI-Score: the mean of the five SGI-Bench component scores (shared/spec/sgibench.md §3.6, §6.1, §8
"Aggregation").

Components (each 0-100): deep research EM, idea generation final, dry experiment PassAll@5, wet experiment
final ((SS + PA) / 2), experimental reasoning MCA. official: every component is rounded to two decimals
before the unweighted mean (upstream ``show_results(precision=2)``), the score is rounded to two decimals, and
a missing component means no score. paper: the same mean without the intermediate rounding. Both modes carry
each component's coverage; a component whose coverage is incomplete is flagged. A component with no scored
item (``n_scored == 0``, or no item at all) never contributes a number: upstream's ``mean`` asserts on an
empty list, so there is no SGI-Score and ``refused_components`` names the component and the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.score_report import Coverage, ScoreReport
from sciprobe.benchmarks.sgibench.scoring._common import check_mode

METRIC = "sgi_score"
COMPONENTS = ("deep_research", "idea_generation", "dry_experiment", "wet_experiment", "experimental_reasoning")
HEADLINE = {"deep_research": "exact_match", "idea_generation": "final", "dry_experiment": "passall_at_5",
            "wet_experiment": "final", "experimental_reasoning": "mca"}


def _component(value: Any, name: str) -> tuple[float | None, dict[str, Any] | None]:
    """A component given as a number, a ScoreReport or a ``ScoreReport.as_dict()``-style mapping."""
    if value is None:
        return None, None
    if isinstance(value, ScoreReport):
        return value.values.get(HEADLINE[name]), value.coverage.as_dict()
    if isinstance(value, Mapping):
        score = value.get("score", value.get(HEADLINE[name]))
        coverage = value.get("coverage")
        if coverage is None and "n_items" in value:
            coverage = {k: value[k] for k in ("n_items", "n_scored", "n_failed") if k in value}
        return score, coverage
    return value, None


def sgi_score(components: Mapping[str, Any], *, mode: str = "official") -> ScoreReport:
    """``components`` maps the five names to a number (0-100), a component ScoreReport or a mapping with
    ``score`` (or the headline key) and ``coverage``; missing or None components, and components whose
    coverage shows no scored item, give ``sgi_score=None``."""
    check_mode(mode)
    unknown = set(components) - set(COMPONENTS)
    if unknown:
        raise SciprobeError(f"unknown SGI components {sorted(unknown)}; known: {', '.join(COMPONENTS)}")
    scores: dict[str, float | None] = {}
    coverage: dict[str, Any] = {}
    refused: dict[str, str] = {}
    for name in COMPONENTS:
        score, cov = _component(components.get(name), name)
        if score is not None:
            score = float(score)
            if not 0.0 <= score <= 100.0:
                raise SciprobeError(f"component {name} must be on 0-100, got {score}")
        if score is not None and cov and (cov.get("n_scored", 0) == 0 or cov.get("n_items", 0) == 0):
            refused[name] = ("no item" if cov.get("n_items", 0) == 0 else "no scored item") + \
                f" ({cov.get('n_items', 0)} item(s), {cov.get('n_failed', 0)} failed)"
            score = None
        scores[name] = round(score, 2) if (score is not None and mode == "official") else score
        coverage[name] = cov
    missing = [n for n in COMPONENTS if scores[n] is None]
    total = None if missing else sum(scores.values()) / len(COMPONENTS)  # type: ignore[arg-type]
    if total is not None and mode == "official":
        total = round(total, 2)
    incomplete = [n for n, c in coverage.items() if c and c.get("n_scored", 0) < c.get("n_items", 0)]
    values = {"sgi_score": total, "components": scores, "component_coverage": coverage,
              "missing_components": missing, "incomplete_components": incomplete, "refused_components": refused}
    present = len(COMPONENTS) - len(missing)
    notes = [f"no SGI-Score: missing {', '.join(missing)}"] if missing else []
    notes += [f"component {name} refused: {reason}" for name, reason in refused.items()]
    return ScoreReport(METRIC, mode, values, Coverage(len(COMPONENTS), present, len(missing)), notes=notes)


def by_group(per_item: Sequence[float], groups: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per-group mean ×100 and item count (the paper's per-discipline / per-type tables, §6.8-6.17), e.g.
    ``by_group(report.values["per_item"], rows["discipline"])`` for EM or MCA. Groups are sorted by name."""
    if len(per_item) != len(groups):
        raise SciprobeError(f"per_item and groups differ in length ({len(per_item)} vs {len(groups)})")
    sums: dict[str, list[float]] = {}
    for value, group in zip(per_item, groups):
        sums.setdefault(str(group), []).append(float(value))
    return {g: {"score": 100.0 * sum(v) / len(v), "n": len(v)} for g, v in sorted(sums.items())}
