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

import re
from pathlib import Path
from typing import Any, Iterator, Mapping

from sciprobe.benchmarks.idrbench.release import FILES, PINNED
from sciprobe.core.errors import SciprobeError
from sciprobe.data.release_files import (
    check_unique_ids,
    get_field,
    json_records,
    parse_release_date,
    shown,
    text,
    text_list,
)

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

IPI_FILE = FILES["ipi"]
I3_FILES = {name: FILES[name] for name in ("i3_set1", "i3_set2", "i3_set2_5195b17")}
I2R_CONFIGS = ("i2r", "i2r_level2")

# The fixed few-shot examples (paper Tables 14-17), by release id, in the order the prompts show them. The bundled
# sample holds stand-ins for them (:func:`sample_stand_in`), since its invented papers must not carry real ids.
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


def _id(value: Any, where: str, key: str) -> str:
    """An id field: text, or a JSON float (the release stores some arXiv ids as numbers); nothing else."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, (str, float))):
        raise SciprobeError(f"{where}: field {key!r} must be an id (text), got {type(value).__name__} "
                            f"{shown(value)}")
    return normalize_id(value)


def sample_stand_in(release_id: str) -> str:
    """The bundled sample's id for a release id: the same month, the number's first digit made 9 (``2411.05236``
    -> ``2411.95236``). arXiv never reached 90,000 papers in a month, so no real paper has such an id, while the
    month (the date a row gets from its id) and the id's shape (float storage, zero-padding) stay."""
    month, number = release_id.split(".")
    return f"{month}.9{number[1:]}"


def fewshot_ids(release: tuple[str, ...], present: set[str]) -> tuple[str, ...]:
    """The release's few-shot ids, or the bundled sample's stand-ins when the source holds those instead."""
    stand_ins = tuple(sample_stand_in(i) for i in release)
    if not set(release) <= present and set(stand_ins) <= present:
        return stand_ins
    return release


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


def clean(value: Any, normalize: bool, where: str = "record", key: str = "text") -> str:
    """A text field (None -> ""), whitespace-normalised when ``normalize``; a non-string is refused."""
    value = text(value, where, key) or ""
    return " ".join(value.split()) if normalize else value


