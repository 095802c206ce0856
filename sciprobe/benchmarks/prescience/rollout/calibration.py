"""Train-period distributions the rollout samples from (Appendix C.7): papers per day, team sizes, influential
reference counts, and the first-time-author rate, all from the train-period targets.

- Papers per day: the empirical distribution of daily target counts over the days that have targets
  (``empirical``, the paper), or upstream ``simulate.py``'s Normal(mean, sd) rounded and clipped at 0
  (``normal``). Both use only days with at least one target, as upstream's ``Counter`` of target dates does.
- Team sizes and reference counts: add-one-smoothed empirical distributions over the observed values (upstream's
  ``compute_smoothed_count_distribution``).
- First-time authors: the share of target author slots with an empty publication history.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError

__all__ = ["Calibration", "calibrate"]


def _smoothed(counts: Sequence[int]) -> tuple[list[int], list[float]]:
    frequency = Counter(counts)
    values = sorted(frequency)
    weights = np.array([frequency[v] + 1 for v in values], dtype=float)
    return values, (weights / weights.sum()).tolist()


@dataclass(frozen=True)
class Calibration:
    daily_counts: list[int]  # one entry per train day with targets
    team_sizes: tuple[list[int], list[float]]
    reference_counts: tuple[list[int], list[float]]
    first_time_author_rate: float
    n_targets: int

    def papers_today(self, rng: np.random.Generator, mode: str) -> int:
        if mode == "normal":
            counts = np.asarray(self.daily_counts, dtype=float)
            sd = float(np.std(counts, ddof=1)) if len(counts) > 1 else 0.0
            draw = rng.normal(float(counts.mean()), sd) if sd > 0 else float(counts.mean())
            return max(int(round(draw)), 0)
        return int(rng.choice(self.daily_counts))

    def team_size(self, rng: np.random.Generator) -> int:
        values, p = self.team_sizes
        return int(rng.choice(values, p=p))

    def reference_count(self, rng: np.random.Generator) -> int:
        values, p = self.reference_counts
        return int(rng.choice(values, p=p))

    def summary(self) -> dict[str, Any]:
        counts = np.asarray(self.daily_counts, dtype=float)
        return {"n_train_targets": self.n_targets, "n_train_days_with_targets": len(self.daily_counts),
                "daily_mean": float(counts.mean()), "daily_sd": float(np.std(counts, ddof=1)) if len(counts) > 1
                else 0.0, "team_sizes": dict(zip(*self.team_sizes)),
                "reference_counts": dict(zip(*self.reference_counts)),
                "first_time_author_rate": self.first_time_author_rate}


def calibrate(targets: Sequence[Mapping[str, Any]]) -> Calibration:
    """The distributions of the train-period targets (records in the release schema)."""
    if not targets:
        raise SciprobeError("the train corpus has no target papers to calibrate the rollout on")
    per_day = Counter(str(p["date"]) for p in targets)
    authors = [list(p.get("authors") or []) for p in targets]
    slots = [a for team in authors for a in team]
    first_time = sum(1 for a in slots if not (a.get("publication_history") or []))
    return Calibration(
        daily_counts=[per_day[d] for d in sorted(per_day)],
        team_sizes=_smoothed([max(len(team), 1) for team in authors]),
        reference_counts=_smoothed([max(len(p.get("key_references") or []), 1) for p in targets]),
        first_time_author_rate=first_time / len(slots) if slots else 0.0,
        n_targets=len(targets))
