"""Synthetic SciTaste records in the release format (spec ``scitaste.md`` §1.5; no reference data exists).

Everything here is invented: titles, abstracts, identifiers, journals and scores. The gold composite of each
record is ``Σ w·dims`` with ``FIXTURE_WEIGHTS``, whose A and G entries are the paper's two published weights and
whose B–F entries are an **arbitrary** split of the remaining 0.552072 chosen for this fixture (not the
paper's Table 3). Tests use them to check that :func:`ati.solve_weights` recovers a weight vector exactly.
The bundled sample ``sciprobe/benchmarks/scitaste/sample`` is ``write_release(dir)`` with the defaults.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from sciprobe.benchmarks.scitaste.source import DISCIPLINES
from sciprobe.benchmarks.scitaste.scoring.composite import DIMENSIONS, KNOWN_WEIGHTS

_REST = 1.0 - sum(KNOWN_WEIGHTS.values())
#: Invented for the fixture (B–F shares are arbitrary); only A and G are the paper's.
FIXTURE_WEIGHTS: dict[str, float] = {
    "citation_impact": KNOWN_WEIGHTS["citation_impact"], "knowledge_breadth": 0.24 * _REST,
    "semantic_novelty": 0.16 * _REST, "disruptiveness": 0.20 * _REST, "conceptual_innovation": 0.22 * _REST,
    "team_collaboration": 0.18 * _REST, "journal_impact": KNOWN_WEIGHTS["journal_impact"],
}
PHYSICS_SUBFIELDS = ("classical physics", "condensed matter physics", "quantum physics", "applied physics",
                     "high energy physics", "computational physics", "interdisciplinary physics", "astrophysics")
_TOPICS = ("transport", "stability", "scaling", "inference", "synthesis", "networks", "dynamics", "estimation")
_TIERS = ("Q1", "Q2", "Q3", "Q4")


def _record(rng: np.random.Generator, discipline: str, pool: str, index: int) -> dict[str, Any]:
    year = int(rng.integers(1996, 2023))
    topic = _TOPICS[int(rng.integers(len(_TOPICS)))]
    n_sub = 8 if discipline != "medicine" else 7
    sub = int(rng.integers(n_sub))
    dims = {d: round(float(rng.uniform(3, 97)), 2) for d in DIMENSIONS}
    total = round(sum(FIXTURE_WEIGHTS[d] * v for d, v in dims.items()), 2)
    physics = discipline == "physics"
    tag = f"{discipline[:4]}{pool[0]}{index:04d}"
    bibcode = f"{year}SynPh{index:04d}{pool[0].upper()}" if physics else f"SYN-{tag}"
    return {
        "bibcode": bibcode,
        "openalex_id": f"W9{zlib.crc32(tag.encode()) % 10**9:09d}" if pool == "selected" else None,
        "doi": f"10.0000/synthetic.{tag}",
        "title": f"A synthetic study of {topic} in {discipline} ({tag})",
        "abstract": f"This invented abstract describes a made-up {discipline} paper about {topic}. It exists only to "
                    f"exercise the sciprobe SciTaste pipeline and reports no real result.",
        "year": year,
        "discipline": discipline,
        "subcategory_id": None if (physics and pool == "backup" and index % 3 == 0) else f"{discipline}-{sub + 1}",
        "subcategory_name": (PHYSICS_SUBFIELDS[sub] if physics else f"{discipline} subfield {sub + 1}"),
        "journal_name": f"Synthetic Journal of {discipline.capitalize()} {1 + index % 4}",
        "journal_tier": _TIERS[index % 4],
        "innovation_score": total,
        "dimension_scores": dims,
    }


def release_records(n_selected: int = 4, n_backup: int = 3, seed: int = 7) -> dict[str, list[dict[str, Any]]]:
    """``{"selected": [...], "backup": [...]}`` with ``n_*`` records per discipline, deterministic for a seed."""
    rng = np.random.default_rng(seed)
    return {pool: [_record(rng, d, pool, i) for d in DISCIPLINES for i in range(n)]
            for pool, n in (("selected", n_selected), ("backup", n_backup))}


def write_release(out_dir: Path, n_selected: int = 4, n_backup: int = 3, seed: int = 7) -> Path:
    """Write ``selected.jsonl`` and ``backup.jsonl`` (one JSON object per line) into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for pool, records in release_records(n_selected, n_backup, seed).items():
        lines = [json.dumps(r, ensure_ascii=False) for r in records]
        (out_dir / f"{pool}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    return out_dir
