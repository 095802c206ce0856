"""Helpers of the parity generator: load function definitions from an upstream file (never copied into this
project: read from the tree given on the command line) and write case files."""

from __future__ import annotations

import ast
import json
import math
import sys
import types
from pathlib import Path
from typing import Any, Iterable

CASES_DIR = Path(__file__).resolve().parents[1] / "cases"


def stub_module(name: str, **attrs: Any) -> types.ModuleType:
    """Install a stand-in module (network clients, dataset loaders) before importing upstream code."""
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module


def load_defs(path: Path, namespace: dict[str, Any] | None = None, keep: Iterable[str] = (),
              imports: bool = True, only: Iterable[str] | None = None) -> dict[str, Any]:
    """Execute only the imports (unless ``imports=False``: pass what the functions need in ``namespace``), the
    function/class definitions (only those named in ``only`` when given) and the named top-level assignments of
    an upstream script (its top-level code reads files, loads datasets or calls APIs); returns the namespace."""
    source = Path(path).read_text(encoding="utf-8")
    tree = ast.parse(source)
    keep = set(keep)
    body = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if imports:
                body.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            if only is None or node.name in set(only):
                body.append(node)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in keep for t in node.targets):
            body.append(node)
    module = ast.Module(body=body, type_ignores=[])
    ns = {"__name__": f"upstream_{Path(path).stem}", "__file__": str(path)}
    ns.update(namespace or {})
    exec(compile(module, str(path), "exec"), ns)
    return ns


def jsonable(value: Any) -> Any:
    """Plain JSON values: numpy scalars and arrays become Python numbers and lists; NaN/inf become strings."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None
    if np is not None and isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if np is not None and isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return repr(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def raised(exc: BaseException) -> str:
    return f"upstream raised {type(exc).__name__}"


def write_cases(name: str, upstream: dict[str, str], cases: list[dict[str, Any]]) -> Path:
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), f"duplicate case names in {name}"
    CASES_DIR.mkdir(parents=True, exist_ok=True)
    path = CASES_DIR / f"{name}.json"
    doc = {"scorer": name, "upstream": upstream, "n_cases": len(cases), "cases": jsonable(cases)}
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{path.name}: {len(cases)} cases")
    return path
