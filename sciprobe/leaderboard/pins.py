"""The data a leaderboard scores each benchmark against, pinned.

``SCIPROBE_LEADERBOARD_DATA="idrbench=org/idrbench@<commit>,scitaste=org/scitaste@v1.0"`` names, per benchmark,
the hub dataset (what ``sciprobe publish dataset`` uploaded) and the revision every submission is scored against;
a built dataset folder is accepted too (local runs; results then carry its files' checksum). A hub id without a
revision is refused: a leaderboard whose data can move under it is no leaderboard.

A benchmark the setting does not name is scored against its bundled synthetic sample: that is a *demo*, and the
Space says so on every tab (:func:`demo_notice`). Submissions must match the pinned dataset: their ids are its
test ids, and a result's dataset fingerprint must be the one the submission was validated against.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sciprobe.core.errors import SciprobeError

DATA_ENV = "SCIPROBE_LEADERBOARD_DATA"
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
_REVISION = re.compile(r"[\w.\-/]{1,100}")

HUB, FOLDER, SAMPLE = "hub", "folder", "sample"


@dataclass(frozen=True)
class DataPin:
    """Where one benchmark's data comes from: ``location`` is what the scorer loads (a folder, or
    ``owner/name@revision``); ``kind`` is ``hub``, ``folder`` or ``sample`` (the bundled sample: a demo)."""

    benchmark: str
    location: str  # "" for the bundled sample until :meth:`resolve` builds it
    kind: str

    @property
    def demo(self) -> bool:
        return self.kind == SAMPLE

    def resolve(self) -> str:
        """What the scorer loads; the bundled sample is built on first use (``$SCIPROBE_HOME/datasets``)."""
        if self.kind != SAMPLE:
            return self.location
        from sciprobe.core.registry import get_benchmark
        from sciprobe.data.task_data import sample_dataset_dir

        return str(sample_dataset_dir(get_benchmark(self.benchmark)))

    def describe(self) -> str:
        """For the page: never a local path (a folder shows by its name)."""
        if self.kind == HUB:
            return f"`{self.location}`"
        if self.kind == FOLDER:
            return f"the dataset folder `{Path(self.location).name}`"
        return "sciprobe's bundled synthetic sample (a demo, not the benchmark)"


def parse_data_setting(text: str | None, known: Sequence[str] | None = None) -> dict[str, str]:
    """``bench=location,...`` -> {bench: location}; a hub location must carry ``@revision``. One-line errors."""
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, sep, location = part.partition("=")
        name, location = name.strip(), location.strip()
        if not sep or not name or not location:
            raise SciprobeError(f"{DATA_ENV}: expected BENCH=OWNER/NAME@REVISION (or BENCH=FOLDER), got {part!r}")
        if known is not None and name not in known:
            raise SciprobeError(f"{DATA_ENV}: unknown benchmark {name!r}; known: {', '.join(known)}")
        if not Path(location).is_dir():
            repo, at, revision = location.rpartition("@")
            if not at or not _HUB_ID.fullmatch(repo) or not _REVISION.fullmatch(revision):
                raise SciprobeError(f"{DATA_ENV}: {name}={location!r} is neither a dataset folder nor a pinned hub "
                                    "dataset OWNER/NAME@REVISION (a hub id needs the revision it is scored at)")
        out[name] = location
    return out


def data_pin(benchmark: str, setting: Mapping[str, str] | None = None) -> DataPin:
    """The pin of ``benchmark``: from ``setting`` (default: the environment), else its bundled sample."""
    pins = parse_data_setting(os.environ.get(DATA_ENV)) if setting is None else setting
    location = pins.get(benchmark)
    if location:
        return DataPin(benchmark, location, FOLDER if Path(location).is_dir() else HUB)
    return DataPin(benchmark, "", SAMPLE)


def demo_notice(pins: Sequence[DataPin]) -> str:
    """The line a demo Space shows on every tab ('' when every benchmark is pinned to real data)."""
    demo = [p.benchmark for p in pins if p.demo]
    if not demo:
        return ""
    return (f"**Demo:** {', '.join(demo)} {'is' if len(demo) == 1 else 'are'} scored against sciprobe's bundled "
            "synthetic sample — a handful of made-up items in the release format, not the benchmark — so these "
            f"numbers say nothing about a model. A real leaderboard pins its data: `{DATA_ENV}="
            "bench=OWNER/NAME@REVISION` (the dataset `sciprobe publish dataset` uploaded).")


__all__ = ["DATA_ENV", "DataPin", "data_pin", "demo_notice", "parse_data_setting"]
