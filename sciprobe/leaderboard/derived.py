"""What the Space derives from the store (tables, plots, choices), kept until the store changes (issue 28).

A page load shows a dozen views of the same results: every tab's table, its two plots, the filter choices, the
provenance rows, the queue. Deriving them costs far more than reading the store's change counters, so each view
is kept under the counter it derives from (:meth:`~sciprobe.leaderboard.store.SQLiteStore.results_version`,
:meth:`~sciprobe.leaderboard.store.SQLiteStore.requests_version`): an unchanged store answers a page load from
here, and any write (by any process) moves the counter, so the next load derives the views again.

A view is filed under the version read *before* the data it was derived from, so its data is never older than
its version: a reader that sees a newer version never finds it. Versions only grow, so a slow reader that finishes
after a newer version was filed keeps its value to itself rather than evicting the newer views. A store without
counters (``version`` None) is not cached at all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")

#: views kept per scope; filter combinations beyond this start the scope afresh (a bound on memory, not a tuning)
MAX_VIEWS = 256


class DerivedViews:
    """Derived values per scope (``results``, ``requests``), each valid for one version of its scope."""

    def __init__(self, max_views: int = MAX_VIEWS) -> None:
        self._lock = threading.Lock()
        self._scopes: dict[str, tuple[int, dict[Hashable, Any]]] = {}
        self._max_views = max_views

    def get(self, scope: str, version: int | None, key: Hashable, compute: Callable[[], T]) -> T:
        """The value of ``key`` at ``version`` of ``scope``, computed once per version."""
        if version is None:
            return compute()
        with self._lock:
            held = self._scopes.get(scope)
            if held is not None and held[0] == version and key in held[1]:
                return held[1][key]
        value = compute()  # outside the lock: two loads may both compute, neither waits on the other
        with self._lock:
            held = self._scopes.get(scope)
            if held is not None and held[0] > version:
                return value  # a newer version is already filed: keep its views
            if held is None or held[0] != version or len(held[1]) >= self._max_views:
                held = (version, {})
                self._scopes[scope] = held
            held[1][key] = value
        return value


__all__ = ["DerivedViews", "MAX_VIEWS"]
