"""The score object every metric returns: values plus coverage and the mode that produced them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Coverage:
    """How many items a number stands on. ``n_failed`` counts items that could not be scored
    (unparsable answers, judge errors, crashed runs); official modes may drop them, never silently."""

    n_items: int
    n_scored: int
    n_failed: int

    @property
    def failure_rate(self) -> float:
        return self.n_failed / self.n_items if self.n_items else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"n_items": self.n_items, "n_scored": self.n_scored, "n_failed": self.n_failed,
                "failure_rate": round(self.failure_rate, 6)}


@dataclass
class ScoreReport:
    metric: str
    mode: str
    values: dict[str, Any]
    coverage: Coverage
    params: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "mode": self.mode, **self.values, "coverage": self.coverage.as_dict(),
                "params": self.params, "notes": list(self.notes)}

    def flat(self, **extra: Any) -> dict[str, Any]:
        """The one-level dict a metric module returns: ``mode``, then `extra`, the values and the coverage
        fields (later keys win on a clash, in that order)."""
        return {"mode": self.mode, **extra, **self.values, **self.coverage.as_dict()}
