"""I2R driver: plays every instance's Swiss tournament, all instances in lockstep, so each round's
comparisons (of every instance) go to the client as one batch (shared/spec/idrbench.md §2.3, §5.2).

Modes: ``official`` reads answers with the official regex and applies upstream's case-sensitive winner
check (``paper 1`` in lower case gives Paper 2 the point); ``corrected`` uses the tolerant parser and a
case-insensitive check. Either way an unparsable answer or a failed call gives no point.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from sciprobe.benchmarks.idrbench.parsing import parse_i2r
from sciprobe.benchmarks.idrbench.prompts import i2r_comparison_messages
from sciprobe.llm.types import Request, canonical_json, sha256_hex
from sciprobe.runners.swiss import SwissTournament


def _players(row: Mapping) -> list[dict]:
    return [*({"title": t["title"], "abstract": t["abstract"]} for t in row["targets"]),
            *({"title": d["title"], "abstract": d["abstract"]} for d in row["distractors"])]


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
    games = [SwissTournament([p["title"] for p in ps], rounds) for ps in players]
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
            winner, path = winner_for(mode, completion.text if completion.ok else None)
            results.setdefault(k, []).append(winner)
            logs[k].append({"round": match.round, "paper_1": games[k].titles[match.paper_1],
                            "paper_2": games[k].titles[match.paper_2], "winner": winner, "parse_path": path,
                            "response": completion.text, "error": completion.error, "cached": completion.cached})
        for k, winners in results.items():
            games[k].record(winners)
    records = []
    for row, game, log in zip(rows, games, logs):
        standings = game.standings()
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
        })
    return records, sha256_hex(canonical_json(prompt_digest)), n_calls
