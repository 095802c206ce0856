"""An IDRBench folder laid out as the pinned release (``irllm-framework@aa621e4``, ``data/``: six single files),
written from the reference files in ``../shared/data/idrbench`` (tests only; never committed).

The reference files use the part layout of older commits (``data_exp_3_{1,2}_part_<n>.json``); at the pin each is
one file, written by upstream's ``reformat_data.ipynb`` as ``df.to_json(..., indent=2, orient='records')``, which
is what :func:`write_release_json` mirrors. The pinned ``data_exp_2_2.json`` (blob ``82a32a2``) is not available
here: its stand-in is ``data_exp_2_3.json`` of ``5195b17``, whose schema it is expected to share
(``../shared/data/idrbench/README.md``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

PINNED_FILES = ("data_exp_1.json", "data_exp_2_1.json", "data_exp_2_2.json", "data_exp_3_1.json",
                "data_exp_3_2.json", "data_exp_4_1.json")


def write_release_json(path: Path, records: list[dict[str, Any]]) -> None:
    """JSON as pandas ``to_json(indent=2, orient='records')`` writes it: ``"key":value``, ASCII escapes."""
    path.write_text(json.dumps(records, indent=2, separators=(",", ":")), "utf-8")


def _parts(folder: Path, pattern: str) -> list[Path]:
    return sorted(folder.glob(pattern), key=lambda p: int(re.findall(r"\d+", p.stem)[-1]))


def concatenated(folder: Path, pattern: str) -> list[dict[str, Any]]:
    return [record for part in _parts(folder, pattern) for record in json.loads(part.read_text("utf-8"))]


def pinned_layout(shared: Path, out: Path) -> Path:
    """``out`` holding the six pinned files built from the reference folder ``shared`` (``.../idrbench``)."""
    data = shared / "data"
    out.mkdir(parents=True, exist_ok=True)
    for name in ("data_exp_1.json", "data_exp_2_1.json", "data_exp_4_1.json"):
        (out / name).symlink_to(data / name)
    (out / "data_exp_2_2.json").symlink_to(data / "data_exp_2_3.json")  # stand-in, see the module note
    write_release_json(out / "data_exp_3_1.json", concatenated(data, "data_exp_3_1_part_*.json"))
    write_release_json(out / "data_exp_3_2.json", concatenated(shared / "level2-5195b17", "data_exp_3_2_part_*.json"))
    return out


# ---------------------------------------------------------------- a small fixture in the pinned layout

def _without(record: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != key}


def _generation_records(set1: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``data_exp_4_1.json``'s shape (spec idrbench.md §2.4, §3.2): the I3 schema without ``date``; every positive,
    then two negatives per positive that keep its P_A fields: (its side b, another pair's side c) and (its side c
    as side b, another pair's side c)."""
    positives = [_without(r, "date") for r in set1 if r["y_true"]]
    others = [r for r in set1 if not r["y_true"]]
    negatives = []
    for k, pos in enumerate(positives):
        other = others[k % len(others)]
        partner = {f"c_{f}": other[f"c_{f}"] for f in ("id", "title", "abstract", "categories", "fields")}
        negatives.append({**pos, **partner, "y_true": False})
        as_b = {f"b_{f}": pos[f"c_{f}"] for f in ("id", "title", "abstract", "categories", "fields")}
        negatives.append({**pos, **as_b, **partner, "y_true": False})
    return positives + negatives


def pinned_fixture(sample: Path, out: Path) -> Path:
    """``out`` laid out as ``irllm-framework@aa621e4`` ``data/`` (the six files its ``tasks.py`` reads, single files
    written as its ``reformat_data.ipynb`` writes them), filled from the bundled invented sample: Level 2 repeats
    the Level-1 queries, generation pairs are derived from Set 1 (no upstream data)."""
    out.mkdir(parents=True, exist_ok=True)
    for name in ("data_exp_1.json", "data_exp_2_1.json", "data_exp_2_2.json"):
        write_release_json(out / name, json.loads((sample / name).read_text("utf-8")))
    level1 = concatenated(sample, "data_exp_3_1_part_*.json")
    write_release_json(out / "data_exp_3_1.json", level1)
    write_release_json(out / "data_exp_3_2.json", level1)
    set1 = json.loads((sample / "data_exp_2_1.json").read_text("utf-8"))
    write_release_json(out / "data_exp_4_1.json", _generation_records(set1))
    return out
