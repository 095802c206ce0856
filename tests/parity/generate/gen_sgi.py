"""SGI-Bench parity cases from SGI-Bench@8268d43: deep-research answer extraction + exact match, wet-experiment
SS/PA, experimental-reasoning MCA (and the RV reply parse), idea-generation objective terms (with the shared
stub embedder) and the SGI-Score script.

Usage: python gen_sgi.py UPSTREAM_TREE   (the SGI-Bench checkout at the pinned commit; needs Python 3.12)
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from stub_embedder import HashEmbedder  # noqa: E402

COMMIT = "8268d4349bff7c193eaa93ffb47418f402f9be2a"
REPO = "InternScience/SGI-Bench"


def _model(response):
    """The model under test: returns the scripted reply, or raises (a failed call) when it is None."""
    def call(*args, **kwargs):
        if response is None:
            raise RuntimeError("scripted failure")
        return response
    return call


def _parser(output):
    def call(answer, example):
        if output is None:
            raise RuntimeError("parser failed")
        return output
    return call


# ----------------------------------------------------------------------------------------- deep research

DR_CASES = [
    ("plain_tag", "42", "Step 1. x\n<answer>42</answer>", None),
    ("tag_with_spaces", "42", "<answer>  42 \n</answer>", None),
    ("last_of_two_tags", "7", "<answer>6</answer> wait <answer>7</answer>", None),
    ("unclosed_last_tag_whole_reply", "7", "<answer>6</answer> then <answer>7", None),
    ("unclosed_only_tag", "7", "reasoning <answer>7", None),
    ("unclosed_equals_reference", "<answer>7", "<answer>7", None),
    ("no_tag_whole_reply", "42", "42", None),
    ("no_tag_whole_reply_unstripped", "42", " 42\n", None),
    ("reply_none_word", "None", "none", None),
    ("reply_None_matches_None_reference", "None", "None", None),
    ("reply_NONE_upper", "x", "NONE", None),
    ("empty_reply", "None", "", None),
    ("empty_reply_other_reference", "0", "", None),
    ("error_prefix_reply", "None", "[Error] rate limit", "None"),
    ("error_prefix_reply_parser_ignored", "1", "[Error] boom", "1"),
    ("failed_call_is_None_answer", "None", None, None),
    ("failed_call_other_reference", "3.14", None, None),
    ("parser_rescues", "0.25", "<answer>1/4</answer>", "0.25"),
    ("parser_raises_answer_kept", "1/4", "<answer>1/4</answer>", None),
    ("parser_wrong", "0.25", "<answer>1/4</answer>", "0.5"),
    ("case_sensitive", "Paris", "<answer>paris</answer>", None),
    ("number_format_differs", "46", "<answer>46.0</answer>", None),
    ("unicode_answer", "α-helix", "<answer>α-helix</answer>", None),
    ("unicode_minus", "-3", "<answer>\u22123</answer>", None),
    ("nested_tags", "x", "<answer><answer>x</answer></answer>", None),
    ("close_before_open", "y", "</answer> <answer>y", None),
    ("tag_case_differs", "5", "<ANSWER>5</ANSWER>", None),
    ("empty_tag", "", "<answer></answer>", None),
    ("whitespace_tag", "", "<answer>   </answer>", None),
    ("none_inside_tag", "None", "<answer>None</answer>", None),
    ("multiline_answer", "a, b", "<answer>\na, b\n</answer>", None),
    ("comma_spacing", "1,2", "<answer>1, 2</answer>", "1,2"),
    ("error_not_prefix", "x", "x [Error]", None),
    ("reply_is_none_with_space", "none ", "none ", None),
    ("tag_then_text", "9", "<answer>9</answer> and more", None),
    ("parser_returns_empty", "", "<answer>q</answer>", ""),
    ("reference_with_newline", "a\nb", "<answer>a\nb</answer>", None),
    ("open_tag_only_then_close_other", "z", "<answer>z</answers>", None),
    ("many_tags_last_empty", "", "<answer>1</answer><answer></answer>", None),
    ("long_reply_no_tag", "x" * 50, "x" * 50, None),
]


def deep_research_cases(tree: Path) -> list[dict]:
    base = tree / "evaluation"
    stub_module("datasets", load_dataset=lambda *a, **k: None)
    sys.path.insert(0, str(base))
    step1 = load_defs(base / "task_1_deep_research" / "step_1_get_answer.py", keep=["output_requirements"])
    step2 = load_defs(base / "task_1_deep_research" / "step_2_score.py")
    step2["judge"] = lambda prompt: '[{"solution_step": "s", "reason": "r", "judge": "correct"}]'
    cases = []
    for name, reference, response, parser in DR_CASES:
        step1["llm_model"], step1["answer_paser"] = _model(response), _parser(parser)
        item = step1["get_answer"]({"question": "q", "answer": reference})
        item.update(steps=["s"])
        scored = step2["eval_model_output"](dict(item))
        cases.append({"name": name, "input": {"reference": reference, "response": response, "parser": parser},
                      "upstream": {"model_answer": item["model_answer"],
                                   "model_answer_after_llm_paser": item["model_answer_after_llm_paser"],
                                   "exact_match": scored["exact_match"]}})
    return cases


# ----------------------------------------------------------------------------------------- wet experiment

ACTIONS = ["Mix reagents", "Centrifuge", "Incubate", "Wash cells", "Measure OD", "Stain", "Filter", "Dilute",
           "Ångström scan", "细胞计数"]


def _protocol(rng: random.Random, n: int) -> list[dict]:
    steps = []
    for i in range(n):
        params = {}
        for k in range(rng.randint(0, 3)):
            if steps and rng.random() < 0.5:
                params[f"in{k}"] = rng.choice(steps)["out"]
            else:
                params[f"p{k}"] = rng.choice(['"10 mL"', "37", "raw_sample", '"5 min"', "-4.5", "buffer A"])
        steps.append({"action": rng.choice(ACTIONS), "params": params, "out": f"v{i}"})
    return steps


def _render(steps: list[dict], style: str = "multi") -> str:
    lines = []
    for s in steps:
        if style == "single":
            args = ", ".join(f"{k}={v}" for k, v in s["params"].items())
            lines.append(f"{s['out']} = <{s['action']}>({args})")
            continue
        lines.append(f"{s['out']} = <{s['action']}>(")
        items = list(s["params"].items())
        for j, (k, v) in enumerate(items):
            lines.append(f"    {k}={v}" + ("," if j < len(items) - 1 else ""))
        lines.append(")")
    return "\n".join(lines)


def _mutate(rng: random.Random, steps: list[dict]) -> tuple[str, list[dict]]:
    steps = json.loads(json.dumps(steps))
    kind = rng.choice(["same", "swap", "rename_action", "drop_step", "extra_step", "change_literal",
                       "drop_param", "rewire", "rename_outputs", "reverse"])
    if kind == "swap" and len(steps) > 1:
        i = rng.randrange(len(steps) - 1)
        steps[i], steps[i + 1] = steps[i + 1], steps[i]
    elif kind == "rename_action" and steps:
        rng.choice(steps)["action"] = rng.choice(ACTIONS)
    elif kind == "drop_step" and steps:
        steps.pop(rng.randrange(len(steps)))
    elif kind == "extra_step":
        steps.insert(rng.randint(0, len(steps)), {"action": rng.choice(ACTIONS), "params": {"x": "1"}, "out": "extra"})
    elif kind == "change_literal":
        for s in steps:
            for k in s["params"]:
                if not s["params"][k].startswith("v"):
                    s["params"][k] = '"20 mL"'
    elif kind == "drop_param":
        for s in steps:
            if s["params"]:
                s["params"].pop(next(iter(s["params"])))
                break
    elif kind == "rewire":
        for s in steps:
            for k in s["params"]:
                if s["params"][k].startswith("v"):
                    s["params"][k] = "raw_sample"
                    break
    elif kind == "rename_outputs":
        mapping = {s["out"]: f"w{j}" for j, s in enumerate(steps)}
        for s in steps:
            s["out"] = mapping[s["out"]]
            s["params"] = {k: mapping.get(v, v) for k, v in s["params"].items()}
    elif kind == "reverse":
        steps.reverse()
    return kind, steps


def _wrap(rng: random.Random, body: str) -> str:
    style = rng.choice(["closed", "closed", "closed", "unclosed", "none", "two_tags"])
    if style == "closed":
        return f"Plan first.\n<answer>\n{body}\n</answer>"
    if style == "unclosed":
        return f"Plan first.\n<answer>\n{body}\n"
    if style == "two_tags":
        return f"<answer>\nv9 = <Stain>(\n    a=1\n)\n</answer>\nBetter:\n<answer>\n{body}\n</answer>"
    return body


def wet_cases(tree: Path) -> list[dict]:
    base = tree / "evaluation"
    step1 = load_defs(base / "task_3_wet_experiment" / "step_1_get_answer.py",
                      keep=["answer_example", "output_requirements"])
    step2 = load_defs(base / "task_3_wet_experiment" / "step_2_score.py")
    rng = random.Random(3)
    specs = []
    for i in range(36):
        gt = _protocol(rng, rng.randint(1, 6))
        kind, pred = _mutate(rng, gt)
        style = "single" if rng.random() < 0.1 else "multi"
        specs.append((f"random_{i:02d}_{kind}", _render(gt), _wrap(rng, _render(pred, style))))
    one = _render([{"action": "Stain", "params": {"a": "1"}, "out": "v0"}])
    specs += [
        ("failed_generation", one, None),
        ("reply_none", one, "none"),
        ("reply_empty", one, ""),
        ("reply_error_prefix", one, "[Error] timeout"),
        ("both_empty_crashes_upstream", "no protocol here", "nothing either"),
        ("reference_unparsable_pred_ok", "no protocol", f"<answer>\n{one}\n</answer>"),
        ("closing_paren_on_param_line", one, "<answer>\nv0 = <Stain>(\n    a=1)\n</answer>"),
        ("identical_single_step", one, one),
        ("same_names_lexicographic_quirk", _render([{"action": a, "params": {}, "out": f"v{j}"}
                                                    for j, a in enumerate("DCAB")]),
         _render([{"action": a, "params": {}, "out": f"v{j}"} for j, a in enumerate("DBAC")])),
        ("repeated_action_names", _render([{"action": "Wash", "params": {}, "out": f"v{j}"} for j in range(3)]),
         _render([{"action": "Wash", "params": {}, "out": f"v{j}"} for j in range(3)])),
    ]
    cases = []
    for name, reference, response in specs:
        step1["llm_model"], step1["answer_paser"] = _model(response), _parser(None)
        item = step1["get_answer"]({"question": "q", "answer": reference})
        try:
            result = step2["compare_exp_steps"](step2["parse_experiment_steps"](reference),
                                                step2["parse_experiment_steps"](item["model_answer"]))
            ss, pa = result["order_similarity"], result["parameter_acc"]
            upstream = {"model_answer": item["model_answer"], "ss": ss, "pa": pa, "final": (ss + pa) / 2}
        except Exception as exc:  # noqa: BLE001 - the upstream script stops here
            upstream = {"model_answer": item["model_answer"], "raised": raised(exc)}
        cases.append({"name": name, "input": {"reference": reference, "response": response}, "upstream": upstream})
    return cases


# ----------------------------------------------------------------------------------------- reasoning (MCQ)

MCQ_CASES = [
    ("boxed_correct", "The answer is \\boxed{C}", 2, "8"),
    ("boxed_wrong", "\\boxed{A}", 2, "3"),
    ("lowercase_box", "\\boxed{c}", 2, "5"),
    ("first_box_counts", "\\boxed{B} no wait \\boxed{C}", 2, "7"),
    ("text_wrapper_box", "\\boxed{\\text{C}}", 2, "7"),
    ("box_with_period", "\\boxed{C.}", 2, "7"),
    ("no_box", "The answer is C", 2, "10"),
    ("failed_call", None, 2, "6"),
    ("empty_reply", "", 0, "0"),
    ("digit_string_reference", "\\boxed{D}", "3", "9"),
    ("reference_zero", "\\boxed{A}", 0, "85"),
    ("reference_past_Z", "\\boxed{Z}", 26, "4"),
    ("reference_Z", "\\boxed{Z}", 25, "4"),
    ("spaced_box", "\\boxed{ C }", 2, "4"),
    ("boxed_space_before_brace", "\\boxed {C}", 2, "4"),
    ("double_backslash", "\\\\boxed{C}", 2, "4"),
    ("two_letters", "\\boxed{CD}", 2, "4"),
    ("unicode_letter", "\\boxed{Ç}", 2, "4"),
    ("error_reply_text", "[Error][quota]", 1, "no score"),
    ("judge_ten", "\\boxed{B}", 1, "10/10"),
    ("judge_decimal", "\\boxed{B}", 1, "7.5"),
    ("judge_over_ten", "\\boxed{B}", 1, "Score: 85"),
    ("judge_empty", "\\boxed{B}", 1, ""),
    ("judge_words", "\\boxed{B}", 1, "seven"),
    ("judge_padded", "\\boxed{B}", 1, "  6  "),
    ("judge_unicode_digit", "\\boxed{B}", 1, "\u0665"),
    ("box_in_markdown", "**Final:** $\\boxed{E}$", 4, "9"),
    ("box_latex_display", "\\[\\boxed{B}\\]", 1, "2"),
    ("many_options", "\\boxed{J}", 9, "1"),
    ("negative_reference", "\\boxed{A}", -1, "1"),
]


def mcq_cases(tree: Path) -> list[dict]:
    base = tree / "evaluation"
    step1 = load_defs(base / "task_4_experimental_reasoning" / "step_1_get_answer.py", keep=["CONTEXT"])
    step2 = load_defs(base / "task_4_experimental_reasoning" / "step_2_score.py", keep=["CONTEXT"])
    cases = []
    for name, response, answer, judge_reply in MCQ_CASES:
        step1["vlm_model"] = _model(response)
        item = step1["get_answer"]({"question": "q", "options": ["o1", "o2", "o3"], "images": [], "answer": answer})
        step2["judge"] = lambda images, prompt, r=judge_reply: r
        try:
            scored = step2["eval_model_output"](dict(item, steps=["s"]))
            upstream = {"model_answer": item["model_answer"], "mca": scored["MCA"], "rv": scored["RV"]}
        except Exception as exc:  # noqa: BLE001
            upstream = {"model_answer": item["model_answer"], "raised": raised(exc)}
        cases.append({"name": name, "input": {"response": response, "answer": answer, "judge_reply": judge_reply},
                      "upstream": upstream})
    return cases


# ----------------------------------------------------------------------------------------- idea objective

def _reference_row(rng: random.Random, variant: str) -> dict:
    row = {"related_work": "{'W1': 'graph neural networks for molecules', 'W2': 'protein folding'}",
           "existing_solutions": "{'S1': 'random forests'}",
           "related_work_test": "{'T1': 'diffusion models', 'T2': 'transformers for proteins'}",
           "keywords": ["protein", "graph", "diffusion"], "core_idea": "reference idea",
           "implementation_steps": "{'1': 'collect data', '2': 'train model', '3': 'evaluate results'}",
           "implementation_order": ["1-2", "2-3"], "data": "PDB", "evaluation_metrics": "{'RMSD': 'error'}",
           "expected_outcome": "better folding", "challenge": "c", "limitation": "l", "motivation": "m",
           "task_objective": "t"}
    if variant == "bad_related_work_test":
        row["related_work_test"] = "{'T1': unquoted}"
    elif variant == "empty_related_work_test":
        row["related_work_test"] = "{}"
    elif variant == "no_existing":
        row["related_work"], row["existing_solutions"] = "{}", "{}"
    elif variant == "digit_order":
        row["implementation_order"] = ["1", "2", "3"]
    elif variant == "no_keywords":
        row["keywords"] = []
    elif variant == "many_steps":
        row["implementation_steps"] = str({str(i): f"step number {i}" for i in range(1, 12)})
        row["implementation_order"] = [f"{i}-{i + 1}" for i in range(1, 11)]
    return row


def _idea_text(rng: random.Random, n_chars: int) -> str:
    words = ["protein", "graph", "model", "diffusion", "we", "propose", "a", "novel", "method", "that", "learns",
             "structure", "energy", "folding", "data", "résumé", "数据", "和", "模型"]
    sentences, text = [], ""
    while len(text) < n_chars:
        sentences.append(" ".join(rng.choice(words) for _ in range(rng.randint(3, 12))).capitalize())
        text = ". ".join(sentences) + "."
    return text[:n_chars] if n_chars else ""


IDEA_SPECIAL = [
    ("null_idea", {"Idea": None, "ImplementationSteps": {"1": "a"}, "ImplementationOrder": ["1"]}, "base"),
    ("list_idea", {"Idea": ["first part of the idea text", "second part"], "ImplementationSteps": {"1": "a"},
                   "ImplementationOrder": ["1"]}, "base"),
    ("number_idea", {"Idea": 42, "ImplementationSteps": {"1": "a"}, "ImplementationOrder": ["1"]}, "base"),
    ("dict_idea", {"Idea": {"k": "v"}}, "base"),
    ("empty_idea", {"Idea": ""}, "base"),
    ("missing_idea", {"ImplementationSteps": {"1": "collect data"}, "ImplementationOrder": ["1-2"]}, "base"),
    ("full_text_only", {"full_text": "I could not produce JSON."}, "base"),
    ("non_string_step_text", {"Idea": "Protein graph diffusion. We propose a novel model for folding data.",
                              "ImplementationSteps": {"1": "collect data", "2": 7, "3": "evaluate"},
                              "ImplementationOrder": ["1-2", "2-3"]}, "base"),
    ("none_step_text", {"Idea": "Protein graph diffusion model.", "ImplementationSteps": {"1": None, "2": "train"},
                        "ImplementationOrder": ["1-2"]}, "base"),
    ("order_not_list_of_str", {"Idea": "Protein graph diffusion model.", "ImplementationSteps": {"1": "a", "2": "b"},
                               "ImplementationOrder": [1, 2]}, "base"),
    ("order_as_string", {"Idea": "Protein graph diffusion model.", "ImplementationSteps": {"1": "a", "2": "b"},
                         "ImplementationOrder": "1-2"}, "base"),
    ("explicit_null_sections", {"Idea": "Protein graph diffusion.", "Dataset": None, "ExpectedOutcome": None}, "base"),
    ("digit_order_chain", {"Idea": "A protein folding method.", "ImplementationSteps": {"1": "a", "2": "b", "10": "c"},
                           "ImplementationOrder": ["10", "2", "1"]}, "digit_order"),
    ("string_sorted_chain", {"Idea": "A protein folding method.",
                             "ImplementationSteps": {"1": "a", "2": "b", "10": "c"},
                             "ImplementationOrder": ["x"]}, "base"),
    ("bad_related_work_test", {"Idea": "Protein graph diffusion for folding."}, "bad_related_work_test"),
    ("empty_related_work_test", {"Idea": "Protein graph diffusion for folding."}, "empty_related_work_test"),
    ("no_existing_texts", {"Idea": "Protein graph diffusion for folding."}, "no_existing"),
    ("no_keywords", {"Idea": "Protein graph diffusion for folding."}, "no_keywords"),
    ("list_generated", ["not", "a", "dict"], "base"),
    ("same_graph_as_reference", {"Idea": "Protein graph. Diffusion model for folding proteins.",
                                 "ImplementationSteps": {"1": "collect data", "2": "train model",
                                                         "3": "evaluate results"},
                                 "ImplementationOrder": ["1-2", "2-3"]}, "base"),
]


def idea_cases(tree: Path) -> list[dict]:
    base = tree / "evaluation"

    class _NoModel:
        def __init__(self, *a, **k):
            raise RuntimeError("no model in the parity generator")

    stub_module("sentence_transformers", SentenceTransformer=_NoModel)
    ns = load_defs(base / "task_2_idea_generation" / "step_2_score.py", keep=["MAX_RETRIES", "JUDGE_MODELS"])
    ns["embedding_model"], ns["JUDGE_MODELS"] = HashEmbedder(), []
    rng = random.Random(5)
    specs = list(IDEA_SPECIAL)
    for i in range(24):
        n = rng.choice([0, 50, 299, 300, 301, 450, 700, 701, 1000, 2500])
        generated = {"Idea": _idea_text(rng, n)}
        if rng.random() < 0.8:
            k = rng.randint(1, 5)
            generated["ImplementationSteps"] = {str(j): rng.choice(["collect data", "train model", "evaluate results",
                                                                    "tune", "Collect Data"]) for j in range(1, k + 1)}
            generated["ImplementationOrder"] = rng.choice([[f"{j}-{j + 1}" for j in range(1, k)],
                                                           [str(j) for j in range(1, k + 1)], ["1-3", "3-2"], []])
        specs.append((f"random_{i:02d}_{n}", generated, rng.choice(["base", "digit_order", "many_steps"])))
    cases = []
    for name, generated, variant in specs:
        row = _reference_row(rng, variant)
        out = ns["evaluate_single_idea"](dict(row, generated_data=json.loads(json.dumps(generated))))
        if "error" in out:
            upstream = {"raised": "upstream raised (evaluate_single_idea recorded an error)"}
        else:
            upstream = {k: out[k] for k in ("effectiveness_objective", "novelty_objective", "detailedness_objective",
                                            "feasibility_objective", "final_score")}
        cases.append({"name": name, "input": {"row": row, "generated": generated}, "upstream": upstream})
    return cases


# ----------------------------------------------------------------------------------------- SGI-Score script

def _component_logs(rng: random.Random, n: dict[str, int]) -> dict[str, list[dict]]:
    return {
        "deep_research": [{"exact_match": rng.choice([0, 1]), "step_level_acc": rng.random()}
                          for _ in range(n["deep_research"])],
        "idea_generation": [{"effectiveness": 50.0, "novelty": 50.0, "detailedness": 50.0, "feasibility": 50.0,
                             "final_score": rng.uniform(0, 100)} for _ in range(n["idea_generation"])],
        "dry_experiment": [{"PassAll@5": p, "PassAll@3": p, "PassAll@1": p, "AET": rng.uniform(0.1, 9), "SER": 1.0}
                           for p in (rng.choice([0, 1]) for _ in range(n["dry_experiment"]))],
        "wet_experiment": [{"action_sequence_similarity": a, "parameter_accuracy": b, "final_score": (a + b) / 2}
                           for a, b in ((rng.random(), rng.random()) for _ in range(n["wet_experiment"]))],
        "experimental_reasoning": [{"MCA": rng.choice([0, 1]), "RV": rng.random()}
                                   for _ in range(n["experimental_reasoning"])],
    }


_LOG_DIRS = {"deep_research": ("task_1_deep_research", ""),
             "idea_generation": ("task_2_idea_generation", "_evaluation"),
             "dry_experiment": ("task_3_dry_experiment", ""), "wet_experiment": ("task_3_wet_experiment", ""),
             "experimental_reasoning": ("task_4_experimental_reasoning", "")}
_PRINTED = {"deep_research": "Exact Match (EM):", "idea_generation": "Final Score:", "dry_experiment": "PassAll@5:",
            "wet_experiment": "Final Score:", "experimental_reasoning": "Multi-Choice Accuracy (MCA):"}


def sgi_score_cases(tree: Path) -> list[dict]:
    script = tree / "evaluation" / "sgi_score.py"
    rng = random.Random(11)
    specs = []
    for i in range(22):
        specs.append((f"random_{i:02d}", {k: rng.choice([1, 2, 3, 7, 13, 40]) for k in _LOG_DIRS}))
    for comp in _LOG_DIRS:
        specs.append((f"empty_{comp}", {k: (0 if k == comp else 5) for k in _LOG_DIRS}))
    cases = []
    for name, sizes in specs:
        logs = _component_logs(rng, sizes)
        with tempfile.TemporaryDirectory() as tmp:
            for comp, (folder, suffix) in _LOG_DIRS.items():
                (Path(tmp) / folder / "logs").mkdir(parents=True)
                (Path(tmp) / folder / "logs" / f"m['all']{suffix}.json").write_text(json.dumps(logs[comp]))
            env = dict(os.environ, PYTHONPATH=str(script.parent))
            run = subprocess.run([sys.executable, str(script), "m"], cwd=tmp, env=env, capture_output=True,
                                 text=True, timeout=120)
        printed = {}
        section = None
        for line in run.stdout.splitlines():
            for comp, header in (("deep_research", "Deep Research"), ("idea_generation", "Idea Generation"),
                                 ("dry_experiment", "Dry Experiment"), ("wet_experiment", "Wet Experiment"),
                                 ("experimental_reasoning", "Experimental Reasoning")):
                if line.strip() == header:
                    section = comp
            if section and line.startswith(_PRINTED[section]):
                printed[section] = float(line.split(":", 1)[1].strip()) if section != "deep_research" else \
                    float(line.rsplit(":", 1)[1].strip())
        score = next((line.split(":", 1)[1].strip() for line in run.stdout.splitlines()
                      if line.startswith("SGI_Score:")), None)
        if run.returncode:
            error = run.stderr.strip().splitlines()[-1].split(":", 1)[0] if run.stderr.strip() else "error"
            upstream = {"raised": f"upstream raised {error}", "components_printed": printed}
        else:
            upstream = {"sgi_score": score, "components": printed}
        cases.append({"name": name, "input": {"logs": logs}, "upstream": upstream})
    return cases


def main(tree: str) -> None:
    root = Path(tree)
    os.chdir(tempfile.mkdtemp())
    upstream = {"repo": REPO, "commit": COMMIT}
    write_cases("sgi_deep_research", {**upstream, "function": "task_1 get_answer + eval_model_output (exact_match)"},
                deep_research_cases(root))
    write_cases("sgi_wet_experiment", {**upstream, "function": "task_3_wet get_answer + parse_experiment_steps + "
                                       "compare_exp_steps"}, wet_cases(root))
    write_cases("sgi_reasoning", {**upstream, "function": "task_4 get_answer + eval_model_output (MCA, RV)"},
                mcq_cases(root))
    write_cases("sgi_idea_objective", {**upstream, "function": "task_2 evaluate_single_idea (no judges, stub "
                                       "embedder)"}, idea_cases(root))
    write_cases("sgi_score", {**upstream, "function": "evaluation/sgi_score.py (run as a script)"},
                sgi_score_cases(root))


if __name__ == "__main__":
    main(sys.argv[1])
