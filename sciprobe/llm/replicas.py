"""Several OpenAI-compatible servers behind one model spec (``base_url=URL1|URL2|...``): which replica each
request goes to, and which replicas are out of service for a while. Both transports use it
(:class:`~sciprobe.llm.backends.RemoteBackend` and the direct :mod:`~sciprobe.llm.http_backend`).

- Choice: among the replicas in service with a free slot, the least busy (fewest requests in flight), ties in
  turn. A retry waits for a slot on another replica in service rather than going back to the one that just
  failed it, and skips the backoff wait (a failure of one server says nothing about the others).
- Slots and pacing: ``concurrency`` slots and an rpm/tpm pacer (:mod:`~sciprobe.llm.pacing`) per replica.
- Cool-down: a replica is taken out after ``COOLDOWN_AFTER_FAILURES`` failed attempts in a row (5xx,
  timeouts, broken or malformed bodies, bodies over the size cap, redirects, a 400 that another replica answered
  instead: :data:`~sciprobe.llm.backends.SERVER_FAULT` and the rest of the retry classes there), at once when it
  cannot be connected to, and for the pause it asked for on a 429.
  It stays out ``COOLDOWN_S``, doubled for each cool-down without a success in between (up to
  ``MAX_COOLDOWN_S``); then it gets one request at a time until one succeeds. When every replica is out, all
  are tried again (the retry policy then decides, as for a single server). A spec with one URL has no
  cool-downs: everything behaves as before.

Why not litellm's Router (1.108.14, ``litellm/router_utils/cooldown_handlers.py``): it never cools down a
deployment on an ``APIConnectionError`` (``_is_cooldown_required``), i.e. a dead server keeps getting calls; its
cool-down clock is ``time.time()`` in a TTL cache (nothing to inject in a test); and it would add its own retries
and per-deployment semaphores around the ones the client already has, on one transport only.

Health is shared by every event loop that uses the backend; the slots are per event loop (asyncio primitives
belong to one loop), as the single-server concurrency bound was.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sciprobe.llm.pacing import Pacer, pacer_for

#: Failed attempts in a row that take a replica out of service.
COOLDOWN_AFTER_FAILURES = 3
#: First cool-down of a replica, seconds; doubled for each further cool-down before a success.
COOLDOWN_S = 10.0
MAX_COOLDOWN_S = 300.0


def could_not_connect(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it: litellm and the HTTP transport both wrap it) is a failed connect:
    refused, unknown host, no route. A server that cannot be reached is taken out at once."""
    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 12:
        if isinstance(current, ConnectionRefusedError) or type(current).__name__ in (
                "ClientConnectorError", "ClientConnectorDNSError", "ConnectError"):
            return True
        current = current.__cause__ or current.__context__
        seen += 1
    return False


@dataclass(eq=False)
class Replica:
    """One server of a logical model: where to send, its pacer, its health and what it did."""

    url: str | None                 # None: the provider's own endpoint (a spec without base_url)
    pacer: Pacer
    failures_in_a_row: int = 0
    out_until: float | None = None  # out of service until then (the pool's clock)
    probing: bool = False           # back from a cool-down: one request at a time until one succeeds
    cooldowns_in_a_row: int = 0
    answered: int = 0               # attempts that got an answer
    failed: int = 0                 # attempts that got none (counted whether or not the request was retried)
    cooldowns: int = 0


