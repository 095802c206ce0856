"""Read SciTaste-Bench release files into normalised rows (spec ``scitaste.md`` §1.5, §1.6, §6.12–§6.15, §8).

Release layout (**[PROPOSAL]**; the hub dataset ``skylenage/SciTaste-benchmark`` is unverified): one file per
pool, ``selected`` and ``backup``, as ``<pool>.jsonl``, ``<pool>.json`` (a JSON list) or
``<pool>.parquet`` / ``data/<pool>-*.parquet``. One record per paper with ``bibcode`` (ADS bibcode or internal
work id), ``openalex_id``, ``doi``, ``title``, ``abstract``, ``year``, ``discipline``, ``subcategory_id``,
``subcategory_name``, ``journal_name``, ``journal_tier``, the gold composite ``innovation_score`` and
``dimension_scores`` keyed by the seven stable English keys. Alternative names seen in the spec are accepted
(``gold_total``/``composite_score``/``total_score`` and ``gold_dims``/``dimensions``; dimension keys at the top
level) so a renamed release still reads; anything else missing is a one-line error naming file and record.

Rows: ``id`` (= ``bibcode``, the resume key; must be unique across both pools), the fields above,
``gold_total``, ``gold_dims`` (struct of seven), ``pool``, ``date`` = ``YYYY-01-01`` with
``date_precision = "year"`` (the release has only the year; no year filter is applied, §6.13).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterator, Mapping

from sciprobe.core.errors import SciprobeError
from sciprobe.data.release_files import check_unique_ids, json_records, release_year, shown, text
from sciprobe.benchmarks.scitaste.scoring.taste_dimensions import DIMENSIONS

DISCIPLINES: tuple[str, ...] = ("physics", "mathematics", "chemistry", "biology", "medicine", "finance")
POOLS: tuple[str, ...] = ("selected", "backup")

TOTAL_KEYS: tuple[str, ...] = ("innovation_score", "gold_total", "composite_score", "total_score", "ati_score")
DIMS_KEYS: tuple[str, ...] = ("dimension_scores", "gold_dims", "dimensions")
#: Alternative dimension names (lower-case, underscores) -> stable key.
DIMENSION_ALIASES: dict[str, str] = {
    "citation_dynamics": "citation_impact", "citations": "citation_impact", "citation": "citation_impact",
    "breadth": "knowledge_breadth", "reference_breadth": "knowledge_breadth",
    "novelty": "semantic_novelty", "disruption": "disruptiveness", "disruptive": "disruptiveness",
    "concept_innovation": "conceptual_innovation", "conceptual_novelty": "conceptual_innovation",
    "collaboration": "team_collaboration", "team": "team_collaboration",
    "journal": "journal_impact", "venue_impact": "journal_impact",
    **{letter: key for letter, key in zip("abcdefg", DIMENSIONS)},
}


def _normal(name: Any) -> str:
    return "_".join(str(name).strip().lower().replace("-", " ").split())


def dimension_key(name: str) -> str | None:
    """Stable key of a dimension name, or None when it is not one (``"Citation Dynamics"`` → ``citation_impact``)."""
    key = _normal(name)
    if key in DIMENSIONS:
        return key
    return DIMENSION_ALIASES.get(key)


def discipline_name(value: Any) -> str:
    """Discipline of a row: the name, or the ``ClassLabel`` index a loaded ``Dataset`` row carries."""
    if isinstance(value, int) and not isinstance(value, bool):
        return DISCIPLINES[value]
    return str(value)


def _pool_files(source: Path, pool: str) -> list[Path]:
    for pattern in (f"{pool}.jsonl", f"{pool}.json", f"{pool}.parquet", f"data/{pool}-*.parquet",
                    f"{pool}/*.parquet"):
        found = sorted(source.glob(pattern))
        if found:
            return found
    return []


def _records(path: Path) -> list[tuple[str, dict]]:
    """``(where, record)`` pairs of one pool file (an empty file is an error)."""
    if path.suffix != ".parquet":
        return json_records(path)
    import pyarrow.parquet as pq

    try:
        records = pq.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises several types for unreadable files
        raise SciprobeError(f"cannot read {path.name}: {exc}".replace("\n", " ")) from None
    if not records:
        raise SciprobeError(f"{path.name}: the file has no items")
    return [(f"{path.name} row {i}", record) for i, record in enumerate(records)]


def _score(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SciprobeError(f"{where}: gold score must be a number, got {shown(value)}")
    if not 0.0 <= float(value) <= 100.0:
        raise SciprobeError(f"{where}: gold score {value!r} is outside [0, 100]")
    return float(value)


def _gold_dims(record: Mapping, where: str) -> dict[str, float]:
    raw = next((record[k] for k in DIMS_KEYS if isinstance(record.get(k), Mapping)), None)
    if raw is None:  # flattened release: the stable keys (or the paper's names) at the top level
        raw = {k: v for k, v in record.items() if _normal(k) in DIMENSIONS or _normal(k) == "citation_dynamics"}
    dims: dict[str, float] = {}
    for name, value in raw.items():
        key = dimension_key(name)
        if key is not None:
            dims[key] = _score(value, f"{where} dimension {name!r}")
    missing = [d for d in DIMENSIONS if d not in dims]
    if missing:
        raise SciprobeError(f"{where}: missing dimension scores {', '.join(missing)}")
    return {d: dims[d] for d in DIMENSIONS}


def _text(value: Any, where: str, key: str) -> str | None:
    """A text field, whitespace-normalised; None when absent or blank; a number or a list is refused."""
    value = text(value, where, key)
    return " ".join(value.split()) or None if value is not None else None


def normalize_record(record: Mapping, pool: str, where: str) -> dict[str, Any]:
    """One release record -> one row of the declared features (raises on missing, wrong-typed or invalid
    fields; nothing is coerced)."""
    id_key = next((k for k in ("bibcode", "identifier", "work_id") if record.get(k) not in (None, "")), "bibcode")
    bibcode = _text(record.get(id_key), where, id_key)
    if not bibcode:
        raise SciprobeError(f"{where}: missing bibcode (identifier)")
    for key in ("title", "year", "discipline"):
        if record.get(key) in (None, ""):
            raise SciprobeError(f"{where}: missing field {key!r}")
    total_key = next((k for k in TOTAL_KEYS if k in record), None)
    if total_key is None:
        raise SciprobeError(f"{where}: missing gold composite ({' / '.join(TOTAL_KEYS)})")
    discipline = (_text(record["discipline"], where, "discipline") or "").lower()
    if discipline not in DISCIPLINES:
        raise SciprobeError(f"{where}: unknown discipline {record['discipline']!r}; known: {', '.join(DISCIPLINES)}")
    year = release_year(record["year"], where)
    journal_key = "journal_name" if record.get("journal_name") not in (None, "") else "journal"
    return {
        "id": bibcode,
        "bibcode": bibcode,
        "openalex_id": _text(record.get("openalex_id"), where, "openalex_id"),
        "doi": _text(record.get("doi"), where, "doi"),
        "title": _text(record["title"], where, "title"),
        "abstract": _text(record.get("abstract"), where, "abstract") or "",
        "year": year.start.year,
        "discipline": discipline,
        "subcategory_id": _text(record.get("subcategory_id"), where, "subcategory_id"),
        "subcategory_name": _text(record.get("subcategory_name"), where, "subcategory_name"),
        "journal_name": _text(record.get(journal_key), where, journal_key),
        "journal_tier": _text(record.get("journal_tier"), where, "journal_tier"),
        "gold_total": _score(record[total_key], f"{where} {total_key}"),
        "gold_dims": _gold_dims(record, where),
        "pool": pool,
        "date": year.iso,
        "date_precision": year.precision,
    }


def pool_rows(source: Path, pool: str) -> list[tuple[str, dict[str, Any]]]:
    """``(where, row)`` pairs of one pool, in file order."""
    files = _pool_files(source, pool)
    if not files:
        raise SciprobeError(f"missing SciTaste {pool} file in {source} (expected {pool}.jsonl, {pool}.json or "
                            f"{pool}.parquet)")
    return [(where, normalize_record(record, pool, where)) for path in files for where, record in _records(path)]


def read_source(source: Path, config: str, options: Mapping[str, Any]) -> Iterator[tuple[str, list[dict]]]:
    """Yield ``("test", rows)`` for one config: ``selected``, ``backup`` or one discipline (its selected papers).

    Bibcode uniqueness is checked across both pools whenever both files are present.
    """
    source = Path(source)
    if config not in POOLS and config not in DISCIPLINES:
        raise SciprobeError(f"unknown SciTaste config {config!r}")
    needed = "backup" if config == "backup" else "selected"
    placed = {p: pool_rows(source, p) for p in POOLS if p == needed or _pool_files(source, p)}
    check_unique_ids(((row["id"], where) for rows in placed.values() for where, row in rows), "bibcode")
    pools = {p: [row for _, row in rows] for p, rows in placed.items()}
    if config in POOLS:
        yield "test", pools[config]
    else:
        yield "test", [r for r in pools["selected"] if r["discipline"] == config]


def gold(row: Mapping[str, Any]) -> dict[str, Any]:
    """What a prediction is scored against (discipline included for the per-discipline breakdown)."""
    return {"total": float(row["gold_total"]), "dims": {d: float(row["gold_dims"][d]) for d in DIMENSIONS},
            "discipline": discipline_name(row["discipline"])}
