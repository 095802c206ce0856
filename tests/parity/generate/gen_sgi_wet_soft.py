"""SGI-Bench parity cases for the soft wet-experiment scores, added upstream after the pinned commit:
``compare_exp_steps_soft`` of SGI-Bench@3854aa9 ``task_3_wet_experiment/step_2_score.py`` (with that commit's
``parse_experiment_steps`` and strict ``compare_exp_steps``), on answers produced by the pinned ``get_answer``
(scripted model), item by item; plus the whole 3854aa9 scoring script run on written log files, for the printed
corpus means and length-mismatch counts.

Usage: python gen_sgi_wet_soft.py PINNED_TREE LATER_TREE   (SGI-Bench checkouts at 8268d43 and 3854aa9; the
later tree needs only ``evaluation/task_3_wet_experiment/step_2_score.py``; Python 3.12 for the script's sums)
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from common import load_defs, raised, stub_module, write_cases

# gen_sgi's idea cases need numpy through the stub embedder; the wet helpers borrowed here do not
stub_module("stub_embedder", HashEmbedder=None)
from gen_sgi import _model, _mutate, _parser, _protocol, _render, _wrap  # noqa: E402

COMMIT = "3854aa98c945e401c053d2770e1dc826c37ecf42"
PINNED = "8268d4349bff7c193eaa93ffb47418f402f9be2a"
REPO = "InternScience/SGI-Bench"
SOFT_KEYS = ("action_sequence_similarity", "parameter_acc", "matched_action_count", "gt_step_count",
             "pred_step_count", "missing_action_count", "extra_action_count", "length_gap", "action_recall",
             "action_precision", "parameter_recall", "parameter_precision")


def _step(out: str, action: str, **params: str) -> dict:
    return {"action": action, "params": dict(params), "out": out}


def _chain(actions: str, prefix: str = "v") -> str:
    """One step per letter, each reading the previous step's output (the first one a literal)."""
    steps = []
    for i, name in enumerate(actions):
        params = {"src": f"{prefix}{i - 1}"} if i else {"src": '"tissue"'}
        steps.append(_step(f"{prefix}{i}", name, **params))
    return _render(steps)


def _answer(body: str) -> str:
    return f"Plan.\n<answer>\n{body}\n</answer>"


REF3 = _render([_step("a", "Load sample", src='"tissue"'), _step("b", "Stain", sample="a", dye='"H&E"'),
                _step("c", "Image", slide="b", zoom='"10x"')])