class ReplicaPool:
    """The replicas of one backend and their health; ``clock`` is injectable (tests move it by hand)."""

    def __init__(self, urls: Sequence[str | None], pacers: Sequence[Pacer], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not urls or len(urls) != len(pacers):
            raise ValueError("a replica pool needs one pacer per URL, and at least one URL")
        self.replicas = [Replica(url, pacer) for url, pacer in zip(urls, pacers)]
        self.clock = clock
        self.tracked = len(self.replicas) > 1  # one server: no cool-downs, nothing to report

    @classmethod
    def for_spec(cls, name: str, urls: Sequence[str | None], rpm: float | None, tpm: float | None) -> ReplicaPool:
        """The pool of a spec: each replica draws on the process-wide pacer of its deployment (name + URL)."""
        return cls(urls, [pacer_for(name, url, rpm, tpm) for url in urls])

    @property
    def paces_tokens(self) -> bool:
        """Whether any replica's pacer counts tokens (then each request's tokens are estimated)."""
        return any(r.pacer.tpm for r in self.replicas)

    # -- health ------------------------------------------------------------------------------------
    def in_service(self, replica: Replica, now: float) -> bool:
        return replica.out_until is None or now >= replica.out_until

    def candidates(self) -> tuple[list[Replica], bool]:
        """The replicas a request may go to now: those in service, else all of them (then True: each is
        tried with all its slots, and the retry policy decides, as for a single server)."""
        if not self.tracked:
            return self.replicas, False
        now = self.clock()
        serving = [r for r in self.replicas if self.in_service(r, now)]
        return (serving, False) if serving else (self.replicas, True)

    def has_other_in_service(self, replica: Replica) -> bool:
        """Whether a retry can go elsewhere at once (then it does not wait out the backoff)."""
        if not self.tracked:
            return False
        now = self.clock()
        return any(r is not replica and self.in_service(r, now) for r in self.replicas)

    def answered(self, replica: Replica) -> None:
        replica.answered += 1
        self.alive(replica)

    def alive(self, replica: Replica) -> None:
        """The replica answered (even an answer that fails the request, e.g. a 400): it is healthy."""
        replica.failures_in_a_row = 0
        replica.cooldowns_in_a_row = 0
        replica.probing = False

    def failed(self, replica: Replica, exc: BaseException) -> None:
        """An attempt on ``replica`` got no answer; take it out when that is one failure too many."""
        replica.failed += 1
        replica.failures_in_a_row += 1
        if not self.tracked:
            return
        now = self.clock()
        if not self.in_service(replica, now):  # requests sent before it went out: the same episode
            return
        if replica.probing or could_not_connect(exc) or replica.failures_in_a_row >= COOLDOWN_AFTER_FAILURES:
            seconds = min(MAX_COOLDOWN_S, COOLDOWN_S * 2 ** min(replica.cooldowns_in_a_row, 16))
            replica.cooldowns_in_a_row += 1
            self._take_out(replica, now + seconds, probe_after=True)

    def rate_limited(self, replica: Replica, pause_s: float) -> None:
        """A 429: the replica is alive but wants ``pause_s`` without requests; the others take them."""
        replica.failed += 1
        if self.tracked and pause_s > 0:
            now = self.clock()
            until = now + pause_s
            if replica.out_until is None or replica.out_until < until:
                self._take_out(replica, until, probe_after=replica.probing)

    def _take_out(self, replica: Replica, until: float, *, probe_after: bool) -> None:
        replica.out_until = until
        replica.probing = probe_after
        replica.cooldowns += 1

    def report(self) -> dict[str, dict[str, int]]:
        """Per replica URL (never with credentials: ModelSpec refuses them): attempts answered, attempts
        failed, cool-downs. Empty for a single server."""
        if not self.tracked:
            return {}
        return {str(r.url): {"answered": r.answered, "failed": r.failed, "cooldowns": r.cooldowns}
                for r in self.replicas}


@dataclass
class ReplicaGate:
    """The request slots of one event loop: ``slots`` per replica in service (one while a replica probes)."""

    pool: ReplicaPool
    slots: int
    in_flight: dict[Replica, int] = field(default_factory=dict)
    _waiters: deque[tuple[asyncio.Future[None], Replica | None]] = field(default_factory=deque)
    _turn: int = 0

    def _limit(self, replica: Replica, all_out: bool) -> int:
        return 1 if replica.probing and not all_out else self.slots

    def _pick(self, avoid: Replica | None) -> Replica | None:
        """The least busy candidate with a free slot, ties in turn; never ``avoid`` while there is another
        candidate (a retry waits for another server rather than going back to the one that just failed it)."""
        candidates, all_out = self.pool.candidates()
        replicas = self.pool.replicas
        n = len(replicas)
        best: Replica | None = None
        best_load, best_index = 0, 0
        for step in range(n):
            index = (self._turn + step) % n
            replica = replicas[index]
            load = self.in_flight.get(replica, 0)
            if load >= self._limit(replica, all_out) or (n > 1 and replica not in candidates):
                continue
            if replica is avoid and len(candidates) > 1:
                continue
            if best is None or load < best_load:
                best, best_load, best_index = replica, load, index
        if best is not None:
            self._turn = (best_index + 1) % n
        return best

    async def acquire(self, avoid: Replica | None = None) -> Replica:
        """A slot on the least busy replica in service, other than ``avoid`` if possible; waits for one."""
        first = True
        while True:
            replica = self._pick(avoid)
            if replica is not None:
                self.in_flight[replica] = self.in_flight.get(replica, 0) + 1
                if self._waiters and self._has_room():
                    self._wake(None)  # room for more (a replica came back): one release woke only this waiter
                return replica
            waiter = asyncio.get_running_loop().create_future()
            # woken but beaten to the slot: keep this waiter's place at the front
            (self._waiters.append if first else self._waiters.appendleft)((waiter, avoid))
            first = False
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake(None)  # woken but leaving: pass the freed slot on
                raise

    def _has_room(self) -> bool:
        candidates, all_out = self.pool.candidates()
        return any(self.in_flight.get(r, 0) < self._limit(r, all_out) for r in candidates)

    def release(self, replica: Replica) -> None:
        self.in_flight[replica] -= 1
        self._wake(replica)

    def _wake(self, freed: Replica | None) -> None:
        """Wake the first waiter that may take a slot on ``freed`` (None: any waiter)."""
        skipped = []
        try:
            while self._waiters:
                waiter, avoid = self._waiters.popleft()
                if waiter.done():
                    continue
                if freed is not None and avoid is freed and len(self.pool.replicas) > 1:
                    skipped.append((waiter, avoid))
                    continue
                waiter.set_result(None)
                return
        finally:
            self._waiters.extendleft(reversed(skipped))
