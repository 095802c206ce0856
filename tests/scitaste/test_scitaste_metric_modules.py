"""The SciTaste evaluate modules metrics/wape_grade and metrics/scitaste_composite (spec ecosystem.md §3,
scitaste.md §4): offline loading, equality with the sciprobe functions, doctests of module and README,
template test cases, conventions, and the hand-built Gradio apps."""

from __future__ import annotations

import json
import math
import re
from types import ModuleType
from typing import Any

import pytest
from metric_module_support import import_file

from sciprobe.benchmarks.scitaste.scoring.composite import scitaste_composite
from sciprobe.benchmarks.scitaste.scoring.wape import wape_grade

from golden import REPO, load_cases

METRICS_DIR = REPO / "metrics"
MODULES = {"wape_grade": (wape_grade, "scitaste_wape"),
           "scitaste_composite": (scitaste_composite, "scitaste_composite")}


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
    cases = [c for c in load_cases(stem)
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
    cases = [c for c in load_cases(stem) if "expected_error" in c
             and "nan" not in json.dumps(c["references"]) and "length" not in c["name"] and "columns" not in c["name"]
             and "string" not in c["name"]]
    assert cases
    for case in cases:
        with pytest.raises(ValueError, match=re.escape(case["expected_error"])):
            loaded[name].compute(predictions=case["predictions"], references=case["references"], **case["kwargs"])


@pytest.mark.parametrize("name", MODULES)
def test_readme_quotes_the_paper_and_marks_reconstructions(name: str) -> None:
    readme = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
    assert "reconstruct" in readme.lower()  # the card marks what the paper does not give
    popular = readme.split("Values from Popular Papers", 1)[1].split("### Examples", 1)[0]
    assert "0.78" in popular and ("70.4" in popular or "−20.2" in popular)


@pytest.mark.parametrize("name", MODULES)
def test_app_scores_its_examples(offline_evaluate: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                name: str) -> None:
    gr = pytest.importorskip("gradio")
    monkeypatch.setattr(gr.Blocks, "launch", lambda *a, **k: (_ for _ in ()).throw(AssertionError("launched")))
    app = import_file(METRICS_DIR / name / "app.py", f"_scitaste_app_{name}")
    assert isinstance(app.build_demo(), gr.Blocks)
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
