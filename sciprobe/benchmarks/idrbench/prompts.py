"""IDRBench prompts in sciprobe's own wording (shared/spec/idrbench.md §4).

Only the structure and the answer-format keys follow the official prompts exactly (``Your verdict:``,
``Your reason:``, ``Confidence score:``, ``Subject:``, ``Your choice:``), because the official regexes
read them. Placement follows the official code: 0-shot prompts put the instance before the answer
template; few-shot I3 puts the examples first and the instance last; few-shot IPI puts the instance before
the subject list and the template.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from sciprobe.benchmarks.idrbench.source import DISCIPLINES

Row = Mapping

SYSTEM = (
    "You are a scientist who designs research projects that span several fields. Draw on what you know "
    "about many different areas of science to judge, constructively, whether such projects can work."
)
# The official runs send a stricter variant by default (config ``critical: True``).
SYSTEM_CRITICAL = SYSTEM + (
    " Be demanding and careful: when a proposed combination of ideas looks weak or poorly matched, "
    "say so and give a negative verdict."
)

IDR_DEFINITION = (
    "Interdisciplinary research (IDR), in the sense used by the US National Academies, is research by teams "
    "or individuals that brings together information, data, methods, tools, viewpoints, concepts or theories "
    "from two or more disciplines or bodies of specialised knowledge, in order to deepen understanding or to "
    "solve problems that lie beyond the reach of any single discipline."
)
CONFIDENCE_NOTE = (
    "Your confidence score is how sure you are of your verdict, as a whole-number percentage from 0 "
    "(pure guess) to 100 (certain)."
)
NO_MARKDOWN = "Fill in the template below exactly. Do not use markdown; put each field on its own line."

# Our own reasons for the three fixed I3 examples (labels and confidences as in the paper's Tables 16-17).
I3_FEWSHOT_ANSWERS = (
    ("Yes", "Imaging methods from machine vision can be applied to the clinical questions of the other field; "
            "the combination is feasible, new and useful.", 92),
    ("Yes", "A biological sensing mechanism can be analysed and engineered with communication theory, giving a "
            "workable and original research direction.", 85),
    ("No", "The two papers address unrelated problems and share no method or question that a joint project "
           "could build on.", 90),
)


def system_message(critical: bool = True) -> dict[str, str]:
    return {"role": "system", "content": SYSTEM_CRITICAL if critical else SYSTEM}


def _paper_line(paper: Mapping) -> str:
    return f"Title: {paper['title']}; Abstract: {paper['abstract']}"


def _side_block(papers: Sequence[Mapping]) -> str:
    return "\n".join(_paper_line(p) for p in papers)


def _example_side(papers: Sequence[Mapping]) -> str:
    return "\n".join(f'- title: "{p["title"]}"\n- abstract: "{p["abstract"]}"' for p in papers)


def _discipline_list() -> str:
    return "[" + ", ".join(f'"{d}"' for d in DISCIPLINES) + "]"


IPI_TEMPLATE = (
    "Your verdict: {Yes or No}\n"
    "Confidence score: {a whole number from 0 to 100}\n"
    'Subject: {a list in square brackets of one or more of the disciplines above, each in double quotes}'
)
I3_TEMPLATE = (
    "Your verdict: {Yes or No}\n"
    "Your reason: {one paragraph of fewer than 50 words}\n"
    "Confidence score: {a whole number from 0 to 100}"
)
I2R_TEMPLATE = (
    "Your choice: {Paper 1 or Paper 2}\n"
    "Confidence score: {a whole number from 0 to 100}"
)


def ipi_messages(row: Row, examples: Sequence[Row] = (), critical: bool = True) -> list[dict[str, str]]:
    parts = [IDR_DEFINITION,
             "Decide whether the paper below is an interdisciplinary research paper in this sense. "
             "Answer Yes if it is, No if it belongs to a single discipline."]
    if examples:
        parts.append("Examples:")
        for ex in examples:
            parts.append(f"Title: {ex['title']}\nAbstract: {ex['abstract']}\n"
                         f"Your verdict: {'Yes' if ex['label'] else 'No'}")
        parts.append(f"Paper to judge:\nTitle: {row['title']}\nAbstract: {row['abstract']}")
    else:
        parts.append(f"Title: {row['title']}\nAbstract: {row['abstract']}")
        parts.append("Also name the discipline or disciplines the paper belongs to, choosing one or more from "
                     "this list:")
    parts.append(_discipline_list())
    parts += [CONFIDENCE_NOTE, NO_MARKDOWN, IPI_TEMPLATE]
    return [system_message(critical), {"role": "user", "content": "\n\n".join(parts)}]


def i3_messages(row: Row, examples: Sequence[Row] = (), critical: bool = True) -> list[dict[str, str]]:
    task = ("Below are papers from two disciplines. Judge whether integrating their key ideas would make a "
            "valid interdisciplinary research idea: it must be interdisciplinary in the sense above, feasible, "
            "novel and useful. Answer Yes only if it meets all of these standards, otherwise No.")
    instance = (f"Papers in Discipline 1:\n{_side_block(row['side_b'])}\n\n"
                f"Papers in Discipline 2:\n{_side_block(row['side_c'])}")
    parts = [IDR_DEFINITION, task]
    if examples:
        parts.append("Examples:")
        for ex, (verdict, reason, conf) in zip(examples, I3_FEWSHOT_ANSWERS):
            parts.append(f"Discipline 1:\n{_example_side(ex['side_b'])}\n"
                         f"Discipline 2:\n{_example_side(ex['side_c'])}\n"
                         f"Your verdict: {verdict}\nYour reason: {reason}\nConfidence score: {conf}")
        parts += [CONFIDENCE_NOTE, NO_MARKDOWN, I3_TEMPLATE, "Now judge these papers:\n" + instance]
    else:
        parts += [instance, CONFIDENCE_NOTE, NO_MARKDOWN, I3_TEMPLATE]
    return [system_message(critical), {"role": "user", "content": "\n\n".join(parts)}]


def i2r_comparison_messages(seed: Mapping, paper_1: Mapping, paper_2: Mapping,
                            critical: bool = True) -> list[dict[str, str]]:
    content = "\n\n".join([
        IDR_DEFINITION,
        "Here is a main paper and two candidate papers. Which candidate would combine better with the main "
        "paper into a valid interdisciplinary research idea (interdisciplinary, feasible, novel and useful)?",
        f"Main paper:\nTitle: {seed['title']}\nAbstract: {seed['abstract']}",
        f"Paper 1:\nTitle: {paper_1['title']}\nAbstract: {paper_1['abstract']}",
        f"Paper 2:\nTitle: {paper_2['title']}\nAbstract: {paper_2['abstract']}",
        CONFIDENCE_NOTE, NO_MARKDOWN, I2R_TEMPLATE,
    ])
    return [system_message(critical), {"role": "user", "content": content}]
