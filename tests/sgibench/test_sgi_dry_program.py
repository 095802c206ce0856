"""Assembling the dry-experiment program from a model answer (spec sgibench.md §3.3 step 2, §8): official
transplants only same-named top-level defs; paper also keeps the answer's imports and helpers; bad answers
keep the stubs and never raise."""

from __future__ import annotations

from sciprobe.benchmarks.sgibench.scoring.dry_experiment import (
    RunResult,
    assemble_program,
    final_outputs_match,
)

MAIN = '''"""Module docstring."""
import numpy as np


def area(r):
    """Tag: [Numerical Calculation]"""
    pass  # Please complete the function based on the context.


def report(x):
    pass  # Please complete the function based on the context.


if __name__ == "__main__":
    print("[Final Output]")
    print(area(2.0))
'''

ANSWER = '''Here you go.
<answer>
import math

def helper(r):
    return r * r

def area(r):
    return math.pi * helper(r)

def report(x):
    return f"{x:.3f}"
</answer>'''


def test_official_transplants_only_named_top_level_defs() -> None:
    program, info = assemble_program(MAIN, ANSWER, ["area", "report"])
    assert info["source"] == "answer" and info["replaced"] == ["area", "report"]
    assert "return math.pi * helper(r)" in program and 'return f"{x:.3f}"' in program
    assert "def helper" not in program and "import math" not in program  # upstream drops them -> NameError
    assert "Please complete" not in program
    compile(program, "main.py", "exec")


def test_paper_keeps_imports_and_helpers() -> None:
    program, info = assemble_program(MAIN, ANSWER, ["area", "report"], mode="paper")
    assert info["replaced"] == ["area", "report"]
    assert program.index("import math") < program.index("def area")
    assert program.index('"""Module docstring."""') < program.index("import math")
    assert program.index("def helper") < program.index("def area")
    namespace: dict = {}
    exec(compile(program.replace('if __name__ == "__main__":', "if False:"), "main.py", "exec"), namespace)
    assert abs(namespace["area"](1.0) - 3.141592653589793) < 1e-12


def test_bad_answers_keep_stubs() -> None:
    for response in (None, "no code at all", "<answer>def area(r:\n  return</answer>",
                     "<answer>def other():\n    pass</answer>"):
        program, info = assemble_program(MAIN, response, ["area"])
        assert program == MAIN and info["source"] == "none" and info["missing"] == ["area"]


def test_parser_candidate_is_the_fallback() -> None:
    program, info = assemble_program(MAIN, "<answer>def area(r:</answer>", ["area"],
                                     parsed_answer="def area(r):\n    return 3 * r * r")
    assert info["source"] == "parser" and "return 3 * r * r" in program
    assert info["missing"] == [] and "def report" in program  # untouched stub stays


def test_partial_answer_reports_missing_functions() -> None:
    _, info = assemble_program(MAIN, "<answer>def area(r):\n    return r</answer>", ["area", "report"])
    assert info["replaced"] == ["area"] and info["missing"] == ["report"]


def test_final_output_comparison() -> None:
    assert final_outputs_match("log line\n[Final Output]\n0.25 1.5", "other log\n[Final Output]\n0.25000000001 1.5")
    assert not final_outputs_match("[Final Output]\n0.25", "[Final Output]\n0.26")
    assert not final_outputs_match("[Final Output]\nAUC: 0.9", "[Final Output]\nACC: 0.9")
    assert not final_outputs_match("[Final Output]\n", "[Final Output]\n")  # nothing to compare
    assert RunResult.of({"stdout": "a", "stderr": "warn", "exit_status": 1}).official_output() == "warn\na"
