"""The package's shape, checked from the source: no import loops, and the generic core stays free of benchmark
names (a benchmark lives in its own folder; the core reads its declaration)."""

from __future__ import annotations

from architecture import PACKAGE, cycles, generic_core_files, import_graph, name_mentions

#: Benchmark names may appear this often in the generic core's code (docstrings and comments not counted).
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
