"""Functions for the CLI to wire (``sciprobe/cli.py`` is not edited here; spec sgibench.md §3.6, §7).

- ``sciprobe sgi-score deep_research=18.48 idea_generation=results/ig.json ... [--mode paper]`` ->
  :func:`sgi_score_command`: each value is a number or a JSON file holding a component report
  (``ScoreReport.as_dict()``: its headline key and ``coverage`` are read).
- ``sciprobe sgibench-external [--data DIR]`` -> :func:`check_external_command`: status of the external
  dry-experiment files (pinned sha256), exit status 1 when a pinned file is missing or differs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from sciprobe.benchmarks.sgibench import external
from sciprobe.errors import SciprobeError
from sciprobe.scoring.sgi.overall import sgi_score


def _component_value(text: str):
    try:
        return float(text)
    except ValueError:
        pass
    path = Path(text)
    if not path.is_file():
        raise SciprobeError(f"{text!r} is neither a number nor a JSON report file")
    try:
        return json.loads(path.read_text("utf-8"))
    except ValueError as exc:
        raise SciprobeError(f"malformed JSON in {path}: {exc}") from None


def sgi_score_command(pairs: Sequence[str], mode: str = "official") -> str:
    """``["deep_research=18.48", ...]`` -> the SGI-Score report as indented JSON."""
    components = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise SciprobeError(f"expected COMPONENT=VALUE, got {pair!r}")
        components[name.strip()] = _component_value(value.strip())
    return json.dumps(sgi_score(components, mode=mode).as_dict(), indent=2)


def check_external_command(folder: str | None = None) -> tuple[int, str]:
    """(exit status, report text) for the external dry-experiment files."""
    lines, bad = [], False
    for files in external.check_all(folder).values():
        for f in files:
            lines.append(f"{f.status:17} {f.relative}")
            bad |= not f.usable and external.SHA256.get(f.relative) is not None
    if external.data_dir(folder) is None:
        lines.append(f"no folder given: pass --data DIR or set {external.ENV_VAR}")
    return (1 if bad else 0), "\n".join(lines)
