"""Prompt sets: which wording a model got (``--prompts``), and how every output names what a result records.
Pure names and one rule; reading upstream's templates is :mod:`sciprobe.run.upstream`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sciprobe.core.errors import SciprobeError

#: ``--prompts``: sciprobe's own wording (the default) or upstream's templates at the pinned commit
PROMPT_SETS = ("sciprobe", "upstream")
DEFAULT_PROMPT_SET = "sciprobe"
UPSTREAM_PROMPT_SET = "upstream"
#: what a result records when its upstream templates differ from the pin (``--allow-modified-prompts``)
MODIFIED_PROMPT_SET = "upstream-modified"
#: every prompt set a result may record, in the order the leaderboard lists them (each ranked on its own)
RECORDED_PROMPT_SETS = (DEFAULT_PROMPT_SET, UPSTREAM_PROMPT_SET, MODIFIED_PROMPT_SET)
#: how a recorded prompt set that sciprobe does not know is shown (never ranked with a known one)
UNKNOWN_PROMPT_SET = "unknown"

def check_prompt_set(name: str | None) -> str:
    name = name or DEFAULT_PROMPT_SET
    if name not in PROMPT_SETS:
        raise SciprobeError(f"unknown prompt set {name!r}; choose {' or '.join(PROMPT_SETS)}")
    return name


def recorded_prompt_set(provenance: Mapping[str, Any] | None) -> str:
    """The prompt set a result's provenance says its model got, as every output shows it: ``upstream`` only
    when no upstream file it read is recorded as differing from the pin (one that is makes it
    ``upstream-modified``, also in results files written before that label existed); a name sciprobe does not
    know is :data:`UNKNOWN_PROMPT_SET`."""
    prov = provenance if isinstance(provenance, Mapping) else {}
    name = prov.get("prompt_set") or DEFAULT_PROMPT_SET
    if name not in RECORDED_PROMPT_SETS:
        return UNKNOWN_PROMPT_SET
    upstream = prov.get("upstream_prompts")
    files = upstream.get("files") if isinstance(upstream, Mapping) else None
    if name == UPSTREAM_PROMPT_SET and isinstance(files, Mapping) and any(
            not isinstance(f, Mapping) or f.get("matches_pin") is not True for f in files.values()):
        return MODIFIED_PROMPT_SET
    return str(name)


#: how outputs name a non-default prompt set (export names, notes, the summary)
PROMPT_SET_TITLES = {UPSTREAM_PROMPT_SET: "upstream prompts", MODIFIED_PROMPT_SET: "MODIFIED upstream prompts",
                     UNKNOWN_PROMPT_SET: "unknown prompts"}
