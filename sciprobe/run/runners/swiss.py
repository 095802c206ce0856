"""The Swiss tournament of IDRBench I2R (shared/spec/idrbench.md §5.2), as upstream
``irllm-framework@aa621e4`` plays it:

1. ``rounds`` rounds (10). At the start of each round players are sorted by (-points, title).
2. With an odd number of players, the lowest-ranked player who has not had a bye gets one, worth +1.
3. Greedy pairing: each unpaired player, in order, meets the next unpaired player it has not met yet
   (late rounds can leave players unpaired). Upstream remembers past opponents by **title**: two players
   with the same title count as one opponent (``opponents_by="title"``, the default = official). The
   corrected rule remembers them by player (``opponents_by="index"``).
4. "Paper 1" is always the higher-sorted player (no position swap).
5. The winner gets +1; an unparsable answer gives no point; the pair still counts as having met.
6. Round 1: all points are 0, so the first pairing is alphabetical by title.
7. Ties in (-points, title) keep the order of ``titles`` (Python's stable sort): pass the players in
   upstream's order (the distractors of ``list``, then the ``target_paper`` entries) to reproduce it.

Pairings are fixed at the start of a round, so all comparisons of a round can be asked at once; the
number of calls equals upstream's. :class:`SwissTournament` is a pure state machine; the driver in
:mod:`sciprobe.benchmarks.idrbench.i2r` asks the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Match:
    round: int
    paper_1: int
    paper_2: int
    winner: int | None = None  # 1, 2, or None (no point)


@dataclass
class SwissTournament:
    titles: list[str]
    rounds: int = 10
    opponents_by: str = "title"  # "title" (official, upstream) or "index" (corrected)
    points: list[int] = field(init=False)
    met: list[set[int]] = field(init=False)
    had_bye: set[int] = field(init=False, default_factory=set)
    matches: list[Match] = field(init=False, default_factory=list)
    byes: list[tuple[int, int]] = field(init=False, default_factory=list)  # (round, player)
    round: int = field(init=False, default=0)
    _pending: list[Match] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        if self.opponents_by not in ("title", "index"):
            raise ValueError(f"opponents_by must be 'title' or 'index', got {self.opponents_by!r}")
        self.points = [0] * len(self.titles)
        self.met = [set() for _ in self.titles]

    def _have_met(self, first: int, second: int) -> bool:
        if self.opponents_by == "index":
            return second in self.met[first]
        return any(self.titles[j] == self.titles[second] for j in self.met[first])

    def order(self) -> list[int]:
        """Players by (-points, title); the index only breaks ties between identical titles."""
        return sorted(range(len(self.titles)), key=lambda i: (-self.points[i], self.titles[i], i))

    @property
    def finished(self) -> bool:
        return self.round >= self.rounds and not self._pending

    def next_round(self) -> list[Match]:
        """Start the next round: give the bye, pair players, return the matches to play."""
        if self._pending:
            raise RuntimeError("record the results of the current round first")
        if self.round >= self.rounds:
            return []
        self.round += 1
        order = self.order()
        if len(order) % 2 == 1:
            for player in reversed(order):
                if player not in self.had_bye:
                    self.had_bye.add(player)
                    self.points[player] += 1
                    self.byes.append((self.round, player))
                    order.remove(player)
                    break
        paired: set[int] = set()
        matches = []
        for pos, first in enumerate(order):
            if first in paired:
                continue
            for second in order[pos + 1:]:
                if second not in paired and not self._have_met(first, second):
                    matches.append(Match(self.round, first, second))
                    paired.update((first, second))
                    break
        self._pending = matches
        return matches

    def record(self, winners: list[int | None]) -> None:
        """Winners of the pending matches, in order: 1 (Paper 1), 2 (Paper 2) or None (no point)."""
        if len(winners) != len(self._pending):
            raise ValueError(f"expected {len(self._pending)} results, got {len(winners)}")
        for match, winner in zip(self._pending, winners):
            match.winner = winner
            self.met[match.paper_1].add(match.paper_2)
            self.met[match.paper_2].add(match.paper_1)
            if winner == 1:
                self.points[match.paper_1] += 1
            elif winner == 2:
                self.points[match.paper_2] += 1
        self.matches.extend(self._pending)
        self._pending = []

    def standings(self) -> list[tuple[str, int]]:
        """Final ranking: (title, points), best first, ties alphabetical by title (upstream's sort)."""
        return [(self.titles[i], self.points[i]) for i in self.order()]


def play(titles: list[str], decide, rounds: int = 10, opponents_by: str = "title") -> SwissTournament:
    """Play a whole tournament with ``decide(list[Match]) -> list[winner]`` (one call per round)."""
    tournament = SwissTournament(list(titles), rounds, opponents_by)
    while not tournament.finished:
        matches = tournament.next_round()
        tournament.record(decide(matches) if matches else [])
    return tournament
