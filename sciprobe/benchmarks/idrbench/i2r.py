"""I2R runner: plays every instance's Swiss tournament (:mod:`sciprobe.run.runners.swiss`), all instances in
lockstep, so each round's comparisons (of every instance) go to the client as one batch
(shared/spec/idrbench.md §2.3, §5.2). I2R plays one tournament per requested mode (their pairings differ).

A predictions file gives, per instance, either its final ranking (``{"id", "ranking": [titles, best first],
"scores": [points]}``; scores optional) or the stored comparison replies of a tournament (``{"id", "comparisons":
[{"paper_1": title, "paper_2": title, "response": reply text or null}, ...]}``; the ``matches`` column of an
evaluate run's details has this shape, extra keys such as ``round`` are ignored). Comparisons are replayed: the
tournament is played again in every mode, and each pairing it makes takes the next stored reply for that
(Paper 1, Paper 2) title pair, read by that mode's parser; a pairing with no stored reply leaves the instance
unscored (its error says which). Either way no model is called.

Modes: ``official`` reads answers with the official regex and applies upstream's case-sensitive winner
check (``paper 1`` in lower case gives Paper 2 the point); ``corrected`` uses the tolerant parser and a
case-insensitive check. Either way an unparsable answer or a failed call gives no point.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sciprobe.core.declaration import Runner, TaskSpec
from sciprobe.core.errors import SciprobeError
from sciprobe.results.evidence import CALL_FAILED, unanswered
from sciprobe.core.numbers import finite_number

# the declaration imports this module for SWISS: the tournament, prompts, parser and LLM types load when it runs
if TYPE_CHECKING:
    from sciprobe.llm.types import Request
    from sciprobe.results.write import TaskResult
    from sciprobe.run.task_runner import RunContext


def _players(row: Mapping) -> list[dict]:
    """The players in upstream's order (the distractors, then the gold papers): ties of equal points and title
    keep this order, as upstream's stable sort does."""
    return [*({"title": d["title"], "abstract": d["abstract"]} for d in row["distractors"]),
            *({"title": t["title"], "abstract": t["abstract"]} for t in row["targets"])]


def winner_for(mode: str, text: str | None) -> tuple[int | None, str]:
    from sciprobe.benchmarks.idrbench.parsing import parse_i2r

    if text is None:
        return None, "error"
    parsed = parse_i2r(text)
    if mode == "official":
        return (parsed.extra.get("official_winner"), parsed.path if parsed.path == "official" else "failed")
    return parsed.value, parsed.path


def run_i2r(rows: Sequence[Mapping], client: Any, params: Mapping[str, Any], *, mode: str = "official",
            rounds: int = 10, critical: bool = True,
            comparison_messages: Callable[..., list[dict[str, str]]] | None = None,
            asked: set[str] | None = None) -> tuple[list[dict[str, Any]], str, int]:
    """Returns (per-instance records, prompt hash over every comparison asked, number of calls).
    ``comparison_messages(seed, paper_1, paper_2, critical=...)`` builds one comparison's prompt (sciprobe's
    wording by default, or upstream's with ``--prompts upstream``). ``asked``, when given, receives the digest
    of every comparison request (:func:`mode_call_counts` compares the modes' sets)."""
    from sciprobe.benchmarks.idrbench.prompts import i2r_comparison_messages
    from sciprobe.llm.types import Request, canonical_json, sha256_hex
    from sciprobe.run.runners.swiss import SwissTournament

    comparison_messages = comparison_messages or i2r_comparison_messages
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
                messages = comparison_messages(rows[k]["seed"], players[k][match.paper_1],
                                               players[k][match.paper_2], critical=critical)
                requests.append(Request.of(messages, dict(params), item_id=str(rows[k]["id"])))
                batch.append((k, match))
        if not requests:
            continue
        completions = client.complete_many(requests, desc=f"i2r round {max(g.round for g in games)}")
        n_calls += len(requests)
        if asked is not None:
            asked.update(sha256_hex(canonical_json([list(r.messages), r.params])) for r in requests)
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
            # instance is left out of the score (sciprobe.results.evidence) and a rerun replays the answered ones
            "parse_path": CALL_FAILED if failed else "played",
            "error": (f"{failed[0]['error']} ({len(failed)} of {len(log)} comparisons got no answer)"
                      if failed else None),
        })
    return records, sha256_hex(canonical_json(prompt_digest)), n_calls


