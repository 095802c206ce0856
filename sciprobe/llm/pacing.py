"""Request pacing per deployment: requests-per-minute and tokens-per-minute limits, and 429 back-pressure.

A :class:`Pacer` spaces request *starts* evenly (a GCRA schedule: the next start may not be earlier than
the previous one plus ``60 / rpm`` seconds), so a run at ``rpm=600`` sends one request every 100 ms
instead of a burst of 600 followed by a minute of 429s. Token pacing does the same with the estimated
tokens of each request (prompt characters / 4 plus ``max_tokens``), corrected by the usage the provider
reports.

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
from typing import Any

#: A 429 stretches the request interval by this factor (the configured rate was too high for the provider).
SLOWDOWN = 1.25
#: Each success shrinks a stretched interval by this factor, back to the configured one at most.
RECOVERY = 0.98


class Pacer:
    def __init__(self, rpm: float | None = None, tpm: float | None = None) -> None:
        self.rpm = rpm
        self.tpm = tpm
        self._base_interval = 60.0 / rpm if rpm else 0.0
        self.interval = self._base_interval
        self._next_start = 0.0       # monotonic time before which no request may start
        self._token_time = 0.0       # the token schedule's theoretical arrival time
        self.pauses = 0              # 429s that paused the deployment
        self._lock = threading.Lock()

    def _reserve(self, tokens: int) -> float:
        """Book the next start slot; returns how long the caller must wait for it."""
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next_start)
            if self.tpm:
                # The request may start once the token schedule has caught up to it.
                start = max(start, self._token_time)
                self._token_time = max(self._token_time, start) + tokens * 60.0 / self.tpm
            self._next_start = start + self.interval
            return start - now

    async def acquire(self, tokens: int = 0) -> None:
        wait = self._reserve(tokens)
        if wait > 0:
            await asyncio.sleep(wait)

    def settle(self, estimated_tokens: int, actual_tokens: int) -> None:
        """Correct the token schedule once the provider reported the request's real usage."""
        if self.tpm and actual_tokens > 0:
            with self._lock:
                self._token_time += (actual_tokens - estimated_tokens) * 60.0 / self.tpm

    def on_success(self) -> None:
        if self.interval > self._base_interval:
            with self._lock:
                self.interval = max(self._base_interval, self.interval * RECOVERY)

    def on_rate_limited(self, pause_s: float) -> None:
        """A 429: hold every start of this deployment for ``pause_s`` and slow the schedule down."""
        with self._lock:
            self.pauses += 1
            self._next_start = max(self._next_start, time.monotonic() + pause_s)
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
