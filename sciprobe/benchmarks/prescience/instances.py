"""Task instances of PreScience, derived from a split's corpus under the history rule (spec ``prescience.md``
§2 T1–T7, §9).

Every eligibility test and every input id is answered by :class:`~.history.HistoryView` at the target's own
date t_p (H^{<t_p}); future facts enter only as labels (gold collaborators, gold references, 12-month
citations, later co-citations, forecast-period topic counts). Instance rows store ids, dates and labels; the
package assembles inputs from the ``papers`` config (contribution generation also stores its references'
texts, see the card's decisions).

Decisions (recorded in the dataset card): the default seed author is the first listed author with a non-empty
H^{<t_p} history; dev/sample subsets are ``random.Random(42).sample`` over eligible targets in source-file
order (``test_sample_500`` = the first 500 of ``test_sample_5000``); the T5 tie order among equal counts is
newer first, then corpus id; topic units are all 202 topics (zero rows kept), pairs those with
``>= 10`` target papers in the history or forecast window.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import combinations

import numpy as np
import pyarrow.compute as pc

from sciprobe.benchmarks.prescience.history import CorpusIndex
from sciprobe.benchmarks.prescience.schema import (
    CITATION_HORIZON_MONTHS,
    COCITATION_EVAL_DAYS,
    COCITATION_LOOKAHEAD_DAYS,
    PAIR_MIN_PAPERS,
    PAIR_SEPARATOR,
    TOPICS,
    WINDOWS,
)

SAMPLE_SEED = 42


def _shift(date: str, days: int) -> str:
    return (dt.date.fromisoformat(date) + dt.timedelta(days=days)).isoformat()


def target_rows(index: CorpusIndex, split: str) -> np.ndarray:
    """Rows of the split's targets (role ``target``, date in the split window), in source-file order."""
    start, end = WINDOWS[split]
    lo, hi = index.prefix(start), index.prefix(end)
    rows = np.flatnonzero(index.is_target[lo:hi]) + lo
    return rows[np.argsort(index.file_row[rows], kind="stable")]


def column_values(index: CorpusIndex, name: str, rows: np.ndarray) -> list:
    """Values of one corpus column at the given rows (all None when the release has no such column)."""
    import pyarrow as pa

    if name not in index.table.column_names:
        return [None] * len(rows)
    return index.table[name].take(pa.array(rows, type=pa.int64())).to_pylist()


def sample_ids(ids: list[str], n: int, seed: int = SAMPLE_SEED) -> list[str]:
    """``random.seed(seed); random.sample(ids, n)`` as upstream (all ids when fewer than n)."""
    return random.Random(seed).sample(ids, min(n, len(ids)))


# ---------------------------------------------------------------- T1 contribution generation
def contribution_targets(index: CorpusIndex, split: str) -> list[tuple[str, str, list[str]]]:
    """(corpus_id, date, reference ids in H^{<t_p}) for targets with >= 1 key reference."""
    rows = target_rows(index, split)
    out = []
    for cid, date, refs in zip(column_values(index, "corpus_id", rows), column_values(index, "date", rows),
                               column_values(index, "key_references", rows)):
        view = index.view(date)
        ref_ids = [r["corpus_id"] for r in refs or [] if r["corpus_id"] in view]
        if ref_ids:
            out.append((cid, date, ref_ids))
    return out


# ---------------------------------------------------------------- T2 collaborator prediction
def collaborator_instances(index: CorpusIndex, split: str) -> list[dict]:
    rows = target_rows(index, split)
    out = []
    for cid, date, authors in zip(column_values(index, "corpus_id", rows), column_values(index, "date", rows),
                                  column_values(index, "authors", rows)):
        view = index.view(date)
        with_history = list(dict.fromkeys(a["author_id"] for a in authors or []
                                          if a.get("author_id") and view.author_history_rows(a["author_id"]).size))
        if len(with_history) >= 2:
            out.append({"corpus_id": cid, "date": date, "seed_author_id": with_history[0],
                        "gold_author_ids": with_history[1:]})
    return out


# ---------------------------------------------------------------- T3 prior work selection
def prior_work_instances(index: CorpusIndex, split: str) -> list[dict]:
    rows = target_rows(index, split)
    lengths = pc.fill_null(pc.list_value_length(index.table["key_references"]), 0).to_numpy()
    out = []
    columns = (column_values(index, name, rows) for name in ("corpus_id", "date", "authors", "key_references"))
    for cid, date, authors, refs in zip(*columns):
        view = index.view(date)
        author_ids = list(dict.fromkeys(a["author_id"] for a in authors or [] if a.get("author_id")))
        eligible = any((lengths[view.author_history_rows(a)] > 0).any() for a in author_ids)
        gold = [r["corpus_id"] for r in refs or []]
        if eligible and gold:
            out.append({"corpus_id": cid, "date": date, "author_ids": author_ids, "gold_corpus_ids": gold})
    return out