# (name, reference protocol, model reply (None: a failed call))
EDGE_CASES = [
    ("identical", REF3, _answer(REF3)),
    ("both_empty_strict_crashes_first", "no protocol here", "nothing either"),
    ("reference_empty_pred_one_step", "no protocol", _answer(_render([_step("v0", "Stain", a="1")]))),
    ("pred_empty_reply_text_only", REF3, "I would stain the tissue."),
    ("failed_generation", REF3, None),
    ("reply_none_word", REF3, "None"),
    ("reply_empty", REF3, ""),
    ("reply_error_prefix", REF3, "[Error] timeout"),
    ("no_common_subsequence", _chain("ABC"), _answer(_chain("DEF"))),
    ("no_common_subsequence_same_length", _chain("AB"), _answer(_chain("CD"))),
    ("omitted_step", REF3, _answer(_render([_step("a", "Load sample", src='"tissue"'),
                                            _step("b", "Stain", sample="a", dye='"H&E"')]))),
    ("extra_step", REF3, _answer(_render([_step("a", "Load sample", src='"tissue"'), _step("x", "Wash", buf="PBS"),
                                          _step("b", "Stain", sample="a", dye='"H&E"'),
                                          _step("c", "Image", slide="b", zoom='"10x"')]))),
    ("reversed_order", _chain("ABCD"), _answer(_chain("DCBA"))),
    ("swap_tie_break", _chain("AB"), _answer(_chain("BA"))),
    ("repeated_steps_reference", _chain("AAAB"), _answer(_chain("AB"))),
    ("repeated_steps_prediction", _chain("AB"), _answer(_chain("AAAB"))),
    ("repeated_steps_both", _render([_step(f"v{i}", "Wash", buf="PBS") for i in range(3)]),
     _answer(_render([_step(f"w{i}", "Wash", buf="TBS") for i in range(4)]))),
    ("case_and_spaces_normalised", _render([_step("a", "Load sample", src="x"), _step("b", "Stain  cells", s="a")]),
     _answer(_render([_step("a", "load   SAMPLE", src="x"), _step("b", " stain cells", s="a")]))),
    ("unicode_case_normalised", _render([_step("a", "Ångström Scan", src="x")]),
     _answer(_render([_step("a", "ångström scan", src="y")]))),
    ("dice_partial_keys", _render([_step("a", "Mix", x="1", y="2", z="3")]),
     _answer(_render([_step("a", "Mix", x="1", w="9")]))),
    ("no_shared_keys", _render([_step("a", "Mix", x="1")]), _answer(_render([_step("a", "Mix", y="1")]))),
    ("no_keys_both_sides", _render([_step("a", "Mix")]), _answer(_render([_step("a", "Mix")]))),
    ("no_keys_reference_only", _render([_step("a", "Mix")]), _answer(_render([_step("a", "Mix", y="1")]))),
    ("literal_values_never_compared", REF3, _answer(REF3.replace("H&E", "Congo red").replace("10x", "40x"))),
    ("rewired_generated_to_literal", REF3, _answer(REF3.replace("sample=a", "sample=raw_tissue"))),
    ("wiring_through_unmatched_step", _chain("ABC"), _answer(_chain("AXC"))),
    ("renamed_outputs", _chain("ABC"), _answer(_chain("ABC", prefix="w"))),
    ("map_from_wrong_pair", _render([_step("a", "Load", src="x"), _step("b", "Stain", s="a"),
                                     _step("c", "Image", s="b")]),
     _answer(_render([_step("p", "Load", src="x"), _step("q", "Stain", s="x"), _step("r", "Image", s="q")]))),
    ("literal_equals_an_output_name", _render([_step("a", "Load", src="b"), _step("b", "Stain", s="a")]),
     _answer(_render([_step("a", "Load", src="b"), _step("b", "Stain", s="a")]))),
    ("numeric_and_negative_literals", _render([_step("a", "Cool", t="-4.5", n="3")]),
     _answer(_render([_step("a", "Cool", t="-20", n="3.0")]))),
    ("unparsable_parameters_several_per_line",
     'a = <Mix>(\n    x="1", y="2"\n)\nb = <Stain>(\n    s=a\n)',
     _answer('a = <Mix>(\n    x="1", y="2"\n)\nb = <Stain>(\n    s=a\n)')),
    ("unparsable_parameter_lines", 'a = <Mix>(\n    just some words\n    "quoted"\n)',
     _answer('a = <Mix>(\n    x=1\n)')),
    ("duplicate_parameter_keys", 'a = <Mix>(\n    x=1,\n    x=a\n)', _answer('a = <Mix>(\n    x=1\n)')),
    ("single_line_calls_swallow_steps", _chain("ABC"),
     _answer("v0 = <A>(src=\"tissue\")\nv1 = <B>(src=v0)\nv2 = <C>(\n    src=v1\n)")),
    ("closing_paren_on_param_line", REF3, _answer(REF3.replace('"H&E"\n)', '"H&E")'))),
    ("unclosed_answer_tag_whole_reply", _chain("AB"), "Plan.\n<answer>\n" + _chain("AB")),
    ("two_answer_tags_last_counts", _chain("AB"), _answer(_chain("C")) + "\nBetter:\n" + _answer(_chain("AB"))),
    ("long_protocol_one_insert", _chain("ABCDEFGHIJ"), _answer(_chain("ABCDXEFGHIJ"))),
]


def _random_specs(rng: random.Random) -> list[tuple[str, str, str | None]]:
    specs = []
    for i in range(40):
        gt = _protocol(rng, rng.randint(1, 7))
        kind, pred = _mutate(rng, gt)
        if rng.random() < 0.3:  # a second edit: soft scores must also follow compound differences
            kind2, pred = _mutate(rng, pred)
            kind = f"{kind}_{kind2}"
        style = "single" if rng.random() < 0.1 else "multi"
        specs.append((f"random_{i:02d}_{kind}", _render(gt), _wrap(rng, _render(pred, style))))
    return specs


def _load(pinned: Path, later: Path) -> tuple[dict, dict]:
    utils = load_defs(pinned / "evaluation" / "utils.py", imports=False, only=["extract_final_answer"])
    step1 = load_defs(pinned / "evaluation" / "task_3_wet_experiment" / "step_1_get_answer.py", imports=False,
                      namespace={"extract_final_answer": utils["extract_final_answer"]},
                      keep=["answer_example", "output_requirements"], only=["get_answer"])
    step2 = load_defs(later / "evaluation" / "task_3_wet_experiment" / "step_2_score.py")
    return step1, step2


