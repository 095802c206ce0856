"""
name: PreScience
dataset: HF ``allenai/prescience`` (ODC-BY 1.0) / this paper version's anonymised release with topic labels;
  release files ``train.parquet``, ``test.parquet``, ``author_publications.jsonl``, ``author_disambiguation.jsonl``
abstract: Can models forecast science? Given the historical record H^{<t} of ~500K arXiv AI papers, predict a
  paper's collaborators, its prior work, its contribution (title + abstract), its 12-month citations, which
  prior papers will be combined next, and how topics and topic pairs will grow.
paper: "PreScience: A Dataset and Benchmark for Scientific Forecasting" (7 tasks); arXiv:2602.20459 v1 (4 tasks)
spec: shared/spec/prescience.md

The declaration every artifact reads: dataset configs and features (corpus configs ``papers``,
``author_publications``, ``author_disambiguation``; one instance config per task), tasks and card text.
Inputs are assembled from the corpus under the history rule (:mod:`.history`); instance configs store ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciprobe.benchmarks.prescience.contribution import CONTRIBUTION
from sciprobe.benchmarks.prescience.forecast_runner import FORECAST
from sciprobe.benchmarks.prescience.upstream import UPSTREAM
from sciprobe.benchmarks.prescience.release_layouts import RELEASE_LAYOUTS
from sciprobe.core.declaration import Benchmark, Breakdown, Command, ConfigSpec, PaperCount, TaskSpec
from sciprobe.core.lazy import lazy
from sciprobe.core.score_ranges import ScoreRange, correlation, non_negative, regression, unit

CITATION = """
@misc{prescience2026,
  title         = {{PreScience}: A Benchmark for Forecasting Scientific Contributions},
  author        = {{Allen Institute for AI}},
  year          = {2026},
  eprint        = {2602.20459},
  archivePrefix = {arXiv},
  note          = {v1, 2026-02-24; this package follows the 7-task version "PreScience: A Dataset and
                   Benchmark for Scientific Forecasting"}
}
"""


#: Where the corpus count is stated: the card of HF allenai/prescience (upstream prepare_for_upload.py logs the same).
RELEASE_CARD = "allenai/prescience card (test corpus: 464,942 papers; spec prescience.md §1.2)"


@dataclass(frozen=True)
class CorpusConfigSpec(ConfigSpec):
    """A corpus config: the history every instance's prompt is built from (H^{<t}), never an evaluated item, so
    a model cutoff keeps all of it (the instance configs, every split, are what it filters)."""

    def cutoff_applies(self, split: str) -> bool:
        return False


# ---------------------------------------------------------------- features (lazy)
def _strings():
    from datasets import List, Value

    return List(Value("string"))


def paper_features():
    from datasets import Features, List, Value

    return Features({
        "corpus_id": Value("string"), "arxiv_id": Value("string"), "date": Value("string"),
        "title": Value("string"), "abstract": Value("string"), "categories": _strings(), "roles": _strings(),
        "key_references": List({"corpus_id": Value("string"), "num_citations": Value("int64")}),
        "authors": List({"author_id": Value("string"), "name": Value("string"), "publication_history": _strings(),
                         "h_index": Value("int64"), "num_papers": Value("int64"), "num_citations": Value("int64")}),
        "citation_trajectory": List(Value("int64")), "topics": _strings(), "is_target": Value("bool"),
    })


def author_publication_features():
    from datasets import Features, Value

    return Features({"author_id": Value("string"), "corpus_ids": _strings()})


def author_disambiguation_features():
    from datasets import Features, Value

    return Features({"author_id": Value("string"), "s2_author_ids": _strings()})


def contribution_features():
    from datasets import Features, List, Value

    return Features({"corpus_id": Value("string"), "date": Value("string"),
                     "references": List({"corpus_id": Value("string"), "title": Value("string"),
                                         "abstract": Value("string")}),
                     "title": Value("string"), "abstract": Value("string")})


def collaborator_features():
    from datasets import Features, Value

    return Features({"corpus_id": Value("string"), "date": Value("string"), "seed_author_id": Value("string"),
                     "gold_author_ids": _strings()})


def prior_work_features():
    from datasets import Features, Value

    return Features({"corpus_id": Value("string"), "date": Value("string"), "author_ids": _strings(),
                     "gold_corpus_ids": _strings()})


def citation_features():
    from datasets import Features, Value

    return Features({"corpus_id": Value("string"), "date": Value("string"), "label_12m": Value("int64")})


def future_combination_features():
    from datasets import Features, List, Value

    return Features({"corpus_id": Value("string"), "date": Value("string"), "gold_corpus_ids": _strings(),
                     "gold_counts": List(Value("int64"))})


def _trend(extra: dict) -> Any:
    from datasets import Features, Value

    return Features({"topic": Value("string"), "history_count": Value("int64"), "forecast_count": Value("int64"),
                     "history_share": Value("float64"), "forecast_share": Value("float64"), **extra})


def topic_features():
    from datasets import Value

    return _trend({"history_papers": Value("int64"), "forecast_papers": Value("int64"), "date": Value("string")})


def topic_pair_features():
    from datasets import Value

    return _trend({"history_papers": Value("int64"), "forecast_papers": Value("int64"),
                   "forecast_end": Value("string"), "date": Value("string")})


# ---------------------------------------------------------------- scoring (records -> ScoreReport)
def _with_parse_counts(report: Any, records: Sequence[Mapping[str, Any]]) -> Any:
    """How the answers were read, when they were model answers: official format, tolerant fallback, failed."""
    paths = [str(r.get("parse_path") or "") for r in records]
    if any(p.startswith(("official", "tolerant")) for p in paths):
        tolerant = sum(1 for p in paths if p.startswith("tolerant"))
        report.values["n_parse_official"] = sum(1 for p in paths if p == "official")
        report.values["n_parse_tolerant"] = tolerant
        if tolerant:
            report.notes.append(f"{tolerant} answer(s) read by the tolerant parser (no `Ranking:`/count line in "
                                "the asked format)")
    return report


def score_ranking_records(variant: str):
    def score(records: Sequence[Mapping[str, Any]], mode: str = "official") -> Any:
        """Records carry ``prediction`` (ranked ids or None), ``gold`` and optionally ``pool`` (strict mode).
        official: upstream ``evaluate.py`` on the lists as given; strict: clean-up, padding, hits/|gold|."""
        from sciprobe.benchmarks.prescience.scoring.ranking_tasks import score_rankings

        pools = [r["pool"] for r in records] if records and all("pool" in r for r in records) else None
        return _with_parse_counts(score_rankings([r["prediction"] for r in records], [r["gold"] for r in records],
                                                 variant=variant, pools=pools, mode=mode), records)

    return score


def score_citation_records(records: Sequence[Mapping[str, Any]], mode: str = "official") -> Any:
    from sciprobe.benchmarks.prescience.scoring.forecast import citation_forecast

    return _with_parse_counts(citation_forecast([r["prediction"] for r in records], [r["gold"] for r in records]),
                              records)


def score_trend_records(records: Sequence[Mapping[str, Any]], mode: str = "official") -> Any:
    """Records carry ``prediction`` (a count or None), ``gold`` (forecast count), ``history`` (history count)
    and, for ``mode="paper"``, ``history_papers`` / ``forecast_papers`` (the windows' labelled papers)."""
    from sciprobe.core.errors import SciprobeError
    from sciprobe.benchmarks.prescience.scoring.topic_trend import topic_trend

    papers: dict[str, Any] = {}
    if mode == "paper":
        papers = {k: next((r.get(k) for r in records if r.get(k) is not None), None)
                  for k in ("history_papers", "forecast_papers")}
        if None in papers.values():
            raise SciprobeError("paper-mode topic shares need history_papers / forecast_papers on the instances "
                                "(rebuild the dataset with this sciprobe version)")
    return _with_parse_counts(topic_trend([r["prediction"] for r in records], [r["gold"] for r in records],
                                          [r["history"] for r in records], mode=mode, **papers), records)


def score_contribution_records(records: Sequence[Mapping[str, Any]], mode: str = "official") -> Any:
    """ROUGE-L F (official text rule ``title + " " + abstract``); LACER needs a judge
    (:func:`sciprobe.benchmarks.prescience.scoring.lacer.lacer`) and is not wired into this record scorer yet."""
    from sciprobe.scoring.text_similarity import rouge_l

    def text(x: Any) -> str:
        if not x:
            return ""
        return f"{x.get('title') or ''} {x.get('abstract') or ''}".strip()

    return rouge_l([text(r["prediction"]) for r in records], [text(r["gold"]) for r in records])


def _contribution_gold(row: Mapping[str, Any]) -> dict[str, str]:
    return {"title": row.get("title") or "", "abstract": row.get("abstract") or ""}


# ---------------------------------------------------------------- headlines as statistics over items
Records = Sequence[Mapping[str, Any]]


def ranking_items(records: Records, mode: str, report: Any, headline: str = "") -> Any:
    """nDCG@1000: the mean of the scorer's per-query nDCG."""
    from sciprobe.scoring.item_scores import mean_items

    return mean_items(report.values["per_query_ndcg"], [r.get("prediction") is None for r in records])


def citation_items(records: Records, mode: str, report: Any, headline: str = "") -> Any:
    """MAE: the mean absolute error over the items with a prediction."""
    from sciprobe.scoring.item_scores import mean_items

    failed = [r.get("prediction") is None for r in records]
    return mean_items([None if f else abs(float(r["prediction"]) - float(r["gold"])) for r, f in zip(records, failed)],
                      failed)


def trend_items(records: Records, mode: str, report: Any, headline: str = "") -> Any:
    """Δ-share R² over units (a missing or negative count predicts 0, as the scorer)."""
    from sciprobe.scoring.item_scores import delta_share_r2_items

    failed = [r.get("prediction") is None for r in records]
    pred = [0.0 if f else max(float(r["prediction"]), 0.0) for r, f in zip(records, failed)]
    params = dict(report.params)
    return delta_share_r2_items(pred, [float(r["gold"]) for r in records], [float(r["history"]) for r in records],
                                failed, **params)


def contribution_items(records: Records, mode: str, report: Any, headline: str = "") -> Any:
    """LACER (the per-id mean over the judges, ids every judge scored) or ROUGE-L, whichever the result reports."""
    from sciprobe.scoring.item_scores import mean_items

    if headline == "lacer":
        per_id = report.values.get("lacer_per_item")
        if report.values.get("lacer") is None or per_id is None:
            return None
        values = [per_id.get(str(r["id"])) for r in records]
        return mean_items(values, [v is None for v in values])
    return mean_items(report.values["per_item_rougeL"], [r.get("prediction") is None for r in records])


def _team_size(n: int) -> str:
    return "1" if n <= 1 else "2" if n == 2 else "3-4" if n <= 4 else "5-9" if n <= 9 else "10+"


def _quarter(row: Mapping[str, Any]) -> str | None:
    date = str(row.get("date") or "")
    return f"{date[:4]}-Q{(int(date[5:7]) - 1) // 3 + 1}" if len(date) >= 7 and date[5:7].isdigit() else None


QUARTER = Breakdown("quarter", "target quarter", _quarter)
COLLABORATOR_BREAKDOWNS = (Breakdown("team_size", "team size",
                                     lambda row: _team_size(len(row.get("gold_author_ids") or []) + 1)), QUARTER)
PRIOR_WORK_BREAKDOWNS = (Breakdown("team_size", "team size", lambda row: _team_size(len(row.get("author_ids") or []))),
                         QUARTER)

#: the valid range of each contribution_generation score (sciprobe.scoring.ranges)
CONTRIBUTION_RANGES = (
    *unit("rougeL"), *correlation("bertscore_f1"),
    # LACER is a 1-10 judge scale; official mode takes the judge's first number unclamped
    ScoreRange("lacer*", modes=("official",), decimals=2), ScoreRange("lacer_failed*", 0.0, decimals=0),
    ScoreRange("lacer*", 1.0, 10.0, decimals=2),
)

#: the valid range of each citation_forecast score (sciprobe.scoring.ranges)
CITATION_RANGES = (*non_negative("log1p_mae"), *correlation("log1p_pearson"), *regression())

#: the valid range of each topic_trend score (sciprobe.scoring.ranges)
TREND_RANGES = tuple(regression())


# T1's prompt, parser and scorer live with its runner and load on their first call (sciprobe.core.lazy)
_CONTRIBUTION = "sciprobe.benchmarks.prescience.contribution:"
TASKS = {
    "contribution_generation": TaskSpec(
        name="contribution_generation", config="contribution_generation",
        description="T1: generate the title + abstract of a follow-up of the influential references; LACER "
                    "(judge via --judge; upstream's judge prompt, or SCIPROBE_LACER_TEMPLATE), ROUGE-L, "
                    "BERTScore (bundled MiniLM)",
        metric="contribution_generation", score_ranges=CONTRIBUTION_RANGES,
        options=("context", "context_seed", "reference_sets"),
        check_options=lazy("sciprobe.benchmarks.prescience.context_variants:check_context_options"),
        score=lazy(_CONTRIBUTION + "score_records"),
        build_messages=lazy(_CONTRIBUTION + "contribution_messages"), parse=lazy(_CONTRIBUTION + "parse_contribution"),
        gold=_contribution_gold, runner=CONTRIBUTION,
        # headline rougeL: the number every path (prediction files, lighteval) can compute; the evaluate runner
        # reports LACER as its headline
        # no max_tokens, as upstream's OpenAI baseline sends none (a cap would cut a reasoning model's answer)
        generation={}, modes=("official", "corrected"), leaderboard_mode="corrected",
        headline="rougeL", extra_columns=("lacer",),
        corpus_metrics=(("rougeL", True), ("bertscore_f1", True)), breakdowns=(QUARTER,),
        item_scores=contribution_items,
        upstream_prompt="sciprobe.benchmarks.prescience.upstream:contribution_prompts"),
    "collaborator_prediction": TaskSpec(
        name="collaborator_prediction", config="collaborator_prediction",
        description="T2: rank candidate co-authors of a seed author from H^{<t_p} (nDCG@1000, R-precision)",
        metric="ranking", score=score_ranking_records("calculate_ndcg"), gold=lambda row: list(row["gold_author_ids"]),
        runner=FORECAST, generation={"max_tokens": 512}, modes=("official", "strict"), leaderboard_mode="strict",
        headline="ndcg@1000", breakdowns=COLLABORATOR_BREAKDOWNS, item_scores=ranking_items),
    "prior_work_selection": TaskSpec(
        name="prior_work_selection", config="prior_work_selection",
        description="T3: rank H^{<t_p} papers as the team's influential references (nDCG@1000, R-precision)",
        metric="ranking", score=score_ranking_records("calculate_ndcg"), gold=lambda row: list(row["gold_corpus_ids"]),
        runner=FORECAST, generation={"max_tokens": 512}, modes=("official", "strict"), leaderboard_mode="strict",
        headline="ndcg@1000", breakdowns=PRIOR_WORK_BREAKDOWNS, item_scores=ranking_items),
    "citation_prediction": TaskSpec(
        name="citation_prediction", config="citation_prediction",
        description="T4 (alias impact_prediction): forecast 12-month cumulative citations (MAE, R², Pearson, "
                    "Spearman, log1p)",
        metric="citation_forecast", score_ranges=CITATION_RANGES,
        score=score_citation_records, gold=lambda row: int(row["label_12m"]),
        runner=FORECAST, generation={"max_tokens": 256}, headline="mae", breakdowns=(QUARTER,),
        item_scores=citation_items),
    "future_combination": TaskSpec(
        name="future_combination", config="future_combination",
        description="T5: rank prior papers that later targets will co-cite with P (nDCG@1000, R-precision)",
        metric="ranking", score=score_ranking_records("ndcg_at_k"), gold=lambda row: list(row["gold_corpus_ids"]),
        runner=FORECAST, generation={"max_tokens": 512}, modes=("official", "strict"), leaderboard_mode="strict",
        headline="ndcg@1000", breakdowns=(QUARTER,), item_scores=ranking_items),
    "topic_trends": TaskSpec(
        name="topic_trends", config="topic_trends",
        description="T6: forecast per-topic paper counts; Δ-share R², Pearson, Spearman, MAE",
        metric="topic_trend", score_ranges=TREND_RANGES,
        score=score_trend_records, gold=lambda row: int(row["forecast_count"]),
        runner=FORECAST, generation={"max_tokens": 256}, modes=("official", "paper"), headline="delta_share_r2",
        item_scores=trend_items),
    "topic_pair_trends": TaskSpec(
        name="topic_pair_trends", config="topic_pair_trends",
        description="T7: forecast per-topic-pair paper counts; Δ-share R², Pearson, Spearman, MAE",
        metric="topic_trend", score_ranges=TREND_RANGES,
        score=score_trend_records, gold=lambda row: int(row["forecast_count"]),
        runner=FORECAST, generation={"max_tokens": 256}, modes=("official", "paper"), headline="delta_share_r2",
        item_scores=trend_items),
}

CARD_SECTIONS = {
    "History rule (H^{<t})": "\n".join([
        "- Every input of a target dated t_p comes from the split's own corpus restricted to `date < t_p` "
        "(strict ISO string comparison; same-day papers are not history). `sciprobe.benchmarks.prescience.history` "
        "answers papers, author publication lists and citation counts at any t; views never expose `roles` "
        "(recomputed from later targets) or `citation_trajectory` (runs past t).",
        "- Citation counts at arbitrary t are in-corpus influential citations; the Semantic Scholar counts "
        "frozen at t_p stay on the target row (`key_references[].num_citations`, author statistics).",
        "- Known leakage kept from the release (pitfall 3): titles/abstracts are the latest arXiv version; "
        "S2 influential flags and author clusters use present-day data.",
    ]),
    "Contribution generation and LACER": "\n".join([
        "- Prompt: sciprobe's own wording of the task by default (no few-shot examples; `--prompts upstream` sends "
        "upstream's `prediction_system.prompt` and user layout instead, see Upstream); "
        "references listed as `Background Paper i:` with `Title:`/`Abstract:`; answer `Reasoning:`/`Title:`/"
        "`Abstract:`; an unparsable answer is an empty generation (judged, ROUGE-L/BERTScore 0), no retries.",
        "- Generation settings: as upstream's OpenAI baseline (`generate/baseline_gpt_parallel.py`), no "
        "`max_tokens` and the provider's default sampling, with either prompt set (a reasoning model spends its "
        "completion tokens on reasoning first: a cap would cut its answer). `--max-tokens N` or a model spec's "
        "`max_tokens` sets one, recorded in the results' generation parameters; the bundled model stops at its own "
        "default. Upstream's Anthropic baseline sends `max_tokens=4096` because that API requires one.",
        "- LACER judge messages: upstream's (allenai/prescience@47384ed, both files sha256-pinned, read at run "
        "time and never redistributed): the system message is `lacer_score.py`'s `SYSTEM_PROMPT` (read from the "
        "file, never executed), the user message the E.5 template, `.strip()`-ed as upstream reads it, with the "
        "pair filled in. Read from `--upstream-dir DIR` (a checkout of that commit; offline) or "
        "`$SCIPROBE_PRESCIENCE_UPSTREAM`, else the cache, else downloaded once. Decision: the system message is a "
        "one-sentence instruction, but upstream's text all the same, so it is loaded like the template, not "
        "copied. `SCIPROBE_LACER_TEMPLATE` names another judge prompt (a template, or a lattice file from "
        "`sciprobe lacer build-lattice`), sent with sciprobe's own system message; results record both "
        "prompts' sha256 and source. Official parsing: first `Score:` match, no clamp; corrected: last "
        "match (a whole number token) clamped to [1, 10]. In both modes a judge reply without a score is a "
        "failure: never a score, left out of the mean and counted.",
        "- Several judges (`--judge 'A;B'`): per-id mean over the ids every judge scored, then the mean with a "
        "percentile bootstrap 95% CI (1,000 resamples over ids, seed 0).",
        "- BERTScore uses the bundled MiniLM (offline, 6 layers, no rescaling): not comparable with the paper's "
        "deberta-large-mnli numbers.",
    ]),
    "Forecasting tasks with a model (T2-T7)": "\n".join([
        "- `sciprobe evaluate prescience:<task>` asks one call per instance (runner `prescience_forecast`). "
        "The prompt is built from H^{<t} of this dataset's own `papers` corpus (T6/T7: the train window): T2 "
        "the seed author, their papers before t_p with co-authors, and candidate co-authors (1 and 2 hops) "
        "with their evidence; T3 the team (names from the target's author list, the task's input), their "
        "recent papers with key references, and candidate papers (cited by those papers, then the team's "
        "own); T4 the target's title, abstract, categories, authors' statistics and references' citation "
        "counts frozen at t_p (never its trajectory); T5 the target P with its references and candidates "
        "co-cited with them before P, then the most cited papers; T6/T7 the unit's monthly counts over the "
        "history window and the monthly totals.",
        "- Upstream's GPT-5 agents (T2, T3, T5) set the format followed here: `- author_id=..., name=...` "
        "lines, `Target paper cutoff_date: ...`, `--- Reference (corpus_id=...) ---` blocks, a ranked id list "
        "padded to k = 1000; sciprobe gives the model what their tools would return instead of tools. T4, T6 "
        "and T7 have no LLM baseline upstream: their prompts are sciprobe's design (answer `Citations: N` / "
        "`Papers: N`).",
        "- Candidates are chosen by evidence (strongest first) and listed in id order, so echoing the list is "
        "not a ranking. Ids the model names outside the list are dropped and counted; the ranking is padded "
        "with a seeded random draw from the whole candidate pool (authors with a paper before t_p, or papers "
        "before t_p).",
        "- Context budget: at most `context_chars` characters per prompt (default 6,000; abstracts clipped to "
        "600, at most 40 candidates); sections keep whole lines in a fixed order and share; what was cut is "
        "recorded per item (`context_cut`) and the budget in the provenance.",
        "- Parsing (the same in every mode): the `Ranking:` / `Citations: N` / `Papers: N` line (official), else "
        "the listed candidate ids in order of mention, or a last line that is a bare number with at most a short "
        "label and the unit word (tolerant); a number inside prose or glued to letters (`8a615714`) is a parse "
        "failure, never a forecast. The parse path is recorded and counted (`n_parse_official`, "
        "`n_parse_tolerant`). A predictions file (`{\"id\", \"prediction\"}`: ranked ids or a number) is scored "
        "as given.",
        "- `impact_prediction` (the newest upstream's name of T4) is an alias of `citation_prediction`: same "
        "instances (12-month cumulative citations) and metrics (MAE, Pearson, Spearman, plus R² and log1p).",
    ]),
    "Deviations and decisions": "\n".join([
        "- `papers` has splits `train` and `test`: the two overlapping corpora, not disjoint samples. A model "
        "cutoff never filters them, nor `author_*` (the history prompts are built from); it filters every split of "
        "the instance configs (`test`, `test_sample_5000`, `test_sample_500`, `train`, `dev_1000`).",
        "- Topic units (T6/T7) carry `date` = the forecast window's first day (2024-10-01): their gold counts papers "
        "from that day on, so a cutoff keeps them only when it precedes the whole window.",
        "- `author_publications` / `author_disambiguation` have one split named `full` (spec: `all`, which "
        "`datasets` reserves for the union of splits).",
        "- Instance configs store ids, dates and labels; inputs are assembled from `papers` under the history "
        "rule. Decision: `contribution_generation` also stores its references' titles/abstracts and the gold "
        "title/abstract (spec §9 table; references are checked to be in H^{<t_p} at build time).",
        "- Subsets: `dev_1000` (train, T2/T3) and `test_sample_5000` (T1) are `random.Random(42).sample` over "
        "the eligible targets in source-file order; `test_sample_500` = the first 500 of `test_sample_5000` "
        "(the paper's fixed 500-subset is not published).",
        "- Collaborators: seed = first listed author with non-empty H^{<t_p} history; gold = the other authors "
        "with history; candidates = authors with >= 1 paper before t_p.",
        "- Ranking, official mode (T2/T3): upstream `evaluate.py` on the lists as given: `calculate_ndcg` (IDCG "
        "over all gold entries, 0 if the list is shorter than the gold) and set-based precision / recall / F1 of "
        "the top-|gold| ids (`r_precision`, `recall@R`, `f1@R`); duplicates count as upstream counts them, ids "
        "are compared without conversion, empty gold gives 0. Lists are cut at k = 1000.",
        "- Ranking, strict mode (and T5 `ndcg_at_k`, IDCG over min(k, |gold|), R-precision over min(|gold|, "
        "|pred|)): ids outside H^{<t_p} dropped and counted, duplicates rejected, short lists padded with a "
        "seeded generator (pitfall 10), R-precision = hits / |gold|.",
        "- T5 gold ties (equal counts) are ordered newer first, then by corpus id.",
        "- Topic trends: official label-mass shares (code) by default; `mode=\"paper\"` gives per-paper "
        "fractions. Units: all 202 topics (T6); pairs with >= 10 target papers in the history or forecast "
        "window (T7), forecast end 2025-07-01 by default (recorded per row in `forecast_end`). Papers with no "
        "topic ('Other') are excluded.",
        "- Topic labels come from the Parquet `topics` column (the 7-task release), the targets of the two-domain "
        "archive, or upstream's `topic_labels*.jsonl` (`dataset/corpus/assign_topics.py` output) put beside the "
        "Parquet files; the v1 parquet (`allenai/prescience`) has none, and the build then skips T6/T7 with one "
        "line (`topic_trends: no topic labels in this release; see ...`) instead of writing them empty.",
        "- Topic rows carry `history_papers` / `forecast_papers` (labelled papers per window): the denominators of "
        "the per-paper shares of `mode=\"paper\"`.",
    ]),
}

BENCHMARK = Benchmark(
    name="prescience",
    title="PreScience",
    version="0.2.0",
    description=("PreScience evaluates scientific forecasting on arXiv AI papers (Oct 2023 - Sep 2025 targets, "
                 "~500K papers of history): collaborator prediction, prior-work selection, contribution "
                 "generation, citation prediction, future combination, topic and topic-pair trends. Train "
                 "targets: [2023-10-01, 2024-10-01); test targets: [2024-10-01, 2025-10-01)."),
    citation=CITATION,
    license="odc-by",
    homepage="https://huggingface.co/datasets/allenai/prescience",
    configs={
        "papers": CorpusConfigSpec("papers", "The corpus: one paper per row (targets + companions); splits are the "
                                   "two overlapping corpora", paper_features, ("train", "test"), "corpus_id",
                                   paper_count=PaperCount(464_942, RELEASE_CARD)),
        "author_publications": CorpusConfigSpec("author_publications", "Author id -> corpus ids (merged over "
                                                "splits, all dates: truncate by date)", author_publication_features,
                                                ("full",), "author_id"),
        "author_disambiguation": CorpusConfigSpec("author_disambiguation", "S2AND cluster id -> original S2 author "
                                                  "ids", author_disambiguation_features, ("full",), "author_id"),
        "contribution_generation": ConfigSpec("contribution_generation", "T1: target id, date, references "
                                              "(id, title, abstract), gold title + abstract", contribution_features,
                                              ("train", "test", "test_sample_5000", "test_sample_500"), "corpus_id",
                                              paper_count=PaperCount(5_000, "paper T1: a random 5,000 test targets",
                                                                     "test_sample_5000")),
        "collaborator_prediction": ConfigSpec("collaborator_prediction", "T2: target id, date, seed author, gold "
                                              "co-authors", collaborator_features, ("train", "test", "dev_1000"),
                                              "corpus_id"),
        "prior_work_selection": ConfigSpec("prior_work_selection", "T3: target id, date, authors, gold key "
                                           "references", prior_work_features, ("train", "test", "dev_1000"),
                                           "corpus_id"),
        "citation_prediction": ConfigSpec("citation_prediction", "T4: target id, date, 12-month citations",
                                          citation_features, ("train", "test"), "corpus_id"),
        "future_combination": ConfigSpec("future_combination", "T5: cohort target id, date, gold co-cited ids "
                                         "and counts", future_combination_features, ("test",), "corpus_id"),
        "topic_trends": ConfigSpec("topic_trends", "T6: one topic per row, history/forecast counts and shares",
                                   topic_features, ("test",), "topic",
                                   paper_count=PaperCount(202, "paper Table 5 (202 topics)")),
        "topic_pair_trends": ConfigSpec("topic_pair_trends", "T7: one topic pair per row (a||b)",
                                        topic_pair_features, ("test",), "topic",
                                        paper_count=PaperCount(4_334, "paper Table 5 (4,334 pairs)")),
    },
    tasks=TASKS,
    read_source=lazy("sciprobe.benchmarks.prescience.source:read_source"),
    source_options={"sample_seed": 42, "pair_forecast_end": "2025-07-01"},
    sample_source=Path(__file__).resolve().parent / "sample",
    card_sections=CARD_SECTIONS,
    release_layouts=RELEASE_LAYOUTS,
    release_check="sciprobe.benchmarks.prescience.releases:release_check",
    commands=(Command("prescience", "PreScience baselines and scoring", "sciprobe.benchmarks.prescience.cli"),
              Command("lacer", "LACER judge tools (PreScience)", "sciprobe.benchmarks.prescience.lacer_cli")),
    lighteval_tasks="sciprobe.benchmarks.prescience.lighteval_task:tasks_table",
    # the newest upstream release calls T4 "impact prediction" (12-month cumulative citations; MAE, Pearson,
    # Spearman: citation_forecast reports them)
    aliases={"impact_prediction": "citation_prediction"},
    # the demo: two collaborator rankings with a short context (prompt length dominates CPU time)
    demo={"collaborator_prediction": {"limit": 2, "context_chars": 2500}},
    upstream=UPSTREAM,
    upstream_logs="sciprobe.benchmarks.prescience.upstream_logs:read_logs",
    baselines="sciprobe.benchmarks.prescience.reference_baselines:baselines",
)
