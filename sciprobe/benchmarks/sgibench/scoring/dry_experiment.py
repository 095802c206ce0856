"""SGI-Bench Dry Experiment: PassAll@1/3/5, AET and SER from execution results
(shared/spec/sgibench.md §3.3, §4.4, §8 "Dry experiment").

This module never executes code: the sandbox runner (``sciprobe.sandbox.runner*``) runs the assembled
program on the five unit-test datasets of an item and hands over one :class:`RunResult` per test. Here:

- :func:`assemble_program` puts the model's functions into ``incomplete_main_code``. official: only
  same-named **top-level** ``def`` s replace the stubs (answer from the last ``<answer>`` block, then an
  optional parser candidate, else the stub stays); paper: also keeps the answer's extra imports, helper
  functions and classes.
- :func:`dry_experiment_scores` scores runs. official: a test passes if ``f"{stderr}\\n{stdout}".strip()``
  equals the reference output exactly; else it fails on a non-zero exit; else the output-equivalence judge
  (an injected callable) decides. paper: a non-zero exit fails; else the ``[Final Output]`` sections are
  compared token by token with a numeric relative tolerance; else the judge (if given) decides.
- official AET = mean over items of the mean positive runtime per item (items without one excluded);
  paper AET = mean over all runs. Timeouts count as ``timeout_s`` seconds and exit status -1.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from sciprobe.scoring.score_report import Coverage, ScoreReport
from sciprobe.benchmarks.sgibench.scoring._common import (
    Judge,
    Messages,
    bracketed_literal,
    call_judge,
    check_lengths,
    check_mode,
    extract_answer_block,
    mean,
    pct,
)

METRIC = "sgi_dry_experiment"
N_TESTS = 5
TIMEOUT_S = 300.0


class RunResult(NamedTuple):
    """One unit-test run of an assembled program (what the sandbox runner reports)."""

    stdout: str = ""
    stderr: str = ""
    returncode: int = 0
    wall_time: float = 0.0
    timed_out: bool = False

    @classmethod
    def of(cls, value: RunResult | Mapping[str, Any]) -> RunResult:
        """From a runner mapping: ``stdout``, ``stderr``, ``returncode`` (or ``exit_status``), ``wall_time``
        (or ``runtime``), ``timed_out``; missing values default to empty / 0 / False."""
        if isinstance(value, RunResult):
            return value
        get = value.get
        code = get("returncode")
        if code is None:
            code = get("exit_status")
        time_s = get("wall_time")
        if time_s is None:
            time_s = get("runtime")
        return cls(get("stdout") or "", get("stderr") or "", int(code or 0), float(time_s or 0.0),
                   bool(get("timed_out")))

    def official_output(self) -> str:
        return f"{self.stderr}\n{self.stdout}".strip()


# ------------------------------------------------------------------ program assembly (§3.3 step 2)

def _top_level_defs(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _span(node: ast.stmt) -> tuple[int, int]:
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return start, node.end_lineno or node.lineno


def _source_of(lines: list[str], node: ast.stmt) -> str:
    start, end = _span(node)
    return "\n".join(lines[start - 1:end])


def _try_parse(code: str) -> ast.Module | None:
    try:
        tree = ast.parse(code)
        compile(tree, "<answer>", "exec")
        return tree
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def assemble_program(incomplete_main_code: str, response: str | None, function_names: Sequence[str], *,
                     parsed_answer: str | None = None, mode: str = "official") -> tuple[str, dict[str, Any]]:
    """The program to run and a report ``{"source": answer|parser|none, "replaced": [...], "missing": [...]}``.

    A candidate is usable when it compiles and defines at least one requested function at top level; the
    raw ``<answer>`` block is tried first, then ``parsed_answer``. The result is syntax-checked; if the
    replacement breaks compilation the stubs are kept (source ``none``)."""
    check_mode(mode)
    names = list(function_names)
    report: dict[str, Any] = {"source": "none", "replaced": [], "missing": names}
    main_tree = _try_parse(incomplete_main_code)
    if main_tree is None or response is None:
        return incomplete_main_code, report
    candidates = [("answer", extract_answer_block(response))]
    if parsed_answer is not None:
        candidates.append(("parser", extract_answer_block(parsed_answer)))
    for source, code in candidates:
        tree = _try_parse(code)
        if tree is None:
            continue
        defs = _top_level_defs(tree)
        if not any(n in defs for n in names):
            continue
        program = _transplant(incomplete_main_code, main_tree, code, tree, names, mode)
        if _try_parse(program) is None:
            continue
        replaced = [n for n in names if n in defs and n in _top_level_defs(main_tree)]
        return program, {"source": source, "replaced": replaced, "missing": [n for n in names if n not in replaced]}
    return incomplete_main_code, report


def _transplant(main_code: str, main_tree: ast.Module, answer_code: str, answer_tree: ast.Module,
                names: Sequence[str], mode: str) -> str:
    main_lines, answer_lines = main_code.split("\n"), answer_code.split("\n")
    answer_defs, main_defs = _top_level_defs(answer_tree), _top_level_defs(main_tree)
    replacements = sorted(((_span(main_defs[n]), _source_of(answer_lines, answer_defs[n]))
                           for n in names if n in answer_defs and n in main_defs), reverse=True)
    for (start, end), text in replacements:
        main_lines[start - 1:end] = text.split("\n")
    if mode == "official" or not replacements:
        return "\n".join(main_lines)
    # paper: keep the answer's extra imports (at the top) and extra top-level helpers (before the first
    # replaced function), so a completion that relies on its own helpers can run.
    main_names = set(main_defs) | {n.name for n in main_tree.body if isinstance(n, ast.ClassDef)}
    imports = [_source_of(answer_lines, n) for n in answer_tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    helpers = [_source_of(answer_lines, n) for n in answer_tree.body
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
               and n.name not in main_names and n.name not in names]
    first = min(start for (start, _), _ in replacements)
    if helpers:
        main_lines[first - 1:first - 1] = "\n\n".join(helpers).split("\n") + ["", ""]
    if imports:
        insert_at = 0
        for node in main_tree.body:  # after a module docstring / __future__ imports
            if isinstance(node, ast.Expr) and isinstance(getattr(node, "value", None), ast.Constant) \
                    or isinstance(node, ast.ImportFrom) and node.module == "__future__":
                insert_at = node.end_lineno or insert_at
            else:
                break
        main_lines[insert_at:insert_at] = imports
    return "\n".join(main_lines)


# ------------------------------------------------------------------ comparison

_TOKEN = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[A-Za-z_]+|[^\sA-Za-z_\d]")


def final_output_section(text: str) -> str:
    """Text after the last ``[Final Output]`` marker (the whole text when there is none)."""
    index = text.rfind("[Final Output]")
    return text[index + len("[Final Output]"):] if index >= 0 else text


def _is_number(token: str) -> bool:
    return bool(token) and (token[0].isdigit() or token[0] in "+-." and len(token) > 1)


def final_outputs_match(reference: str, output: str, rel_tol: float = 1e-6) -> bool:
    """Paper-mode comparison of the ``[Final Output]`` sections: same tokens, numbers within ``rel_tol``."""
    ref = _TOKEN.findall(final_output_section(reference))
    out = _TOKEN.findall(final_output_section(output))
    if len(ref) != len(out) or not ref:
        return False
    for r, o in zip(ref, out):
        if _is_number(r) and _is_number(o):
            try:
                if not math.isclose(float(r), float(o), rel_tol=rel_tol, abs_tol=1e-12):
                    return False
            except ValueError:
                return False
        elif r != o:
            return False
    return True


def equivalence_judge_messages(reference_output: str, model_output: str) -> Messages:
    """Our own wording of the output-equivalence request; reply format as upstream (a dict with
    ``judgment`` "correct"/"incorrect" and a ``reason``)."""
    system = ("You decide whether a program's output matches the reference output. Every digit of every number "
              "must agree; any difference makes it incorrect. Exception: for loss values or metrics of model "
              "training, a relative difference of at most 2% is acceptable. Reply only with "
              '{"judgment": "correct" or "incorrect", "reason": "..."}.')
    user = f"## Reference Output\n{reference_output}\n\n## Model Output\n{model_output}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_equivalence_verdict(text: str | None, mode: str = "official") -> bool | None:
    """Judge reply -> True/False, or None when unparsable."""
    data = bracketed_literal(text, "{", "}")
    if not isinstance(data, Mapping) or "judgment" not in data:
        return None
    value = data["judgment"]
    if mode == "official":
        return value == "correct"
    return isinstance(value, str) and value.strip().lower() == "correct"


def _outcome(reference: str, run: RunResult, official: bool, judge: Judge | None, rel_tol: float) -> str:
    output = f"{run.stderr}\n{run.stdout}".strip()
    if official and output == reference.strip():
        return "exact"
    if run.returncode != 0 or run.timed_out:
        return "error"
    if not official and final_outputs_match(reference, run.stdout, rel_tol):
        return "tolerant"
    if judge is None:
        return "no_judge"
    text, _ = call_judge(judge, equivalence_judge_messages(reference, output))
    verdict = parse_equivalence_verdict(text, "official" if official else "paper")
    if verdict is None:
        return "judge_failed"
    return "judge" if verdict else "mismatch"


_PASSING = frozenset({"exact", "tolerant", "judge"})


def score_test(reference: str, run: RunResult, *, mode: str = "official", judge: Judge | None = None,
               rel_tol: float = 1e-6) -> dict[str, Any]:
    """One unit test -> ``{"passed", "how"}`` with ``how`` in exact, tolerant, judge (passing) and error,
    mismatch, judge_failed, no_judge (failing)."""
    check_mode(mode)
    how = _outcome(reference, run, mode == "official", judge, rel_tol)
    return {"passed": how in _PASSING, "how": how}


def dry_experiment_scores(runs: Sequence[Sequence[RunResult | Mapping[str, Any]] | None],
                          references: Sequence[Sequence[str]], *, mode: str = "official",
                          judge: Judge | None = None, rel_tol: float = 1e-6,
                          timeout_s: float = TIMEOUT_S) -> ScoreReport:
    """PassAll@1/3/5 and SER ×100, AET in seconds. ``runs[i]`` holds the five test runs of item i (``None``
    when the item produced no program or was not run: all tests fail, counted as failed)."""
    check_mode(mode)
    check_lengths("runs", runs, "references", references)
    official = mode == "official"
    items, all_times = [], []
    how_counts: dict[str, int] = {}
    for item_runs, refs in zip(runs, references):
        if item_runs is None:
            items.append({"pass_nums": 0, "aet": -1.0, "ser": 0.0, "failed": True, "how": []})
            continue
        results = [RunResult.of(r) for r in item_runs]
        if len(results) != len(refs):
            from sciprobe.core.errors import SciprobeError

            raise SciprobeError(f"an item has {len(results)} runs for {len(refs)} reference outputs")
        hows = [_outcome(ref, res, official, judge, rel_tol) for ref, res in zip(refs, results)]
        for how in hows:
            how_counts[how] = how_counts.get(how, 0) + 1
        positive = [timeout_s if r.timed_out else r.wall_time for r in results]
        positive = [t for t in positive if t > 0]
        all_times.extend(positive)
        n_ok = sum(1 for r in results if r.returncode == 0 and not r.timed_out)
        items.append({"pass_nums": sum(h in _PASSING for h in hows), "aet": mean(positive) if positive else -1.0,
                      "ser": n_ok / len(results) if results else 0.0, "failed": False, "how": hows})
    n_tests = [max(len(refs), 1) for refs in references]

    def passall(k: int, pool: list[dict], sizes: list[int]) -> float:
        return pct(mean([float(it["pass_nums"] >= min(k, size)) for it, size in zip(pool, sizes)]))

    values: dict[str, Any] = {f"passall_at_{k}": passall(k, items, n_tests) for k in (1, 3, 5)}
    if mode == "official":
        values["aet"] = mean([it["aet"] for it in items if it["aet"] > 0])
        values["ser"] = pct(mean([it["ser"] for it in items]))
        kept = [(it, s) for it, s in zip(items, n_tests) if not it["failed"]]
        values["passall_at_5_upstream"] = passall(5, [k[0] for k in kept], [k[1] for k in kept])
        values["n_upstream_dropped"] = sum(it["failed"] for it in items)
    else:
        values["aet"] = mean(all_times)
        ran = [it for it in items if not it["failed"]]
        total_runs = sum(len(it["how"]) for it in ran) + N_TESTS * (len(items) - len(ran))
        values["ser"] = pct(sum(it["ser"] * len(it["how"]) for it in ran) / total_runs) if total_runs else 0.0
    values["test_outcomes"] = how_counts
    values["per_item"] = items
    failed = sum(it["failed"] for it in items)
    return ScoreReport(METRIC, mode, values, Coverage(len(items), len(items) - failed, failed),
                       params={"rel_tol": rel_tol if mode == "paper" else None, "timeout_s": timeout_s,
                               "judge": judge is not None})
