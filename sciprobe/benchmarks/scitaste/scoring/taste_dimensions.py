"""The names SciTaste-Bench's Academic Taste Index is made of (spec ``scitaste.md`` §1.6-§1.7): constants only, so
declarations, prompts and parsers can read them without importing the scorer
(:mod:`sciprobe.benchmarks.scitaste.scoring.composite`,
which needs numpy)."""

from __future__ import annotations

#: The seven ATI dimensions in letter order A–G (spec §1.6); stable English keys.
DIMENSIONS: tuple[str, ...] = ("citation_impact", "knowledge_breadth", "semantic_novelty", "disruptiveness",
                               "conceptual_innovation", "team_collaboration", "journal_impact")
COLUMNS: tuple[str, ...] = ("total", *DIMENSIONS)
#: The two weights the paper states (37.99/128.86 and 19.73/128.86, spec §1.7).
KNOWN_WEIGHTS: dict[str, float] = {"citation_impact": 37.99 / 128.86, "journal_impact": 19.73 / 128.86}
