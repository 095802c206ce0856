"""A virtual clock for tests of time-based logic (pacing, backoff): waits advance it instead of passing, so the
tests assert the schedule exactly and never depend on how busy the machine is."""

from __future__ import annotations

import asyncio


class VirtualClock:
    """``now()`` and an async ``sleep(s)``: a sleeper wakes at (the time it went to sleep) + s, and the clock
    never goes back, so concurrent sleepers see one consistent timeline."""

    def __init__(self, start: float = 0.0) -> None:
        self.t = start
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        wake = self.t + max(0.0, seconds)
        await asyncio.sleep(0)  # let other coroutines run, as a real wait would
        self.t = max(self.t, wake)
