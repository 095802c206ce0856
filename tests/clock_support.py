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


class SharedClock:
    """A fake UTC clock that several processes read (a ``multiprocessing.Value``): ``now()`` is the shared value,
    ``advance(s)`` moves it for every process at once. Pass it to a spawned process like any argument."""

    def __init__(self, start: float = 1_900_000_000.0, context=None) -> None:
        import multiprocessing

        self._value = (context or multiprocessing.get_context("spawn")).Value("d", start)

    def now(self):
        import datetime as dt

        return dt.datetime.fromtimestamp(self._value.value, dt.UTC)

    __call__ = now

    def advance(self, seconds: float) -> None:
        with self._value.get_lock():
            self._value.value += seconds
