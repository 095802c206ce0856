"""The evaluate metric modules in metrics/ (spec ecosystem.md §3; idrbench.md §5, §11).

Loads each module offline with `evaluate.load(<absolute dir>)` under a temporary HF_HOME, checks that it
returns exactly what the sciprobe function returns, runs the doctest examples of the module and of its
README, and builds (without launching) the hand-written Gradio app.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from metric_module_support import flat, import_file

from sciprobe.core.registry import get_benchmark
from sciprobe.scoring.classification import binary_classification
from sciprobe.scoring.ranking import ranking_metrics

from golden import REPO, load_cases

METRICS_DIR = REPO / "metrics"
MODULE_NAMES = ("idr_classification", "ranking")
SCIPROBE_FUNCTION: dict[str, Callable[..., Any]] = {
    "idr_classification": binary_classification,
    "ranking": ranking_metrics,
}


@pytest.fixture(scope="module")
def loaded(offline_evaluate: ModuleType) -> dict[str, Any]:
    return {name: offline_evaluate.load(str(METRICS_DIR / name)) for name in MODULE_NAMES}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _module_cases(name: str) -> list[dict[str, Any]]:
    """Golden cases expressible through the module's string features."""
    out = []
    for case in load_cases(name):
        if "expected_error" in case or case.get("function") or not case["predictions"]:
            continue
        if name == "idr_classification":
            if not all(isinstance(r, str) for r in case["references"]):
                continue
            if not all(p is None or isinstance(p, str) for p in case["predictions"]):
                continue
        elif any(p is None for p in case["predictions"]):
            continue
        out.append(case)
    return out


# --------------------------------------------------------------------------------------------- loading


def test_load_offline_from_absolute_directory(loaded: dict[str, Any], offline_evaluate: ModuleType) -> None:
    import evaluate.config as cfg

    for name, module in loaded.items():
        assert isinstance(module, offline_evaluate.Metric)
        assert module.name == name
        assert "IDRBench" in module.citation
        # the benchmark's citation and homepage come from its declaration, never a copy that could drift
        assert module.citation.startswith(get_benchmark("idrbench").citation.strip())
        assert module.homepage == get_benchmark("idrbench").homepage
        assert module.codebase_urls and module.reference_urls
    assert "Cumulated Gain-Based Evaluation" in loaded["ranking"].citation  # ranking adds the nDCG paper
    copies = list(Path(cfg.HF_MODULES_CACHE).rglob("idr_classification.py"))
    assert copies, "evaluate should copy the module under the temporary HF_HOME"


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_compute_equals_sciprobe_function(loaded: dict[str, Any], name: str) -> None:
    cases = _module_cases(name)
    assert len(cases) >= 5
    for case in cases:
        kwargs = case["kwargs"]
        predictions = case["predictions"]
        if name == "idr_classification":
            module_predictions = ["" if p is None else p for p in predictions]
        else:
            module_predictions = predictions
        got = loaded[name].compute(predictions=module_predictions, references=case["references"], **kwargs)
        want = flat(SCIPROBE_FUNCTION[name](predictions, case["references"], **kwargs))
        if name == "idr_classification":
            want["failure_policy"] = "drop" if want["mode"] == "official" else kwargs.get("failure_policy", "wrong")
        assert set(got) == set(want), case["name"]
        for key in want:
            assert _same(got[key], want[key]), (case["name"], key, got[key], want[key])


def test_classification_whitespace_prediction_is_unparsable(loaded: dict[str, Any]) -> None:
    got = loaded["idr_classification"].compute(predictions=["yes", "  "], references=["yes", "no"])
    assert got["n_failed"] == 1 and got["n_parsed"] == 1 and got["macro_f1"] is None  # one class left: no number


def test_ranking_single_relevant_string_schema(loaded: dict[str, Any]) -> None:
    got = loaded["ranking"].compute(predictions=[["a", "b"], ["c", "d"]], references=["b", "c"], k_values=[1])
    assert got["per_query_rr"] == [0.5, 1.0] and got["hits@1"] == 0.5


@pytest.mark.parametrize("name, predictions, references", [
    ("idr_classification", ["yes", "no", "yes"], ["yes", "no"]),
    ("ranking", [["a"], ["b"], ["c"]], [["a"], ["b"]]),
])
def test_length_mismatch_raises_clear_value_error(loaded: dict[str, Any], name: str, predictions: list,
                                                  references: list) -> None:
    with pytest.raises(ValueError, match=r"Mismatch in the number of predictions \(3\) and references \(2\)"):
        loaded[name].compute(predictions=predictions, references=references)


def test_bad_labels_and_ids_raise_value_error(loaded: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"predictions\[1\]: unknown label 'maybe'"):
        loaded["idr_classification"].compute(predictions=["yes", "maybe"], references=["yes", "no"])
    with pytest.raises(ValueError, match="query 0: duplicate id 'a'"):
        loaded["ranking"].compute(predictions=[["a", "a"]], references=[["a"]])
    with pytest.raises(ValueError, match="needs scores"):
        loaded["ranking"].compute(predictions=[["a"]], references=[["a"]], tie_policy="alphabetical")


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_readme_quotes_table_2(name: str) -> None:
    readme = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
    popular = readme.split("Values from Popular Papers", 1)[1].split("### Examples", 1)[0]
    assert "Table 2" in popular
    # a few IDRBench Table 2 numbers (spec idrbench.md §6.1) must be quoted
    expected = {"idr_classification": ("0.587", "0.814", "0.860"), "ranking": ("0.661", "0.646", "0.446")}[name]
    for number in expected:
        assert number in popular


def test_importing_the_metric_modules_does_not_import_gradio(tmp_path: Path) -> None:
    paths = [str(METRICS_DIR / name / f"{name}.py") for name in MODULE_NAMES]
    code = (
        "import importlib.util, sys\n"
        f"for i, path in enumerate({paths!r}):\n"
        "    spec = importlib.util.spec_from_file_location(f'm{i}', path)\n"
        "    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "print('gradio' in sys.modules)\n"
    )
    env = {**os.environ, "HF_HOME": str(tmp_path), "HF_EVALUATE_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300,
                         env=env)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------------------------- apps


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_app_scores_its_examples(offline_evaluate: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                name: str) -> None:
    gr = pytest.importorskip("gradio")

    def no_launch(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("app.py must not launch at import")

    monkeypatch.setattr(gr.Blocks, "launch", no_launch)
    app = import_file(METRICS_DIR / name / "app.py", f"_sciprobe_app_{name}")
    assert isinstance(app.build_demo(), gr.Blocks)
    if name == "idr_classification":
        got = app.score([["yes", "yes"], ["no", "yes"], ["", "no"], ["yes", "no"], ["", ""]],
                        "official", "wrong", "yes")
        assert got["macro_f1"] == 0.25 and got["n_failed"] == 1 and got["n_items"] == 4
        with pytest.raises(gr.Error):
            app.score([], "official", "wrong", "yes")
    else:
        got = app.score(app.EXAMPLE_PREDICTIONS, app.EXAMPLE_REFERENCES, app.EXAMPLE_SCORES, "alphabetical",
                        "1, 3")
        assert got["per_query_rr"] == [0.5, 1.0] and "ndcg@3" in got and "ndcg@10" not in got
        with pytest.raises(gr.Error, match="not valid JSON"):
            app.score("[[", "[]", "", "as_given", "1")
        with pytest.raises(gr.Error, match="duplicate"):
            app.score('[["a", "a"]]', '[["a"]]', "", "as_given", "1")
