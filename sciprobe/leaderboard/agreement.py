"""Judge agreement: how far the judges of one panel agree, item by item (pure: records in, numbers / figures out).

Where a result was scored by several judges, the per-sample details carry each judge's own verdict. Any runner
reports them in the generic record field ``judge_scores`` = ``{judge id: score or None}`` per item (its scale in
``judge_scale``), so a new judged task needs no edit here; two benchmarks' older record formats are read too:

* PreScience ``contribution_generation`` (LACER panel): ``lacer_official`` = ``{judge id: score or None}`` per
  item (the judge's 0-10 LACER score as parsed in the official mode);
* SGI-Bench ``idea_generation`` (pairwise panel): ``judge_calls`` = the log of every vote; each parsed vote names
  the winner per dimension with the reference idea as A then swapped. A judge's item score is the share of its
  votes won by the generated idea (0..1).

:func:`judge_scores_from_records` reduces either to ``{judge: {item id: score}}``; that compact table is what
the leaderboard keeps in a result's provenance (``provenance["judge_scores"]``), so the Space can plot it
without the details file. :func:`agreement_table` gives, per pair of judges, the number of items both scored,
Pearson r, Spearman rho, the mean absolute difference and (SGI votes) the share of identical verdicts;
:func:`agreement_plot` draws the Pearson matrix as a heatmap.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sciprobe.core.numbers import finite_number

#: provenance key under which a result keeps its per-judge item scores
PROVENANCE_KEY = "judge_scores"


def _maybe_json(value: Any) -> Any:
    """Detail cells hold dicts/lists as JSON text; a details file written in the all-text fallback of
    :func:`sciprobe.results.write.write_details` encodes them twice, hence the loop."""
    for _ in range(2):
        if not (isinstance(value, str) and value[:1] in '{["'):
            break
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            break
    return value


#: the record field in which a runner reports each judge's item score (``{judge id: score or None}``)
JUDGE_SCORES_FIELD = "judge_scores"


def _per_judge_scores(records: Sequence[Mapping[str, Any]], field: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for record in records:
        per_judge = _maybe_json(record.get(field))
        if not isinstance(per_judge, Mapping):
            continue
        item = str(_maybe_json(record.get("id")))
        for judge, score in per_judge.items():
            out.setdefault(str(judge), {})
            value = finite_number(score)
            if value is not None:
                out[str(judge)][item] = value
    return out


def idea_votes_from_records(records: Sequence[Mapping[str, Any]]
                            ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, str]]]:
    """(share of votes the generated idea won per judge and item, each judge's final verdict per
    ``item|swapped|dimension`` as ``"generated"``/``"reference"``)."""
    shares: dict[str, dict[str, float]] = {}
    verdicts: dict[str, dict[str, str]] = {}
    for record in records:
        log = _maybe_json(record.get("judge_calls"))
        if not isinstance(log, list):
            continue
        item = str(_maybe_json(record.get("id")))
        final: dict[tuple[str, bool], Mapping[str, Any]] = {}
        for call in log:
            if isinstance(call, Mapping) and isinstance(call.get("verdict"), Mapping):
                final[(str(call.get("judge")), bool(call.get("swapped")))] = call["verdict"]  # the last parsed attempt
        for judge in {str(c.get("judge")) for c in log if isinstance(c, Mapping)}:
            shares.setdefault(judge, {})
            verdicts.setdefault(judge, {})
        won: dict[str, list[int]] = {}
        for (judge, swapped), verdict in final.items():
            for dim, winner in verdict.items():
                generated = winner == ("A" if swapped else "B")
                won.setdefault(judge, []).append(int(generated))
                verdicts[judge][f"{item}|{int(swapped)}|{dim}"] = "generated" if generated else "reference"
        for judge, wins in won.items():
            shares[judge][item] = sum(wins) / len(wins)
    return shares, verdicts


def lacer_scores_from_records(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """``{judge: {item id: LACER score}}`` from ``lacer_official`` (a judge that gave no score is left out)."""
    return _per_judge_scores(records, "lacer_official")


def judge_scores_from_records(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The per-judge item scores of one task's detail records, or None when fewer than two judges voted.

    Returns ``{"source": "judge_scores" | "lacer_official" | "sgi_idea_votes", "scale": str,
    "judges": {judge: {item: score}}}``
    (plus ``"verdicts"`` for SGI votes: ``{judge: {"item|swapped|dimension": "generated" | "reference"}}``)."""
    if any(JUDGE_SCORES_FIELD in r for r in records):
        scale = next((str(r["judge_scale"]) for r in records if r.get("judge_scale")), "judge score")
        table, source, extra = _per_judge_scores(records, JUDGE_SCORES_FIELD), JUDGE_SCORES_FIELD, {}
    elif any("lacer_official" in r for r in records):
        table = _per_judge_scores(records, "lacer_official")
        source, scale, extra = "lacer_official", "LACER score (0-10)", {}
    elif any("judge_calls" in r for r in records):
        table, verdicts = idea_votes_from_records(records)
        source, scale = "sgi_idea_votes", "share of votes won by the generated idea (0-1)"
        extra = {"verdicts": verdicts}
    else:
        return None
    if len(table) < 2:
        return None
    return {"source": source, "scale": scale, "judges": {j: table[j] for j in sorted(table)}, **extra}


