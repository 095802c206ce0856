"""Read the IDRBench release files into normalised rows (shared/spec/idrbench.md §3.2, §9, §11).

Quirks handled here, each recorded in the dataset card:
- arXiv ids stored as JSON floats (``2411.19`` is 2411.19000) and one corrupted 4-digit suffix: parsed as
  strings and zero-padded to five digits (new-style ids since 2015 always have five).
- ``b_categories`` one inner list per side, or flat; ``b_id`` a list or a plain string; fewer ids than papers.
- Dates: the record's own date when present (day precision), else the month of P_A's arXiv id; I3 negatives
  (no P_A) take the latest month among the arXiv ids shown (month precision).
- Whitespace normalisation of titles/abstracts (on by default): gold cited papers have no hard line breaks
  while negatives and distractors are raw hard-wrapped arXiv text, a surface cue that leaks the label.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator, Mapping

from sciprobe.errors import SciprobeError

DISCIPLINES = (
    "Computer Science, Electrical Engineering and Systems Science",
    "Economics and Quantitative Finance",
    "Mathematics and Statistics",
    "Physics",
    "Quantitative Biology",
    "Other",
)
_CS, _ECON, _MATH, _PHYS, _QBIO, _OTHER = DISCIPLINES

# arXiv archive -> merged discipline (§1.1). Decision: math-ph -> Physics, because arXiv files math-ph
# among the physics archives (it is aliased to math.MP); it does not occur in the v1 data.
ARCHIVE_DISCIPLINE = {
    "cs": _CS, "eess": _CS, "math": _MATH, "stat": _MATH, "econ": _ECON, "q-fin": _ECON, "q-bio": _QBIO,
    **{a: _PHYS for a in ("astro-ph", "cond-mat", "gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th", "nlin",
                          "nucl-ex", "nucl-th", "physics", "quant-ph", "math-ph")},
}

IPI_FILE = "data_exp_1.json"
I3_FILES = {"i3_set1": "data_exp_2_1.json", "i3_set2": "data_exp_2_3.json"}
I2R_GLOB = "data_exp_3_1_part_*.json"

# The fixed few-shot examples (paper Tables 14-17), by release id, in the order the prompts show them.
IPI_FEWSHOT_IDS = ("2411.05236", "2412.11084", "2412.02695", "2501.13908", "2503.16003")
I3_FEWSHOT_POSITIVE_IDS = ("2411.00726", "2411.05236")
# The third I3 example pairs side b of two Set-1 negatives.
I3_FEWSHOT_NEGATIVE_SIDES = ("neg-d21-554", "neg-d21-518")

_NEW_ID = re.compile(r"^(\d{2})(\d{2})\.(\d{1,5})(v\d+)?$")


def normalize_id(raw: Any) -> str:
    """String id; new-style arXiv ids zero-padded to five digits after the dot (float-stored ids lose them)."""
    if raw is None:
        return ""
    text = repr(raw) if isinstance(raw, float) else str(raw).strip()
    match = _NEW_ID.match(text)
    if match and int(match[1]) >= 15 and len(match[3]) < 5:
        text = f"{match[1]}{match[2]}.{match[3].ljust(5, '0')}"
    return text


def arxiv_month(arxiv_id: str) -> str | None:
    """``2411.05236`` -> ``2024-11-01``; None for anything that is not a new-style arXiv id."""
    match = _NEW_ID.match(arxiv_id or "")
    if not match or not 1 <= int(match[2]) <= 12:
        return None
    return f"20{match[1]}-{match[2]}-01"


def discipline_of(category: str) -> str:
    """arXiv category (``q-bio.GN``) or free-text discipline (``Oncology``) -> merged discipline."""
    archive = category.strip().split(".", 1)[0]
    return ARCHIVE_DISCIPLINE.get(archive, _OTHER)


def disciplines_of(categories: list[str]) -> list[str]:
    return list(dict.fromkeys(discipline_of(c) for c in categories))


def clean(text: Any, normalize: bool) -> str:
    text = "" if text is None else str(text)
    return " ".join(text.split()) if normalize else text


def _flatten(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    out: list[str] = []
    for item in value:
        out.extend(_flatten(item))
    return out


def _load_json_list(path: Path) -> list[dict]:
    if not path.is_file():
        raise SciprobeError(f"missing IDRBench source file {path}")
    try:
        data = json.loads(path.read_text("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SciprobeError(f"malformed JSON in {path}: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise SciprobeError(f"{path} must hold a JSON list of records")
    return data


def _field(record: Mapping, key: str, path: Path, index: int) -> Any:
    if key not in record:
        raise SciprobeError(f"{path.name} record {index}: missing field {key!r}")
    return record[key]


def _label(value: Any, path: Path, index: int) -> int:
    if not isinstance(value, bool):
        raise SciprobeError(f"{path.name} record {index}: y_true must be true/false, got {value!r}")
    return int(value)


# ---------------------------------------------------------------- IPI

def ipi_rows(source: Path, normalize: bool) -> list[dict]:
    path = source / IPI_FILE
    rows = []
    for i, rec in enumerate(_load_json_list(path)):
        rid = normalize_id(_field(rec, "id", path, i))
        categories = _flatten(rec.get("categories"))
        own_date = rec.get("date") or None
        date = own_date or arxiv_month(rid)
        rows.append({
            "id": rid,
            "title": clean(_field(rec, "title", path, i), normalize),
            "abstract": clean(_field(rec, "abstract", path, i), normalize),
            "categories": categories,
            "disciplines": disciplines_of(categories),
            "label": _label(_field(rec, "y_true", path, i), path, i),
            "date": date,
            "date_precision": "day" if own_date else ("month" if date else None),
            "is_fewshot_example": rid in IPI_FEWSHOT_IDS,
        })
    return rows


def ipi_fewshot(rows: list[dict]) -> list[dict]:
    by_id = {r["id"]: r for r in rows}
    missing = [i for i in IPI_FEWSHOT_IDS if i not in by_id]
    if missing:
        raise SciprobeError(f"IPI few-shot example ids not found in the source: {', '.join(missing)}")
    return [by_id[i] for i in IPI_FEWSHOT_IDS]


# ---------------------------------------------------------------- I3

def _side(rec: Mapping, side: str, normalize: bool) -> list[dict]:
    titles = list(rec.get(f"{side}_title") or [])
    abstracts = list(rec.get(f"{side}_abstract") or [])
    ids = _flatten(rec.get(f"{side}_id"))
    ids = [normalize_id(x) for x in ids] + [""] * (len(titles) - len(ids))  # fewer ids than papers occurs
    abstracts += [""] * (len(titles) - len(abstracts))
    return [{"id": ids[k], "title": clean(titles[k], normalize), "abstract": clean(abstracts[k], normalize)}
            for k in range(len(titles))]


def _i3_row(rec: Mapping, path: Path, index: int, normalize: bool, fewshot_ids: set[str]) -> dict:
    rid = normalize_id(_field(rec, "id", path, index))
    label = _label(_field(rec, "y_true", path, index), path, index)
    side_b, side_c = _side(rec, "b", normalize), _side(rec, "c", normalize)
    if not side_b or not side_c:
        raise SciprobeError(f"{path.name} record {index}: both sides need at least one paper")
    b_cats, c_cats = _flatten(rec.get("b_categories")), _flatten(rec.get("c_categories"))
    b_disc, c_disc = disciplines_of(b_cats), disciplines_of(c_cats)
    if label:
        date = arxiv_month(rid)
    else:
        months = [m for m in (arxiv_month(p["id"]) for p in side_b + side_c) if m]
        date = max(months) if months else None
    return {
        "id": rid,
        "pa_id": rid if label else None,
        "side_b": side_b,
        "side_c": side_c,
        "side_b_categories": b_cats,
        "side_c_categories": c_cats,
        "side_b_disciplines": b_disc,
        "side_c_disciplines": c_disc,
        "sides_share_discipline": bool(set(b_disc) & set(c_disc)),
        "explanation": clean(rec.get("explanation"), normalize),
        "research_type": rec.get("research_type"),
        "label": label,
        "date": date,
        "date_precision": "month" if date else None,
        "is_fewshot_example": rid in fewshot_ids,
    }


def i3_rows(source: Path, config: str, normalize: bool) -> list[dict]:
    path = source / I3_FILES[config]
    fewshot_ids = set(I3_FEWSHOT_POSITIVE_IDS)
    if config == "i3_set1":
        fewshot_ids |= set(I3_FEWSHOT_NEGATIVE_SIDES)
    return [_i3_row(rec, path, i, normalize, fewshot_ids) for i, rec in enumerate(_load_json_list(path))]


def i3_fewshot(source: Path, normalize: bool) -> list[dict]:
    """The three fixed I3 examples, always taken from Set 1 (the third pairs two Set-1 negatives' side b)."""
    rows = {r["id"]: r for r in i3_rows(source, "i3_set1", normalize)}
    needed = [*I3_FEWSHOT_POSITIVE_IDS, *I3_FEWSHOT_NEGATIVE_SIDES]
    missing = [i for i in needed if i not in rows]
    if missing:
        raise SciprobeError(f"I3 few-shot example ids not found in {I3_FILES['i3_set1']}: {', '.join(missing)}")
    first, second = (rows[i] for i in I3_FEWSHOT_NEGATIVE_SIDES)
    b_disc, c_disc = first["side_b_disciplines"], second["side_b_disciplines"]
    synthetic = {
        **first,
        "id": "fewshot-" + "+".join(I3_FEWSHOT_NEGATIVE_SIDES),
        "side_c": second["side_b"],
        "side_c_categories": second["side_b_categories"],
        "side_c_disciplines": c_disc,
        "sides_share_discipline": bool(set(b_disc) & set(c_disc)),
        "label": 0,
        "is_fewshot_example": True,
    }
    return [rows[i] for i in I3_FEWSHOT_POSITIVE_IDS] + [synthetic]


# ---------------------------------------------------------------- I2R

def _i2r_files(source: Path) -> list[Path]:
    files = sorted(source.glob(I2R_GLOB), key=lambda p: int(re.findall(r"\d+", p.stem)[-1]))
    if not files:
        raise SciprobeError(f"missing IDRBench source files {source}/{I2R_GLOB}")
    return files


def i2r_rows(source: Path, normalize: bool) -> list[dict]:
    rows = []
    for path in _i2r_files(source):
        for i, rec in enumerate(_load_json_list(path)):
            pa_id = normalize_id(_field(rec, "id", path, i))
            target = _field(rec, "target_paper", path, i)
            pool = _field(rec, "list", path, i)
            t_titles, d_titles = list(target.get("title") or []), list(pool.get("title") or [])
            if not t_titles:
                raise SciprobeError(f"{path.name} record {i}: target_paper has no title")
            t_ids = [normalize_id(x) for x in _flatten(target.get("id"))]
            t_ids += [""] * (len(t_titles) - len(t_ids))
            t_abs = list(target.get("abstract") or []) + [""] * len(t_titles)
            d_abs = list(pool.get("abstract") or []) + [""] * len(d_titles)
            seed_cats = _flatten(rec.get("start_categories"))
            start_id = normalize_id(rec.get("start_id"))
            date = arxiv_month(pa_id)
            rows.append({
                "id": f"{pa_id}-{start_id}",
                "pa_id": pa_id,
                "seed": {"id": start_id, "title": clean(rec.get("start_title"), normalize),
                         "abstract": clean(rec.get("start_abstract"), normalize),
                         "categories": seed_cats, "disciplines": disciplines_of(seed_cats)},
                "targets": [{"id": t_ids[k], "title": clean(t_titles[k], normalize),
                             "abstract": clean(t_abs[k], normalize)} for k in range(len(t_titles))],
                "target_categories": _flatten(target.get("categories")),
                "distractors": [{"title": clean(d_titles[k], normalize), "abstract": clean(d_abs[k], normalize)}
                                for k in range(len(d_titles))],
                "n_players": len(t_titles) + len(d_titles),
                "research_type": rec.get("research_type"),
                "date": date,
                "date_precision": "month" if date else None,
            })
    return rows


# ---------------------------------------------------------------- entry point

def read_source(source: Path, config: str, options: Mapping[str, Any]) -> Iterator[tuple[str, list[dict]]]:
    """Yield ``(split, rows)`` for one config: ``test`` and, for few-shot tasks, ``fewshot``."""
    normalize = bool(options.get("normalize_whitespace", True))
    if config == "ipi":
        rows = ipi_rows(source, normalize)
        yield "test", rows
        yield "fewshot", ipi_fewshot(rows)
    elif config in I3_FILES:
        yield "test", i3_rows(source, config, normalize)
        yield "fewshot", i3_fewshot(source, normalize)
    elif config == "i2r":
        yield "test", i2r_rows(source, normalize)
    else:
        raise SciprobeError(f"unknown IDRBench config {config!r}")
