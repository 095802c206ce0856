"""I2R runner: plays every instance's Swiss tournament (:mod:`sciprobe.runners.swiss`), all instances in
lockstep, so each round's comparisons (of every instance) go to the client as one batch
(shared/spec/idrbench.md §2.3, §5.2). I2R plays one tournament per requested mode (their pairings differ).

A predictions file gives each instance's final ranking instead (``{"id", "ranking": [titles, best first],
"scores": [points]}``; scores optional), scored without any model call.

Modes: ``official`` reads answers with the official regex and applies upstream's case-sensitive winner
check (``paper 1`` in lower case gives Paper 2 the point); ``corrected`` uses the tolerant parser and a
case-insensitive check. Either way an unparsable answer or a failed call gives no point.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sciprobe.benchmarks.idrbench.parsing import parse_i2r
from sciprobe.benchmarks.idrbench.prompts import i2r_comparison_messages
from sciprobe.declaration import Runner, TaskSpec
from sciprobe.errors import SciprobeError
from sciprobe.evidence import CALL_FAILED, unanswered
from sciprobe.llm.types import Request, canonical_json, sha256_hex
from sciprobe.numbers import finite_number
from sciprobe.runners.swiss import SwissTournament

if TYPE_CHECKING:
    from sciprobe.results import TaskResult
    from sciprobe.task_runner import RunContext


def _players(row: Mapping) -> list[dict]:
    """The players in upstream's order (the distractors, then the gold papers): ties of equal points and title
    keep this order, as upstream's stable sort does."""
    return [*({"title": d["title"], "abstract": d["abstract"]} for d in row["distractors"]),
            *({"title": t["title"], "abstract": t["abstract"]} for t in row["targets"])]


def winner_for(mode: str, text: str | None) -> tuple[int | None, str]:
    if text is None:
        return None, "error"
    parsed = parse_i2r(text)
    if mode == "official":
        return (parsed.extra.get("official_winner"), parsed.path if parsed.path == "official" else "failed")
    return parsed.value, parsed.path


def run_i2r(rows: Sequence[Mapping], client: Any, params: Mapping[str, Any], *, mode: str = "official",
            rounds: int = 10, critical: bool = True) -> tuple[list[dict[str, Any]], str, int]:
    """Returns (per-instance records, prompt hash over every comparison asked, number of calls)."""
    if mode not in ("official", "corrected"):
        raise ValueError(f"unknown I2R mode {mode!r} (official, corrected)")
    players = [_players(r) for r in rows]
    # official: past opponents remembered by title, as upstream; corrected: by player
    opponents_by = "title" if mode == "official" else "index"
    games = [SwissTournament([p["title"] for p in ps], rounds, opponents_by) for ps in players]
    logs: list[list[dict]] = [[] for _ in rows]
    prompt_digest: list[str] = []
    n_calls = 0
    while not all(g.finished for g in games):
        batch: list[tuple[int, Any]] = []
        requests: list[Request] = []
        for k, game in enumerate(games):
            if game.finished:
                continue
            matches = game.next_round()
            if not matches:
                game.record([])
                continue
            for match in matches:
                messages = i2r_comparison_messages(rows[k]["seed"], players[k][match.paper_1],
                                                   players[k][match.paper_2], critical=critical)
                requests.append(Request.of(messages, dict(params), item_id=str(rows[k]["id"])))
                batch.append((k, match))
        if not requests:
            continue
        completions = client.complete_many(requests, desc=f"i2r round {max(g.round for g in games)}")
        n_calls += len(requests)
        prompt_digest.append(sha256_hex(canonical_json([list(r.messages) for r in requests])))
        results: dict[int, list[int | None]] = {}
        for (k, match), completion in zip(batch, completions):
            winner, path = winner_for(mode, completion.text) if completion.ok else (None, unanswered(completion).path)
            results.setdefault(k, []).append(winner)
            logs[k].append({"round": match.round, "paper_1": games[k].titles[match.paper_1],
                            "paper_2": games[k].titles[match.paper_2], "winner": winner, "parse_path": path,
                            "response": completion.text, "error": completion.error, "cached": completion.cached})
        for k, winners in results.items():
            games[k].record(winners)
    records = []
    for row, game, log in zip(rows, games, logs):
        standings = game.standings()
        failed = [m for m in log if m["parse_path"] == CALL_FAILED]
        records.append({
            "id": str(row["id"]),
            "pa_id": row.get("pa_id"),
            "gold": [t["title"] for t in row["targets"]],
            "standings": [title for title, _ in standings],
            "scores": [float(points) for _, points in standings],
            "n_comparisons": len(log),
            "n_unparsed": sum(1 for m in log if m["winner"] is None and m["parse_path"] != "error"),
            "n_errors": sum(1 for m in log if m["parse_path"] == "error"),
            "byes": json.dumps([[r, game.titles[p]] for r, p in game.byes], ensure_ascii=False),
            "matches": json.dumps(log, ensure_ascii=False),
            # a tournament with a comparison that got no answer is no evidence of the model's ranking: the
            # instance is left out of the score (sciprobe.evidence) and a rerun replays the answered ones
            "parse_path": CALL_FAILED if failed else "played",
            "error": (f"{failed[0]['error']} ({len(failed)} of {len(log)} comparisons got no answer)"
                      if failed else None),
        })
    return records, sha256_hex(canonical_json(prompt_digest)), n_calls


