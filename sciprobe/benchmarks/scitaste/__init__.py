"""
name: SciTaste-Bench
dataset: skylenage/SciTaste-benchmark (hub; schema unverified) or a local folder in the same layout
abstract: Can LLMs judge the research taste of scientific papers? Given discipline, title, abstract and
  identifier, a model predicts the paper's Academic Taste Index (ATI, 0-100) and its seven dimension scores;
  gold values are bibliometric. Scored by Scheme 2 (WAPE grade, headline) and Scheme 1 (reconstructed
  correlation + dimension-accuracy composite).
paper: "A Multi-Disciplinary Benchmark for Assessing Large Language Models' Judgment of Research Taste in
  Scientific Papers" (SciTaste-Bench)
spec: shared/spec/scitaste.md

The declaration every artifact reads: dataset configs and features, the ``pure_qa`` task (prompt, parser,
scorer, generation parameters), card text. The tool and search modes (``dimagent_v3``, ``native_search``,
``dimagent_v3_native``) are run by :mod:`sciprobe.benchmarks.scitaste.agent` (spec §2.3–§2.4).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from sciprobe.benchmarks.scitaste.agent import AGENT
from sciprobe.benchmarks.scitaste.prompts import PROMPT_VERSION
from sciprobe.benchmarks.scitaste.source import DISCIPLINES, discipline_name, gold
from sciprobe.core.declaration import Benchmark, Breakdown, ConfigSpec, TaskSpec
from sciprobe.core.errors import SciprobeError
from sciprobe.core.lazy import lazy
from sciprobe.benchmarks.scitaste.scoring.taste_dimensions import DIMENSIONS
from sciprobe.core.score_ranges import ScoreRange, correlation, non_negative, percent, regression, unit

CITATION = """
@misc{scitaste_bench,
  title  = {A Multi-Disciplinary Benchmark for Assessing Large Language Models' Judgment of Research Taste in
            Scientific Papers},
  note   = {SciTaste-Bench; dataset skylenage/SciTaste-benchmark on the Hugging Face Hub}
}
"""

HF_DATASET = "skylenage/SciTaste-benchmark"
#: Generation settings: the paper's per-model settings differ (spec §2.5); only the token budget is fixed here.
GENERATION = {"max_tokens": 4096}


# ---------------------------------------------------------------- features (lazy: datasets imports on use)

def paper_features():
    from datasets import ClassLabel, Features, Value

    text = Value("string")
    return Features({
        "id": text, "bibcode": text, "openalex_id": text, "doi": text, "title": text, "abstract": text,
        "year": Value("int32"), "discipline": ClassLabel(names=list(DISCIPLINES)),
        "subcategory_id": text, "subcategory_name": text, "journal_name": text, "journal_tier": text,
        "gold_total": Value("float64"), "gold_dims": {d: Value("float64") for d in DIMENSIONS},
        "pool": text, "date": text, "date_precision": text,
    })


# ---------------------------------------------------------------- scoring

#: Report keys that are numbers: None (nothing scored, undefined correlation) becomes NaN for lighteval.
_NUMERIC = {"scheme2_score", "wape_pct", "macro_scheme2_score", "scheme1_final", "part_a", "part_b", "spearman",
            "pearson", "mae", "mse", "rmse", "bias", "abs_bias"}


def _weights_from_gold(golds: Sequence[Mapping]) -> tuple[dict[str, float] | None, str]:
    """Solve the ATI weights from the gold itself (spec §6.1) when it determines them exactly, else None."""
    from sciprobe.benchmarks.scitaste.ati import solve_weights

    if len(golds) < 7:
        return None, "placeholder"
    try:
        solve = solve_weights([g["dims"] for g in golds], [g["total"] for g in golds])
    except SciprobeError:
        return None, "placeholder"
    if solve.exact and all(w >= 0 for w in solve.weights.values()):
        return solve.weights, "solved-from-gold"
    return None, "placeholder"


def score_pure_qa(records: Sequence[Mapping[str, Any]], mode: str = "paper",
                  weights: Mapping[str, float] | None = None) -> Any:
    """Both schemes over per-item records (``gold`` from :func:`gold`, ``prediction`` from the parser or None).

    paper: failures dropped (as the paper), ``n_success`` reported. strict: failures scored as 0 everywhere.
    Part B weights: ``weights`` if given, else solved from the records' gold when exact, else the placeholder.
    """
    from sciprobe.benchmarks.scitaste.scoring.composite import scitaste_composite
    from sciprobe.scoring.score_report import ScoreReport
    from sciprobe.benchmarks.scitaste.scoring.wape import wape_grade

    policy = {"paper": "drop", "strict": "zero"}.get(mode)
    if policy is None:
        raise SciprobeError(f"unknown mode {mode!r} for scitaste:pure_qa (paper, strict)")
    golds = [r["gold"] for r in records]
    nan = float("nan")
    preds = [[p["total"], *(p["dims"][d] for d in DIMENSIONS)] if p else [nan] * 8
             for p in (r.get("prediction") for r in records)]
    refs = [[g["total"], *(g["dims"][d] for d in DIMENSIONS)] for g in golds]
    source = "given"
    if weights is None:
        weights, source = _weights_from_gold(golds)
    s2 = wape_grade([p[0] for p in preds], [g[0] for g in refs], groups=[g["discipline"] for g in golds],
                    failure_policy=policy)
    s1 = scitaste_composite(preds, refs, weights=weights, failure_policy=policy)
    v1 = s1.values
    values = {
        "scheme2_score": s2.values["score"], "grade": s2.values["grade"], "wape_pct": s2.values["wape_pct"],
        "macro_scheme2_score": s2.values.get("macro_score"), "by_discipline": s2.values.get("by_group", {}),
        "scheme1_final": v1.get("final"), "scheme1_class": v1.get("class"),
        **{k: v1.get(k) for k in ("part_a", "part_b", "spearman", "pearson", "mae", "mse", "rmse", "bias",
                                  "weighted_dim_spearman", "weighted_dim_mae", "dim_spearman", "dim_mae",
                                  "undefined_correlations", "composite_consistency_mae", "weights")},
        "abs_bias": None if v1.get("bias") is None else abs(v1["bias"]),
        "weights_source": source if v1.get("weights_source") == "given" else "placeholder",
        "n_success": s2.coverage.n_items - s2.coverage.n_failed, "failure_rate": s2.coverage.failure_rate,
    }
    values = {k: (nan if v is None and k in _NUMERIC else v) for k, v in values.items()}
    return ScoreReport("scitaste", mode, values, s2.coverage,
                       params={"scheme2": s2.params, "scheme1": s1.params}, notes=[*s2.notes, *s1.notes])


def pure_qa_items(records: Sequence[Mapping[str, Any]], mode: str, report: Any,
                  headline: str = "") -> Any:
    """Scheme 2 as a statistic over items: pooled WAPE of the predicted composites mapped through the score knots
    (paper: failures dropped; strict: failures predict 0)."""
    from sciprobe.scoring.item_scores import wape_items
    from sciprobe.benchmarks.scitaste.scoring.wape import resolve_knots

    failed = [not r.get("prediction") for r in records]
    zero = 0.0 if mode == "strict" else None
    pred = [zero if f else float(r["prediction"]["total"]) for r, f in zip(records, failed)]
    x, y = resolve_knots(report.params.get("scheme2", {}).get("knots", "scitaste-v1-reconstructed"))
    return wape_items(pred, [float(r["gold"]["total"]) for r in records], failed, (x, y))


BREAKDOWNS = (Breakdown("discipline", "discipline", lambda row: discipline_name(row["discipline"])),
              Breakdown("journal_tier", "journal tier"))

#: (score key, higher is better) reported by the lighteval card for every mode.
CORPUS_METRICS: tuple[tuple[str, bool], ...] = (
    ("scheme2_score", True), ("wape_pct", False), ("macro_scheme2_score", True), ("scheme1_final", True),
    ("spearman", True), ("pearson", True), ("mae", False), ("abs_bias", False), ("failure_rate", False),
)


# ---------------------------------------------------------------- tasks

#: the valid range of each wape_grade score (sciprobe.scoring.ranges)
WAPE_RANGES = (
    *percent("scheme2_score", "macro_scheme2_score", "scheme1_final", "part_a", "part_b"),
    *non_negative("wape_pct", "abs_bias", "weighted_dim_mae", "composite_consistency_mae"),
    *unit("failure_rate"), *correlation("weighted_dim_spearman"),
    ScoreRange("bias"),  # the signed mean error of the total (over-rating > 0): any finite number
    *regression(),
)


# the prompt builder and the parser load on their first call (sciprobe.core.lazy)
PURE_QA_MESSAGES = lazy("sciprobe.benchmarks.scitaste.prompts:pure_qa_messages")
PARSE_ANSWER = lazy("sciprobe.benchmarks.scitaste.parsing:parse_answer")
TASKS = {
    "pure_qa": TaskSpec(
        name="pure_qa", config="selected",
        description="predict the ATI composite and seven dimension scores from discipline/title/abstract/id, no tools",
        metric="wape_grade", score_ranges=WAPE_RANGES, score=score_pure_qa, build_messages=PURE_QA_MESSAGES,
        parse=PARSE_ANSWER, gold=gold, generation=dict(GENERATION), modes=("paper", "strict"),
        leaderboard_mode="strict", headline="scheme2_score", corpus_metrics=CORPUS_METRICS,
        record_fields=("journal_tier",), breakdowns=BREAKDOWNS, item_scores=pure_qa_items),
    # Tool and search modes: multi-call, run by sciprobe.benchmarks.scitaste.agent (AgentRunner);
    # the final answer has pure_qa's format, parser and scorer.
    **{name: TaskSpec(
        name=name, config="selected", description=description, metric="wape_grade", score_ranges=WAPE_RANGES,
        score=score_pure_qa,
        parse=PARSE_ANSWER, gold=gold, runner=AGENT, generation=dict(GENERATION),
        modes=("paper", "strict"), leaderboard_mode="strict", headline="scheme2_score", corpus_metrics=CORPUS_METRICS,
        record_fields=("journal_tier",), breakdowns=BREAKDOWNS, item_scores=pure_qa_items)
       for name, description in (
           ("dimagent_v3", "two-round DimAgent-v3: call the nine bibliometric tools (snapshot or live ADS/OpenAlex), "
                           "then predict the ATI composite and seven dimension scores"),
           ("native_search", "predict as pure_qa with the provider's built-in web search (provider-dependent)"),
           ("dimagent_v3_native", "DimAgent-v3 tools plus the provider's built-in web search (provider-dependent)"),
       )},
}

CARD_SECTIONS = {
    "Known, reconstructed, configurable": "\n".join([
        "- **Known (paper prose):** 6 disciplines; selected 300 (50 per discipline) and backup 5,700; the ATI is a "
        "weighted sum of seven 0-100 dimensions with A Citation Dynamics 29.5% and G Journal Impact 15.3%; "
        "Scheme 2 WAPE = sum|p-g| / sum g with grades A<5, B 5-10, C 10-20, D 20-30, E 30-50, F>=50 (%); "
        "Scheme 1 sub-weights 15/10/15/10/30/20 and classes 80/60/40.",
        "- **Reconstructed (documented defaults):** the WAPE-to-score knots `scitaste-v1-reconstructed` "
        "(0->100, 5->90, 10->75, 20->60, 30->40, 50->20, 100->0; reproduces 13.1% -> 70.4, grade C); the Scheme-1 "
        "sub-score mappings `scitaste-v1-placeholder`; the ATI citation blend and rank formulas "
        "(`sciprobe.benchmarks.scitaste.ati`).",
        "- **Missing:** the B-F weights (Table 3). Scoring solves them from the gold by least squares "
        "(`ati.solve_weights`, exact when gold totals are w . dims; A and G are checks); when the gold does not "
        "determine them it falls back to an equal B-F split, reported as `weights_source=placeholder`.",
    ]),
    "Layout and field names": "\n".join([
        f"- Configs: `selected` (default), `backup`, and one per discipline ({', '.join(DISCIPLINES)}) holding "
        "that discipline's selected papers (the Tables 9/10 breakdowns). Every config has one split, `test`, "
        "because sciprobe's builder, runner and lighteval card evaluate the `test` split; the release pool is "
        "kept in the `pool` column. (Decision: the spec's `papers` config with `selected`/`backup` splits is "
        "expressed as two configs.)",
        "- Field names follow spec §1.5; the release's `innovation_score` is `gold_total` and "
        "`dimension_scores` is `gold_dims` (keys: " + ", ".join(f"`{d}`" for d in DIMENSIONS) + "). "
        "`id` = `bibcode` (ADS bibcode or internal work id; unique across both pools, checked at build). "
        "`subcategory_*` and `openalex_id` are nullable. Gold is stored as float64 (released decimals kept).",
        "- The release schema is unverified: the reader accepts alternative names for the composite "
        "(`gold_total`, `composite_score`, `total_score`) and dimensions (`gold_dims`, `dimensions`, top-level "
        "keys) and fails with a one-line error on anything missing.",
    ]),
    "Dates, cutoffs and drift": "\n".join([
        "- The release has only `year`: `date` = `YYYY-01-01`, `date_precision` = `year`. A cutoff keeps "
        "papers dated strictly after it (so a paper of the cutoff's own year is dropped unless the cutoff is "
        "in the previous year). No year window is applied by default: the paper's 2000-2020 emphasis is soft.",
        "- A cutoff does **not** remove leakage of the gold's raw inputs: citation counts and journal indicators "
        "are collected years after publication.",
        "- **Bibliometric snapshot date: not stated by the paper (unknown for v1).** Citation-based gold drifts "
        "as counts grow; record the snapshot date of any refreshed pool (build option `snapshot_date`, shown "
        "in the reader options above and in `sciprobe_build.json`) and never mix gold from different snapshots in "
        "one comparison.",
    ]),
    "Task and scoring decisions": "\n".join([
        "- `pure_qa` (the lighteval card's only task). Prompt: own wording, version `" + PROMPT_VERSION + "`; gives "
        "the two published weights; abstracts are not truncated. Strict JSON "
        "`{score, dimensions{7}, reasoning, confidence}`; the lenient parser accepts fenced blocks, JSON inside "
        "prose, trailing commas and alternative key names.",
        "- Failures (empty, non-JSON, missing score or dimensions, non-numeric, any value outside 0-100) are "
        "recorded with their reason. `paper` mode drops them (as the paper) and reports `n_success`; `strict` "
        "mode scores them as 0.",
        "- Whose composite: the model's own `score` is scored (Part A, WAPE); `composite_consistency_mae` reports "
        "its distance from the weighted sum of its dimensions.",
        "- Aggregation: pooled WAPE over all scored items is the headline; per-discipline scores and their macro "
        "average are reported beside it.",
        "- `dimagent_v3` (sciprobe's agent loop, `sciprobe.benchmarks.scitaste.agent`): round 1 offers the nine "
        "single-`bibcode` tools of the spec's proposed set (Table 6 is missing) and asks for all of them; round 2 "
        "returns the JSON. Tool backends: a frozen snapshot keyed by identifier (default; the bundled sample has "
        "an invented one) or live NASA ADS / OpenAlex clients. Unknown identifiers and tool errors are returned "
        "to the model and recorded; at most `max_tool_calls` (default 9) calls run per paper. Models without "
        "function calling (the bundled model) use a `CALL <tool> <identifier>` text protocol; its failures are "
        "recorded. Live tools drift and leak the gold's raw inputs: use a snapshot for comparisons.",
        "- `native_search`, `dimagent_v3_native`: provider-dependent (litellm `web_search_options`); skipped with a "
        "message when litellm reports no web search for the model, unless forced.",
        "- Name clash: `Dustzx/SciTaste` and the RLCF/SciJudge pairwise task are different benchmarks.",
    ]),
}

BENCHMARK = Benchmark(
    name="scitaste",
    title="SciTaste-Bench",
    version="1.0.0",
    description=("SciTaste-Bench asks LLMs to judge the research taste of scientific papers: from discipline, "
                 "title, abstract and identifier, predict the Academic Taste Index (0-100) and its seven dimension "
                 "scores (citation impact, knowledge breadth, semantic novelty, disruptiveness, conceptual "
                 "innovation, team collaboration, journal impact). Six disciplines; gold is bibliometric. "
                 "Packaged by sciprobe from the release layout."),
    citation=CITATION,
    license="unknown",
    homepage=f"https://huggingface.co/datasets/{HF_DATASET}",
    configs={
        "selected": ConfigSpec("selected", "the 300 evaluation papers (50 per discipline)", paper_features),
        "backup": ConfigSpec("backup", "the 5,700-paper backup pool for refresh and re-sampling", paper_features),
        **{d: ConfigSpec(d, f"the selected {d} papers (per-discipline view)", paper_features) for d in DISCIPLINES},
    },
    tasks=TASKS,
    read_source=lazy("sciprobe.benchmarks.scitaste.source:read_source"),
    source_options={"snapshot_date": None},
    sample_source=Path(__file__).resolve().parent / "sample",
    card_sections=CARD_SECTIONS,
    prompt_version=PROMPT_VERSION,
    demo={"pure_qa": {"limit": 4}},
    baselines="sciprobe.benchmarks.scitaste.baselines:baselines",
    report_figures="sciprobe.benchmarks.scitaste.report_figures:figures",
)
