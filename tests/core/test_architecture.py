"""The package's shape, checked from the source (issue 24): layers import downward only, no import loops, few
top-level modules, and nothing outside ``benchmarks/`` names a benchmark (a benchmark lives in its own folder; the
layers read its declaration)."""

from __future__ import annotations

from architecture import (LAYERS, PACKAGE, cycles, generic_core_files, import_graph, layer_of, name_mentions,
                          top_level_modules, upward_imports)

#: Benchmark names may appear this often outside ``benchmarks/`` (docstrings and comments not counted).
MAX_BENCHMARK_NAMES_IN_CORE = 10


def _registered() -> list[str]:
    return sorted(p.name for p in (PACKAGE / "benchmarks").iterdir() if (p / "__init__.py").is_file())


def test_no_import_loops() -> None:
    assert cycles(import_graph()) == []


def test_the_loop_finder_finds_a_loop(tmp_path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from pkg.b import g\n")
    (package / "b.py").write_text("from pkg import a\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n")
    assert cycles(import_graph(package)) == [["pkg.a", "pkg.b"]]


def test_generic_core_names_few_benchmarks() -> None:
    hits = name_mentions(generic_core_files(), _registered())
    where = "\n".join(f"{path.split('sciprobe/', 1)[-1]}:{line}: {token}" for path, line, token in hits)
    assert len(hits) <= MAX_BENCHMARK_NAMES_IN_CORE, where


def test_layers_import_downward_only() -> None:
    upward = upward_imports(import_graph())
    assert upward == [], "\n".join(f"{a} ({layer_of(a)}) imports {b} ({layer_of(b)})" for a, b in upward)


def test_the_layer_check_finds_an_upward_import(tmp_path) -> None:
    package = tmp_path / "sciprobe"
    for folder in ("core", "run"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "core" / "low.py").write_text("def f():\n    from sciprobe.run import high\n")
    (package / "run" / "high.py").write_text("from sciprobe.core import low\n")
    graph = import_graph(package)
    assert upward_imports(graph) == [("sciprobe.core.low", "sciprobe.run"), ("sciprobe.core.low", "sciprobe.run.high")]


def test_every_package_folder_is_a_layer() -> None:
    folders = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert folders == sorted(LAYERS)


def test_few_top_level_modules() -> None:
    assert len(top_level_modules()) <= 8, top_level_modules()
