"""H^{<t} never leaks anything dated at or after t (spec prescience.md §1.4, pitfalls 1–3).

Adversarial fixture: a synthetic release in the released schema with many same-day papers, random corpus ids
(id order != date order), rows in random file order, an author map that lists *later* papers too, and
target-only fields (roles, trajectories) that describe the future. Every answer of a view is checked against
a brute-force computation from the raw rows, and against a corpus whose future was rewritten.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from sciprobe.benchmarks.prescience import baselines as bl
from sciprobe.benchmarks.prescience.history import CorpusIndex
from sciprobe.benchmarks.prescience.schema import FUTURE_FIELDS
from sciprobe.benchmarks.prescience.synthetic import CorpusConfig, write_corpus
from sciprobe.core.errors import SciprobeError


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("prescience-release")
    write_corpus(out, CorpusConfig(n_papers=2500, seed=7))
    return out


@pytest.fixture(scope="module")
def rows(release) -> list[dict]:
    return pq.read_table(release / "test.parquet").to_pylist()


@pytest.fixture(scope="module")
def index(release) -> CorpusIndex:
    return CorpusIndex.from_parquet(release / "test.parquet",
                                    author_publications=release / "author_publications.jsonl")


@pytest.fixture(scope="module")
def author_map(release) -> dict[str, list[str]]:
    with open(release / "author_publications.jsonl", encoding="utf-8") as fh:
        return {r["key"]: r["value"] for r in map(json.loads, fh)}


def _shift(date: str, days: int) -> str:
    return (dt.date.fromisoformat(date) + dt.timedelta(days=days)).isoformat()


def _probe_dates(rows: list[dict]) -> list[str]:
    """Dates holding several papers (same-day traps), the earliest date, and dates outside the corpus."""
    per_day = Counter(r["date"] for r in rows)
    busy = sorted(d for d, n in per_day.items() if n >= 3)
    assert busy, "fixture must contain same-day papers"
    dates = sorted(per_day)
    return [dates[0], busy[0], busy[len(busy) // 2], busy[-1], _shift(busy[len(busy) // 2], 1), "1990-01-01",
            "2030-01-01"]


def test_fixture_is_adversarial(rows, author_map):
    ids = [r["corpus_id"] for r in rows]
    by_date = sorted(rows, key=lambda r: (r["date"], r["corpus_id"]))
    assert ids != [r["corpus_id"] for r in by_date]  # file order is not date order
    assert sorted(ids) != [r["corpus_id"] for r in by_date]  # id order is not date order
    date_of = {r["corpus_id"]: r["date"] for r in rows}
    # the merged author map lists papers later than a target's date (consumers must truncate)
    target = next(r for r in rows if "target" in r["roles"] and r["authors"])
    later = [c for a in target["authors"] for c in author_map[a["author_id"]] if date_of.get(c, "") >= target["date"]]
    assert later


@pytest.mark.parametrize("probe", range(7))
def test_view_is_exactly_the_strict_past(probe, rows, index):
    t = _probe_dates(rows)[probe]
    view = index.view(t)
    expected = {r["corpus_id"] for r in rows if r["date"] < t}
    got = view.papers(["corpus_id", "date"])
    assert set(got["corpus_id"].to_pylist()) == expected
    assert len(view) == len(expected)
    assert all(d < t for d in got["date"].to_pylist())
    for r in rows:
        assert (r["corpus_id"] in view) == (r["date"] < t)
        assert (view.paper(r["corpus_id"]) is None) == (r["date"] >= t)
    assert set(view.candidate_ids().to_pylist()) == expected


def test_same_day_papers_are_not_history(rows, index):
    per_day = Counter(r["date"] for r in rows)
    day = max(per_day, key=lambda d: (per_day[d], d))
    same_day = [r["corpus_id"] for r in rows if r["date"] == day]
    assert len(same_day) >= 3
    assert not any(c in index.view(day) for c in same_day)
    assert all(c in index.view(_shift(day, 1)) for c in same_day)


def test_future_fields_never_in_a_view(rows, index):
    view = index.view("2025-06-01")
    assert not set(FUTURE_FIELDS) & set(view.papers().column_names)
    target = next(r for r in rows if "target" in r["roles"] and r["date"] < "2025-06-01")
    record = view.paper(target["corpus_id"])
    assert record is not None and not set(FUTURE_FIELDS) & set(record)
    with pytest.raises(SciprobeError):
        view.papers(["corpus_id", "no_such_column"])


@pytest.mark.parametrize("probe", range(4))
def test_author_history_is_truncated_at_t(probe, rows, index, author_map):
    t = _probe_dates(rows)[probe + 1]
    view = index.view(t)
    date_of = {r["corpus_id"]: r["date"] for r in rows}
    in_rows: dict[str, set[str]] = {}
    for r in rows:
        for a in r["authors"] or []:
            in_rows.setdefault(a["author_id"], set()).add(r["corpus_id"])
    authors = sorted(in_rows)[:150]
    n_future = 0
    for author in authors:
        papers = set(author_map.get(author, [])) | in_rows[author]
        n_future += sum(1 for c in papers if date_of.get(c, "9999") >= t)
        expected = sorted((c for c in papers if c in date_of and date_of[c] < t), key=lambda c: (date_of[c], c))
        assert view.author_history(author) == expected
    assert n_future > 0  # the probe really had later papers to hide
    assert view.author_history("no-such-author") == []


@pytest.mark.parametrize("probe", range(4))
def test_citation_counts_use_only_earlier_citers(probe, rows, index):
    t = _probe_dates(rows)[probe + 1]
    view = index.view(t)
    counts: Counter[str] = Counter()
    later: Counter[str] = Counter()
    for r in rows:
        for ref in {x["corpus_id"] for x in r["key_references"] or []}:
            (counts if r["date"] < t else later)[ref] += 1
    known = {r["corpus_id"] for r in rows}
    for cid in sorted(set(counts) | set(later))[:400]:
        expected = counts[cid] if cid in known else 0
        assert view.citation_count(cid) == expected
        assert len(view.citing_papers(cid)) == expected
    assert any(later[c] for c in known)  # some citations were dated >= t and had to be ignored


def test_targets_frozen_fields_agree_with_the_view(rows, index):
    targets = [r for r in rows if "target" in r["roles"]]
    assert len(targets) > 100
    for r in targets:
        view = index.view(r["date"])
        for a in r["authors"]:
            history = view.author_history(a["author_id"])
            assert set(history) == set(a["publication_history"])  # same-day order is unspecified upstream
            dates = [view.index.date_of(c) for c in history]
            assert dates == sorted(dates) and all(d < r["date"] for d in dates)
            assert a["num_papers"] == len(a["publication_history"])
        for ref in r["key_references"]:
            assert ref["corpus_id"] in view
            # the frozen count covers all citers before t_p; the view sees the in-corpus subset of them
            assert view.citation_count(ref["corpus_id"]) <= ref["num_citations"]


def _rewrite_future(table: pa.Table, t: str, seed: int, keep: str | None = None) -> pa.Table:
    """Every row dated >= t (except ``keep``, a T5 target whose own references are an allowed input) cites
    pre-t papers and is written by pre-t authors; its text is scrambled."""
    rng = random.Random(seed)
    records = table.to_pylist()
    past = [r for r in records if r["date"] < t]
    past_ids = [r["corpus_id"] for r in past]
    past_authors = [a for r in past for a in (r["authors"] or [])]
    for r in records:
        if r["date"] >= t and r["corpus_id"] != keep:
            r["key_references"] = [{"corpus_id": c, "num_citations": 10**6} for c in rng.sample(past_ids, 5)]
            r["authors"] = rng.sample(past_authors, 4)
            r["title"], r["abstract"] = "FUTURE", "FUTURE"
    return pa.Table.from_pylist(records, schema=table.schema)


def test_rewriting_the_future_changes_nothing(release, index, author_map):
    t = "2025-02-14"
    table = pq.read_table(release / "test.parquet")
    changed = CorpusIndex(_rewrite_future(table, t, seed=3), author_map.items())
    a, b = index.view(t), changed.view(t)
    assert a.papers().equals(b.papers())
    ids = a.candidate_ids().to_pylist()
    for cid in ids[::7]:
        assert a.citation_count(cid) == b.citation_count(cid)
    for author in list(index.author_ids)[::5]:
        assert a.author_history(author) == b.author_history(author)
    assert changed.view("2030-01-01").papers().num_rows == index.n_papers  # the rewrite was real
    assert pc.sum(pc.equal(changed.table["title"], "FUTURE")).as_py() > 0


def test_baselines_do_not_depend_on_the_future(release, rows, index, author_map):
    table = pq.read_table(release / "test.parquet")
    targets = [r for r in rows if "target" in r["roles"] and "2025-01-01" <= r["date"] < "2025-03-01"][:25]
    assert targets
    for r in targets:
        t = r["date"]
        changed = CorpusIndex(_rewrite_future(table, t, seed=11, keep=r["corpus_id"]), author_map.items())
        authors = [a["author_id"] for a in r["authors"]]
        assert bl.prior_work_frequency(index, authors, t) == bl.prior_work_frequency(changed, authors, t)
        assert bl.collaborator_frequency(index, authors[0], t) == bl.collaborator_frequency(changed, authors[0], t)
        assert bl.cocitation_frequency(index, r["corpus_id"], t, k=50) == \
            bl.cocitation_frequency(changed, r["corpus_id"], t, k=50)
        date_of = {x["corpus_id"]: x["date"] for x in rows}
        assert all(date_of[c] < t for c in bl.prior_work_frequency(index, authors, t))


def test_undated_rows_and_bad_dates(release):
    table = pq.read_table(release / "train.parquet")
    dates = table["date"].to_pylist()
    dates[0] = None
    index = CorpusIndex(table.set_column(table.schema.get_field_index("date"), "date", pa.array(dates)))
    assert index.n_undated == 1
    assert index.view("2099-01-01").papers().num_rows == table.num_rows - 1
    for bad in ("2024-1-01", "20240101", "yesterday", None):
        with pytest.raises(SciprobeError):
            index.view(bad)


def test_duplicate_corpus_ids_rejected(release):
    table = pq.read_table(release / "train.parquet")
    with pytest.raises(SciprobeError, match="duplicate corpus_id"):
        CorpusIndex(pa.concat_tables([table, table.slice(0, 1)]))


@pytest.mark.parametrize("bounds", [("2024-10-01", "2025-01-01"), (0, 1), (1, 2), (2, 4), (3, 3), (4, 1),
                                    (5, 6), ("1990-01-01", "2030-01-01"), ("2030-01-01", "2031-01-01")])
def test_window_query_is_half_open(bounds, rows, index):
    """Same-day edges, an empty and a reversed window, and windows outside the corpus, against the raw rows."""
    probes = _probe_dates(rows)
    start, end = (probes[b] if isinstance(b, int) else b for b in bounds)
    expected = sorted((r["date"], r["corpus_id"]) for r in rows if start <= r["date"] < end)
    got = index.window(start, end)
    assert list(zip(got["date"].to_pylist(), got["corpus_id"].to_pylist())) == expected  # date order
    assert got.column_names == index.table.column_names
    targets = index.window(start, end, targets_only=True, columns=["corpus_id"])
    target_ids = {r["corpus_id"] for r in rows if "target" in r["roles"]}
    assert targets.column_names == ["corpus_id"]
    assert targets["corpus_id"].to_pylist() == [cid for _, cid in expected if cid in target_ids]
