"""PreScience parity cases from allenai/prescience@47384ed: the ranking ``evaluate.py`` of the prior-work and
co-author tasks (``utils.calculate_ndcg`` + ``calculate_precision_recall_f1``) and LACER's ``parse_score``.

Usage: python gen_prescience.py UPSTREAM_TREE   (the prescience checkout at the pinned commit)
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import numpy as np

from common import load_defs, raised, stub_module, write_cases

COMMIT = "47384ed79c48cfef610f30af12ba883f2a0093cb"
REPO = "allenai/prescience"


def _upstream_utils(tree: Path):
    """The two metric functions of utils.py (its imports pull in torch/faiss/S2 clients; they need only np)."""
    ns = load_defs(tree / "utils.py", {"np": np, "log": lambda message: None}, imports=False,
                   only=("calculate_ndcg", "calculate_precision_recall_f1"))
    return stub_module("utils", calculate_ndcg=ns["calculate_ndcg"],
                       calculate_precision_recall_f1=ns["calculate_precision_recall_f1"], log=lambda message: None)


def _instances(rng: random.Random, n: int) -> list[dict]:
    universe = [f"p{i}" for i in range(60)] + ["çé", "数据", "0", "00"]
    out = []
    for j in range(n):
        kind = rng.random()
        gold = rng.sample(universe, rng.randint(0, 8))
        pred = rng.sample(universe, rng.randint(0, 40))
        if kind < 0.15 and pred:
            pred = pred + [rng.choice(pred) for _ in range(rng.randint(1, 5))]  # duplicated predictions
            rng.shuffle(pred)
        elif kind < 0.25 and gold:
            gold = gold + [gold[0]]  # duplicated gold
        elif kind < 0.35:
            pred = gold[: max(0, len(gold) - 1)]  # shorter than gold
        elif kind < 0.45:
            pred = list(gold) + pred  # gold first
        out.append({"corpus_id": f"c{j}", "gold": gold, "pred": pred})
    return out


SPECIAL = [
    ("empty_gold", [{"corpus_id": "a", "gold": [], "pred": ["x", "y"]}]),
    ("empty_prediction", [{"corpus_id": "a", "gold": ["x"], "pred": []}]),
    ("both_empty", [{"corpus_id": "a", "gold": [], "pred": []}]),
    ("perfect", [{"corpus_id": "a", "gold": ["x", "y"], "pred": ["x", "y", "z"]}]),
    ("duplicate_hit_exceeds_one", [{"corpus_id": "a", "gold": ["x"], "pred": ["x", "x", "x"]}]),
    ("duplicate_gold_inflates_ideal", [{"corpus_id": "a", "gold": ["x", "x", "y"], "pred": ["x", "y", "z"]}]),
    ("int_ids_never_match_strings", [{"corpus_id": "a", "gold": ["1", "2"], "pred": [1, 2, 3]}]),
    ("int_ids_match_ints", [{"corpus_id": "a", "gold": [1, 2], "pred": [2, 1, 3]}]),
    ("shorter_than_gold", [{"corpus_id": "a", "gold": ["x", "y", "z"], "pred": ["x", "y"]}]),
    ("top_r_duplicates_shrink_the_set", [{"corpus_id": "a", "gold": ["x", "y"], "pred": ["x", "x", "y"]}]),
    ("unicode_ids", [{"corpus_id": "a", "gold": ["é", "e\u0301"], "pred": ["e\u0301", "é"]}]),
    ("no_hit", [{"corpus_id": "a", "gold": ["x"], "pred": ["y", "z"]}]),
    ("hit_at_the_end", [{"corpus_id": "a", "gold": ["x"], "pred": [f"n{i}" for i in range(99)] + ["x"]}]),
    ("long_list_1000", [{"corpus_id": "a", "gold": ["x", "y"],
                         "pred": [f"n{i}" for i in range(997)] + ["y", "q", "x"]}]),
    ("mixed_instances", [{"corpus_id": "a", "gold": [], "pred": []}, {"corpus_id": "b", "gold": ["x"], "pred": ["x"]},
                         {"corpus_id": "c", "gold": ["x", "y"], "pred": ["y"]}]),
    ("no_instances", []),
]


def ranking_cases(tree: Path) -> list[dict]:
    _upstream_utils(tree)
    stub_module("tqdm", tqdm=lambda it, **kwargs: it)
    tasks = {"prior_work": (load_defs(tree / "task_priorwork_prediction" / "evaluate.py"),
                            "gt_reference_ids", "predicted_reference_ids"),
             "coauthor": (load_defs(tree / "task_coauthor_prediction" / "evaluate.py"),
                          "gt_coauthor_ids", "predicted_coauthor_ids")}
    rng = random.Random(21)
    specs = list(SPECIAL)
    for i in range(40):
        specs.append((f"random_{i:02d}", _instances(rng, rng.choice([1, 2, 3, 5, 10, 25]))))
    cases = []
    for k, (name, instances) in enumerate(specs):
        task = "coauthor" if k % 3 == 2 else "prior_work"
        ns, gold_key, pred_key = tasks[task]
        records = [{"corpus_id": r["corpus_id"], gold_key: r["gold"], pred_key: r["pred"]} for r in instances]
        try:
            per = ns["evaluate_predictions"](records)
            agg = ns["compute_aggregate_metrics"](per)
            upstream = {"aggregates": agg, "per_instance_ndcg": [r["ndcg"] for r in per]}
        except Exception as exc:  # noqa: BLE001
            upstream = {"raised": raised(exc)}
        cases.append({"name": f"{task}_{name}", "input": {"instances": instances}, "upstream": upstream})
    return cases


LACER_REPLIES = [
    "Reasoning: close.\nScore: 7", "Score: 10", "score: 3", "SCORE:4", "Score : 5", "Score:\n6", "Score: 7.5",
    "Score: -2", "Score: +3", "Score: 11", "Score: 0", "Score: 07", "Score: 7.", "Score: .5", "Score: 7/10",
    "Score: seven", "", "No score given.", "Reasoning: a Score: 2 in passing.\nScore: 9", "Scores: 8",
    "Final Score: 6", "**Score:** 8", "Score: 8\nScore: 2", "Score: 1e3", "Score: 3,5", "Score:\t9",
    "Score: \uff19", "Score: \u0664", "Score:  10  ", "Sc ore: 5", "score:9.99", "Score: 5.0.1", "Score:- 4",
    "The Score: is 6", "Score: 6 out of 10", "Reasoning: long " + "x" * 200 + "\nScore: 4",
]


def lacer_cases(tree: Path) -> list[dict]:
    ns = load_defs(tree / "task_followup_prediction" / "evaluate" / "lacer_score.py", {"re": re}, keep=["SCORE_REGEX"],
                   imports=False)
    cases = []
    for i, reply in enumerate(LACER_REPLIES):
        try:
            upstream = {"score": ns["parse_score"](reply)}
        except Exception as exc:  # noqa: BLE001
            upstream = {"raised": raised(exc)}
        cases.append({"name": f"reply_{i:02d}", "input": {"reply": reply}, "upstream": upstream})
    return cases


def main(tree: str) -> None:
    root = Path(tree)
    upstream = {"repo": REPO, "commit": COMMIT}
    write_cases("prescience_ranking", {**upstream, "function": "task_priorwork_prediction/evaluate.py and "
                                       "task_coauthor_prediction/evaluate.py (evaluate_predictions, "
                                       "compute_aggregate_metrics)"}, ranking_cases(root))
    write_cases("prescience_lacer_parse", {**upstream, "function": "task_followup_prediction/evaluate/lacer_score.py "
                                           "parse_score"}, lacer_cases(root))


if __name__ == "__main__":
    main(sys.argv[1])