def _flatten(value: Any, where: str, key: str) -> list[str]:
    """Strings of a string, a list of strings or a list of lists of strings (the release mixes them)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise SciprobeError(f"{where}: field {key!r} must be text or a list of text, got {shown(value)}")
    out: list[str] = []
    for item in value:
        if isinstance(item, list):
            out.extend(text_list(item, where, key))
        else:
            out.append(text(item, where, key, required=True))  # type: ignore[arg-type]
    return out


def _records(path: Path) -> list[tuple[str, dict]]:
    if not path.is_file():
        config = next((c for c, name in FILES.items() if name == path.name), None)
        needed = f", needed by config {config}" if config else ""
        raise SciprobeError(f"missing IDRBench source file {path}{needed}")
    return json_records(path)


def _label(value: Any, where: str) -> int:
    if not isinstance(value, bool):
        raise SciprobeError(f"{where}: y_true must be true/false, got {shown(value)}")
    return int(value)


def _unique(rows: list[dict], places: list[str]) -> list[dict]:
    check_unique_ids(zip((r["id"] for r in rows), places))
    return rows


# ---------------------------------------------------------------- IPI

def ipi_rows(source: Path, normalize: bool) -> list[dict]:
    path = source / IPI_FILE
    rows, places = [], []
    for where, rec in _records(path):
        rid = _id(get_field(rec, "id", where), where, "id")
        categories = _flatten(rec.get("categories"), where, "categories")
        own_date = parse_release_date(rec.get("date"), where)
        month = arxiv_month(rid)
        rows.append({
            "id": rid,
            "title": clean(get_field(rec, "title", where), normalize, where, "title"),
            "abstract": clean(get_field(rec, "abstract", where), normalize, where, "abstract"),
            "categories": categories,
            "disciplines": disciplines_of(categories),
            "label": _label(get_field(rec, "y_true", where), where),
            "date": own_date.iso if own_date else month,
            "date_precision": own_date.precision if own_date else ("month" if month else None),
        })
        places.append(where)
    chosen = set(fewshot_ids(IPI_FEWSHOT_IDS, {r["id"] for r in rows}))
    for row in rows:
        row["is_fewshot_example"] = row["id"] in chosen
    return _unique(rows, places)


def ipi_fewshot(rows: list[dict]) -> list[dict]:
    by_id = {r["id"]: r for r in rows}
    chosen = fewshot_ids(IPI_FEWSHOT_IDS, set(by_id))
    missing = [i for i in chosen if i not in by_id]
    if missing:
        raise SciprobeError(f"IPI few-shot example ids not found in the source: {', '.join(missing)}")
    return [by_id[i] for i in chosen]


# ---------------------------------------------------------------- I3

def _side(rec: Mapping, side: str, normalize: bool, where: str) -> list[dict]:
    titles = text_list(rec.get(f"{side}_title"), where, f"{side}_title")
    abstracts = text_list(rec.get(f"{side}_abstract"), where, f"{side}_abstract")
    ids = [_id(x, where, f"{side}_id") for x in _flatten(rec.get(f"{side}_id"), where, f"{side}_id")]
    ids += [""] * (len(titles) - len(ids))  # fewer ids than papers occurs
    abstracts += [""] * (len(titles) - len(abstracts))
    return [{"id": ids[k], "title": clean(titles[k], normalize), "abstract": clean(abstracts[k], normalize)}
            for k in range(len(titles))]


def _i3_row(rec: Mapping, where: str, normalize: bool) -> dict:
    rid = _id(get_field(rec, "id", where), where, "id")
    label = _label(get_field(rec, "y_true", where), where)
    side_b, side_c = _side(rec, "b", normalize, where), _side(rec, "c", normalize, where)
    if not side_b or not side_c:
        raise SciprobeError(f"{where}: both sides need at least one paper")
    b_cats = _flatten(rec.get("b_categories"), where, "b_categories")
    c_cats = _flatten(rec.get("c_categories"), where, "c_categories")
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
        "explanation": clean(rec.get("explanation"), normalize, where, "explanation"),
        "research_type": text(rec.get("research_type"), where, "research_type"),
        "label": label,
        "date": date,
        "date_precision": "month" if date else None,
    }


def i3_rows(source: Path, config: str, normalize: bool) -> list[dict]:
    records = _records(source / I3_FILES[config])
    rows = [_i3_row(rec, where, normalize) for where, rec in records]
    flagged = set(fewshot_ids(I3_FEWSHOT_POSITIVE_IDS, {r["id"] for r in rows}))
    if config == "i3_set1":
        flagged |= set(I3_FEWSHOT_NEGATIVE_SIDES)
    for row in rows:
        row["is_fewshot_example"] = row["id"] in flagged
    return _unique(rows, [w for w, _ in records])


def i3_fewshot(source: Path, normalize: bool) -> list[dict]:
    """The three fixed I3 examples, always taken from Set 1 (the third pairs two Set-1 negatives' side b)."""
    rows = {r["id"]: r for r in i3_rows(source, "i3_set1", normalize)}
    positives = fewshot_ids(I3_FEWSHOT_POSITIVE_IDS, set(rows))
    needed = [*positives, *I3_FEWSHOT_NEGATIVE_SIDES]
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
    return [rows[i] for i in positives] + [synthetic]


# ---------------------------------------------------------------- I2R

def release_files(source: Path, config: str) -> list[Path]:
    """The file(s) of ``config``: the single file of the pin, else the part files of older commits, in part order."""
    from sciprobe.data.doctor import files_of

    (spec,) = (f for f in PINNED.files if f.name == FILES[config])
    files = files_of(source, spec)
    if not files:
        older = f" (or the part files {spec.parts})" if spec.parts else ""
        raise SciprobeError(f"missing IDRBench source file {source / spec.name}{older}, needed by config {config}")
    return files


def _mapping(value: Any, where: str, key: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise SciprobeError(f"{where}: field {key!r} must be an object, got {shown(value)}")
    return value


def _i2r_row(rec: Mapping, where: str, normalize: bool) -> dict:
    pa_id = _id(get_field(rec, "id", where), where, "id")
    target = _mapping(get_field(rec, "target_paper", where), where, "target_paper")
    pool = _mapping(get_field(rec, "list", where), where, "list")
    t_titles = text_list(target.get("title"), where, "target_paper.title")
    d_titles = text_list(pool.get("title"), where, "list.title")
    if not t_titles:
        raise SciprobeError(f"{where}: target_paper has no title")
    t_ids = [_id(x, where, "target_paper.id") for x in _flatten(target.get("id"), where, "target_paper.id")]
    t_ids += [""] * (len(t_titles) - len(t_ids))
    t_abs = text_list(target.get("abstract"), where, "target_paper.abstract") + [""] * len(t_titles)
    d_abs = text_list(pool.get("abstract"), where, "list.abstract") + [""] * len(d_titles)
    seed_cats = _flatten(rec.get("start_categories"), where, "start_categories")
    start_id = _id(rec.get("start_id"), where, "start_id")
    date = arxiv_month(pa_id)
    return {
        "id": f"{pa_id}-{start_id}",
        "pa_id": pa_id,
        "seed": {"id": start_id, "title": clean(rec.get("start_title"), normalize, where, "start_title"),
                 "abstract": clean(rec.get("start_abstract"), normalize, where, "start_abstract"),
                 "categories": seed_cats, "disciplines": disciplines_of(seed_cats)},
        "targets": [{"id": t_ids[k], "title": clean(t_titles[k], normalize),
                     "abstract": clean(t_abs[k], normalize)} for k in range(len(t_titles))],
        "target_categories": _flatten(target.get("categories"), where, "target_paper.categories"),
        "distractors": [{"title": clean(d_titles[k], normalize), "abstract": clean(d_abs[k], normalize)}
                        for k in range(len(d_titles))],
        "n_players": len(t_titles) + len(d_titles),
        "research_type": text(rec.get("research_type"), where, "research_type"),
        "date": date,
        "date_precision": "month" if date else None,
    }


def i2r_rows(source: Path, normalize: bool, config: str = "i2r") -> list[dict]:
    rows, places = [], []
    for path in release_files(source, config):
        for where, rec in _records(path):
            rows.append(_i2r_row(rec, where, normalize))
            places.append(where)
    return _unique(rows, places)


# ---------------------------------------------------------------- idea generation

def idea_rows(source: Path, normalize: bool) -> list[dict]:
    """``data_exp_4_1.json``: one (side b, side c) pair per row, the I3 schema. Each negative repeats the P_A id of
    the positive it derives from, so rows are keyed ``<P_A>`` (the annotated pair) and ``<P_A>-neg-<k>``."""
    records = _records(source / FILES["idea_generation"])
    rows, places, negatives = [], [], {}
    for where, rec in records:
        row = _i3_row(rec, where, normalize)
        pa_id = _id(get_field(rec, "id", where), where, "id")
        if not row["label"]:
            negatives[pa_id] = negatives.get(pa_id, 0) + 1
            row["id"] = f"{pa_id}-neg-{negatives[pa_id]}"
        row["pa_id"] = pa_id
        row["date"] = arxiv_month(pa_id)
        row["date_precision"] = "month" if row["date"] else None
        rows.append(row)
        places.append(where)
    return _unique(rows, places)


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
    elif config in I2R_CONFIGS:
        yield "test", i2r_rows(source, normalize, config)
    elif config == "idea_generation":
        yield "test", idea_rows(source, normalize)
    else:
        raise SciprobeError(f"unknown IDRBench config {config!r}")
