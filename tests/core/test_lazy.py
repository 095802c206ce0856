"""``sciprobe.core.lazy``: a "module:function" callable imports its module on the first call and behaves as the
function;
every lazy reference and string hook in the declarations names a function that exists."""

from __future__ import annotations

import dataclasses
import pickle
import sys

import pytest

from sciprobe.core.registry import benchmark_names, get_benchmark
from sciprobe.core.lazy import Lazy, lazy, resolve

PROBE_MODULE = "sciprobe_lazy_probe"


@pytest.fixture
def probe_module(tmp_path, monkeypatch):
    (tmp_path / f"{PROBE_MODULE}.py").write_text(
        "CALLS = []\n\n\n"
        "def scale(x, *, by=2):\n    CALLS.append(x)\n    return x * by\n\n\n"
        "def fail(message):\n    raise ValueError(message)\n\n\n"
        "class Box:\n    @staticmethod\n    def open():\n        return 'opened'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, PROBE_MODULE, raising=False)
    yield PROBE_MODULE
    sys.modules.pop(PROBE_MODULE, None)


def test_imports_on_first_call_and_forwards_the_call(probe_module) -> None:
    scale = lazy(f"{probe_module}:scale")
    assert probe_module not in sys.modules  # naming it imports nothing
    assert scale(3) == 6 and scale(3, by=10) == 30
    assert probe_module in sys.modules
    assert sys.modules[probe_module].CALLS == [3, 3]
    assert repr(scale) == f"lazy('{probe_module}:scale')"


def test_exceptions_pass_through(probe_module) -> None:
    with pytest.raises(ValueError, match="boom"):
        lazy(f"{probe_module}:fail")("boom")


def test_equal_by_name_and_pickled_by_name(probe_module) -> None:
    scale = lazy(f"{probe_module}:scale")
    assert scale == lazy(f"{probe_module}:scale") and hash(scale) == hash(lazy(f"{probe_module}:scale"))
    assert scale != lazy(f"{probe_module}:fail")
    again = pickle.loads(pickle.dumps(scale))
    assert again == scale and again(4) == 8


def test_resolve_reads_dotted_names(probe_module) -> None:
    assert resolve(f"{probe_module}:Box.open")() == "opened"


@pytest.mark.parametrize("ref", ["no_colon", "module:", ":function", "a b:c", "module:function-name"])
def test_a_malformed_reference_is_refused_when_written(ref: str) -> None:
    with pytest.raises(ValueError, match="package.module:function"):
        lazy(ref)


def test_a_missing_function_fails_on_the_call(probe_module) -> None:
    missing = lazy(f"{probe_module}:nothing_here")
    with pytest.raises(AttributeError):
        missing()


_HOOKS = ("upstream_logs", "baselines", "lighteval_tasks", "summary_rows", "report_figures")


@pytest.mark.parametrize("name", benchmark_names())
def test_every_reference_in_a_declaration_names_a_function(name: str) -> None:
    """A typo in a lazy reference would only show when that task runs: resolve every one now."""
    benchmark = get_benchmark(name)
    lazies = [benchmark.read_source] + [getattr(task, f.name) for task in benchmark.tasks.values()
                                        for f in dataclasses.fields(task)]
    lazies = [value for value in lazies if isinstance(value, Lazy)]
    assert lazies, "the declaration names its callables lazily"
    for value in lazies:
        assert callable(value.target), value
    hooks = [getattr(benchmark, hook) for hook in _HOOKS if getattr(benchmark, hook)]
    hooks += [task.upstream_prompt for task in benchmark.tasks.values() if task.upstream_prompt]
    for ref in hooks:
        assert callable(resolve(ref)), ref
