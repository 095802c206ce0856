"""Temporal cutoffs: keep only items dated strictly after a model's knowledge cutoff.

Spec: shared/spec/README.md convention 3 (`date > cutoff`, strict) and each benchmark's
"Temporal information" section. Month-precision cutoffs ("2023-10") mean the *end* of that month,
so a model that may have read anything from October is never credited with an October paper.
Rows without a date cannot be shown to post-date a cutoff and are dropped by the filter (counted).
Comparisons are on parsed dates: a stored date is ISO ``YYYY-MM-DD`` (the first day of its period, see
:mod:`sciprobe.data.release_files`); anything else in a date column is an error, never a string comparison.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import namedtuple
from pathlib import Path

from sciprobe.core.errors import SciprobeError
from sciprobe.data.release_files import parse_release_date

TYPE_CHECKING = False  # typing's flag without importing typing: these modules are on the CLI's start-up path
if TYPE_CHECKING:
    from typing import Any


def parse_cutoff(value: str) -> dt.date:
    """``YYYY-MM-DD`` as that day; ``YYYY-MM`` as the last day of that month (surrounding blanks ignored)."""
    parsed = parse_release_date(value.strip() if isinstance(value, str) else value, "invalid cutoff",
                                ("day", "month"))
    if parsed is None:
        raise SciprobeError("invalid cutoff '': expected YYYY-MM-DD or YYYY-MM")
    return parsed.end


class ModelCutoff(namedtuple("ModelCutoff", ["model", "cutoff", "source", "note"], defaults=[""])):
    """A registry entry: ``model`` (str), its knowledge ``cutoff`` (``datetime.date``), the ``source`` saying so
    and an optional ``note``. A plain named tuple: see :class:`~sciprobe.data.release_files.ReleaseDate`."""

    __slots__ = ()


def _load_registry() -> dict[str, ModelCutoff]:
    # the bundled file, found as the declarations find their samples (importlib.resources would load zipfile and
    # tempfile into every `sciprobe cutoffs`)
    raw = json.loads((Path(__file__).resolve().parent / "model_cutoffs.json").read_text("utf-8"))
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


_DAYS_IN_MONTH = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def parsed_date_column(dates: Any, where: str) -> Any:
    """An Arrow column of stored dates (ISO ``YYYY-MM-DD`` text or nulls) parsed to a numpy ``datetime64[D]`` array
    (NaT for null); a value in any other form (another format, a number, a day off the calendar) is a one-line
    error naming the first one. Vectorised over the fixed-width bytes: no Python object per row."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(dates, pa.ChunkedArray):
        dates = dates.combine_chunks()
    days = np.full(len(dates), np.datetime64("NaT"), dtype="datetime64[D]")
    if pa.types.is_null(dates.type) or dates.null_count == len(dates):
        return days
    if not (pa.types.is_string(dates.type) or pa.types.is_large_string(dates.type)):
        raise SciprobeError(f"{where}: the date column holds {dates.type} values, not YYYY-MM-DD text")
    present = pc.is_valid(dates).to_numpy(zero_copy_only=False)
    values = dates.filter(pa.array(present))
    lengths = pc.binary_length(values).to_numpy(zero_copy_only=False)
    ok = lengths == 10
    if ok.all():
        fixed = values.cast(pa.binary(10))
        raw = np.frombuffer(fixed.buffers()[1], dtype=np.uint8, count=(fixed.offset + len(fixed)) * 10)
        chars = raw[fixed.offset * 10:].reshape(len(fixed), 10)
        dashes = (chars[:, 4] == ord("-")) & (chars[:, 7] == ord("-"))

        def number(columns: slice) -> np.ndarray:
            digits = chars[:, columns] - np.uint8(ord("0"))  # wraps below "0": anything but a digit is > 9
            ok_digits = (digits <= 9).all(axis=1)
            value = np.zeros(len(chars), dtype=np.int32)
            for k in range(digits.shape[1]):
                value = value * 10 + digits[:, k]
            return np.where(ok_digits, value, -1)

        year, month, day = number(slice(0, 4)), number(slice(5, 7)), number(slice(8, 10))
        leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
        last = np.asarray(_DAYS_IN_MONTH, dtype=np.int32)[np.clip(month, 0, 12)] + (leap & (month == 2))
        ok = dashes & (year >= 1) & (month >= 1) & (month <= 12) & (day >= 1) & (day <= last)
    if not ok.all():
        value = values[int(np.flatnonzero(~ok)[0])].as_py()
        parse_release_date(value, where, ("day",))  # raises with the reason
        raise SciprobeError(f"{where}: date {value!r} is not YYYY-MM-DD")
    months = ((year - 1970) * 12 + month - 1).astype("datetime64[M]")
    days[present] = months.astype("datetime64[D]") + (day - 1).astype("timedelta64[D]")
    return days


def after_cutoff_mask(dates: Any, cutoff: dt.date, where: str) -> Any:
    """Boolean Arrow mask of dates strictly after ``cutoff`` (compared as parsed dates; undated rows False)."""
    import numpy as np
    import pyarrow as pa

    return pa.array(parsed_date_column(dates, where) > np.datetime64(cutoff.isoformat(), "D"))


class CutoffReport(namedtuple("CutoffReport", ["cutoff", "source", "n_before", "n_after"])):
    """What a cutoff did, recorded in dataset cards and results: the ``cutoff`` date (ISO str or None), its
    ``source`` and the item counts ``n_before`` / ``n_after`` (ints)."""

    __slots__ = ()

    def as_dict(self) -> dict:
        return {"cutoff": self.cutoff, "source": self.source, "n_items_before": self.n_before,
                "n_items_after": self.n_after}


def resolve_cutoff(cutoff: str | None, model_cutoff: str | None,
                   model: str | None = None) -> tuple[dt.date | None, str]:
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


def filter_dataset(ds, cutoff: dt.date | None, where: str = "dataset"):
    """Filter a ``datasets.Dataset`` on its ``date`` column with Arrow compute (no Python loop over rows)."""
    if cutoff is None:
        return ds
    import pyarrow.compute as pc

    if "date" not in ds.column_names:
        raise SciprobeError(f"{where} has no date column; a cutoff cannot be applied")
    mask = after_cutoff_mask(ds.data.column("date"), cutoff, where)
    return ds.select(pc.indices_nonzero(mask).to_pylist())
