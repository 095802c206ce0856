"""Stand-ins for the pinned upstream templates: ``tests/cases/upstream/<bench>/`` holds our own text in upstream's
format at upstream's paths (never upstream's text, so its sha256 never matches the pin).

A run on them is refused as modified templates unless ``--allow-modified-prompts``. Tests of the upstream prompt
set *as pinned* (how the templates are filled, what results record) make the stand-ins the pin for the test's
duration with :func:`pin_stand_ins`; tests of modified templates use them as they are.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from golden import CASES_DIR

STAND_INS = CASES_DIR / "upstream"


def pin_stand_ins(monkeypatch: pytest.MonkeyPatch, benchmark_name: str) -> Path:
    """Pin ``benchmark_name``'s prompt files to the stand-ins' sha256 (undone by ``monkeypatch``); returns their
    folder, for ``--upstream-dir``."""
    from sciprobe.core.registry import get_benchmark

    upstream = get_benchmark(benchmark_name).upstream
    assert upstream is not None, benchmark_name
    folder = STAND_INS / benchmark_name
    for path in upstream.prompt_files:
        monkeypatch.setitem(upstream.prompt_files, path, hashlib.sha256((folder / path).read_bytes()).hexdigest())
    return folder