def judge_scores_from_details(path: Path) -> dict[str, Any] | None:
    """:func:`judge_scores_from_records` of a details Parquet written by
    :func:`sciprobe.results.write.write_details`."""
    import pyarrow.parquet as pq

    return judge_scores_from_records(pq.read_table(path).to_pylist())


def _pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    n = len(x)
    if n < 2:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx == 0 or syy == 0:
        return None  # a constant judge has no correlation with anyone
    return sum((a - mx) * (b - my) for a, b in zip(x, y)) / math.sqrt(sxx * syy)


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1  # average rank for ties
        i = j + 1
    return ranks


def agreement_table(judge_scores: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per pair of judges: items both scored (``n``), ``pearson``, ``spearman``, ``mean_abs_diff`` and,
    for SGI votes, ``verdict_agreement`` (share of identical verdicts over the votes both cast)."""
    judges = judge_scores.get("judges") or {}
    names = list(judges)
    verdicts = judge_scores.get("verdicts") or {}
    rows = []
    for a_index, a in enumerate(names):
        for b in names[a_index + 1:]:
            common = sorted(set(judges[a]) & set(judges[b]))
            x, y = [judges[a][i] for i in common], [judges[b][i] for i in common]
            row: dict[str, Any] = {
                "judge_a": a, "judge_b": b, "n": len(common),
                "pearson": _round(_pearson(x, y)),
                "spearman": _round(_pearson(_ranks(x), _ranks(y))) if common else None,
                "mean_abs_diff": _round(sum(abs(p - q) for p, q in zip(x, y)) / len(common)) if common else None,
            }
            if verdicts:
                shared = sorted(set(verdicts.get(a, {})) & set(verdicts.get(b, {})))
                same = sum(verdicts[a][k] == verdicts[b][k] for k in shared)
                row["verdict_agreement"] = _round(same / len(shared)) if shared else None
                row["n_votes"] = len(shared)
            rows.append(row)
    return rows


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def agreement_matrix(judge_scores: Mapping[str, Any], statistic: str = "pearson"
                     ) -> tuple[list[str], list[list[float | None]]]:
    """(judges, square matrix of ``statistic`` with 1.0 on the diagonal; None where undefined)."""
    names = list(judge_scores.get("judges") or {})
    n = len(names)
    matrix: list[list[float | None]] = [[1.0 if i == j else None for j in range(n)] for i in range(n)]
    index = {name: i for i, name in enumerate(names)}
    for row in agreement_table(judge_scores):
        i, j = index[row["judge_a"]], index[row["judge_b"]]
        matrix[i][j] = matrix[j][i] = row.get(statistic)
    return names, matrix


def panels(results: Iterable[Any]) -> list[tuple[str, Any]]:
    """``(label, result)`` for every stored result that carries per-judge scores of two or more judges."""
    from sciprobe.leaderboard.validation import display_text

    out = []
    for result in results:
        scores = (result.provenance or {}).get(PROVENANCE_KEY)
        if isinstance(scores, Mapping) and len(scores.get("judges") or {}) >= 2:
            label = (f"{display_text(result.model_name)} · {result.task} · {result.revision} · "
                     f"{len(scores['judges'])} judges")
            out.append((label, result))
    return out


def agreement_plot(judge_scores: Mapping[str, Any] | None, title: str = "Judge agreement"):
    """Heatmap of the pairwise Pearson r between judges (n items in each cell); a hint when there is nothing."""
    from matplotlib.figure import Figure  # not pyplot: no figure manager to import, nothing left open

    fig = Figure(figsize=(6.4, 4.8), dpi=100, layout="constrained")
    ax = fig.subplots()
    names = list((judge_scores or {}).get("judges") or {})
    if len(names) < 2:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "Judge agreement\n\nno result scored by a panel of two or more judges yet\n"
                "(SGI-Bench idea generation, PreScience LACER with several --judge specs)",
                ha="center", va="center", fontsize=10, color="0.35", transform=ax.transAxes)
        return fig
    names, matrix = agreement_matrix(judge_scores)
    table = {(r["judge_a"], r["judge_b"]): r for r in agreement_table(judge_scores)}
    values = [[math.nan if v is None else v for v in row] for row in matrix]
    image = ax.imshow(values, vmin=-1, vmax=1, cmap="RdBu")
    short = [n.rsplit("/", 1)[-1][:28] for n in names]
    ax.set_xticks(range(len(names)), short, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(names)), short, fontsize=8)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i == j:
                text, r = "1", 1.0
            else:
                row = table.get((a, b)) or table.get((b, a)) or {}
                r = row.get("pearson")
                text = f"{r:.2f}\nn={row.get('n', 0)}" if r is not None else f"n/a\nn={row.get('n', 0)}"
            dark = r is not None and abs(r) > 0.6  # light text on the saturated ends of the colour map
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color="white" if dark else "black")
    fig.colorbar(image, ax=ax, label="Pearson r over items both judges scored", shrink=0.8)
    ax.set_title(f"{title}\n{judge_scores.get('scale', '')}", fontsize=9)
    return fig


__all__ = ["PROVENANCE_KEY", "agreement_matrix", "agreement_plot", "agreement_table", "idea_votes_from_records",
           "judge_scores_from_details", "judge_scores_from_records", "lacer_scores_from_records", "panels"]
