"""Static facts about the package's shape, read from the source (no imports): the internal import graph and
where benchmark names appear in code. Used by ``test_architecture.py`` (and handy from a shell)."""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "sciprobe"


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, name: str, is_package: bool, known: set[str]) -> set[str]:
    """Every internal module ``name`` imports, at module level or inside functions (``if TYPE_CHECKING`` blocks
    excluded: they never run)."""
    out: set[str] = set()
    package = name if is_package else name.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    out.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            if base in known:  # ``from X import y`` runs X (a package's __init__ too)
                out.add(base)
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    out.add(f"{base}.{alias.name}")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    out.discard(name)
    return out


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    found = modules(root)
    known = set(found)
    return {name: _imports(ast.parse(path.read_text("utf-8")), name, path.name == "__init__.py", known)
            for name, path in found.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                strong(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(out)


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                lines.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    return lines


def name_mentions(paths: Iterable[Path], names: Iterable[str]) -> list[tuple[str, int, str]]:
    """(file, line, token) for each code token (names and strings; not comments or docstrings) that mentions one
    of ``names``."""
    wanted = [n.lower() for n in names]
    hits = []
    for path in paths:
        text = path.read_text("utf-8")
        doc = _docstring_lines(ast.parse(text))
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type not in (tokenize.NAME, tokenize.STRING) or tok.start[0] in doc:
                continue
            low = tok.string.lower()
            hits.extend((str(path), tok.start[0], tok.string) for n in wanted if n in low)
    return hits


def generic_core_files(root: Path = PACKAGE) -> list[Path]:
    """Everything outside ``benchmarks/``, except the table of deprecated module paths (``_compat.py``), which names
    the old homes of moved benchmark modules for one release."""
    return sorted(p for p in root.rglob("*.py")
                  if p.relative_to(root).parts[0] != "benchmarks" and p.name != "_compat.py")


#: The layers, lowest first. A module may import its own layer and the layers below it, never one above. Layers on
#: one rank are peers that may import each other. ``benchmarks`` are plugins on top: they may import every layer,
#: and no layer imports them (the registry finds them by name). The package's face (``sciprobe/__init__``,
#: ``_compat``, ``__main__``) imports lazily and is not a layer.
LAYERS = {"core": 0, "scoring": 1, "llm": 2, "data": 2, "sandbox": 2, "results": 3, "testing": 3, "run": 4,
          "interop": 5, "leaderboard": 6, "cli": 7, "benchmarks": 8}


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(importer, imported) for every import that points up a layer."""
    out = []
    for importer, targets in graph.items():
        low = layer_of(importer)
        if low is None:
            continue
        out.extend((importer, target) for target in sorted(targets)
                   if layer_of(target) is not None and LAYERS[layer_of(target)] > LAYERS[low])
    return sorted(out)


def top_level_modules(root: Path = PACKAGE) -> list[str]:
    return sorted(p.name for p in root.glob("*.py"))
