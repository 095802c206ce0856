"""Reference baselines on the leaderboard: which results are references, how they are labelled, what they lack.

A reference baseline (``sciprobe baselines``: random, majority, similarity rankers, mean predictors ...) is stored
like any result but flagged (``ResultRecord.reference_baseline``), owned by nobody (``user`` ""), and its model id
is ``reference-baseline/<name>`` — a prefix no submission may use (:func:`reserved_model_name`). The tables show
it as a reference row, below the models and never ranked with them (:mod:`~sciprobe.leaderboard.tables`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sciprobe.run.baselines import MODEL_PREFIX
from sciprobe.core.errors import SciprobeError
from sciprobe.leaderboard.records import ResultRecord, identity_key

PREFIX = MODEL_PREFIX + "/"
LABEL = "reference baseline"


def reserved_model_name(name: str) -> bool:
    """True for ``reference-baseline/...`` in any case or width variant (only reference baselines use it)."""
    return identity_key(name).startswith(PREFIX)


def checked_flag(model_id: str, flag: Any) -> dict[str, str] | None:
    """A results file's ``reference_baseline`` block as the store keeps it (``{"name", "description"}``), None for
    a model's results. A flag whose model id is not ``reference-baseline/<name>``, or a model id under that prefix
    without the flag, is refused: a model never passes for a reference, nor a reference for a model."""
    if flag is None:
        if reserved_model_name(model_id):
            raise SciprobeError(f"model id {PREFIX}... is reserved for reference baselines, and this file is not "
                                "flagged as one (sciprobe.reference_baseline)")
        return None
    name = flag.get("name") if isinstance(flag, Mapping) else None
    description = flag.get("description", "") if isinstance(flag, Mapping) else None
    if not isinstance(name, str) or not name.strip() or len(name) > 80 or not isinstance(description, str):
        raise SciprobeError("sciprobe.reference_baseline must be {\"name\", \"description\"}")
    if model_id != PREFIX + name:
        raise SciprobeError(f"a reference baseline's model id is {PREFIX}{name}, not {model_id[:80]!r}")
    return {"name": name, "description": description[:500]}


def display_name(result: ResultRecord) -> str:
    """What the Model column shows for a row: a reference says so (``random (reference baseline)``)."""
    if result.is_reference:
        return f"{result.reference_baseline.get('name') or result.model_name} ({LABEL})"
    return result.model_name


def unscored_modes(results: Iterable[ResultRecord]) -> list[str]:
    """``name · task: modes`` for every reference result lacking a mode of its task (a mode the baseline cannot be
    scored in on this data): those cells are n/a, never 0."""
    from sciprobe.core.registry import resolve_task

    out = []
    for result in results:
        if not result.is_reference:
            continue
        try:
            modes = resolve_task(result.task)[1].modes
        except SciprobeError:
            continue
        missing = [m for m in modes if m not in result.scores]
        if missing:
            line = f"{result.reference_baseline.get('name')} · {result.task}: {', '.join(missing)}"
            if line not in out:
                out.append(line)
    return out


__all__ = ["LABEL", "PREFIX", "checked_flag", "display_name", "reserved_model_name", "unscored_modes"]
