"""Request pacing per deployment: requests-per-minute and tokens-per-minute limits, and 429 back-pressure.

A :class:`Pacer` spaces request *starts* evenly (GCRA: a request may start once the theoretical schedule
of one start per ``60 / rpm`` seconds has reached it, with half an interval of tolerance), so a run at ``rpm=600``
sends one request every 100 ms instead of a burst of 600 followed by a minute of 429s. Token pacing does the same
with the estimated tokens of each request (prompt characters / 4 plus ``max_tokens``), corrected by the usage the
provider reports.

Adaptive part: a 429 pauses every request of the deployment (not only the one that got it) for the
provider's Retry-After or the backoff delay, and slows the schedule by ``SLOWDOWN``; each later success
speeds it back up by ``RECOVERY`` until the configured rate is reached again. Without a configured rpm the
pacer still applies the pauses.

One pacer per deployment (model name + base URL) per process, shared by every client that calls it: a
judge and the evaluated model on the same deployment draw from one limit, as the provider counts them.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

#: A 429 stretches the request interval by this factor (the configured rate was too high for the provider).
SLOWDOWN = 1.25
#: Share of one interval (of one second, for tokens) a late start may catch up: late wake-ups of a busy
#: event loop are made good without sending two requests back to back.
TOLERANCE = 0.5
#: Each success shrinks a stretched interval by this factor, back to the configured one at most.
RECOVERY = 0.98


class Pacer:
    """``clock`` and ``sleep`` are injectable so the schedule can be checked without waiting for it."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self.rpm = rpm
        self.tpm = tpm
        self._base_interval = 60.0 / rpm if rpm else 0.0
        self.interval = self._base_interval
        self._tat = 0.0              # theoretical arrival time of the next request (GCRA)
        self._token_tat = 0.0        # the same for tokens
        self._paused_until = 0.0     # a 429 holds every start until then
        self.pauses = 0              # 429s that paused the deployment
        self._lock = threading.Lock()
        self._clock = clock
        self._sleep = sleep

    def _try_start(self, tokens: int) -> float:
        """Start now (returns 0) or say how long to wait before asking again.

        Nothing is reserved while waiting: a caller that wakes late (a busy event loop) asks again, so late
        wakers cannot all start together. ``TOLERANCE`` of an interval may be caught up after a late
        start; more would burst.
        """
        with self._lock:
            now = self._clock()
            ready = max(self._paused_until, self._tat - TOLERANCE * self.interval)
            if self.tpm:
                ready = max(ready, self._token_tat - TOLERANCE)
            if now < ready:
                return ready - now
            self._tat = max(self._tat, now) + self.interval
            if self.tpm:
                self._token_tat = max(self._token_tat, now) + tokens * 60.0 / self.tpm
            return 0.0

    async def acquire(self, tokens: int = 0) -> None:
        if not (self.interval or self.tpm or self._paused_until):
            return
        while (wait := self._try_start(tokens)) > 0:
            await self._sleep(wait)

    def settle(self, estimated_tokens: int, actual_tokens: int) -> None:
        """Correct the token schedule once the provider reported the request's real usage."""
        if self.tpm and actual_tokens > 0:
            with self._lock:
                self._token_tat += (actual_tokens - estimated_tokens) * 60.0 / self.tpm

    def on_success(self) -> None:
        if self.interval > self._base_interval:
            with self._lock:
                self.interval = max(self._base_interval, self.interval * RECOVERY)

    def on_rate_limited(self, pause_s: float) -> None:
        """A 429: hold every start of this deployment for ``pause_s`` and slow the schedule down."""
        with self._lock:
            self.pauses += 1
            self._paused_until = max(self._paused_until, self._clock() + pause_s)
            if self._base_interval:
                self.interval = min(self.interval * SLOWDOWN, self._base_interval * 8)


def estimate_tokens(messages: Any, params: dict[str, Any]) -> int:
    """A cheap upper-ish estimate: 4 characters a token, plus the completion budget when one is set."""
    chars = 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            chars += sum(len(part.get("text", "")) for part in content if isinstance(part, dict))
    return chars // 4 + 1 + int(params.get("max_tokens") or params.get("max_completion_tokens") or 0)


_PACERS: dict[tuple[str, str | None], Pacer] = {}
_PACERS_LOCK = threading.Lock()


def pacer_for(name: str, base_url: str | None, rpm: float | None, tpm: float | None) -> Pacer:
    """The process-wide pacer of a deployment; the strictest limits asked for win."""
    with _PACERS_LOCK:
        pacer = _PACERS.get((name, base_url))
        if pacer is None:
            pacer = _PACERS[(name, base_url)] = Pacer(rpm, tpm)
            return pacer
        if rpm and (not pacer.rpm or rpm < pacer.rpm):
            _PACERS[(name, base_url)] = pacer = Pacer(rpm, pacer.tpm if not tpm else min(tpm, pacer.tpm or tpm))
        elif tpm and (not pacer.tpm or tpm < pacer.tpm):
            _PACERS[(name, base_url)] = pacer = Pacer(pacer.rpm, tpm)
        return pacer
