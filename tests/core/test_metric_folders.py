"""Every ``metrics/<name>/`` folder, whatever benchmark it serves: the evaluate module's conventions, its metric
card (a Space card with evaluate's sections), its ``tests.py`` cases, the examples of its docstring and card,
and its Gradio app. A new metric folder is tested here without writing a test.

``tests.py`` holds ``test_cases`` in evaluate's template format (``predictions``, ``references``, ``kwargs``,
``result``: a subset of the returned keys; optional ``config``) and, when a metric reads files, a module-level
``files`` dict (keyword argument -> file content) that is written to temporary files and passed to every case.
"""

from __future__ import annotations

import ast
import doctest
import inspect
import math
import re
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
import yaml
from metric_module_support import README_SECTIONS, import_file

from golden import REPO

METRICS_DIR = REPO / "metrics"
NAMES = sorted(p.name for p in METRICS_DIR.iterdir() if (p / f"{p.name}.py").is_file())


def _same(got: Any, want: Any) -> bool:
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        return (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want)
    if isinstance(want, list) and isinstance(got, list):
        return len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want))
    if isinstance(want, dict) and isinstance(got, dict):
        return all(k in got and _same(got[k], v) for k, v in want.items())
    return got == want


def _evaluate_shim(offline_evaluate: ModuleType) -> SimpleNamespace:
    """``evaluate.load("name" | "metrics/name" | path, config)`` -> the local folder, loaded offline."""

    def load(path: str, config_name: str | None = None, **kwargs: Any) -> Any:
        return offline_evaluate.load(str(METRICS_DIR / Path(path).name), config_name, **kwargs)

    return SimpleNamespace(load=load)


def _doctest(text: str, globs: dict[str, Any], name: str) -> doctest.TestResults:
    text = re.sub(r"^>>> import evaluate\s*$", "", text, flags=re.MULTILINE)  # the shim stands in for it
    test = doctest.DocTestParser().get_doctest(text, globs, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=lambda s: sys.stdout.write(s))
    return runner.summarize(verbose=False)


def _section(markdown: str, title: str) -> str:
    """The text under a heading (any level) up to the next heading of the same or a higher level."""
    start = re.search(rf"^(#+) {re.escape(title)}\s*$", markdown, flags=re.MULTILINE)
    assert start, f"no {title!r} section"
    level = len(start.group(1))
    end = re.compile(rf"^#{{1,{level}}} ", flags=re.MULTILINE).search(markdown, start.end())
    return markdown[start.end(): end.start() if end else len(markdown)]


def test_every_folder_is_found() -> None:
    assert len(NAMES) >= 9 and not (METRICS_DIR / "__init__.py").exists()


@pytest.mark.parametrize("name", NAMES)
def test_module_layout_and_conventions(name: str) -> None:
    folder = METRICS_DIR / name
    for file in (f"{name}.py", "README.md", "app.py", "requirements.txt", "tests.py"):
        assert (folder / file).is_file(), file
    assert not (folder / "__init__.py").exists()
    source = (folder / f"{name}.py").read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            assert len(node.names) == 1, f"one import per line (line {node.lineno})"
    for const in ("_DESCRIPTION", "_KWARGS_DESCRIPTION"):
        assert re.search(rf"^{const} = ", source, flags=re.MULTILINE), const
    assert "return metric_info(" in source  # citation and homepage from the benchmark declaration
    assert "gradio" not in source and ".launch(" not in source
    module = import_file(folder / f"{name}.py", f"_metric_conv_{name}")
    assert "Examples:" in module._KWARGS_DESCRIPTION
    classes = [o for o in vars(module).values() if inspect.isclass(o) and o.__module__ == module.__name__]
    assert len(classes) == 1
    params = inspect.signature(classes[0]._compute).parameters
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()), "no **kwargs"
    assert list(params)[:3] == ["self", "predictions", "references"]
    requirements = (folder / "requirements.txt").read_text(encoding="utf-8").split()
    assert "evaluate==0.4.6" in requirements and "sciprobe" in requirements


@pytest.mark.parametrize("name", NAMES)
def test_readme_is_a_space_card(name: str) -> None:
    readme = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("---\n")
    front = yaml.safe_load(readme.split("---\n", 2)[1])
    for key in ("title", "sdk", "sdk_version", "app_file", "tags", "description"):
        assert key in front, key
    assert front["sdk"] == "gradio" and front["app_file"] == "app.py" and {"evaluate", "metric"} <= set(front["tags"])
    for section in README_SECTIONS:
        assert re.search(rf"^#+ {re.escape(section)}\s*$", readme, flags=re.MULTILINE), section


@pytest.mark.parametrize("name", NAMES)
def test_template_cases(offline_evaluate: ModuleType, name: str, tmp_path: Path) -> None:
    spec = import_file(METRICS_DIR / name / "tests.py", f"_metric_tests_{name}")
    assert spec.test_cases
    files = {}
    for key, content in getattr(spec, "files", {}).items():
        path = tmp_path / f"{key}.txt"
        path.write_text(content, encoding="utf-8")
        files[key] = str(path)
    modules: dict[str | None, Any] = {}
    for number, case in enumerate(spec.test_cases):
        config = case.get("config")
        if config not in modules:
            modules[config] = offline_evaluate.load(str(METRICS_DIR / name), config)
        got = modules[config].compute(predictions=case["predictions"], references=case["references"],
                                      **{**files, **case.get("kwargs", {})})
        for key, want in case["result"].items():
            assert key in got and _same(got[key], want), (name, number, key, got.get(key), want)


@pytest.mark.parametrize("name", NAMES)
def test_docstring_examples_pass(offline_evaluate: ModuleType, name: str) -> None:
    module = import_file(METRICS_DIR / name / f"{name}.py", f"_metric_doc_{name}")
    result = _doctest(module._KWARGS_DESCRIPTION, {"evaluate": _evaluate_shim(offline_evaluate)}, name)
    assert result.attempted >= 2 and result.failed == 0


@pytest.mark.parametrize("name", NAMES)
def test_readme_examples_pass(offline_evaluate: ModuleType, name: str) -> None:
    """Every ``>>>`` example of the card, top to bottom, with the loaded metric bound to its name (and to
    ``metric``) as in the card's How to Use."""
    readme = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
    assert ">>>" in _section(readme, "Examples")
    examples = re.sub(r"^```\w*$", "", readme, flags=re.MULTILINE)  # fences would read as expected output
    shim = _evaluate_shim(offline_evaluate)
    config = "deep_research" if name == "sgi_score" else None  # the one module that needs a config
    loaded = shim.load(name, config)
    result = _doctest(examples, {"evaluate": shim, name: loaded, "metric": loaded}, f"{name}/README.md")
    assert result.attempted >= 1 and result.failed == 0


@pytest.mark.parametrize("name", NAMES)
def test_app_builds_without_launching(offline_evaluate: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                      name: str) -> None:
    gr = pytest.importorskip("gradio")
    monkeypatch.setattr(gr.Blocks, "launch", lambda *a, **k: (_ for _ in ()).throw(AssertionError("launched")))
    app = import_file(METRICS_DIR / name / "app.py", f"_metric_app_{name}")
    assert isinstance(app.demo, gr.Blocks) and not app.demo.is_running and callable(app.score)
    source = (METRICS_DIR / name / "app.py").read_text(encoding="utf-8")
    assert "launch_gradio_widget(" not in source and 'if __name__ == "__main__":' in source
