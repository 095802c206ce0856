"""Task instances of PreScience, derived from a split's corpus under the history rule (spec ``prescience.md``
§2 T1–T7, §9).

Every eligibility test and every input id is answered by :class:`~.history.HistoryView` at the target's own
date t_p (H^{<t_p}); future facts enter only as labels (gold collaborators, gold references, 12-month
citations, later co-citations, forecast-period topic counts). Instance rows store ids, dates and labels; the
package assembles inputs from the ``papers`` config (contribution generation also stores its references'
texts, see the card's decisions).

T1-T4 are computed with Arrow/numpy over all targets at once (``*_table``: one row per instance, the columns of
the config); the ``*_instances`` functions return the same rows as Python objects. A target's H^{<t_p} is the row
prefix ``CorpusIndex.row_prefix[row]``, so "in the view" is ``row < prefix`` and "has history" is "first row of
the author's papers < prefix".

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
import pyarrow as pa
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
    return _take(index, name, rows).to_pylist()


def sample_ids(ids: list[str], n: int, seed: int = SAMPLE_SEED) -> list[str]:
    """``random.seed(seed); random.sample(ids, n)`` as upstream (all ids when fewer than n)."""
    return random.Random(seed).sample(ids, min(n, len(ids)))


def _take(index: CorpusIndex, name: str, rows: np.ndarray) -> pa.Array:
    """One corpus column at the given rows, as one Arrow array (all null when the release has no such column)."""
    if name not in index.table.column_names:
        return pa.nulls(len(rows))
    return index.table[name].take(pa.array(rows, type=pa.int64())).combine_chunks()


def _nested_ids(lists: pa.Array, field: str) -> tuple[pa.Array, np.ndarray]:
    """The ``field`` of every struct in a list<struct> column, flattened, with each one's parent position."""
    if pa.types.is_null(lists.type) or not len(lists):
        return pa.array([], pa.string()), np.zeros(0, dtype=np.int64)
    return (pc.struct_field(pc.list_flatten(lists), field),
            pc.list_parent_indices(lists).to_numpy().astype(np.int64))


def _lists(values: pa.Array, parents: np.ndarray, n: int) -> pa.Array:
    """A list array of ``n`` lists from flat ``values`` grouped by their (sorted) ``parents``."""
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(parents, minlength=n), out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), values)


