"""The rollout's parameters, with the paper's values as defaults (PreScience §4.5, Appendix C.7; spec
``prescience.md`` "Corpus-generation rollouts").

Where the paper and upstream's code (``allenai/prescience@47384ed`` ``multiturn/``) differ, the paper wins and the
code's choice is an option: daily paper counts are drawn from the empirical train-period distribution
(``daily_counts="empirical"``; upstream's ``simulate.py`` draws Normal(mean, sd) rounded, ``"normal"``), and the
metric scripts' defaults (``--time_bucket 14 --n 50 --k 5``) give way to the paper's monthly buckets, n = 100,
k = 10.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import asdict, dataclass, replace
from typing import Any

from sciprobe.core.errors import SciprobeError

__all__ = ["PAPER_T0", "RolloutParams"]

PAPER_T0 = "2024-10-01"  # the first day of the test period: the rollout starts from H^{<t0}
DAILY_COUNT_MODES = ("empirical", "normal")
POLICIES = ("embedding_fusion", "frequency")


@dataclass(frozen=True)
class RolloutParams:
    """Everything that decides a rollout's draws and metrics (recorded in every output)."""

    t0: str = PAPER_T0
    days: int = 365  # 12 months of daily steps
    repeats: int = 6  # independent rollouts, pooled in the synthetic curves
    seed: int = 42  # upstream's default seed; repeat r uses seed + r
    daily_counts: str = "empirical"
    num_recent_papers: int = 10  # author embedding = mean of the author's 10 most recent papers
    collaborators: str = "embedding_fusion"  # one-shot Embedding Fusion (paper); or "frequency"
    prior_work: str = "embedding_fusion"
    n_queries: int = 100  # papers sampled per month (n)
    k_neighbours: int = 10  # nearest neighbours per sampled paper (k)
    n_bootstrap: int = 1000  # bootstrap resamples for the 95% intervals
    natural: bool = True  # also the real ("natural") curves, with pools size-matched to the synthetic ones
    strict_pools: bool = False  # True: a month with fewer than n papers is an error (upstream); False: all of them

    def __post_init__(self) -> None:
        try:
            dt.date.fromisoformat(self.t0)
        except ValueError:
            raise SciprobeError(f"rollout start {self.t0!r} is not a YYYY-MM-DD date") from None
        for name in ("days", "repeats", "n_queries", "k_neighbours", "n_bootstrap", "num_recent_papers"):
            if int(getattr(self, name)) < 1:
                raise SciprobeError(f"rollout parameter {name} must be at least 1, got {getattr(self, name)}")
        if self.daily_counts not in DAILY_COUNT_MODES:
            raise SciprobeError(f"daily counts {self.daily_counts!r}: choose one of {', '.join(DAILY_COUNT_MODES)}")
        for name in ("collaborators", "prior_work"):
            if getattr(self, name) not in POLICIES:
                raise SciprobeError(f"{name} policy {getattr(self, name)!r}: choose one of {', '.join(POLICIES)}")

    def day(self, index: int) -> str:
        """The ISO date of simulated day ``index`` (0 = t0)."""
        return (dt.date.fromisoformat(self.t0) + dt.timedelta(days=index)).isoformat()

    @property
    def end(self) -> str:
        """The first day after the rollout (exclusive end)."""
        return self.day(self.days)

    def repeat_seed(self, repeat: int) -> int:
        return self.seed + repeat

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def simulation_key(self) -> dict[str, Any]:
        """The parameters a simulated corpus depends on (metric parameters excluded: they reuse the corpus)."""
        keys = ("t0", "days", "seed", "daily_counts", "num_recent_papers", "collaborators", "prior_work")
        return {k: getattr(self, k) for k in keys}

    def with_(self, **changes: Any) -> RolloutParams:
        return replace(self, **changes)


def fingerprint(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]
