"""SciTaste-Bench ``pure_qa`` prompt in sciprobe's own wording (spec ``scitaste.md`` §2.1, §2.2, §3, §6.17–§6.18).

The paper's verbatim prompts (Appendix C) are missing; only the contract is known: a senior-reviewer role,
each of the seven dimensions scored 0–100, a weighted composite, and a strict JSON reply. The user message
follows the paper's worked example: ``Discipline`` / ``Title`` / ``Abstract`` / ``Identifier``, one per line.

Decisions (recorded in the card): only the two published weights are given to the model (A 29.5 %, G 15.3 %;
B–F share the remaining 55.2 % and the prompt says the split is not published); abstracts are not truncated.
``PROMPT_VERSION`` changes whenever the wording changes (the paper fixes the prompt across models).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from sciprobe.benchmarks.scitaste.source import discipline_name
from sciprobe.benchmarks.scitaste.scoring.taste_dimensions import DIMENSIONS

PROMPT_VERSION = "scitaste-pure_qa-v1"

DIMENSION_GUIDE: dict[str, str] = {
    "citation_impact": "how strongly and how fast the paper is cited compared with papers of its field (weight 29.5%)",
    "knowledge_breadth": "how wide the paper's reference base is: number, fields, journals and age span of references",
    "semantic_novelty": "how far the paper's content sits from its nearest neighbours and from the work it cites",
    "disruptiveness": "whether later work cites this paper instead of its predecessors (CD-index style disruption)",
    "conceptual_innovation": "how central and how spread the paper's concepts and topics are",
    "team_collaboration": "the size and international reach of the author team",
    "journal_impact": "standing of the publishing venue: impact factor, JCR quartile, CAS zone (weight 15.3%)",
}

SYSTEM = (
    "You act as an experienced reviewer who assesses the research taste and long-term standing of scientific "
    "papers from bibliometric evidence you can infer. For the paper below, rate each of seven dimensions on a "
    "0-100 scale (100 = best among papers of the same discipline), then give one overall composite score "
    "(0-100) that weights the dimensions. Citation impact carries 29.5% and journal impact 15.3% of the "
    "composite; the other five dimensions share the remaining 55.2% (their individual split is not published, "
    "so weigh them by your own judgement).\n\nDimensions (use exactly these keys):\n"
    + "\n".join(f"- {key}: {text}" for key, text in DIMENSION_GUIDE.items())
    + "\n\nReply with one JSON object and nothing else, in this shape:\n"
    '{"score": <composite 0-100>, "dimensions": {'
    + ", ".join(f'"{k}": <0-100>' for k in DIMENSIONS)
    + '}, "reasoning": "<two or three sentences>", "confidence": <0-1, how sure you are>}'
)


def user_message(row: Mapping) -> str:
    return (f"Discipline: {discipline_name(row['discipline'])}\nTitle: {row['title']}\nAbstract: {row['abstract']}\n"
            f"Identifier: {row['bibcode']}")


def pure_qa_messages(row: Mapping, fewshot: Sequence[Mapping] = ()) -> list[dict[str, str]]:
    """System + user messages for one paper (``pure_qa`` is zero-shot; ``fewshot`` is ignored)."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user_message(row)}]
