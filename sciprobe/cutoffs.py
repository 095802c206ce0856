"""Temporal cutoffs: keep only items dated strictly after a model's knowledge cutoff.

Spec: shared/spec/README.md convention 3 (`date > cutoff`, strict) and each benchmark's
"Temporal information" section. Month-precision cutoffs ("2023-10") mean the *end* of that month,
so a model that may have read anything from October is never credited with an October paper.
Rows without a date cannot be shown to post-date a cutoff and are dropped by the filter (counted).
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Iterable, Mapping

from sciprobe.errors import SciprobeError

_DATE_RE = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")


def parse_cutoff(value: str) -> dt.date:
    """``YYYY-MM-DD`` as that day; ``YYYY-MM`` as the last day of that month."""
    match = _DATE_RE.match(value.strip()) if isinstance(value, str) else None
    if not match:
        raise SciprobeError(f"invalid cutoff {value!r}: expected YYYY-MM-DD or YYYY-MM")
    year, month = int(match[1]), int(match[2])
    try:
        if match[3] is None:
            return dt.date(year, month, calendar.monthrange(year, month)[1])
        return dt.date(year, month, int(match[3]))
    except ValueError as exc:
        raise SciprobeError(f"invalid cutoff {value!r}: {exc}") from None


@dataclass(frozen=True)
class ModelCutoff:
    model: str
    cutoff: dt.date
    source: str
    note: str = ""


def _load_registry() -> dict[str, ModelCutoff]:
    raw = json.loads(resources.files("sciprobe.data").joinpath("model_cutoffs.json").read_text("utf-8"))
    return {
        name.lower(): ModelCutoff(name, parse_cutoff(entry["cutoff"]), entry["source"], entry.get("note", ""))
        for name, entry in raw["models"].items()
    }


_REGISTRY: dict[str, ModelCutoff] | None = None


def model_cutoffs() -> dict[str, ModelCutoff]:
    """The registry of model knowledge cutoffs (bundled JSON plus anything `register_model_cutoff` added)."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _load_registry()
    return _REGISTRY


def register_model_cutoff(model: str, cutoff: str, source: str, note: str = "") -> ModelCutoff:
    entry = ModelCutoff(model, parse_cutoff(cutoff), source, note)
    model_cutoffs()[model.lower()] = entry
    return entry


def lookup_model_cutoff(model: str) -> ModelCutoff:
    """Find a model's cutoff by exact name, then by the name without a provider prefix (``openai/x`` -> ``x``)."""
    registry = model_cutoffs()
    candidates = [model.lower(), model.lower().rsplit("/", 1)[-1]]
    for name in candidates:
        if name in registry:
            return registry[name]
    known = ", ".join(sorted(registry))
    raise SciprobeError(f"no knowledge cutoff known for model {model!r}; pass --cutoff YYYY-MM-DD (known: {known})")


def dated_after(date: str | None, bound: str) -> bool:
    """An ISO ``date`` strictly after the ISO ``bound`` (ISO strings compare in date order); undated: False."""
    return bool(date) and date > bound


def keep_after(dates: Iterable[str | None], cutoff: dt.date | None) -> list[bool]:
    """Mask of rows strictly after ``cutoff`` (all True when there is no cutoff; undated rows False)."""
    if cutoff is None:
        return [True for _ in dates]
    bound = cutoff.isoformat()
    return [dated_after(d, bound) for d in dates]


@dataclass(frozen=True)
class CutoffReport:
    """What a cutoff did, recorded in dataset cards and results."""

    cutoff: str | None
    source: str
    n_before: int
    n_after: int

    def as_dict(self) -> dict:
        return {"cutoff": self.cutoff, "source": self.source, "n_items_before": self.n_before,
                "n_items_after": self.n_after}


def resolve_cutoff(cutoff: str | None, model_cutoff: str | None, model: str | None = None) -> tuple[dt.date | None, str]:
    """Turn the CLI's ``--cutoff`` / ``--model-cutoff NAME|auto`` into a date and a provenance string."""
    if cutoff and model_cutoff:
        raise SciprobeError("give either --cutoff or --model-cutoff, not both")
    if cutoff:
        return parse_cutoff(cutoff), "explicit"
    if model_cutoff:
        name = model if model_cutoff == "auto" else model_cutoff
        if not name:
            raise SciprobeError("--model-cutoff auto needs a model name")
        entry = lookup_model_cutoff(name)
        return entry.cutoff, f"model:{entry.model} ({entry.source})"
    return None, "none"


def filter_dataset(ds, cutoff: dt.date | None):
    """Filter a ``datasets.Dataset`` on its ``date`` column with Arrow compute (no Python loop over rows)."""
    if cutoff is None:
        return ds
    import pyarrow.compute as pc

    dates = ds.data.column("date")
    mask = pc.fill_null(pc.greater(dates, cutoff.isoformat()), False)
    indices = pc.indices_nonzero(mask).to_pylist()
    return ds.select(indices)


def filter_rows(rows: list[Mapping], cutoff: dt.date | None) -> list[Mapping]:
    return [row for row, keep in zip(rows, keep_after((r.get("date") for r in rows), cutoff)) if keep]