# ---------------------------------------------------------------- T4 citation prediction
def citation_instances(index: CorpusIndex, split: str) -> list[dict]:
    rows = target_rows(index, split)
    out = []
    for cid, date, traj in zip(column_values(index, "corpus_id", rows), column_values(index, "date", rows),
                               column_values(index, "citation_trajectory", rows)):
        if traj is not None and len(traj) >= CITATION_HORIZON_MONTHS:
            out.append({"corpus_id": cid, "date": date, "label_12m": int(traj[CITATION_HORIZON_MONTHS - 1])})
    return out


# ---------------------------------------------------------------- T5 future combination
def future_combination_instances(index: CorpusIndex, split: str = "test") -> list[dict]:
    """Gold of §2 T5: for each cohort target P, co-cited q (dated < P) counted over later targets citing P."""
    rows = target_rows(index, split)
    if not rows.size:
        return []
    dates = index.dates
    test_start = min(dates[int(r)].as_py() for r in rows)
    cohort_end = _shift(test_start, COCITATION_EVAL_DAYS)
    window_lo, window_hi = index.prefix(WINDOWS[split][0]), index.prefix(WINDOWS[split][1])
    refs_col = index.table["key_references"]
    out = []
    for p in sorted(rows.tolist()):
        p_date = dates[p].as_py()
        if p_date >= cohort_end:
            continue
        horizon = _shift(p_date, COCITATION_LOOKAHEAD_DAYS)
        p_prefix = index.prefix(p_date)
        counts: Counter[int] = Counter()
        for t in index.citations.rows_of(p).tolist():
            if not (window_lo <= t < window_hi and index.is_target[t]):
                continue
            t_date = dates[t].as_py()
            if not (p_date < t_date <= horizon):
                continue
            for ref in refs_col[t].as_py() or []:
                q = index.row_of(ref["corpus_id"])
                if q is not None and q != p and q < p_prefix:
                    counts[q] += 1
        if counts:
            ranked = sorted(counts.items(), key=lambda kv: (-kv[1], -kv[0]))  # count desc, newer first
            out.append({"corpus_id": index.ids[p].as_py(), "date": p_date,
                        "gold_corpus_ids": [index.ids[q].as_py() for q, _ in ranked],
                        "gold_counts": [c for _, c in ranked]})
    return out


# ---------------------------------------------------------------- T6 / T7 topic trends
def topic_label_sets(index: CorpusIndex, split: str, end: str | None = None) -> list[list[str]]:
    """Topic label sets of the split's targets dated before ``end`` (default: window end); 'Other' (empty)
    papers are excluded."""
    rows = target_rows(index, split)
    if end is not None:
        rows = rows[rows < index.prefix(end)]
    return [t for t in column_values(index, "topics", rows) if t]


def monthly_topic_counts(index: CorpusIndex, split: str) -> dict[str, list[int]]:
    """Per topic, the number of the split's targets labelled with it in each 30-day month of the window."""
    start, _ = WINDOWS[split]
    rows = target_rows(index, split)
    out: dict[str, list[int]] = {}
    for date, topics in zip(column_values(index, "date", rows), column_values(index, "topics", rows)):
        month = min((dt.date.fromisoformat(date) - dt.date.fromisoformat(start)).days // 30, 11)
        for z in topics or []:
            out.setdefault(z, [0] * 12)[month] += 1
    return out


def _trend_rows(units: Iterable[str], history: Counter, forecast: Counter, extra: dict) -> Iterator[dict]:
    units = list(units)
    h_total = sum(history[u] for u in units)
    f_total = sum(forecast[u] for u in units)
    for u in units:
        yield {"topic": u, "history_count": int(history[u]), "forecast_count": int(forecast[u]),
               "history_share": history[u] / h_total if h_total else 1.0 / len(units),
               "forecast_share": forecast[u] / f_total if f_total else 1.0 / len(units), **extra}


def topic_trend_instances(history_sets: list[list[str]], forecast_sets: list[list[str]]) -> list[dict]:
    """T6: one row per topic of the 202-topic list (label-mass shares)."""
    history = Counter(z for s in history_sets for z in set(s))
    forecast = Counter(z for s in forecast_sets for z in set(s))
    return list(_trend_rows(TOPICS, history, forecast, {}))


def pair_id(a: str, b: str) -> str:
    return PAIR_SEPARATOR.join(sorted((a, b)))


def _pairs(sets: list[list[str]]) -> Counter:
    return Counter(pair_id(a, b) for s in sets for a, b in combinations(sorted(set(s)), 2))


def topic_pair_instances(history_sets: list[list[str]], forecast_sets: list[list[str]], forecast_end: str,
                         min_papers: int = PAIR_MIN_PAPERS) -> list[dict]:
    """T7: unordered pairs with >= ``min_papers`` papers in the history or the forecast window."""
    history, forecast = _pairs(history_sets), _pairs(forecast_sets)
    units = sorted(u for u in set(history) | set(forecast) if history[u] >= min_papers or forecast[u] >= min_papers)
    if not units:
        return []
    return list(_trend_rows(units, history, forecast, {"forecast_end": forecast_end}))
