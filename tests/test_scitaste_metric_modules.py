"""The SciTaste evaluate modules metrics/wape_grade and metrics/scitaste_composite (spec ecosystem.md §3,
scitaste.md §4): offline loading, equality with the sciprobe functions, doctests of module and README,
template test cases, conventions, and the hand-built Gradio apps."""

from __future__ import annotations

import ast
import doctest
import inspect
import json
import math
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from metric_module_support import README_SECTIONS, import_file

from sciprobe.scoring.composite import scitaste_composite
from sciprobe.scoring.wape import wape_grade

REPO = Path(__file__).resolve().parents[1]
METRICS_DIR = REPO / "metrics"
CASES_DIR = Path(__file__).resolve().parent / "cases"
MODULES = {"wape_grade": (wape_grade, "scitaste_wape"), "scitaste_composite": (scitaste_composite, "scitaste_composite")}


@pytest.fixture(scope="module")
def loaded(offline_evaluate: ModuleType) -> dict[str, Any]:
    return {name: offline_evaluate.load(str(METRICS_DIR / name)) for name in MODULES}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _nan_free(value: Any) -> Any:
    return None if isinstance(value, str) and value == "nan" else value


@pytest.mark.parametrize("name", MODULES)
def test_compute_equals_sciprobe_function(loaded: dict[str, Any], name: str) -> None:
    fn, stem = MODULES[name]
    cases = [c for c in json.loads((CASES_DIR / f"{stem}.json").read_text("utf-8"))
             if "expected_error" not in c and not any(isinstance(p, str) for p in c["predictions"])]
    assert len(cases) >= 5
    for case in cases:
        got = loaded[name].compute(predictions=case["predictions"], references=case["references"], **case["kwargs"])
        report = fn(case["predictions"], case["references"], **case["kwargs"])
        want = {"mode": report.mode, **report.values, **report.coverage.as_dict()}
        assert set(got) == set(want), case["name"]
        for key in want:
            assert _same(got[key], want[key]), (case["name"], key, got[key], want[key])


@pytest.mark.parametrize("name", MODULES)
def test_errors_are_value_errors(loaded: dict[str, Any], name: str) -> None:
    fn, stem = MODULES[name]
    cases = [c for c in json.loads((CASES_DIR / f"{stem}.json").read_text("utf-8")) if "expected_error" in c
             and "nan" not in json.dumps(c["references"]) and "length" not in c["name"] and "columns" not in c["name"]
             and "string" not in c["name"]]
    assert cases
    for case in cases:
        with pytest.raises(ValueError, match=re.escape(case["expected_error"])):
            loaded[name].compute(predictions=case["predictions"], references=case["references"], **case["kwargs"])


@pytest.mark.parametrize("name", MODULES)
def test_template_test_cases(loaded: dict[str, Any], name: str) -> None:
    cases = import_file(METRICS_DIR / name / "tests.py", f"_scitaste_{name}_tests").test_cases
    assert cases
    for case in cases:
        got = loaded[name].compute(predictions=case["predictions"], references=case["references"], **case["kwargs"])
        for key, want in case["result"].items():
            if want is None or isinstance(want, str):
                assert got[key] == want, key
            else:
                assert got[key] == pytest.approx(want), key


def _run_doctest(text: str, globs: dict[str, Any], name: str) -> doctest.TestResults:
    test = doctest.DocTestParser().get_doctest(text, globs, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=lambda s: sys.stdout.write(s))
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("name", MODULES)
def test_module_docstring_examples_pass(offline_evaluate: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                        name: str) -> None:
    module = import_file(METRICS_DIR / name / f"{name}.py", f"_scitaste_metric_{name}")
    monkeypatch.chdir(REPO)  # `evaluate.load("metrics/<name>")` in the examples resolves the local directory
    result = _run_doctest(module._KWARGS_DESCRIPTION, {"evaluate": offline_evaluate}, name)
    assert result.attempted >= 5 and result.failed == 0