def replay_tournament(row: Mapping, comparisons: Sequence[Mapping[str, Any]], mode: str, *,
                      rounds: int = 10) -> dict[str, Any]:
    """Play ``row``'s tournament again in ``mode`` from stored comparison replies (no model call): standings,
    points and the match log, or ``error`` when a pairing has no stored reply."""
    from collections import deque

    from sciprobe.run.runners.swiss import SwissTournament

    if mode not in ("official", "corrected"):
        raise ValueError(f"unknown I2R mode {mode!r} (official, corrected)")
    stored: dict[tuple[str, str], deque] = {}
    for comparison in comparisons:
        stored.setdefault((comparison["paper_1"], comparison["paper_2"]), deque()).append(comparison.get("response"))
    titles = [p["title"] for p in _players(row)]
    game = SwissTournament(titles, rounds, "title" if mode == "official" else "index")
    log: list[dict[str, Any]] = []
    while not game.finished:
        matches = game.next_round()
        winners: list[int | None] = []
        for match in matches:
            pair = (titles[match.paper_1], titles[match.paper_2])
            if not stored.get(pair):
                return {"standings": None, "scores": None, "matches": log,
                        "error": f"round {match.round}: no stored reply for Paper 1 {pair[0][:60]!r} vs Paper 2 "
                                 f"{pair[1][:60]!r} (the stored run paired differently)"}
            text = stored[pair].popleft()
            winner, path = winner_for(mode, text)
            winners.append(winner)
            log.append({"round": match.round, "paper_1": pair[0], "paper_2": pair[1], "winner": winner,
                        "parse_path": path, "response": text})
        game.record(winners)
    standings = game.standings()
    return {"standings": [t for t, _ in standings], "scores": [float(p) for _, p in standings], "matches": log,
            "error": None}


def _comparisons(item: Mapping[str, Any], where: str) -> list[Mapping[str, Any]]:
    comparisons = item["comparisons"]
    if "ranking" in item:
        raise SciprobeError(f"{where}: give either \"ranking\" or \"comparisons\", not both")
    if not isinstance(comparisons, list):
        raise SciprobeError(f"{where}: \"comparisons\" must be a list of {{paper_1, paper_2, response}}")
    for k, c in enumerate(comparisons):
        if not (isinstance(c, Mapping) and isinstance(c.get("paper_1"), str) and isinstance(c.get("paper_2"), str)
                and (c.get("response") is None or isinstance(c.get("response"), str))):
            raise SciprobeError(f"{where}: comparisons[{k}] must be {{\"paper_1\": title, \"paper_2\": title, "
                                "\"response\": text or null}")
    return comparisons


def replayed_record(row: Mapping, comparisons: Sequence[Mapping[str, Any]],
                    modes: Sequence[str] = ("official", "corrected")) -> dict[str, Any]:
    """One record from stored comparisons: the first mode's standings on the record, every mode's replay under
    ``by_mode`` (:func:`mode_view` picks it when scoring)."""
    replays = {mode: replay_tournament(row, comparisons, mode) for mode in modes}
    first = replays[modes[0]]
    return {"id": str(row["id"]), "pa_id": row.get("pa_id"), "gold": [t["title"] for t in row["targets"]],
            "standings": first["standings"], "scores": first["scores"], "error": first["error"],
            "n_comparisons": len(comparisons), "matches": json.dumps(first["matches"], ensure_ascii=False),
            "by_mode": json.dumps({m: {k: r[k] for k in ("standings", "scores", "error")} for m, r in replays.items()},
                                  ensure_ascii=False)}