def _first_per_parent(codes: np.ndarray, parents: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Of the flat ``positions`` (sorted, with their parents and codes), those holding the first occurrence of their
    code within their parent: ``dict.fromkeys`` per list, vectorised."""
    order = np.lexsort((positions, codes, parents))
    p, c = parents[order], codes[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (p[1:] != p[:-1]) | (c[1:] != c[:-1])
    return np.sort(positions[order[first]])


def _author_lists(index: CorpusIndex, rows: np.ndarray) -> tuple[pa.Array, np.ndarray, np.ndarray, np.ndarray]:
    """The targets' listed authors with an id, deduplicated per target in listed order: (ids, parents, codes,
    positions into the flat author lists)."""
    ids, parents = _nested_ids(_take(index, "authors", rows), "author_id")
    present = pc.fill_null(pc.not_equal(ids, ""), False).to_numpy(zero_copy_only=False)
    codes = index.author_codes(ids)
    positions = _first_per_parent(codes[present], parents[present], np.flatnonzero(present))
    return ids, parents, codes, positions


# ---------------------------------------------------------------- T1 contribution generation
def contribution_target_table(index: CorpusIndex, split: str) -> pa.Table:
    """``corpus_id, date, references``: targets with >= 1 key reference in H^{<t_p} (those references, in listed
    order), in source-file order."""
    rows = target_rows(index, split)
    ref_ids, parents = _nested_ids(_take(index, "key_references", rows), "corpus_id")
    ref_rows = pc.fill_null(pc.index_in(ref_ids, value_set=index.ids), index.n_papers).to_numpy(
        zero_copy_only=False)
    in_view = ref_rows < index.row_prefix[rows][parents]
    keep = np.bincount(parents[in_view], minlength=len(rows)) > 0
    kept = np.flatnonzero(keep)
    remap = np.cumsum(keep) - 1
    references = _lists(ref_ids.filter(pa.array(in_view)), remap[parents[in_view]], len(kept))
    return pa.table({"corpus_id": _take(index, "corpus_id", rows[kept]), "date": _take(index, "date", rows[kept]),
                     "references": references})


def contribution_targets(index: CorpusIndex, split: str) -> list[tuple[str, str, list[str]]]:
    """(corpus_id, date, reference ids in H^{<t_p}) for targets with >= 1 key reference."""
    table = contribution_target_table(index, split)
    return list(zip(table["corpus_id"].to_pylist(), table["date"].to_pylist(), table["references"].to_pylist()))


# ---------------------------------------------------------------- T2 collaborator prediction
def collaborator_table(index: CorpusIndex, split: str) -> pa.Table:
    """``corpus_id, date, seed_author_id, gold_author_ids``: targets with >= 2 listed authors that have history
    (H^{<t_p}); the first of them is the seed, the others the gold."""
    rows = target_rows(index, split)
    ids, parents, codes, positions = _author_lists(index, rows)
    first_row = index.author_first_rows()
    has_history = (codes[positions] >= 0) & (first_row[codes[positions]] < index.row_prefix[rows][parents[positions]])
    positions = positions[has_history]
    counts = np.bincount(parents[positions], minlength=len(rows))
    kept = np.flatnonzero(counts >= 2)
    remap = np.full(len(rows), -1)
    remap[kept] = np.arange(len(kept))
    positions = positions[remap[parents[positions]] >= 0]
    owner = remap[parents[positions]]
    seed = np.ones(len(positions), dtype=bool)
    seed[1:] = owner[1:] != owner[:-1]
    picked = ids.take(pa.array(positions, pa.int64()))
    return pa.table({"corpus_id": _take(index, "corpus_id", rows[kept]), "date": _take(index, "date", rows[kept]),
                     "seed_author_id": picked.filter(pa.array(seed)),
                     "gold_author_ids": _lists(picked.filter(pa.array(~seed)), owner[~seed], len(kept))})


def collaborator_instances(index: CorpusIndex, split: str) -> list[dict]:
    return collaborator_table(index, split).to_pylist()


# ---------------------------------------------------------------- T3 prior work selection
def prior_work_table(index: CorpusIndex, split: str) -> pa.Table:
    """``corpus_id, date, author_ids, gold_corpus_ids``: targets with key references, one of whose authors has a
    paper with key references in H^{<t_p}."""
    rows = target_rows(index, split)
    ids, parents, codes, positions = _author_lists(index, rows)
    lengths = pc.fill_null(pc.list_value_length(index.table["key_references"]), 0).to_numpy() > 0
    first_with_refs = index.author_first_rows(lengths)
    eligible_author = (codes[positions] >= 0) & (
        first_with_refs[codes[positions]] < index.row_prefix[rows][parents[positions]])
    eligible = np.bincount(parents[positions][eligible_author], minlength=len(rows)) > 0
    refs = _take(index, "key_references", rows)
    gold_ids, gold_parents = _nested_ids(refs, "corpus_id")
    has_gold = np.bincount(gold_parents, minlength=len(rows)) > 0
    keep = eligible & has_gold
    kept = np.flatnonzero(keep)
    remap = np.cumsum(keep) - 1
    author_keep = keep[parents[positions]]
    gold_keep = keep[gold_parents]
    return pa.table({
        "corpus_id": _take(index, "corpus_id", rows[kept]), "date": _take(index, "date", rows[kept]),
        "author_ids": _lists(ids.take(pa.array(positions[author_keep], pa.int64())),
                             remap[parents[positions[author_keep]]], len(kept)),
        "gold_corpus_ids": _lists(gold_ids.filter(pa.array(gold_keep)), remap[gold_parents[gold_keep]], len(kept))})


def prior_work_instances(index: CorpusIndex, split: str) -> list[dict]:
    return prior_work_table(index, split).to_pylist()


# ---------------------------------------------------------------- T4 citation prediction
def citation_table(index: CorpusIndex, split: str) -> pa.Table:
    """``corpus_id, date, label_12m``: targets whose trajectory covers 12 months (label = its 12th entry)."""
    rows = target_rows(index, split)
    trajectories = _take(index, "citation_trajectory", rows)
    if pa.types.is_null(trajectories.type):
        trajectories = pa.nulls(len(rows), pa.list_(pa.int64()))
    long_enough = pc.fill_null(pc.greater_equal(pc.list_value_length(trajectories), CITATION_HORIZON_MONTHS),
                               False)
    kept = rows[long_enough.to_numpy(zero_copy_only=False)]
    labels = pc.list_element(trajectories.filter(long_enough), CITATION_HORIZON_MONTHS - 1)
    return pa.table({"corpus_id": _take(index, "corpus_id", kept), "date": _take(index, "date", kept),
                     "label_12m": labels.cast(pa.int64())})


def citation_instances(index: CorpusIndex, split: str) -> list[dict]:
    return citation_table(index, split).to_pylist()


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
