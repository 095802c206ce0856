"""One run's account of its LLM calls: hard caps (``--max-calls``, ``--max-cost``) and the live meter.

Every client of a run (the evaluated model and each judge) shares one :class:`RunLedger`. Backends ask
:meth:`RunLedger.admit` right before each request goes out (retries included: a retry is a request, and
providers bill or rate-limit it as one); once a cap is reached every later request is refused and comes
back as a *skipped* completion (``Completion.skipped``), which is neither cached nor counted as a model
failure. Requests already in flight finish and are cached, so a cap stops a run within one batch
(``concurrency`` requests) of its limit and a rerun resumes from the cache.

The cost cap compares the cost of the answers received so far; a call whose cost is not known (litellm has
no price for the model, or the server's usage report was missing, negative or absurd: sciprobe.llm.usage)
counts as unknown, and a run with a cost cap refuses to start further calls rather than spend blind.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, TextIO

from sciprobe.core.errors import SciprobeError
from sciprobe.llm.types import Completion
from sciprobe.llm.usage import known_cost


@dataclass(frozen=True)
class Budget:
    max_calls: int | None = None
    max_cost_usd: float | None = None

    def __post_init__(self) -> None:
        if self.max_calls is not None and self.max_calls < 0:
            raise SciprobeError(f"--max-calls must be >= 0, got {self.max_calls}")
        if self.max_cost_usd is not None and self.max_cost_usd < 0:
            raise SciprobeError(f"--max-cost must be >= 0, got {self.max_cost_usd}")

    @property
    def unlimited(self) -> bool:
        return self.max_calls is None and self.max_cost_usd is None

    def as_dict(self) -> dict[str, Any]:
        return {"max_calls": self.max_calls, "max_cost_usd": self.max_cost_usd}


class RunLedger:
    """Thread-safe counters for one run, the caps, and an optional meter line on stderr."""

    def __init__(self, budget: Budget | None = None, *, planned_calls: int | None = None, meter: bool = False,
                 stream: TextIO | None = None, meter_interval_s: float = 10.0) -> None:
        self.budget = budget or Budget()
        self.planned_calls = planned_calls
        self.sent = 0           # requests that went out (retries included)
        self.answered = 0       # completions received from a provider (ok or failed)
        self.cached = 0
        self.failed = 0
        self.skipped = 0
        self.tokens = 0
        self.cost_usd = 0.0
        self.cost_unknown = 0
        self.stop_reason: str | None = None
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._meter = meter
        self._stream = stream or sys.stderr
        self._interval = meter_interval_s
        self._last_print = time.monotonic()  # the first line after one interval, not on the first call
        self._last_line = ""

    # -- caps --------------------------------------------------------------------------------------
    def admit(self) -> str | None:
        """Reserve one request; returns why not when a cap is reached (and from then on, always)."""
        with self._lock:
            if self.stop_reason is None:
                self.stop_reason = self._cap_reached()
            if self.stop_reason is not None:
                return self.stop_reason
            self.sent += 1
            return None

    def _cap_reached(self) -> str | None:
        budget = self.budget
        if budget.max_calls is not None and self.sent >= budget.max_calls:
            return f"max_calls={budget.max_calls} reached"
        if budget.max_cost_usd is not None:
            if self.cost_usd >= budget.max_cost_usd:
                return f"max_cost=${budget.max_cost_usd:g} reached (spent ${self.cost_usd:.4f})"
            if self.cost_unknown:
                return (f"max_cost=${budget.max_cost_usd:g} cannot be enforced: {self.cost_unknown} answered "
                        "call(s) have no known cost (no price in litellm's table, or the server's usage report "
                        "was missing or invalid)")
        return None

    @property
    def exhausted(self) -> bool:
        return self.stop_reason is not None

    # -- accounting --------------------------------------------------------------------------------
    def record(self, completion: Completion) -> None:
        """Account one completion handed to a runner (a cache hit, an answer, a failure or a skip)."""
        with self._lock:
            if completion.skipped:
                self.skipped += 1
            elif completion.cached:
                self.cached += 1
            else:
                self.answered += 1
                cost = known_cost(completion.cost_usd)
                if not completion.ok:
                    self.failed += 1
                elif cost is None:
                    self.cost_unknown += 1
                else:
                    self.cost_usd += cost
                self.tokens += completion.prompt_tokens + completion.completion_tokens
            due = self._meter and (time.monotonic() - self._last_print >= self._interval)
            if due:
                self._last_print = time.monotonic()
                line = self.meter_line()
        if due:
            self._emit(line)

    def meter_line(self) -> str:
        """``planned_calls`` are the calls the plan expects to *send* (cache hits excluded), so progress and
        ETA follow the answers that cost time, not the instant cache hits."""
        elapsed = time.monotonic() - self._started
        parts = [f"calls {self.answered} answered, {self.cached} cached, {self.failed} failed"]
        if self.skipped:
            parts.append(f"{self.skipped} skipped")
        parts.append(f"{self.tokens} tokens")
        cost = f"${self.cost_usd:.4f}"
        if self.cost_unknown:
            cost += f" (+{self.cost_unknown} unpriced)"
        parts.append(cost)
        if self.planned_calls:
            done = self.answered + self.skipped
            parts.insert(0, f"{min(done, self.planned_calls)}/{self.planned_calls} planned calls")
            remaining = self.planned_calls - done
            if 0 < self.answered and remaining > 0 and not self.exhausted:
                parts.append(f"ETA {_clock(elapsed / self.answered * remaining)}")
        parts.append(f"elapsed {_clock(elapsed)}")
        return " | ".join(parts)

    def _emit(self, line: str) -> None:
        from tqdm import tqdm

        if line == self._last_line:
            return
        self._last_line = line
        tqdm.write("[sciprobe] " + line, file=self._stream)  # above any batch progress bar, not through it

    def finish(self) -> None:
        """The last meter line (always, when the meter is on)."""
        if self._meter:
            self._emit(self.meter_line())

    def as_dict(self) -> dict[str, Any]:
        with self._lock:
            return {"budget": self.budget.as_dict(), "sent": self.sent, "answered": self.answered,
                    "cached": self.cached, "failed": self.failed, "skipped": self.skipped, "tokens": self.tokens,
                    "cost_usd": round(self.cost_usd, 6), "cost_unknown_calls": self.cost_unknown,
                    "stopped": self.stop_reason}


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


def skipped_completion(reason: str, key: str, model: str) -> Completion:
    return Completion(text=None, error=f"BudgetExhausted: {reason}", skipped=True, attempts=0,
                      request_hash=key, model=model)