def mode_view(records: Sequence[Mapping[str, Any]], mode: str) -> list[Mapping[str, Any]]:
    """Records as ``mode`` scores them: a replayed record's ``by_mode[mode]`` standings replace its own."""
    out = []
    for record in records:
        by_mode = record.get("by_mode")
        if isinstance(by_mode, str):
            by_mode = json.loads(by_mode)
        out.append({**record, **by_mode[mode]} if isinstance(by_mode, Mapping) and mode in by_mode else record)
    return out


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
        if "comparisons" in item:
            records.append(replayed_record(row, _comparisons(item, where)))
            continue
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


def mode_call_counts(asked: set[str], earlier: set[str]) -> dict[str, int]:
    """One mode's distinct comparisons: ``asked`` in all, ``shared`` with an earlier mode (the same request:
    answered from the response cache, no new call) and ``extra`` (its own calls). The modes' tournaments agree
    wherever their winner rules read a reply the same way; where they diverge (e.g. a lower-case ``paper 1``),
    the later mode's pairings differ and it pays for them."""
    shared = len(asked & earlier)
    return {"asked": len(asked), "shared": shared, "extra": len(asked) - shared}


def upper_bound_note(modes: Sequence[str], planned: int, upper_bound: int) -> str:
    """The plan's line on what several I2R modes may cost: the planned count assumes the modes agree."""
    return (f"I2R modes {' + '.join(modes)}: {planned} distinct comparisons if their winner rules agree on every "
            f"reply (shared calls); up to {upper_bound} if they diverge from the first round (each mode pays its "
            f"own tournament). --mode {modes[0]} plays one tournament only")


class SwissRunner(Runner):
    """The I2R Swiss tournament, one per requested mode; its results are keyed ``ref`` (first mode) and
    ``ref:<mode>`` (the others)."""

    name = "swiss"
    kind = "tournament"
    reads_predictions = True

    def run(self, ctx: RunContext) -> list[TaskResult]:
        from sciprobe.benchmarks.idrbench.prompts import i2r_comparison_messages
        from sciprobe.results.write import TaskResult

        results = []
        earlier: set[str] = set()  # every comparison an earlier mode asked (a repeat is answered from the cache)
        upper_bound = 0
        for mode in ctx.modes:
            asked: set[str] = set()
            records, phash, n_calls = run_i2r(ctx.data.rows, ctx.client, ctx.params, mode=mode,
                                              comparison_messages=ctx.prompt("comparison_messages",
                                                                             i2r_comparison_messages),
                                              asked=asked)
            calls = mode_call_counts(asked, earlier)
            earlier |= asked
            upper_bound += calls["asked"]
            extra: dict[str, Any] = {"i2r_calls": calls}
            if ctx.dry_run and len(ctx.modes) > 1 and mode == ctx.modes[-1]:
                extra["plan_notes"] = [upper_bound_note(ctx.modes, len(earlier), upper_bound)]
            scores = {} if ctx.dry_run else {mode: ctx.task.score(records, mode)}
            results.append(TaskResult(ctx.ref if mode == ctx.modes[0] else f"{ctx.ref}:{mode}", 0, scores, records,
                                      {**ctx.base, "prompt_hash": phash, "n_calls": n_calls, "mode": mode, **extra},
                                      ctx.task.headline, default_mode=mode))
        return results

    def prediction_fields(self, task: TaskSpec) -> tuple[str, ...]:
        return ("ranking", "scores", "comparisons")

    def records_from_predictions(self, task: TaskSpec, rows: Sequence[Mapping],
                                 predictions: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
        return ranking_records(rows, predictions)

    def plan_notes(self, task: TaskSpec) -> list[str]:
        return ["I2R: late tournament rounds can pair fewer players than planned"]

    def candidates(self, row: Mapping) -> frozenset[str]:
        return frozenset(candidates(row))


SWISS = SwissRunner()