@pytest.mark.parametrize("name", MODULES)
def test_readme_examples_pass(loaded: dict[str, Any], name: str) -> None:
    readme = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
    examples = readme.split("### Examples", 1)[1].split("\n## ", 1)[0]
    examples = re.sub(r"^```\w*$", "", examples, flags=re.MULTILINE)
    result = _run_doctest(examples, {name: loaded[name]}, f"{name}/README.md")
    assert result.attempted >= 3 and result.failed == 0


@pytest.mark.parametrize("name", MODULES)
def test_module_layout_and_conventions(name: str) -> None:
    folder = METRICS_DIR / name
    for file in (f"{name}.py", "README.md", "app.py", "requirements.txt", "tests.py"):
        assert (folder / file).is_file(), file
    assert not (folder / "__init__.py").exists() and not (METRICS_DIR / "__init__.py").exists()
    source = (folder / f"{name}.py").read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            assert len(node.names) == 1, f"one import per line (line {node.lineno})"
    for const in ("_DESCRIPTION", "_KWARGS_DESCRIPTION"):
        assert re.search(rf"^{const} = ", source, flags=re.MULTILINE), const
    assert "return metric_info(" in source  # citation and homepage from the benchmark declaration
    assert "gradio" not in source
    module = import_file(folder / f"{name}.py", f"_scitaste_conv_{name}")
    classes = [o for o in vars(module).values() if inspect.isclass(o) and o.__module__ == module.__name__]
    assert len(classes) == 1
    params = inspect.signature(classes[0]._compute).parameters
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    assert list(params)[:3] == ["self", "predictions", "references"]
    assert "evaluate==0.4.6" in (folder / "requirements.txt").read_text().split()


@pytest.mark.parametrize("name", MODULES)
def test_readme_is_a_space_card_with_paper_values(name: str) -> None:
    readme = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(readme.split("---\n", 2)[1])
    assert front["sdk"] == "gradio" and front["app_file"] == "app.py" and {"evaluate", "metric"} <= set(front["tags"])
    for section in README_SECTIONS:
        assert re.search(rf"^#+ {re.escape(section)}\s*$", readme, flags=re.MULTILINE), section
    assert "reconstruct" in readme.lower()  # the card marks what the paper does not give
    popular = readme.split("Values from Popular Papers", 1)[1].split("### Examples", 1)[0]
    assert "0.78" in popular and ("70.4" in popular or "−20.2" in popular)


@pytest.mark.parametrize("name", MODULES)
def test_app_builds_interface_without_launching(offline_evaluate: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                name: str) -> None:
    gr = pytest.importorskip("gradio")
    monkeypatch.setattr(gr.Blocks, "launch", lambda *a, **k: (_ for _ in ()).throw(AssertionError("launched")))
    app = import_file(METRICS_DIR / name / "app.py", f"_scitaste_app_{name}")
    assert isinstance(app.demo, gr.Blocks) and isinstance(app.build_demo(), gr.Blocks)
    if name == "wape_grade":
        got = app.score(app.EXAMPLE_TABLE, "drop", "")
        assert got["n_failed"] == 1 and set(got["by_group"]) == {"physics", "biology"}
        with pytest.raises(gr.Error, match="not a number"):
            app.score([["x", "50", ""]], "drop", "")
        with pytest.raises(gr.Error, match="outside"):
            app.score([["50", "150", ""]], "drop", "")
    else:
        got = app.score(app.EXAMPLE_PREDICTIONS, app.EXAMPLE_REFERENCES, "", 0.5, "drop")
        assert got["final"] == pytest.approx(97.75)
        with pytest.raises(gr.Error, match="not valid JSON"):
            app.score("[[", "[]", "", 0.5, "drop")
        with pytest.raises(gr.Error, match="sum to 1"):
            app.score(app.EXAMPLE_PREDICTIONS, app.EXAMPLE_REFERENCES, "[0.5, 0.5, 0.5, 0, 0, 0, 0]", 0.5, "drop")
