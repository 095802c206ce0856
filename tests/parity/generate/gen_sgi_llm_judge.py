"""SGI-Bench parity cases for the answer-level deep-research judge (``llm_judge``), added upstream after the
pinned commit: ``answer_llm_judge`` and the exact match of SGI-Bench@5d562f6 ``task_1_deep_research/step_2_score.py``
with a scripted judge, on answers produced by the pinned ``get_answer`` (scripted model and parser).

Usage: python gen_sgi_llm_judge.py PINNED_TREE LATER_TREE   (SGI-Bench checkouts at 8268d43 and 5d562f6; Python
3.12 with json_repair)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from common import load_defs, stub_module, write_cases
from gen_sgi import _model, _parser

COMMIT = "5d562f64b7e811e7cc3da7b22c0a24fd6678dfca"
REPO = "InternScience/SGI-Bench"
RAISE = "<the judge call raises>"
ANSWER_PROMPT = "You are a scientific answer evaluator"

# (name, reference, model reply (None: a failed call), parser output (None: the parser fails), judge reply)
CASES = [
    ("exact_in_tag", "42", "<answer>42</answer>", "forty-two", '{"judge": 0, "reason": "never asked"}'),
    ("exact_by_parser", "0.5", "<answer>1/2</answer>", "0.5", '{"judge": 0, "reason": "never asked"}'),
    ("judge_one", "62.0", "<answer>62%</answer>", "62%", '{"judge": 1, "reason": "same value"}'),
    ("judge_zero", "62.0", "<answer>70%</answer>", "70%", '{"judge": 0, "reason": "different"}'),
    ("judge_text_around", "T cell", "<answer>T-cells</answer>", "T-cells",
     'Verdict follows. {"judge": 1, "reason": "same"} Thank you.'),
    ("judge_key_missing", "3", "<answer>4</answer>", "4", '{"reason": "no verdict key"}'),
    ("judge_string_one", "3", "<answer>3.0</answer>", "3.0", '{"judge": "1", "reason": "equal"}'),
    ("judge_two", "3", "<answer>3.0</answer>", "3.0", '{"judge": 2, "reason": "out of range"}'),
    ("judge_word", "3", "<answer>three</answer>", "three", '{"judge": "yes", "reason": "equal"}'),
    ("judge_no_object", "3", "<answer>three</answer>", "three", "I think the answer is correct."),
    ("judge_call_raises", "3", "<answer>three</answer>", "three", RAISE),
    ("judge_nested_braces", "x", "<answer>{x}</answer>", "{x}", '{"judge": 1, "reason": "set {x} equals x"}'),
    ("judge_single_quotes", "x", "<answer>y</answer>", "y", "{'judge': 1, 'reason': 'python dict'}"),
    ("judge_trailing_comma", "x", "<answer>y</answer>", "y", '{"judge": 0, "reason": "r",}'),
    ("judge_bool", "x", "<answer>y</answer>", "y", '{"judge": true}'),
    ("failed_generation", "7", None, None, '{"judge": 0, "reason": "no answer"}'),
    ("failed_generation_reference_none", "None", None, None, '{"judge": 0, "reason": "never asked"}'),
    ("no_tag_whole_reply", "5", "The answer is 5", "5", '{"judge": 1, "reason": "never asked"}'),
    ("parser_fails_judge_one", "5", "<answer>five</answer>", None, '{"judge": 1, "reason": "five is 5"}'),
    ("unicode_answer", "α-helix", "<answer>alpha helix</answer>", "alpha helix", '{"judge": 1, "reason": "α"}'),
]


def main(pinned: str, later: str) -> None:
    from json_repair import repair_json

    base = Path(pinned) / "evaluation"
    stub_module("datasets", load_dataset=lambda *a, **k: None)
    sys.path.insert(0, str(base))
    os.chdir(tempfile.mkdtemp())
    step1 = load_defs(base / "task_1_deep_research" / "step_1_get_answer.py", keep=["output_requirements"])
    step2 = load_defs(Path(later) / "evaluation" / "task_1_deep_research" / "step_2_score.py", imports=False,
                      namespace={"json": json, "repair_json": repair_json},
                      only=["parse_repaired_json_object", "answer_llm_judge", "eval_model_output"])
    cases = []
    for name, reference, response, parser, judge_reply in CASES:
        step1["llm_model"], step1["answer_paser"] = _model(response), _parser(parser)
        item = step1["get_answer"]({"question": "q?", "answer": reference, "steps": ["s"]})
        asked = []

        def judge(prompt: str, _reply: str = judge_reply, _asked: list = asked) -> str:
            if not prompt.startswith(ANSWER_PROMPT):
                return "[]"  # the step judge: not part of these cases
            _asked.append(True)
            if _reply == RAISE:
                raise RuntimeError("scripted judge failure")
            return _reply

        step2["judge"] = judge
        scored = step2["eval_model_output"](dict(item))
        cases.append({"name": name,
                      "input": {"reference": reference, "response": response, "parser": parser,
                                "judge_reply": None if judge_reply == RAISE else judge_reply},
                      "upstream": {"exact_match": scored["exact_match"], "llm_judge": scored["llm_judge"],
                                   "judge_asked": bool(asked), "judge_error": scored["llm_judge_reason"]
                                   .startswith("Judge error")}})
    write_cases("sgi_llm_judge", {"repo": REPO, "commit": COMMIT,
                                  "function": "task_1 step_2_score.answer_llm_judge + exact_match (5d562f6)"}, cases)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
