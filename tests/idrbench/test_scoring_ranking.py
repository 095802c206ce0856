"""ranking_metrics against naive reference implementations and brute-force tie enumeration
(spec idrbench.md §5.2, §9.9; prescience.md pitfall 9)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.ranking import ranking_metrics, reciprocal_rank

K_VALUES = (1, 2, 3, 5, 10)


def naive_metrics(ranked: list[str], relevant: set[str], ks=K_VALUES) -> dict[str, float]:
    """Textbook definitions, written independently of the implementation under test."""
    rr = 0.0
    for pos, c in enumerate(ranked, start=1):
        if c in relevant:
            rr = 1.0 / pos
            break
    out = {"rr": rr}
    n_rel = len(relevant)
    for k in ks:
        top = ranked[:k]
        dcg = sum(1.0 / math.log2(i + 2) for i, c in enumerate(top) if c in relevant)
        idcg = sum(1.0 / math.log2(i + 2) for i in range(min(k, n_rel)))
        out[f"ndcg@{k}"] = dcg / idcg
        out[f"hits@{k}"] = float(any(c in relevant for c in top))
        out[f"recall@{k}"] = sum(c in relevant for c in top) / n_rel
    out["r_precision"] = sum(c in relevant for c in ranked[:n_rel]) / n_rel
    return out


def tie_orderings(ranked: list[str], scores: list[float]):
    """Every ordering consistent with the scores: groups by descending score, all permutations inside."""
    groups: dict[float, list[str]] = {}
    for c, s in zip(ranked, scores):
        groups.setdefault(s, []).append(c)
    blocks = [groups[s] for s in sorted(groups, reverse=True)]
    for perms in itertools.product(*(itertools.permutations(b) for b in blocks)):
        yield [c for block in perms for c in block]


def random_query(rng: np.random.Generator, max_len: int = 7) -> tuple[list[str], set[str], list[float]]:
    n = int(rng.integers(0, max_len + 1))
    ranked = [f"id{j}" for j in rng.permutation(12)[:n]]
    pool = ranked + ["missing1", "missing2"]
    n_rel = int(rng.integers(1, min(4, len(pool)) + 1))
    relevant = set(rng.choice(pool, size=n_rel, replace=False).tolist())
    scores = rng.integers(0, int(rng.integers(1, 4)) + 1, size=n).astype(float).tolist()
    return ranked, relevant, scores


def flat_first(report: Any) -> dict[str, float]:
    v = report.values
    return {"rr": v["per_query_rr"][0], "r_precision": v["r_precision"],
            **{k: v[k] for k in v if "@" in k}}


def test_as_given_matches_naive_definitions() -> None:
    rng = np.random.default_rng(10)
    queries = [random_query(rng, max_len=15) for _ in range(300)]
    preds = [q[0] for q in queries]
    refs = [q[1] for q in queries]
    report = ranking_metrics(preds, refs, k_values=K_VALUES)
    naive = [naive_metrics(p, r) for p, r in zip(preds, refs)]
    assert report.values["per_query_rr"] == pytest.approx([n["rr"] for n in naive], abs=1e-12)
    assert report.values["mrr"] == pytest.approx(np.mean([n["rr"] for n in naive]), abs=1e-12)
    for key in ["r_precision"] + [f"{m}@{k}" for m in ("ndcg", "hits", "recall") for k in K_VALUES]:
        assert report.values[key] == pytest.approx(np.mean([n[key] for n in naive]), abs=1e-12), key


def test_expected_rank_equals_brute_force_average_over_tie_orderings() -> None:
    rng = np.random.default_rng(11)
    multi_relevant_ties = 0
    for _ in range(250):
        ranked, relevant, scores = random_query(rng)
        orderings = list(tie_orderings(ranked, scores))
        assert len(orderings) <= 5040
        brute = {key: float(np.mean([naive_metrics(o, relevant)[key] for o in orderings]))
                 for key in naive_metrics(ranked, relevant)}
        report = ranking_metrics([ranked], [relevant], scores=[scores], tie_policy="expected_rank",
                                 k_values=K_VALUES)
        got = flat_first(report)
        for key, want in brute.items():
            assert got[key] == pytest.approx(want, abs=1e-12), (key, ranked, relevant, scores)
        assert reciprocal_rank(ranked, relevant, scores=scores, tie_policy="expected_rank") == \
            pytest.approx(brute["rr"], abs=1e-12)
        groups: dict[float, int] = {}
        for c, s in zip(ranked, scores):
            groups[s] = groups.get(s, 0) + (c in relevant)
        multi_relevant_ties += any(v >= 2 for v in groups.values())
    assert multi_relevant_ties > 20, "cases with several relevant items in one tie group must be covered"


def test_expected_rank_large_tie_groups_do_not_overflow() -> None:
    # 1000 candidates all tied, 500 relevant: P(first at offset j) = C(999-j, 499) / C(1000, 500)
    ranked = [f"c{i}" for i in range(1000)]
    relevant = set(ranked[::2])
    rr = reciprocal_rank(ranked, relevant, scores=[0.0] * 1000, tie_policy="expected_rank")
    exact = sum(math.comb(1000 - j - 1, 499) / math.comb(1000, 500) / (j + 1) for j in range(501))
    assert rr == pytest.approx(exact, rel=1e-12)
    report = ranking_metrics([ranked], [relevant], scores=[[0.0] * 1000], tie_policy="expected_rank",
                             k_values=(1000,))
    assert report.values["recall@1000"] == pytest.approx(1.0)
    assert report.values["hits@1000"] == pytest.approx(1.0)
    assert report.values["ndcg@1000"] == pytest.approx(
        0.5 * sum(1 / math.log2(i + 2) for i in range(1000)) / sum(1 / math.log2(i + 2) for i in range(500)))


def test_alphabetical_matches_official_sort_rule() -> None:
    rng = np.random.default_rng(12)
    for _ in range(200):
        ranked, relevant, scores = random_query(rng, max_len=10)
        titles = [c.upper() if rng.random() < 0.3 else c for c in ranked]  # mixed case, code-point order
        rel_titles = {t for c, t in zip(ranked, titles) if c in relevant} or {titles[0] if titles else "x"}
        standings = [t for _, t in sorted(zip(scores, titles), key=lambda st: (-st[0], st[1]))]
        rank = next((pos for pos, t in enumerate(standings, start=1) if t in rel_titles), None)
        want = 0.0 if rank is None else 1.0 / rank
        got = reciprocal_rank(titles, rel_titles, scores=scores, tie_policy="alphabetical")
        assert got == want


def test_alphabetical_and_expected_rank_agree_without_ties() -> None:
    rng = np.random.default_rng(13)
    for _ in range(50):
        ranked = [f"p{j}" for j in rng.permutation(30)]
        scores = rng.permutation(30).astype(float).tolist()
        relevant = set(rng.choice(ranked, size=2, replace=False).tolist())
        a = ranking_metrics([ranked], [relevant], scores=[scores], tie_policy="alphabetical")
        e = ranking_metrics([ranked], [relevant], scores=[scores], tie_policy="expected_rank")
        order = [c for _, c in sorted(zip(scores, ranked), reverse=True)]
        g = ranking_metrics([order], [relevant])
        for key in g.values:
            assert a.values[key] == pytest.approx(g.values[key]) and e.values[key] == pytest.approx(g.values[key])


def test_random_tournament_baseline_mrr() -> None:
    # spec §5.2 [derived]: one gold among 30 in random order -> E[RR] = H_30 / 30 ~= 0.1332
    ranked = [f"t{i}" for i in range(30)]
    rr = reciprocal_rank(ranked, {"t7"}, scores=[0.0] * 30, tie_policy="expected_rank")
    assert rr == pytest.approx(sum(1 / i for i in range(1, 31)) / 30)
    assert round(rr, 4) == 0.1332


def test_prescience_scale_lists() -> None:
    rng = np.random.default_rng(14)
    n_queries, n_cand = 300, 1000
    preds = [[f"a{j}" for j in rng.permutation(5000)[:n_cand]] for _ in range(n_queries)]
    refs = [set(rng.choice(p, size=int(rng.integers(1, 11)), replace=False).tolist()) for p in preds]
    scores = [rng.integers(0, 20, size=n_cand).astype(float).tolist() for _ in range(n_queries)]
    for policy in ("as_given", "alphabetical", "expected_rank"):
        report = ranking_metrics(preds, refs, scores=scores, tie_policy=policy, k_values=(10, 100, 1000))
        assert 0.0 < report.values["ndcg@1000"] <= 1.0
        assert len(report.values["per_query_rr"]) == n_queries
    # spot-check one long list against the naive definition
    one = ranking_metrics(preds[:1], refs[:1], k_values=(1000,))
    assert one.values["ndcg@1000"] == pytest.approx(naive_metrics(preds[0], refs[0], ks=(1000,))["ndcg@1000"])


def test_report_shape_and_mode() -> None:
    report = ranking_metrics([["a", "b"]], [["b"]], scores=[[1, 1]], tie_policy="expected_rank", k_values=[2, 1, 2])
    assert report.mode == "expected_rank" and report.metric == "ranking"
    assert report.params["k_values"] == [2, 1]
    assert list(report.values) == ["mrr", "per_query_rr", "r_precision", "n_queries", "ndcg@2", "ndcg@1",
                                   "hits@2", "hits@1", "recall@2", "recall@1"]
    assert report.coverage.as_dict() == {"n_items": 1, "n_scored": 1, "n_failed": 0, "failure_rate": 0.0}
    note = ranking_metrics([["a"]], [["a"]], scores=[[1.0]]).notes
    assert any("not used" in n for n in note)


@pytest.mark.parametrize("kwargs, match", [
    ({"predictions": ["abc"], "references": [["a"]]}, "query 0: the ranked list must be a sequence"),
    ({"predictions": [["a"]], "references": [["a"]], "k_values": [0]}, "k_values must be positive"),
    ({"predictions": [["a"]], "references": [["a"]], "scores": [[float("nan")]], "tie_policy": "expected_rank"},
     "finite"),
    ({"predictions": [["a"]], "references": [["a"]], "scores": [[1.0], [2.0]]}, "scores and predictions differ"),
    ({"predictions": [["a", 1]], "references": [["a"]], "scores": [[1, 1]], "tie_policy": "alphabetical"},
     "cannot be sorted"),
    ({"predictions": [["a"], ["b", "b"]], "references": [["a"], ["b"]]}, "query 1: duplicate id 'b'"),
    ({"predictions": [["a"]], "references": [[["a"]]]}, "query 0: relevant ids must be hashable"),
    ({"predictions": [["a"]], "references": [3]}, "query 0: relevant ids must be a collection"),
])
def test_bad_input_raises_one_line(kwargs: dict, match: str) -> None:
    with pytest.raises(SciprobeError, match=match) as excinfo:
        ranking_metrics(**kwargs)
    assert "\n" not in str(excinfo.value)


def test_bare_string_reference_is_one_id() -> None:
    assert reciprocal_rank(["ab", "a"], "a") == 0.5
    assert ranking_metrics([["ab", "a"]], ["a"]).values["mrr"] == 0.5
