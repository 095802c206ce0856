"""Where the tests' data lives, and the one loader of golden-case files (``tests/cases/<name>.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
CASES_DIR = TESTS / "cases"


def load_cases(name: str, key: str | None = None) -> Any:
    """The cases of ``tests/cases/<name>`` (``.json`` added when missing); ``key`` picks one field of the file
    (e.g. ``"cases"``)."""
    path = CASES_DIR / (name if name.endswith(".json") else f"{name}.json")
    data = json.loads(path.read_text("utf-8"))
    return data[key] if key is not None else data


def case_ids(cases: list[dict[str, Any]], field: str = "name") -> list[str]:
    """pytest ids for a list of cases: their ``field``, made unique with a counter when repeated."""
    seen: dict[str, int] = {}
    out = []
    for case in cases:
        label = str(case.get(field, "case"))
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label}#{seen[label]}")
    return out
