"""IDRBench parity cases from irllm-framework@aa621e4: reply parsing (IPI, I3, I2R), the classification
metrics pipeline (``Evaluator.evaluate_file``) and Swiss tournaments with a scripted comparator.

Usage: python gen_idrbench.py UPSTREAM_TREE   (the irllm-framework checkout at the pinned commit)
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import tempfile
from pathlib import Path

from common import stub_module, write_cases

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripted import i2r_reply  # noqa: E402

COMMIT = "aa621e46dc5f1d85e6b20952c2acee3a59c44e65"
REPO = "project-ai4science/irllm-framework"


class ScriptedClient:
    """Stands in for LM_Client: replies come from a callable of the prompt; every call is logged."""

    def __init__(self, reply):
        self.reply = reply
        self.calls: list[str] = []

    def generate(self, input_prompt, sys_prompt=None):
        self.calls.append(input_prompt)
        return self.reply(input_prompt), None


# ----------------------------------------------------------------------------------------- reply texts

IPI_REPLIES = [
    'Your verdict: Yes\nConfidence score: 80\nSubject: ["Physics", "Other"]',
    "your verdict: no\nconfidence score: 10\nsubject: []",
    "YOUR VERDICT: YES\nCONFIDENCE SCORE: 99\nSUBJECT: ['Quantitative Biology']",
    '**Your verdict:** Yes\n**Confidence score:** 70\n**Subject:** ["Physics"]',
    "Your verdict: Yes\nConfidence score: 80",
    "Your verdict: Yes\nConfidence score: 60\nSubject: [Physics, Other]",
    "Your verdict: No.\nConfidence score: 95.\nSubject: ['Mathematics and Statistics'].",
    "Let me think.\nYour verdict: Yes\nConfidence score: 55\nSubject: [\"Other\"]\nDone.",
    "Your verdict: Maybe\nConfidence score: 50\nSubject: []",
    "Your verdict:Yes Confidence score:7 Subject:[]",
    "Your verdict: Yes\nConfidence score: \uff18\uff10\nSubject: []",
    "Your verdict: Yesterday\nConfidence score: 20\nSubject: []",
    'Your verdict: No\nConfidence score: 30\nSubject: ["a", ["b"]]',
    "Your verdict: No\nConfidence score: -5\nSubject: []",
    "Your verdict: Yes\nConfidence score: 1\nSubject: []\nYour verdict: No\nConfidence score: 2\nSubject: []",
    "Your verdict: No\r\nConfidence score: 100\r\n"
    "Subject: [\"Computer Science, Electrical Engineering and System Science\"]",
    "Your verdict:\tNo\tConfidence score:\t0\tSubject:\t[]",
    "",
    "Verdict: Yes\nConfidence: 80\nSubject: []",
    "Your verdict: Yes\nConfidence score: 80\nSubject: ['Économie', 'Física']",
    "Your verdict: No\nConfidence score: 0012\nSubject: [1, 2]",
    "Your verdict: yes\nConfidence score: 80\nSubject:\n[\"Physics\"]",
    "Your verdict: Yes\n\nConfidence score: 80\n\nSubject: [\"Physics\"]",
    "Your verdict: No Confidence score: 40 Subject: [\"Physics\", \"Other\"] because it is not.",
    "Yes\nConfidence score: 80\nSubject: []",
    "Your verdict: Yes\nConfidence score: 80\nSubject: [\"Physics\"\n\"Other\"]",
    "Your verdict: No\nConfidence score: 3.5\nSubject: []",
    "Your verdict: Yes!\nConfidence score: 77!\nSubject: []!",
    "Your Verdict: No\nConfidence Score: 45\nSubject: ()",
    "Your verdict: \u00a0Yes\nConfidence score: 80\nSubject: []",
    # issue 23.9c: an "Answer:" label instead of "Your verdict:" (sciprobe's strict mode reads it; official not)
    "Answer: Yes",
    "answer: no\nConfidence score: 80\nSubject: []",
    "Answer: Yes\nYour verdict: No\nConfidence score: 60\nSubject: []",
]

I3_REPLIES = [
    "Your verdict: Yes\nYour reason: The two papers combine imaging with learning.\nConfidence score: 85",
    "your verdict: no\nyour reason: unrelated fields.\nconfidence score: 90",
    "Your verdict: Yes\nYour reason: line one\nline two\nConfidence score: 70",
    "**Your verdict:** No\n**Your reason:** none\n**Confidence score:** 60",
    "Your verdict: Yes\nConfidence score: 80",
    "Your verdict: No. Your reason: short. Confidence score: 12.",
    "Your verdict: Yes\nYour reason:   padded reason   \nConfidence score: 66",
    "Your verdict: Yes\nYour reason: a\nConfidence score: 1\nYour verdict: No\nYour reason: b\nConfidence score: 2",
    "Your verdict: No\nYour reason: café und Straße – 数学\nConfidence score: 50",
    "Your verdict: Yes\nYour reason: \nConfidence score: 50",
    "Your verdict: Yes\nYour reason: x\nConfidence score: high",
    "",
    "Your verdict: YES\nYour reason: upper\nCONFIDENCE SCORE: 100",
    "Your verdict: No\r\nYour reason: windows line ends\r\nConfidence score: 20",
    "Your verdict: Yes\nYour reason: it says Confidence score: 5 inside\nConfidence score: 95",
    "Your verdict: Yes\nYour reason: ok\nConfidence score: \u0663\u0664",
    "Verdict: No\nReason: x\nConfidence score: 5",
    "Your verdict: No\n\nYour reason: blank line before\n\nConfidence score: 33",
    "Your verdict: Nope\nYour reason: x\nConfidence score: 5",
    "Your verdict: Yes\nYour reason: tab\tinside\nConfidence score: 44",
    "Your verdict: Yes\nYour reason: trailing dot.\nConfidence score: 81.",
    "Your verdict: No\nYour reason: x\nConfidence score:\n7",
    "Answer first. Your verdict: No\nYour reason: because\nConfidence score: 8 and more text",
    "Your verdict: Yes\nYour reason: x\nConfidence score: -1",
    "Your verdict:Yes\nYour reason:compact\nConfidence score:9",
    "Answer: Yes\nYour reason: x\nConfidence score: 5",  # issue 23.9c
]

I2R_REPLIES = [
    "Your choice: Paper 1\nConfidence score: 80",
    "Your choice: Paper 2\nConfidence score: 70",
    "your choice: paper 1\nconfidence score: 60",
    "YOUR CHOICE: PAPER 2\nCONFIDENCE SCORE: 50",
    "Your choice: paper 2\nConfidence score: 40",
    "Choice: Paper 1\nConfidence score: 80",
    "**Your choice:** Paper 1\n**Confidence score:** 80",
    "Your choice: Paper 1",
    "Your choice: Paper 3\nConfidence score: 80",
    "",
    "Your choice: Paper 1.\nConfidence score: 99.",
    "I prefer Paper 2.\nYour choice: Paper 2\nConfidence score: 65",
    "Your choice: Paper 1\nConfidence score: 10\nYour choice: Paper 2\nConfidence score: 20",
    "Your choice: Paper  1\nConfidence score: 80",
    "Your choice: Paper 12\nConfidence score: 80",
    "Your choice:Paper 2 Confidence score:3",
    "Your choice: PAPER 1\nConfidence score: 5",
    "Your choice: Paper 1\r\nConfidence score: 75",
    "Paper 1\nConfidence score: 80",
    "Your choice: Paper 2\nConfidence score: \uff15",
    "Your choice: Paper 1 (the first one)\nConfidence score: 80",
    "Your choice: Paper 2!\nConfidence score: 80",
    "Your choice: pAPER 1\nConfidence score: 80",
    "Your choice: Paper 1\nConfidence score: 0",
]


def parsing_cases(tasks, utils) -> list[dict]:
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        data, out = Path(tmp) / "data", Path(tmp) / "out"
        data.mkdir()
        out.mkdir()
        # IPI: one data row per reply, answered in row order by the scripted client
        rows = [{"id": f"9999.{i:05d}", "title": f"T{i}", "abstract": f"A{i}", "y_true": i % 2 == 0, "date": ""}
                for i in range(len(IPI_REPLIES))]
        (data / "data_exp_1.json").write_text(json.dumps(rows), encoding="utf-8")
        handler = tasks.TaskHandler(provider="stub", model_name="m", save_path=str(out), lm_config_path="none",
                                    data_path=str(data))
        replies = iter(IPI_REPLIES)
        handler.client = ScriptedClient(lambda prompt: next(replies))
        handler.identify_task(file_name="data_exp_1.json")
        got = {r["id"]: r for r in json.loads((out / "exp_1_m_critical.json").read_text(encoding="utf-8"))}
        for i, reply in enumerate(IPI_REPLIES):
            rec = got.get(rows[i]["id"])
            upstream = ({"parsed": False} if rec is None else
                        {"parsed": True, "verdict": rec["y_pred"], "confidence": rec["verb_conf"],
                         "subject": rec["subject_choices"]})
            cases.append({"name": f"ipi_reply_{i:02d}", "task": "ipi", "input": {"reply": reply},
                          "upstream": upstream})
        # I3 (Set 1 file layout)
        rows = [{"id": f"neg-{i}", "b_title": ["B"], "b_abstract": ["b"], "c_title": ["C"], "c_abstract": ["c"],
                 "y_true": i % 3 == 0} for i in range(len(I3_REPLIES))]
        (data / "data_exp_2_1.json").write_text(json.dumps(rows), encoding="utf-8")
        replies = iter(I3_REPLIES)
        handler.client = ScriptedClient(lambda prompt: next(replies))
        handler.classify_task(file_names=["data_exp_2_1.json"])
        got = {r["id"]: r for r in json.loads((out / "exp_2_1_m_critical.json").read_text(encoding="utf-8"))}
        for i, reply in enumerate(I3_REPLIES):
            rec = got.get(rows[i]["id"])
            upstream = ({"parsed": False} if rec is None else
                        {"parsed": True, "verdict": rec["y_pred"], "confidence": rec["verb_conf"],
                         "reason": rec["reasons"]})
            cases.append({"name": f"i3_reply_{i:02d}", "task": "i3", "input": {"reply": reply}, "upstream": upstream})
    # I2R: one comparison per reply; who got the point tells the winner
    for i, reply in enumerate(I2R_REPLIES):
        p1, p2 = utils.Player("P one", "a1"), utils.Player("P two", "a2")
        client = ScriptedClient(lambda prompt, r=reply: r)
        _, verb = utils.simulate_match(p1, p2, {"start_title": "S", "start_abstract": "s"}, client, True)
        winner = 1 if p1.score else 2 if p2.score else None
        cases.append({"name": f"i2r_reply_{i:02d}", "task": "i2r", "input": {"reply": reply},
                      "upstream": {"winner": winner, "confidence": verb}})
    return cases


# ----------------------------------------------------------------------------------------- metrics pipeline

def classification_cases(evaluation) -> list[dict]:
    rng = random.Random(12)
    specs = []
    for i in range(40):
        n = rng.choice([1, 2, 3, 5, 8, 13, 21, 40])
        p_yes, p_hit, p_fail = rng.random(), rng.random(), rng.choice([0.0, 0.1, 0.4])
        records = []
        for j in range(n):
            gold = rng.random() < p_yes ** 2
            pred = gold if rng.random() < p_hit else not gold
            label = None if rng.random() < p_fail else ("yes" if pred else "no")
            records.append({"id": f"2501.{i:02d}{j:03d}", "gold": "yes" if gold else "no", "official": label})
        specs.append((f"random_{i:02d}", records))
    specs += [
        ("all_yes_correct", [{"id": f"a{j}", "gold": "yes", "official": "yes"} for j in range(4)]),
        ("all_no_correct", [{"id": f"b{j}", "gold": "no", "official": "no"} for j in range(6)]),
        ("one_class_left_after_drop", [{"id": "c1", "gold": "yes", "official": "yes"},
                                       {"id": "c2", "gold": "no", "official": None}]),
        ("nothing_parsed", [{"id": "d1", "gold": "yes", "official": None},
                            {"id": "d2", "gold": "no", "official": None}]),
        ("gold_one_class_preds_two", [{"id": "e1", "gold": "no", "official": "yes"},
                                      {"id": "e2", "gold": "no", "official": "no"}]),
        ("excluded_paper_removed", [{"id": "2411.04715", "gold": "yes", "official": "no"},
                                    {"id": "x1", "gold": "yes", "official": "yes"},
                                    {"id": "x2", "gold": "no", "official": "no"}]),
        ("excluded_paper_leaves_one_class", [{"id": "2411.04715", "gold": "no", "official": "no"},
                                             {"id": "y1", "gold": "yes", "official": "yes"}]),
        ("single_item", [{"id": "z", "gold": "yes", "official": "no"}]),
        ("all_wrong", [{"id": f"w{j}", "gold": g, "official": "no" if g == "yes" else "yes"}
                       for j, g in enumerate(["yes", "no", "yes", "no"])]),
        ("duplicate_ids", [{"id": "dup", "gold": "yes", "official": "yes"},
                           {"id": "dup", "gold": "no", "official": "yes"},
                           {"id": "dup", "gold": "no", "official": "no"}]),
    ]
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, records in specs:
            parsed = [{"id": r["id"], "y_true": r["gold"] == "yes", "y_pred": r["official"] == "yes"}
                      for r in records if r["official"] is not None]
            path = Path(tmp) / f"exp_1_{name}.json"
            path.write_text(json.dumps(parsed), encoding="utf-8")
            metrics = evaluation.Evaluator(file_dir=tmp).evaluate_file(str(path))
            if metrics is not None:
                metrics = dict(metrics, confusion_matrix=metrics["confusion_matrix"].tolist())
            cases.append({"name": name, "input": {"records": records}, "upstream": {"metrics": metrics}})
    return cases


# ----------------------------------------------------------------------------------------- tournaments

_MARK = re.compile(r"\[\[p(\d+)\]\]")


def _titles(rng: random.Random, n: int, dup_rate: float) -> list[str]:
    pool = ["Alpha", "alpha", "Beta", "Gamma", "Δelta", "Émile", "Zeta", "beta", "Ωmega", "Ångström", "eta",
            "Theta", "Iota", "kappa", "Lambda", "Mu", "nu", "Xi", "Omicron", "Pi", "Rho", "Sigma", "Tau", "Upsilon",
            "Phi", "Chi", "Psi", "A", "AA", "a b", "a  b", "10 papers", "9 papers", "", "Alpha "]
    titles = []
    for _ in range(n):
        if titles and rng.random() < dup_rate:
            titles.append(rng.choice(titles))
        else:
            titles.append(rng.choice(pool) + ("" if rng.random() < 0.6 else f" {rng.randint(1, 99)}"))
    return titles


def tournament_cases(utils, evaluation) -> list[dict]:
    rng = random.Random(7)
    specs = []
    for i in range(24):
        n = rng.choice([1, 2, 3, 4, 5, 7, 9, 12, 16, 29, 30, 31])
        rounds = rng.choice([1, 2, 3, 10, 10, 10])
        titles = _titles(rng, n, rng.choice([0.0, 0.1, 0.3]))
        n_gold = min(n, rng.choice([1, 1, 2]))
        specs.append((f"tournament_{i:02d}", titles, n_gold, rounds, 1000 + i))
    specs.append(("all_same_title", ["Same"] * 8, 1, 10, 77))
    specs.append(("gold_title_shared_with_distractor", ["Shared", "Other", "Shared", "Third", "Fourth"], 1, 10, 78))
    cases = []
    for name, titles, n_gold, rounds, seed in specs:
        # upstream order: the distractors of `list`, then the target_paper entries (the last n_gold titles)
        players = [utils.Player(title=t, abstract=f"[[p{k}]]") for k, t in enumerate(titles)]
        calls: list[tuple[int, int]] = []

        def reply(prompt: str, seed=seed, calls=calls) -> str:
            first, second = (int(x) for x in _MARK.findall(prompt)[:2])
            calls.append((first, second))
            return i2r_reply(seed, first, second)

        client = ScriptedClient(reply)
        ranked, _, _ = utils.swiss_tournament(players, {"start_title": "Seed", "start_abstract": "seed"}, True,
                                              client, rounds)
        standings = [p.title for p in ranked]
        gold = titles[len(titles) - n_gold:]
        mrr, rr = evaluation.Evaluator.calculate_mrr([gold], [standings])
        ndcg, nd = evaluation.Evaluator().ndcg_at_10([gold], [standings])
        cases.append({"name": name, "input": {"titles": titles, "n_gold": n_gold, "rounds": rounds, "seed": seed},
                      "upstream": {"matches": calls, "standings": standings, "points": [p.score for p in ranked],
                                   "player_order": [int(_MARK.findall(p.abstract)[0]) for p in ranked],
                                   "mrr": rr[0], "ndcg_at_10": nd[0]}})
    return cases


def main(tree: str) -> None:
    sys.path.insert(0, tree)
    os.chdir(tempfile.mkdtemp())
    stub_module("lm_client", LM_Client=lambda **kwargs: None)
    import evaluation
    import tasks
    import utils

    upstream = {"repo": REPO, "commit": COMMIT}
    write_cases("idrbench_parsing", {**upstream, "function": "tasks.TaskHandler.identify_task / classify_task, "
                                     "utils.simulate_match"}, parsing_cases(tasks, utils))
    write_cases("idrbench_classification", {**upstream, "function": "evaluation.Evaluator.evaluate_file"},
                classification_cases(evaluation))
    write_cases("idrbench_tournament", {**upstream, "function": "utils.swiss_tournament, Evaluator.calculate_mrr, "
                                        "Evaluator.ndcg_at_10"}, tournament_cases(utils, evaluation))


if __name__ == "__main__":
    main(sys.argv[1])