def item_cases(step1: dict, step2: dict) -> list[dict]:
    specs = EDGE_CASES + _random_specs(random.Random(27))
    cases = []
    for name, reference, response in specs:
        step1["llm_model"], step1["answer_paser"] = _model(response), _parser(None)
        item = step1["get_answer"]({"question": "q", "answer": reference})
        gt = step2["parse_experiment_steps"](reference)
        pred = step2["parse_experiment_steps"](item["model_answer"])
        soft = step2["compare_exp_steps_soft"](gt, pred)
        upstream = {"model_answer": item["model_answer"], "soft": {k: soft[k] for k in SOFT_KEYS},
                    "soft_final_score": (soft["action_sequence_similarity"] + soft["parameter_acc"]) / 2}
        try:  # the script scores strictly first: where that raises, it never reaches the soft scores
            strict = step2["compare_exp_steps"](gt, pred)
            upstream["strict"] = {"ss": strict["order_similarity"], "pa": strict["parameter_acc"]}
        except Exception as exc:  # noqa: BLE001 - the upstream script stops here
            upstream["raised"] = raised(exc)
        cases.append({"name": name, "input": {"reference": reference, "response": response}, "upstream": upstream})
    return cases


_PRINTED = {"Strict Action Sequence Similarity": "ss", "Strict Parameter Accuracy": "pa",
            "Strict Final Score": "final", "Soft Action Sequence Similarity": "soft_ss",
            "Soft Parameter Accuracy": "soft_pa", "Soft Final Score": "soft_final"}


def _run_script(later: Path, items: list[dict]) -> dict:
    """The 3854aa9 scoring script on one log file of model answers: its printed means and counts."""
    script = later / "evaluation" / "task_3_wet_experiment" / "step_2_score.py"
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp) / "task_3_wet_experiment" / "logs"
        logs.mkdir(parents=True)
        (logs / "m['all'].json").write_text(json.dumps(items), encoding="utf-8")
        run = subprocess.run([sys.executable, str(script), "m"], cwd=tmp, capture_output=True, text=True,
                             timeout=120)
    if run.returncode:
        error = run.stderr.strip().splitlines()[-1].split(":", 1)[0] if run.stderr.strip() else "error"
        return {"raised": f"upstream raised {error}"}
    printed: dict = {}
    for line in run.stdout.splitlines():
        label, _, value = line.partition(": ")
        if label in _PRINTED:
            printed[_PRINTED[label]] = float(value)
        elif label == "Length Mismatches":
            printed["n_length_mismatch"] = int(value.split("/")[0])
        elif label == "Length Mismatches with Non-zero Soft ASS":
            printed["n_length_mismatch_soft_ss_nonzero"] = int(value.split("/")[0])
    return printed


def corpus_cases(step1: dict, later: Path) -> list[dict]:
    rng = random.Random(2703)
    specs = [(name, reference, response) for name, reference, response in EDGE_CASES
             if name != "both_empty_strict_crashes_first"]
    corpora = [("edge_cases", specs)]
    for i in range(6):
        corpora.append((f"random_corpus_{i}", _random_specs(rng)[: rng.choice([1, 3, 7, 20, 40])]))
    corpora.append(("with_both_empty_item", [specs[0], EDGE_CASES[1]]))
    cases = []
    for name, chosen in corpora:
        items = []
        for _, reference, response in chosen:
            step1["llm_model"], step1["answer_paser"] = _model(response), _parser(None)
            items.append(step1["get_answer"]({"question": "q", "answer": reference}))
        cases.append({"name": name,
                      "input": {"references": [r for _, r, _ in chosen], "responses": [p for _, _, p in chosen]},
                      "upstream": _run_script(later, items)})
    return cases


def main(pinned: str, later: str) -> None:
    pinned_tree, later_tree = Path(pinned), Path(later)
    os.chdir(tempfile.mkdtemp())
    step1, step2 = _load(pinned_tree, later_tree)
    upstream = {"repo": REPO, "commit": COMMIT, "answers_from": PINNED}
    write_cases("sgi_wet_soft", {**upstream, "function": "task_3_wet step_2_score compare_exp_steps_soft (+ "
                                 "parse_experiment_steps, compare_exp_steps) on the pinned get_answer"},
                item_cases(step1, step2))
    write_cases("sgi_wet_soft_corpus", {**upstream, "function": "task_3_wet step_2_score.py run as a script "
                                        "(printed strict and soft means, length-mismatch counts)"},
                corpus_cases(step1, later_tree))


if __name__ == "__main__":
    main(*sys.argv[1:3])
