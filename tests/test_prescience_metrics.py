"""The PreScience evaluate modules (metrics/citation_forecast, topic_trend, text_similarity): offline loading,
equality with the sciprobe functions, template cases, doctests of module and README, Space card and app
(spec ecosystem.md §3; prescience.md §9 "Metrics needed")."""

from __future__ import annotations

import doctest
import json
import re
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
import yaml
from metric_module_support import README_SECTIONS, flat, import_file

from sciprobe.scoring.forecast import citation_forecast
from sciprobe.scoring.text_similarity import rouge_l
from sciprobe.scoring.topic_trend import topic_trend

REPO = Path(__file__).resolve().parents[1]
METRICS = REPO / "metrics"
NAMES = ("citation_forecast", "topic_trend", "text_similarity", "lacer")


@pytest.fixture(scope="module")
def loaded(offline_evaluate: ModuleType) -> dict[str, Any]:
    return {name: offline_evaluate.load(str(METRICS / name)) for name in NAMES}


def test_module_layout() -> None:
    for name in NAMES:
        folder = METRICS / name
        assert {p.name for p in folder.iterdir() if not p.name.startswith((".", "__"))} >= \
            {f"{name}.py", "README.md", "app.py", "requirements.txt", "tests.py"}
        assert not (folder / "__init__.py").exists()
        source = (folder / f"{name}.py").read_text()
        assert not re.search(r"^import \w+\s*,", source, re.MULTILINE)  # one import per line (evaluate's scanner)
        assert "**kwargs" not in source
        assert "evaluate==0.4.6" in (folder / "requirements.txt").read_text()


def test_compute_equals_sciprobe(loaded: dict[str, Any]) -> None:
    preds, refs = [3.0, 0.0, 12.0, 5.0, None], [2.0, 1.0, 20.0, 5.0, 4.0]
    got = loaded["citation_forecast"].compute(predictions=preds, references=refs)
    assert got == flat(citation_forecast(preds, refs))
    hist = [4.0, 10.0, 0.0, 7.0, 1.0]
    got = loaded["topic_trend"].compute(predictions=preds, references=refs, history=hist)
    assert got == flat(topic_trend(preds, refs, hist))
    cands, golds = ["neural ranking models", "", "graph networks"], ["ranking with neural models", "x", "graphs"]
    got = loaded["text_similarity"].compute(predictions=cands, references=golds)
    report = rouge_l(cands, golds)
    assert got["rougeL"] == report.values["rougeL"] and got["n_failed"] == report.coverage.n_failed == 1


def test_bad_input_raises_value_errors(loaded: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="negative citation count"):
        loaded["citation_forecast"].compute(predictions=[1.0], references=[-3.0])
    with pytest.raises(ValueError, match="needs history"):
        loaded["topic_trend"].compute(predictions=[1.0], references=[1.0])
    with pytest.raises(ValueError, match="negative count"):
        loaded["topic_trend"].compute(predictions=[1.0, 2.0], references=[1.0, 2.0], history=[1, -1])
    with pytest.raises(ValueError, match="needs template_path"):
        loaded["lacer"].compute(predictions=[{"title": "a", "abstract": "b"}],
                                references=[{"title": "a", "abstract": "b"}], replies=["Score: 3"])
    with pytest.raises(ValueError, match="unknown text similarity metric"):
        loaded["text_similarity"].compute(predictions=["a"], references=["a"], metrics=["bleu"])


@pytest.mark.parametrize("name", NAMES)
def test_template_cases(loaded: dict[str, Any], name: str, tmp_path: Path) -> None:
    cases = import_file(METRICS / name / "tests.py", f"_ps_{name}_tests").test_cases
    assert cases
    template = tmp_path / "lacer_template.txt"
    template.write_text("{{reference_title}}\n{{reference_abstract}}\n{{generation_title}}\n{{generation_abstract}}\n")
    for case in cases:
        kwargs = {**case["kwargs"], **({"template_path": str(template)} if name == "lacer" else {})}
        got = loaded[name].compute(predictions=case["predictions"], references=case["references"], **kwargs)
        for key, want in case["result"].items():
            assert got[key] == (want if isinstance(want, str) else pytest.approx(want)), key


def _doctest(text: str, globs: dict[str, Any], name: str) -> doctest.TestResults:
    test = doctest.DocTestParser().get_doctest(text, globs, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=lambda s: sys.stdout.write(s))
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("name", NAMES)
def test_docstring_and_readme_examples(loaded: dict[str, Any], offline_evaluate: ModuleType, name: str) -> None:
    shim = SimpleNamespace(load=lambda n, *a, **k: loaded[Path(n).name if "/" in n else n])
    module = import_file(METRICS / name / f"{name}.py", f"_ps_{name}_module")
    for label, text in (("kwargs", module._KWARGS_DESCRIPTION), ("readme", (METRICS / name / "README.md").read_text())):
        globs = {"evaluate": shim}
        if label == "readme":
            text = re.sub(r"^```.*$", "", text.replace(">>> import evaluate\n", ""), flags=re.MULTILINE)
        result = _doctest(text, globs, f"{name}:{label}")
        assert result.attempted >= 2 and result.failed == 0, (name, label)


@pytest.mark.parametrize("name", NAMES)
def test_readme_space_card(name: str) -> None:
    text = (METRICS / name / "README.md").read_text()
    front = yaml.safe_load(text.split("---")[1])
    assert front["sdk"] == "gradio" and front["app_file"] == "app.py"
    assert {"evaluate", "metric"} <= set(front["tags"]) and front["description"]
    headers = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert list(headers) == list(README_SECTIONS)


@pytest.mark.parametrize("name", NAMES)
def test_app_builds_without_launching(offline_evaluate: ModuleType, name: str) -> None:
    app = import_file(METRICS / name / "app.py", f"_ps_{name}_app")
    assert app.demo is not None and callable(app.score)


def test_module_info(loaded: dict[str, Any]) -> None:
    for name, module in loaded.items():
        assert module.name == name and module.codebase_urls and module.reference_urls
        assert json.dumps(module.citation)