def candidates(row: Mapping) -> list[str]:
    """An instance's players: the gold partner papers, then the distractors (titles)."""
    return [t["title"] for t in row["targets"]] + [d["title"] for d in row["distractors"]]


def ranking_records(rows: Sequence[Mapping], preds: Mapping[str, Mapping]) -> list[dict[str, Any]]:
    """Records from submitted final rankings (the titles must be the instance's candidates)."""
    records = []
    for row in rows:
        players = set(candidates(row))
        item = preds.get(str(row["id"]))
        gold = [t["title"] for t in row["targets"]]
        if item is None:
            records.append({"id": str(row["id"]), "gold": gold, "standings": None, "scores": None,
                            "error": "no prediction submitted"})
            continue
        where = f"ranking for id {row['id']!r}"
        ranking = item.get("ranking")
        if not isinstance(ranking, list) or not all(isinstance(t, str) for t in ranking):
            raise SciprobeError(f"{where}: \"ranking\" must be a list of candidate titles")
        unknown = [t for t in ranking if t not in players]
        if unknown:
            raise SciprobeError(f"{where}: unknown candidate title {unknown[0][:60]!r}")
        scores = item.get("scores")
        if scores is None:
            scores = [float(len(ranking) - i) for i in range(len(ranking))]
        else:  # 10**400 or "3" would crash float() or sort wrongly; 1e400 parses to inf
            scores = [finite_number(s) for s in scores] if isinstance(scores, list) else []
            if len(scores) != len(ranking) or None in scores:
                raise SciprobeError(f"{where}: \"scores\" must be a list of finite numbers as long as \"ranking\"")
        records.append({"id": str(row["id"]), "gold": gold, "standings": ranking, "scores": scores, "error": None})
    return records


class SwissRunner(Runner):
    """The I2R Swiss tournament, one per requested mode; its results are keyed ``ref`` (first mode) and
    ``ref:<mode>`` (the others)."""

    name = "swiss"
    kind = "tournament"
    reads_predictions = True

    def run(self, ctx: RunContext) -> list[TaskResult]:
        from sciprobe.results import TaskResult

        results = []
        for mode in ctx.modes:
            records, phash, n_calls = run_i2r(ctx.data.rows, ctx.client, ctx.params, mode=mode)
            results.append(TaskResult(ctx.ref if mode == ctx.modes[0] else f"{ctx.ref}:{mode}", 0,
                                      {mode: ctx.task.score(records, mode)}, records,
                                      {**ctx.base, "prompt_hash": phash, "n_calls": n_calls, "mode": mode},
                                      ctx.task.headline, default_mode=mode))
        return results

    def prediction_fields(self, task: TaskSpec) -> tuple[str, ...]:
        return ("ranking", "scores")

    def records_from_predictions(self, task: TaskSpec, rows: Sequence[Mapping],
                                 predictions: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
        return ranking_records(rows, predictions)

    def plan_notes(self, task: TaskSpec) -> list[str]:
        return ["I2R: late tournament rounds can pair fewer players than planned"]

    def candidates(self, row: Mapping) -> frozenset[str]:
        return frozenset(candidates(row))


SWISS = SwissRunner()
