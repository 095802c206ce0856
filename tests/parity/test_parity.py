"""Official mode against the pinned upstream code, case by case (tests/parity/README.md).

Every case file under ``cases/`` holds inputs written for this project and the output the pinned upstream
function produced on them (``generate/``); each case runs sciprobe's official mode through public functions and
must give the same result, to the last digit unless a case says otherwise.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sciprobe.core.errors import SciprobeError

CASES = Path(__file__).resolve().parent / "cases"
CHECKERS: dict[str, Any] = {}


def checker(name: str):
    def register(fn):
        CHECKERS[name] = fn
        return fn
    return register


def _load() -> list[Any]:
    params = []
    for path in sorted(CASES.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for case in doc["cases"]:
            params.append(pytest.param(doc["scorer"], case, id=f"{doc['scorer']}:{case['name']}"))
    return params


def same(got: Any, want: Any) -> bool:
    """Exact equality; floats compare bit for bit (NaN/inf arrive as their repr strings)."""
    if isinstance(want, str) and want in ("nan", "inf", "-inf"):
        return isinstance(got, float) and repr(got) == want
    if isinstance(want, float) or isinstance(got, float):
        return isinstance(got, (int, float)) and not isinstance(got, bool) and float(got) == float(want)
    if isinstance(want, list):
        return isinstance(got, (list, tuple)) and len(got) == len(want) and all(map(same, got, want))
    return got == want


def assert_same(got: Any, want: Any, what: str) -> None:
    assert same(got, want), f"{what}: sciprobe {got!r} != upstream {want!r}"


def _real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def within_ulp(got: Any, want: Any) -> bool:
    """Within one float64 ulp (:func:`math.ulp`): for a value from numpy's SIMD-dispatched math or reductions
    (``np.log``/``np.exp``/``np.mean`` behind ``scipy.stats.gmean``), whose last bit depends on the vector width
    the CPU offers (AVX-512, AVX2, SSE), not on the code."""
    if same(got, want):
        return True
    return _real(got) and _real(want) and abs(float(got) - float(want)) <= math.ulp(float(want))


#: a float32 term made from one reduction (BLAS ``sdot``, ``np.mean``) and float32 arithmetic after it: one ulp in
#: the reduction, scaled by upstream's ``* 10`` in float32, is up to two ulps of the term
FLOAT32_TERM_ULPS = 2


def float32_term_tolerance(value: float, scale: float) -> float:
    """How far ``float(term) * scale`` may move when the float32 ``term`` moves :data:`FLOAT32_TERM_ULPS` ulps."""
    return FLOAT32_TERM_ULPS * scale * float(np.spacing(np.float32(abs(value) / scale)))


def assert_near(got: Any, want: Any, what: str, *, tolerance: float | None = None) -> None:
    """One float64 ulp (:func:`within_ulp`), or the given ``tolerance``."""
    if tolerance is None:
        ok, unit = within_ulp(got, want), "one float64 ulp"
    else:
        ok, unit = same(got, want) or (_real(got) and _real(want) and abs(got - want) <= tolerance), f"{tolerance!r}"
    assert ok, f"{what}: sciprobe {got!r} != upstream {want!r} (more than {unit} apart)"


# ----------------------------------------------------------------------------------------- IDRBench

@checker("idrbench_parsing")
def _idr_parsing(case: dict) -> None:
    from sciprobe.benchmarks.idrbench.parsing import parse_i2r, parse_i3, parse_ipi

    reply, want = case["input"]["reply"], case["upstream"]
    if case["task"] == "i2r":
        extra = parse_i2r(reply).extra
        assert_same(extra["official_winner"], want["winner"], "winner")
        assert_same(extra["confidence"] if extra["official_winner"] is not None else want["confidence"],
                    want["confidence"], "confidence")
        return
    parsed = (parse_ipi if case["task"] == "ipi" else parse_i3)(reply)
    official = parsed.extra["official"]
    assert_same(official is not None, want["parsed"], "parsed")
    if not want["parsed"]:
        return
    assert_same(official == "yes", want["verdict"], "verdict")
    assert_same(parsed.extra["confidence"], want["confidence"], "confidence")
    if case["task"] == "ipi":  # sciprobe keeps subject labels as strings
        assert_same(parsed.extra["subjects"], [str(s) for s in want["subject"]], "subject")
    else:
        assert_same(parsed.extra["reason"], want["reason"], "reason")


_UPSTREAM_CLASSIFICATION_KEYS = ("size", "confusion_matrix", "accuracy", "precision", "recall", "f1_score_0",
                                 "f1_score_1", "weighted_f1_score", "gmean_f1_score", "auc")
#: computed with numpy's SIMD-dispatched log/exp (scipy's gmean): compared to one float64 ulp
_SIMD_CLASSIFICATION_KEYS = ("gmean_f1_score",)


@checker("idrbench_classification")
def _idr_classification(case: dict) -> None:
    from sciprobe.benchmarks.idrbench import score_classification

    report = score_classification(case["input"]["records"], "official")
    want = case["upstream"]["metrics"]
    if want is None:
        assert report.values["macro_f1"] is None and report.values["no_score_reason"]
        return
    assert_same(report.values["macro_f1"], want["macro_f1_score"], "macro_f1")
    for key in _UPSTREAM_CLASSIFICATION_KEYS:
        if key in _SIMD_CLASSIFICATION_KEYS:
            assert_near(report.values[key], want[key], key)
        else:
            assert_same(report.values[key], want[key], key)


@checker("idrbench_tournament")
def _idr_tournament(case: dict) -> None:
    from sciprobe.benchmarks.idrbench.i2r import winner_for
    from sciprobe.run.runners.swiss import play
    from sciprobe.benchmarks.idrbench.scoring.official_ranking import idrbench_official_ranking

    from parity.scripted import i2r_reply

    spec, want = case["input"], case["upstream"]
    titles, seed = spec["titles"], spec["seed"]
    asked: list[list[int]] = []

    def decide(matches):
        out = []
        for m in matches:
            asked.append([m.paper_1, m.paper_2])
            out.append(winner_for("official", i2r_reply(seed, m.paper_1, m.paper_2))[0])
        return out

    game = play(titles, decide, rounds=spec["rounds"])
    assert_same(asked, want["matches"], "matches (paper 1, paper 2), in order")
    standings = game.standings()
    assert_same([t for t, _ in standings], want["standings"], "standings")
    assert_same([p for _, p in standings], want["points"], "points")
    assert_same(game.order(), want["player_order"], "players in final order")
    gold = titles[len(titles) - spec["n_gold"]:]
    report = idrbench_official_ranking([[t for t, _ in standings]], [gold], scores=[[p for _, p in standings]])
    assert_same(report.values["per_query_rr"][0], want["mrr"], "reciprocal rank")
    assert_same(report.values["per_query_ndcg@10"][0], want["ndcg_at_10"], "nDCG@10")


# ----------------------------------------------------------------------------------------- SGI-Bench

@checker("sgi_deep_research")
def _sgi_deep_research(case: dict) -> None:
    from sciprobe.benchmarks.sgibench.scoring.deep_research import exact_match, extract_answer

    spec, want = case["input"], case["upstream"]
    assert_same(extract_answer(spec["response"]), want["model_answer"], "model_answer")
    report = exact_match([spec["response"]], [spec["reference"]], parsed_answers=[spec["parser"]])
    assert_same(report.values["per_item"][0], want["exact_match"], "exact_match")


@checker("sgi_llm_judge")
def _sgi_llm_judge(case: dict) -> None:
    from sciprobe.benchmarks.sgibench.scoring.deep_research import answer_judge_accuracy, exact_match_item

    spec, want = case["input"], case["upstream"]
    em = exact_match_item(spec["reference"], spec["response"], spec["parser"], "official")
    assert_same(em, want["exact_match"], "exact_match")
    # sciprobe asks the judge only about answered items; a failed generation without an exact match scores 0 and
    # counts as failed (upstream asks the judge about the answer "None", which a judge scores 0)
    reply = spec["judge_reply"] if spec["response"] is not None else None
    report = answer_judge_accuracy([reply], [em], "official")
    assert_same(report.values["per_item"][0], want["llm_judge"], "llm_judge")
    not_asked = spec["response"] is None and not em
    assert_same(report.coverage.n_failed == 1, want["judge_error"] or not_asked, "failed verdict")


@checker("sgi_wet_experiment")
def _sgi_wet(case: dict) -> None:
    from sciprobe.benchmarks.sgibench.scoring._common import official_model_answer
    from sciprobe.benchmarks.sgibench.scoring.wet_experiment import score_item

    spec, want = case["input"], case["upstream"]
    assert_same(official_model_answer(spec["response"]), want["model_answer"], "model_answer")
    item = score_item(spec["reference"], spec["response"], "official")
    if "raised" in want:  # upstream's script stops: sciprobe records the item as a failure
        assert item["status"] == "upstream_crash"
        return
    for key in ("ss", "pa", "final"):
        assert_same(item[key], want[key], key)


_SOFT_FIELDS = {"action_sequence_similarity": "ss", "parameter_acc": "pa", "matched_action_count": "matched",
                "action_recall": "action_recall", "action_precision": "action_precision",
                "parameter_recall": "parameter_recall", "parameter_precision": "parameter_precision"}


@checker("sgi_wet_soft")
def _sgi_wet_soft(case: dict) -> None:
    from sciprobe.benchmarks.sgibench.scoring._common import official_model_answer
    from sciprobe.benchmarks.sgibench.scoring.wet_experiment import parse_protocol, score_item, soft_scores

    spec, want = case["input"], case["upstream"]
    answer = official_model_answer(spec["response"])
    assert_same(answer, want["model_answer"], "model_answer")
    gt, pred = parse_protocol(spec["reference"]), parse_protocol(answer)
    soft = soft_scores(gt, pred)
    for upstream_key, ours in _SOFT_FIELDS.items():
        assert_same(getattr(soft, ours), want["soft"][upstream_key], upstream_key)
    counts = {"gt_step_count": len(gt), "pred_step_count": len(pred), "length_gap": abs(len(gt) - len(pred)),
              "missing_action_count": len(gt) - soft.matched, "extra_action_count": len(pred) - soft.matched}
    for key, value in counts.items():
        assert_same(value, want["soft"][key], key)
    assert_same(soft.final, want["soft_final_score"], "soft_final_score")
    item = score_item(spec["reference"], spec["response"], "official")
    if "raised" in want:  # the script's strict scoring raises before the soft scores: a recorded failure
        assert item["status"] == "upstream_crash"
        assert (item["soft_ss"], item["soft_pa"], item["soft_final"]) == (0.0, 0.0, 0.0)
        return
    for key in ("soft_ss", "soft_pa", "soft_final"):
        assert_same(item[key], want["soft_final_score"] if key == "soft_final" else
                    want["soft"]["action_sequence_similarity" if key == "soft_ss" else "parameter_acc"], key)
    assert_same([item["ss"], item["pa"]], [want["strict"]["ss"], want["strict"]["pa"]], "strict ss, pa (unchanged)")


@checker("sgi_wet_soft_corpus")
def _sgi_wet_soft_corpus(case: dict) -> None:
    from sciprobe.benchmarks.sgibench.scoring.wet_experiment import wet_experiment_scores

    spec, want = case["input"], case["upstream"]
    report = wet_experiment_scores(spec["responses"], spec["references"], mode="official")
    if "raised" in want:  # the script stops on an item whose protocols both parse to nothing
        assert report.values["n_upstream_crash"] >= 1 and report.coverage.n_failed >= 1
        return
    for key in ("ss", "pa", "final", "soft_ss", "soft_pa", "soft_final"):  # upstream prints 0-1, sciprobe x100
        assert_same(report.values[key], 100.0 * want[key], key)
    for key in ("n_length_mismatch", "n_length_mismatch_soft_ss_nonzero"):
        assert_same(report.values[key], want[key], key)


@checker("sgi_reasoning")
def _sgi_reasoning(case: dict) -> None:
    from sciprobe.benchmarks.sgibench.scoring.reasoning import multiple_choice_accuracy, reasoning_validity

    spec, want = case["input"], case["upstream"]
    mca = multiple_choice_accuracy([spec["response"]], [spec["answer"]]).values["per_item"][0]
    assert_same(mca, want["mca"], "MCA")
    rv = reasoning_validity([spec["judge_reply"]]).values["per_item"][0]
    assert_same(rv, want["rv"], "RV")


@checker("sgi_idea_objective")
def _sgi_idea(case: dict) -> None:
    from sciprobe.benchmarks.sgibench.scoring.idea import DIMENSIONS, Votes, score_item

    from parity.stub_embedder import HashEmbedder

    spec, want = case["input"], case["upstream"]
    item = score_item(json.dumps(spec["generated"]), spec["row"], votes=Votes(), mode="official",
                      embedder=HashEmbedder())
    if "raised" in want:
        assert item["status"] in ("upstream_error", "bad_reference"), item
        return
    final_tolerance = 4 * math.ulp(want["final_score"])  # its own float64 arithmetic
    for dim in DIMENSIONS:
        got, theirs = item["objective"][dim] * 10, want[f"{dim}_objective"]
        if dim in _FLOAT32_IDEA_TERMS:
            tolerance = float32_term_tolerance(theirs, 10)
            assert_near(got, theirs, f"{dim} objective", tolerance=tolerance)
            final_tolerance += tolerance / 8  # final: the mean over 4 dimensions of (objective + subjective) / 2
        else:
            assert_same(got, theirs, f"{dim} objective")
    assert_near(item["final"], want["final_score"], "final_score (no judge votes)", tolerance=final_tolerance)


#: idea terms made of float32 embedding cosines (BLAS ``sdot``, ``np.mean``): the float32 term to one float32 ulp;
#: feasibility is graph and token-set arithmetic in Python floats, compared exactly
_FLOAT32_IDEA_TERMS = ("effectiveness", "novelty", "detailedness")


_SGI_HEADLINES = {"deep_research": ("exact_match", 100), "idea_generation": ("final_score", 1),
                  "dry_experiment": ("PassAll@5", 100), "wet_experiment": ("final_score", 100),
                  "experimental_reasoning": ("MCA", 100)}


@checker("sgi_score")
def _sgi_score(case: dict) -> None:
    from sciprobe.benchmarks.sgibench.scoring._common import mean
    from sciprobe.benchmarks.sgibench.scoring.overall import sgi_score

    components = {}
    for name, (metric, scale) in _SGI_HEADLINES.items():
        items = case["input"]["logs"][name]
        components[name] = {"score": mean([float(i[metric]) for i in items]) * scale,
                            "coverage": {"n_items": len(items), "n_scored": len(items), "n_failed": 0}}
    report = sgi_score(components, mode="official")
    want = case["upstream"]
    if "raised" in want:
        assert report.values["sgi_score"] is None and report.values["refused_components"]
        return
    for name, value in want["components"].items():
        assert_same(report.values["components"][name], value, name)
    assert_same(f"{report.values['sgi_score']:.2f}", want["sgi_score"], "SGI-Score as printed")


# ----------------------------------------------------------------------------------------- PreScience

@checker("prescience_ranking")
def _prescience_ranking(case: dict) -> None:
    from sciprobe.benchmarks.prescience.scoring.ranking_tasks import score_rankings

    instances, want = case["input"]["instances"], case["upstream"]
    preds, golds = [i["pred"] for i in instances], [i["gold"] for i in instances]
    if "raised" in want:
        with pytest.raises(SciprobeError):
            score_rankings(preds, golds, variant="calculate_ndcg")
        return
    values = score_rankings(preds, golds, variant="calculate_ndcg").values
    agg = want["aggregates"]
    for ours, theirs in (("ndcg@1000", "avg_ndcg"), ("r_precision", "avg_precision"), ("recall@R", "avg_recall"),
                         ("f1@R", "avg_f1"), ("n_queries", "num_instances")):
        assert_same(values[ours], agg[theirs], ours)
    assert_same(values["per_query_ndcg"], want["per_instance_ndcg"], "per-instance nDCG")


@checker("prescience_lacer_parse")
def _lacer_parse(case: dict) -> None:
    from sciprobe.benchmarks.prescience.scoring.lacer import parse_score

    got = parse_score(case["input"]["reply"], "official")
    want = case["upstream"]
    if "raised" in want:
        assert got is None, got
    else:
        assert_same(got, want["score"], "score")


@checker("prescience_rollout_neighbours")
def _rollout_neighbours(case: dict) -> None:
    """Every curve's neighbours on a synthetic corpus and on a real one size-matched to it, random draws
    included; distances (1 - float32 cosine) within float32 rounding of the BLAS product."""
    import random

    from sciprobe.benchmarks.prescience.rollout.analysis import size_match
    from sciprobe.benchmarks.prescience.rollout.metrics import diversity_neighbours, month_of, novelty_neighbours

    synthetic_months = sorted({month_of(p["date"]) for p in case["synthetic"] if "synthetic" in p["roles"]})
    match = size_match(case["synthetic"], "synthetic", synthetic_months)
    for key, want in case["expected"].items():
        curve, on = key.split(":")
        papers = case[on]
        vectors = {c: np.asarray(v, dtype=np.float32) for c, v in case["embeddings"][on].items()}
        role = "synthetic" if on == "synthetic" else "target"
        matched = on == "natural"
        rng = random.Random(case["seed"])
        try:
            if curve == "diversity":
                found, _ = diversity_neighbours(papers, vectors, role, case["n"], case["k"], rng,
                                                match_sizes=match["sizes"] if matched else None)
            else:
                found, _ = novelty_neighbours(papers, vectors, role, case["n"], case["k"], rng,
                                              fixed=curve == "novelty_fixed",
                                              match_prior=match["prior"] if matched else None,
                                              match_growth=match["sizes"] if matched else None)
        except SciprobeError:
            assert "raises" in want, f"{key}: sciprobe raised, upstream did not"
            continue
        assert "raises" not in want, f"{key}: upstream raised ({want.get('message')}), sciprobe did not"
        expected = want["neighbours"]
        assert [(f.corpus_id, f.month) for f in found] == [(w["corpus_id"], w["bucket"]) for w in expected], key
        for f, w in zip(found, expected):
            assert [n["corpus_id"] for n in f.neighbours] == [n["corpus_id"] for n in w["neighbors"]], key
            for got, exp in zip(f.neighbours, w["neighbors"]):
                assert abs(got["distance"] - exp["distance"]) <= 4 * float(np.finfo(np.float32).eps), key


@checker("prescience_rollout_curves")
def _rollout_curves(case: dict) -> None:
    """Monthly means and 95% bootstrap intervals, natural then pooled synthetic from one generator, bit for bit."""
    from sciprobe.benchmarks.prescience.rollout.metrics import monthly_curves, paper_distances

    def ours(records: list) -> dict:
        return paper_distances({"month": r["bucket"], "neighbours": r["neighbors"]} for r in records)

    curves = monthly_curves(ours(case["natural"]), [ours(s) for s in case["synthetic"]], case["n_bootstrap"],
                            case["seed"])
    for label in ("natural", "synthetic"):
        want = case["expected"]["curves"][label]
        got = curves[label]
        assert sorted(got) == want["months"], label
        assert_same([got[m]["mean"] for m in want["months"]], want["mean"], f"{label} mean")
        assert_same([got[m]["ci95_low"] for m in want["months"]], want["lower"], f"{label} lower")
        assert_same([got[m]["ci95_high"] for m in want["months"]], want["upper"], f"{label} upper")


# ----------------------------------------------------------------------------------------- the test

PARAMS = _load()


def test_enough_cases_are_committed() -> None:
    assert len(PARAMS) >= 300


@pytest.mark.parametrize(("scorer", "case"), PARAMS)
def test_official_mode_equals_upstream(scorer: str, case: dict) -> None:
    CHECKERS[scorer](case)
