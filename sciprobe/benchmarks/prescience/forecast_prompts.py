"""Prompts and answer parsers of the PreScience forecasting tasks T2-T7, in sciprobe's own wording (spec
``prescience.md`` §2; upstream prompts are not reproduced).

Where upstream has LLM baselines (the GPT-5 agents of T2 collaborators, T3 prior work, T5 future combination),
the user message follows their setting: one line per author ``- author_id=..., name=...``, a line ``Target
paper cutoff_date: ...`` and each reference as ``--- Reference (corpus_id=...) ---`` / ``Title:`` /
``Abstract:``; the answer is a ranked list of ids (the harness pads it to k = 1000). Instead of tools, the model
gets what the agents would look up, drawn from H^{<t} (:mod:`.forecast_context`). T4 (citations) and T6/T7
(topic counts) have no LLM baseline upstream; their prompts are designed here (see the benchmark README).

**Context budget.** A user message holds at most ``context_chars`` characters (default
:data:`DEFAULT_CONTEXT_CHARS`): the header (task input) first, abstracts clipped to :data:`ABSTRACT_CHARS`, then
each evidence section gets a fixed share of what is left, in order, whole lines only, and at most
``max_candidates`` candidates are listed. Everything left out is recorded per item (``context_cut``:
``{section: {"shown", "total"}}``, ``clipped_abstracts``), so the cut is deterministic and visible.

**Parsing** (the same in every scoring mode; upstream at the pinned commit has no text parser for these tasks:
its ``evaluate.py`` scripts read ranked id lists and JSON numbers, which is what a predictions file gives).

- Rankings. Official (the format the prompt asks for): the last ``Ranking:`` line split on commas. Tolerant:
  the listed candidate ids in order of first mention, each a whole token (``tolerant:candidate_ids``).
- Counts. Official: the last line ``<label>: N`` (``Citations`` / ``Papers``, any case, markdown emphasis, a
  bullet and ``~``/``≈`` allowed around it), N a whole number token (:data:`NUMBER`: optional sign, digits with
  optional comma groups of three, optional decimals; never followed by a letter or digit), anything after it
  ignored. Tolerant (``tolerant:last_line``): the answer's last non-blank line (at most :data:`BARE_LINE_CHARS`
  characters) is N alone, with at most a short label (up to four words and ``:`` or ``=``) before it and the unit
  word (``citations`` / ``papers``) after it. Nothing else is an answer: a number inside prose or glued to
  letters (``8a615714``) is a parse failure (``failed:no_number``), never a forecast.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sciprobe.core.declaration import Parsed

PROMPT_VERSION = "sciprobe-forecast-1"
DEFAULT_CONTEXT_CHARS = 6000
DEFAULT_MAX_CANDIDATES = 40
ABSTRACT_CHARS = 600

RANKING_FORMAT = ("End your answer with one line that starts with `Ranking:` and lists the candidate ids, most "
                  "likely first, separated by commas:\nRanking: <id>, <id>, <id>, ...")
COUNT_FORMAT = "End your answer with one line of the form `{label}: <number>`."


# ---------------------------------------------------------------- context budget
@dataclass
class Budget:
    """Characters left for one user message; what each section had to leave out."""

    limit: int
    used: int = 0
    cut: dict[str, Any] = field(default_factory=dict)

    def fixed(self, text: str) -> str:
        self.used += len(text) + 2  # and the blank line that separates it from the next block
        return text

    def clip(self, text: str, limit: int = ABSTRACT_CHARS) -> str:
        text = " ".join((text or "").split())
        if len(text) <= limit:
            return text
        self.cut["clipped_abstracts"] = self.cut.get("clipped_abstracts", 0) + 1
        return text[:limit].rsplit(" ", 1)[0] + " ..."

    def section(self, name: str, lines: Sequence[str], share: float = 1.0, max_lines: int | None = None,
                min_lines: int = 0) -> list[str]:
        """The leading ``lines`` that fit in ``share`` of the room left (at least ``min_lines``)."""
        room = int(max(0, self.limit - self.used) * share)
        kept: list[str] = []
        size = 0
        for line in lines[:max_lines] if max_lines is not None else lines:
            if len(kept) >= min_lines and size + len(line) + 1 > room:
                break
            kept.append(line)
            size += len(line) + 1
        self.used += size
        if len(kept) < len(lines):
            self.cut[name] = {"shown": len(kept), "total": len(lines)}
        return kept


def _messages(system: str, blocks: Iterable[str]) -> list[dict[str, str]]:
    return [{"role": "system", "content": system},
            {"role": "user", "content": "\n\n".join(b for b in blocks if b)}]


def _author_line(author: dict[str, Any]) -> str:
    return f"- author_id={author['author_id']}, name={author.get('name') or ''}"


def _count(n: int | None, word: str) -> str:
    return "unknown " + word + "s" if n is None else f"{n} {word}{'' if n == 1 else 's'}"


def _candidate_block(budget: Budget, candidates: Sequence[dict[str, Any]], key: str, max_candidates: int,
                     line: Any) -> tuple[list[str], str]:
    """(listed ids, the listing): the strongest ``max_candidates`` that fit 60% of the room left, in id order."""
    cands = list(candidates[:max_candidates])
    if len(candidates) > max_candidates:
        budget.cut["candidates_over_max"] = {"shown": max_candidates, "total": len(candidates)}
    shown = budget.section("candidates", [line(c) for c in cands], share=0.6, min_lines=1)
    ids = sorted(c[key] for c in cands[:len(shown)])
    by_id = {c[key]: line(c) for c in cands}
    return ids, "\n".join(by_id[i] for i in ids)


# ---------------------------------------------------------------- T2 collaborators
COLLABORATOR_SYSTEM = (
    "You forecast scientific collaborations. You are shown one researcher (the seed author), the papers they "
    "published before a cutoff date, and candidate researchers drawn from that record. Rank the candidates by "
    "how likely each one is to co-author the seed author's next paper, published on or after the cutoff date. "
    "Use only the information shown.")


def collaborator_messages(facts: Any, budget: Budget, max_candidates: int) -> tuple[list[dict[str, str]], list[str]]:
    header = budget.fixed("Seed author:\n" + _author_line(facts.seed) + f"\nTarget paper cutoff_date: {facts.cutoff}")
    answer = budget.fixed(RANKING_FORMAT)

    def cand_line(c: dict[str, Any]) -> str:
        evidence = (f"{_count(c['joint_papers'], 'joint paper')}, latest {c['last_joint']}" if c["hop"] == 1 else
                    f"no joint paper, co-author on {_count(c['via_coauthors'], 'paper')} of the seed's co-authors")
        return f"- {c['author_id']}: {c['name']}; {evidence}; {_count(c['papers_before'], 'paper')} before the cutoff"

    titles = [budget.fixed("Papers of the seed author before the cutoff (newest first):"),
              budget.fixed("Candidate co-authors (author_id: name; evidence from the record):")]
    ids, listing = _candidate_block(budget, facts.candidates, "author_id", max_candidates, cand_line)

    def paper_line(p: dict[str, Any]) -> str:
        names = ", ".join(f"{a['name']} ({a['author_id']})" for a in p["coauthors"]) or "none"
        return f"- [{p['date']}] {p['title']}. Co-authors: {names}"

    papers = budget.section("seed_papers", [paper_line(p) for p in facts.papers])
    blocks = [header, titles[0] + "\n" + ("\n".join(papers) or "(none shown)"),
              titles[1] + "\n" + listing, answer]
    return _messages(COLLABORATOR_SYSTEM, blocks), ids


# ---------------------------------------------------------------- T3 prior work
PRIOR_WORK_SYSTEM = (
    "You forecast which earlier papers a research team will build on. You are shown the authors of a "
    "forthcoming paper, their recent papers before its cutoff date, and candidate earlier papers. Rank the "
    "candidates by how likely the team's next paper, published on or after the cutoff date, is to cite each one "
    "as a key (highly influential) reference. Use only the information shown.")


def prior_work_messages(facts: Any, budget: Budget, max_candidates: int) -> tuple[list[dict[str, str]], list[str]]:
    header = budget.fixed("Authors of the target paper:\n" + "\n".join(_author_line(a) for a in facts.authors)
                          + f"\nTarget paper cutoff_date: {facts.cutoff}")
    answer = budget.fixed(RANKING_FORMAT)

    def cand_line(c: dict[str, Any]) -> str:
        team = "; a paper of the team" if c["team_paper"] else ""
        cited = _count(c["team_citations"], "recent paper")
        before = _count(c["citations_before"], "influential citation")
        return (f"- {c['corpus_id']}: [{c['date']}] {c['title']}; cited by {cited} of the team; {before} before the "
                f"cutoff{team}")

    titles = [budget.fixed("Recent papers of the authors before the cutoff (newest first):"),
              budget.fixed("Candidate earlier papers (corpus_id: [date] title; evidence from the record):")]
    ids, listing = _candidate_block(budget, facts.candidates, "corpus_id", max_candidates, cand_line)
    papers_by_id: dict[str, dict[str, Any]] = {}
    written_by: dict[str, list[str]] = {}
    for author in facts.authors:
        for p in facts.papers.get(author["author_id"], []):
            papers_by_id.setdefault(p["corpus_id"], p)
            written_by.setdefault(p["corpus_id"], []).append(author["author_id"])
    lines = [f"- [{p['date']}] {p['title']} (by {', '.join(written_by[cid])}; key references: "
             f"{', '.join(p['references']) or 'none in the record'})"
             for cid, p in sorted(papers_by_id.items(), key=lambda kv: (kv[1]["date"], kv[0]), reverse=True)]
    papers = budget.section("team_papers", lines)
    blocks = [header, titles[0] + "\n" + ("\n".join(papers) or "(none shown)"),
              titles[1] + "\n" + listing, answer]
    return _messages(PRIOR_WORK_SYSTEM, blocks), ids


# ---------------------------------------------------------------- T4 citations (impact)
CITATION_SYSTEM = (
    "You forecast the research impact of new papers. You are shown a paper as it appeared on arXiv, its "
    "authors' records and the papers it builds on, all as of its publication date. Forecast how many citations "
    "the paper receives in its first 12 months (the cumulative count 12 months after publication).")


def citation_messages(facts: Any, budget: Budget) -> list[dict[str, str]]:
    t = facts.target
    header = budget.fixed(f"Paper (published {t['date']}; categories: {', '.join(t['categories']) or 'none'}):\n"
                          f"Title: {t['title']}\nAbstract: {budget.clip(t['abstract'])}")
    answer = budget.fixed(COUNT_FORMAT.format(label="Citations"))
    titles = [budget.fixed("Authors at publication (h-index, papers, citations):"),
              budget.fixed("Key references (citations at the paper's publication):")]
    authors = budget.section("authors", [
        f"- {a['name']}: h-index {a['h_index'] if a['h_index'] is not None else 'unknown'}, "
        f"{_count(a['num_papers'], 'paper')}, {_count(a['num_citations'], 'citation')}" for a in facts.authors],
        share=0.5)
    refs = budget.section("references", [
        f"- {r['title'] or r['corpus_id']}; {_count(r['num_citations'], 'citation')} at publication"
        for r in facts.references])
    blocks = [header, titles[0] + "\n" + ("\n".join(authors) or "(none shown)"),
              titles[1] + "\n" + ("\n".join(refs) or "(none shown)"), answer]
    return _messages(CITATION_SYSTEM, blocks)


# ---------------------------------------------------------------- T5 future combination
COMBINATION_SYSTEM = (
    "You forecast how science recombines earlier work. You are shown a new paper P with the key references it "
    "builds on, and candidate earlier papers. Papers that later cite P as a key reference also cite other "
    "earlier papers together with it. Rank the candidates by how likely papers published in the eight months "
    "after P are to cite them together with P. Use only the information shown.")


def combination_messages(facts: Any, budget: Budget, max_candidates: int) -> tuple[list[dict[str, str]], list[str]]:
    t = facts.target
    header = budget.fixed(
        f"Target paper (corpus_id={t['corpus_id']}; cutoff_date: {t['date']}):\nTitle: {t['title']}\n"
        f"Abstract: {budget.clip(t['abstract'])}\nTopics: {'; '.join(t['topics']) or 'none'}\n"
        f"Categories: {', '.join(t['categories']) or 'none'}")
    answer = budget.fixed(RANKING_FORMAT)

    def cand_line(c: dict[str, Any]) -> str:
        return (f"- {c['corpus_id']}: [{c['date']}] {c['title']}; co-cited {_count(c['cocitations'], 'time')} with "
                f"P's references before P; {_count(c['citations_before'], 'influential citation')} before P")

    title = budget.fixed("Candidate earlier papers (corpus_id: [date] title; evidence from the record):")
    ids, listing = _candidate_block(budget, facts.candidates, "corpus_id", max_candidates, cand_line)
    refs = budget.section("references", [
        f"--- Reference (corpus_id={r['corpus_id']}) ---\nTitle: {r['title']}\n"
        f"Abstract: {budget.clip(r['abstract'], 300)}"
        for r in facts.references])
    blocks = [header, "\n".join(refs), title + "\n" + listing, answer]
    return _messages(COMBINATION_SYSTEM, blocks), ids


# ---------------------------------------------------------------- T6 / T7 topic trends
TREND_SYSTEM = (
    "You forecast research trends. You are shown how many arXiv AI papers were labelled with a research topic "
    "(or with both topics of a pair) in each month of a past year, and how many topic-labelled papers appeared "
    "each month overall. Forecast how many papers will be labelled with it in a later window.")


def trend_messages(facts: Any, budget: Budget) -> list[dict[str, str]]:
    def series(values: Sequence[int]) -> str:
        return ", ".join(str(v) for v in values) + f" (total {sum(values)})"

    what = (f"Topic: {facts.topics[0]}" if len(facts.topics) == 1 else
            "Topic pair: " + " + ".join(facts.topics) + " (papers labelled with both)")
    unit = "this topic" if len(facts.topics) == 1 else "both topics"
    lines = [what, f"History: {facts.history[0]} to {facts.history[1]}, 12 months of 30 days, oldest first.",
             f"Papers with {unit} per month: {series(facts.monthly)}"]
    for topic, monthly in zip(facts.topics, facts.monthly_topics):
        lines.append(f"Papers with {topic} per month: {series(monthly)}")
    lines.append(f"All topic-labelled papers per month: {series(facts.monthly_total)}")
    lines.append(f"Forecast window: {facts.forecast[0]} to {facts.forecast[1]} ({facts.forecast_months} months). "
                 "How many papers in the forecast window will be labelled with "
                 + ("this topic?" if len(facts.topics) == 1 else "both topics?"))
    body = budget.fixed("\n".join(lines))
    return _messages(TREND_SYSTEM, [body, budget.fixed(COUNT_FORMAT.format(label="Papers"))])


# ---------------------------------------------------------------- parsers
_RANKING_LINE = re.compile(r"^[\s>*_#-]*ranking[*_\s]*:[*_\s]*(.*)$", re.IGNORECASE | re.MULTILINE)
_TOKEN_TRIM = " \t\"'`*[](){}<>.;"
#: a number as a whole token: optional sign, digits (comma groups of three or none), optional decimals, and then
#: no letter, digit or separator-plus-digit ("8a615714", "1,2345" and "12.5.1" are no numbers)
NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w]|[.,]\d)"
_DECOR = r"(?:[ \t>*_#`]|-(?!\d))*"  # markdown quote/emphasis/heading/bullet marks (a "-" before a digit is a sign)
_SHORT_LABEL = r"[A-Za-z][A-Za-z'()-]*(?:[ \t]+[A-Za-z][A-Za-z'()-]*){0,3}"
BARE_LINE_CHARS = 80  # the longest last line the tolerant count parser reads (label, number and unit)


def parse_ranking(text: str | None, candidates: Sequence[str] = ()) -> Parsed:
    """A ranked id list. Official: the last ``Ranking:`` line, split on commas (kept when it names at least one
    candidate, or when no candidates are given); tolerant: candidate ids in order of first mention."""
    if not text:
        return Parsed(None, "failed:empty", {"official": None})
    official = None
    lines = _RANKING_LINE.findall(text)
    if lines:
        tokens = [t.strip(_TOKEN_TRIM) for t in re.split(r"[,;]", lines[-1])]
        official = [t for t in tokens if t] or None
    known = set(candidates)
    if official and (not known or known.intersection(official)):
        return Parsed(official, "official", {"official": official})
    if known:
        found = []
        for cid in sorted(known, key=len, reverse=True):  # longer ids first: "12" must not claim "123"'s spot
            # a whole token only: not inside a word, a hex string or a decimal number ("12" is not in "12.5")
            match = re.search(rf"(?<![\w.]){re.escape(cid)}(?![\w]|\.\d)", text)
            if match:
                found.append((match.start(), cid))
        if found:
            return Parsed([cid for _, cid in sorted(found)], "tolerant:candidate_ids", {"official": official})
    return Parsed(None, "failed:no_ranking", {"official": official})


def _number(token: str) -> float:
    return float(token.replace(",", ""))


def parse_count(text: str | None, label: str) -> Parsed:
    """A number in the task's answer format (module docstring): the last ``<label>: N`` line (official), else
    a last line that is N alone with at most a short label and the unit word (tolerant), else a failure."""
    if not text:
        return Parsed(None, "failed:empty", {"official": None})
    official = re.compile(rf"^{_DECOR}{label}[*_` \t]*:[*_` \t~≈]*({NUMBER})", re.IGNORECASE | re.MULTILINE)
    hits = official.findall(text)
    if hits:
        value = _number(hits[-1])
        return Parsed(value, "official", {"official": value})
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    unit = label.lower().rstrip("s") + "s?"
    bare = re.compile(rf"{_DECOR}(?:{_SHORT_LABEL}[*_` \t]*[:=][*_` \t]*)?[~≈]?[ \t]*({NUMBER})"
                      rf"(?:[ \t]+{unit})?[*_`.!)]*", re.IGNORECASE)
    # a bare answer is short: a longer line is prose (and the pattern never runs on a long line)
    match = bare.fullmatch(lines[-1]) if lines and len(lines[-1]) <= BARE_LINE_CHARS else None
    if match:
        return Parsed(_number(match[1]), "tolerant:last_line", {"official": None})
    return Parsed(None, "failed:no_number", {"official": None})
