"""
name: IDRBench
dataset: v1 release files of project-ai4science/irllm-framework (or the same layout from the hub)
abstract: Can LLMs recognise interdisciplinary research (IPI), judge whether two papers integrate into a
  valid interdisciplinary idea (I3, Set 1 "feasibility" and Set 2 "awareness"), and recommend the right
  partner paper (I2R, a Swiss tournament of pairwise comparisons scored by MRR)?
paper: Shen, de Sousa, Marçal de Andrade Nascimento, Guo, Zhu. ICML 2026, arXiv:2507.15736v3
spec: shared/spec/idrbench.md

The declaration every artifact reads: dataset configs and features, tasks (prompt, parser, scorer,
generation parameters), card text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from sciprobe.benchmarks.idrbench.generation import IDEA_GENERATION
from sciprobe.benchmarks.idrbench.i2r import SWISS
from sciprobe.benchmarks.idrbench.upstream import UPSTREAM
from sciprobe.benchmarks.idrbench.release import PINNED
from sciprobe.core.declaration import Benchmark, Breakdown, ConfigSpec, PaperCount, TaskSpec
from sciprobe.core.lazy import lazy
from sciprobe.core.score_ranges import ScoreRange, non_negative, unit

CITATION = """
@inproceedings{shen26d,
  title     = {{IDRBench}: Understanding the Capability of Large Language Models on Interdisciplinary Research},
  author    = {Shen, Y. and de Sousa, D. X. and Mar{\\c{c}}al de Andrade Nascimento, R. and Guo, H. and Zhu, X.},
  booktitle = {Proceedings of the 43rd International Conference on Machine Learning (ICML)},
  series    = {PMLR},
  volume    = {306},
  year      = {2026},
  note      = {arXiv:2507.15736v3}
}
"""

# Upstream removes this P_A id before every evaluation (absent from the v1 files; kept for fidelity).
EXCLUDED_PAPERS = ("2411.04715",)

# Where the declared counts come from: the v3 paper gives only totals (335 positives, Table 1: 1,014 annotated
# papers), which the v1 release does not reproduce, so the counts are those of the release files at the pin.
V1_COUNTS = "release v1 at aa621e4 (spec idrbench.md §2-3)"

# Official generation settings of irllm-framework@aa621e4 (config.yml); the paper states 1500 max tokens.
OFFICIAL_GENERATION = {"temperature": 1.0, "max_tokens": 500}


# ---------------------------------------------------------------- features (lazy: datasets imports on use)

def _paper_features(with_id: bool = True) -> dict:
    from datasets import Value

    return {**({"id": Value("string")} if with_id else {}), "title": Value("string"), "abstract": Value("string")}


def _common(label: bool = True) -> dict:
    from datasets import ClassLabel, Value

    return {**({"label": ClassLabel(names=["no", "yes"])} if label else {}),
            "date": Value("string"), "date_precision": Value("string")}


def ipi_features():
    from datasets import Features, List, Value

    return Features({"id": Value("string"), "title": Value("string"), "abstract": Value("string"),
                     "categories": List(Value("string")), "disciplines": List(Value("string")),
                     **_common(), "is_fewshot_example": Value("bool")})


def i3_features():
    from datasets import Features, List, Value

    strings = List(Value("string"))
    return Features({"id": Value("string"), "pa_id": Value("string"),
                     "side_b": List(_paper_features()), "side_c": List(_paper_features()),
                     "side_b_categories": strings, "side_c_categories": strings,
                     "side_b_disciplines": strings, "side_c_disciplines": strings,
                     "sides_share_discipline": Value("bool"), "explanation": Value("string"),
                     "research_type": Value("string"), **_common(), "is_fewshot_example": Value("bool")})


def idea_features():
    """The I3 pair without the few-shot flag: the generation rows keep their P_A (negatives too) and label."""
    from datasets import Features

    return Features({k: v for k, v in i3_features().items() if k != "is_fewshot_example"})


def i2r_features():
    from datasets import Features, List, Value

    strings = List(Value("string"))
    return Features({"id": Value("string"), "pa_id": Value("string"),
                     "seed": {**_paper_features(), "categories": strings, "disciplines": strings},
                     "targets": List(_paper_features()), "target_categories": strings,
                     "distractors": List(_paper_features(with_id=False)), "n_players": Value("int32"),
                     "research_type": Value("string"), **_common(label=False)})


# ---------------------------------------------------------------- scoring

def _gold_label(row: Mapping) -> str:
    return "yes" if row["label"] else "no"


def _not_excluded(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Upstream drops the EXCLUDED_PAPERS ids (P_A) before every evaluation."""
    return [r for r in records if str(r.get("pa_id") or r["id"]) not in EXCLUDED_PAPERS]


def score_classification(records: Sequence[Mapping[str, Any]], mode: str = "official") -> Any:
    """Records carry ``gold``, ``prediction`` (tolerant parse) and ``official`` (official regex) labels.

    official: upstream's regexes, unparsable items dropped, EXCLUDED_PAPERS removed, upstream's metrics dict
    (scikit-learn); no number where upstream's ``evaluate_file`` fails (one class left).
    strict: tolerant parser, unparsable items stay and count as wrong.
    """
    from sciprobe.scoring.classification import binary_classification

    if mode == "official":
        kept = _not_excluded(records)
        return binary_classification([r["official"] for r in kept], [r["gold"] for r in kept], mode="official")
    if mode == "strict":
        return binary_classification([r["prediction"] for r in records], [r["gold"] for r in records],
                                     mode="strict", failure_policy="wrong")
    raise ValueError(f"unknown mode {mode!r} for idr_classification (official, strict)")


def score_i2r(records: Sequence[Mapping[str, Any]], mode: str = "official") -> Any:
    """Records carry the final ``standings`` (titles, best first), their ``scores`` and ``gold`` titles.

    official: upstream's evaluation (EXCLUDED_PAPERS removed; titles compared exactly, ties by title; nDCG@10
    normalised over the gold papers in the top 10); corrected: expected rank over ties, nDCG@k over
    min(k, |gold|), duplicate titles rejected.
    """
    from sciprobe.benchmarks.idrbench.i2r import mode_view
    from sciprobe.benchmarks.idrbench.scoring.official_ranking import idrbench_official_ranking
    from sciprobe.scoring.ranking import ranking_metrics

    records = mode_view(records, mode)  # replayed comparisons: each mode's own tournament
    if mode == "official":
        kept = _not_excluded(records)
        return idrbench_official_ranking([r["standings"] for r in kept], [r["gold"] for r in kept],
                                         scores=[r["scores"] for r in kept])
    if mode != "corrected":
        raise ValueError(f"unknown mode {mode!r} for I2R (official, corrected)")
    report = ranking_metrics([r["standings"] for r in records], [r["gold"] for r in records],
                             scores=[r["scores"] for r in records], tie_policy="expected_rank")
    report.mode = mode
    return report


def classification_items(records: Sequence[Mapping[str, Any]], mode: str, report: Any,
                         headline: str = "") -> Any:
    """Macro-F1 as a statistic over items (confidence intervals, breakdowns, ``sciprobe compare``): official keeps
    the parsed answers of the non-excluded papers, strict imputes an unparsable answer as wrong."""
    from sciprobe.scoring.item_scores import binary_f1_items

    gold = [r["gold"] == "yes" for r in records]
    if mode == "official":
        kept = {id(r) for r in _not_excluded(records)}
        pred = [None if id(r) not in kept or r.get("official") is None else r["official"] == "yes" for r in records]
        failed = [id(r) in kept and r.get("official") is None for r in records]
        return binary_f1_items(gold, pred, failed, official=True)
    failed = [r.get("prediction") is None for r in records]
    pred = [(not g) if f else r["prediction"] == "yes" for r, g, f in zip(records, gold, failed)]
    return binary_f1_items(gold, pred, failed, official=False)


def i2r_items(records: Sequence[Mapping[str, Any]], mode: str, report: Any,
              headline: str = "") -> Any:
    """MRR as the mean of the per-query reciprocal ranks the scorer reports (official: over the non-excluded
    papers); compared between runs with the paper's Wilcoxon signed-rank test."""
    from sciprobe.scoring.item_scores import mean_items

    rr = iter(report.values.get("per_query_rr") or [])
    kept = {id(r) for r in (_not_excluded(records) if mode == "official" else records)}
    values = [next(rr) if id(r) in kept else None for r in records]
    return mean_items(values, [r.get("standings") is None for r in records], test="wilcoxon")


def _sides_disciplines(row: Mapping) -> list[str]:
    return sorted(set(row.get("side_b_disciplines") or []) | set(row.get("side_c_disciplines") or []))


IPI_BREAKDOWNS = (Breakdown("disciplines", "discipline"),)
I3_BREAKDOWNS = (Breakdown("disciplines", "discipline (either side)", _sides_disciplines),
                 Breakdown("sides_share_discipline", "sides share a discipline"))
I2R_BREAKDOWNS = (Breakdown("seed_disciplines", "seed paper discipline",
                            lambda row: list((row.get("seed") or {}).get("disciplines") or [])),
                  Breakdown("research_type", "research type"),
                  Breakdown("n_targets", "gold papers", lambda row: len(row.get("targets") or [])))


# ---------------------------------------------------------------- tasks

_PROMPTS = "sciprobe.benchmarks.idrbench.upstream:"
_GENERATION = "sciprobe.benchmarks.idrbench.generation:"
# prompt builders, parsers and the source reader load on their first call (sciprobe.core.lazy)
IPI_MESSAGES = lazy("sciprobe.benchmarks.idrbench.prompts:ipi_messages")
I3_MESSAGES = lazy("sciprobe.benchmarks.idrbench.prompts:i3_messages")
PARSE_IPI = lazy("sciprobe.benchmarks.idrbench.parsing:parse_ipi")
PARSE_I3 = lazy("sciprobe.benchmarks.idrbench.parsing:parse_i3")
PARSE_I2R = lazy("sciprobe.benchmarks.idrbench.parsing:parse_i2r")


#: the valid range of each idea_rating score: the judges' 1-5 ratings (per judge too), shares, counts
IDEA_RATING_RANGES = (ScoreRange("correctness*", 1.0, 5.0, decimals=2), ScoreRange("clarity*", 1.0, 5.0, decimals=2),
                      *unit("parse_rate"), ScoreRange("mean_confidence", 0.0, decimals=2), *non_negative("n_*"))
#: the valid range of each idr_classification score (sciprobe.scoring.ranges)
IDR_CLASSIFICATION_RANGES = tuple(unit("*f1*", "tpr", "tnr", "fpr", "fnr", "accuracy", "precision*", "recall*",
                                       "parse_failure_rate"))


def _classification_task(name: str, config: str, shots: int, build, parse, headline_desc: str,
                         upstream_prompt: str) -> TaskSpec:
    return TaskSpec(
        name=name, config=config, description=headline_desc + (f", {shots}-shot" if shots else ", 0-shot"),
        metric="idr_classification", score_ranges=IDR_CLASSIFICATION_RANGES,
        score=score_classification, build_messages=build, parse=parse,
        gold=_gold_label, num_fewshot=shots, fewshot_split="fewshot" if shots else None,
        generation=dict(OFFICIAL_GENERATION), modes=("official", "strict"), headline="macro_f1",
        record_fields=("pa_id", *(("disciplines",) if config == "ipi" else ("sides_share_discipline",))),
        prediction_labels=("yes", "no"), breakdowns=IPI_BREAKDOWNS if config == "ipi" else I3_BREAKDOWNS,
        item_scores=classification_items, upstream_prompt=_PROMPTS + upstream_prompt,
        leaderboard_mode="strict")  # official drops unparsable answers: answering only easy items would pay


TASKS = {
    "ipi": _classification_task("ipi", "ipi", 0, IPI_MESSAGES, PARSE_IPI,
                                "IDR paper identification (Macro-F1)", "ipi_prompts"),
    "ipi_5shot": _classification_task("ipi_5shot", "ipi", 5, IPI_MESSAGES, PARSE_IPI,
                                      "IDR paper identification (Macro-F1)", "ipi_fewshot_prompts"),
    "i3_set1": _classification_task("i3_set1", "i3_set1", 0, I3_MESSAGES, PARSE_I3,
                                    "IDR idea integration, Set 1 feasibility (Macro-F1)", "i3_prompts"),
    "i3_set1_3shot": _classification_task("i3_set1_3shot", "i3_set1", 3, I3_MESSAGES, PARSE_I3,
                                          "IDR idea integration, Set 1 feasibility (Macro-F1)",
                                          "i3_fewshot_prompts"),
    "i3_set2": _classification_task("i3_set2", "i3_set2", 0, I3_MESSAGES, PARSE_I3,
                                    "IDR idea integration, Set 2 awareness (Macro-F1)", "i3_prompts"),
    "i3_set2_3shot": _classification_task("i3_set2_3shot", "i3_set2", 3, I3_MESSAGES, PARSE_I3,
                                          "IDR idea integration, Set 2 awareness (Macro-F1)",
                                          "i3_fewshot_prompts"),
    "idea_generation": TaskSpec(
        name="idea_generation", config="idea_generation",
        description="IDR idea generation (paper §5.3): write the abstract integrating two sides; a judge panel "
                    "rates Correctness and Clarity 1-5 (--judge)",
        metric="idea_rating", score_ranges=IDEA_RATING_RANGES, score=lazy(_GENERATION + "score_generation"),
        build_messages=lazy(_GENERATION + "idea_messages"), parse=lazy(_GENERATION + "parse_idea"),
        runner=IDEA_GENERATION, generation=dict(OFFICIAL_GENERATION), modes=("paper",), headline="correctness",
        extra_columns=("clarity",), corpus_metrics=(("correctness", True), ("clarity", True), ("parse_rate", True)),
        record_fields=("pa_id",), breakdowns=(Breakdown("label", "annotated pair (yes) or random pair (no)",
                                                        lambda row: "yes" if row.get("label") else "no"),),
        item_scores=lazy(_GENERATION + "generation_items")),
    "i2r": TaskSpec(
        name="i2r", config="i2r", description="IDR idea recommendation: 10-round Swiss tournament, MRR",
        metric="ranking", score=score_i2r, parse=PARSE_I2R, runner=SWISS,
        generation=dict(OFFICIAL_GENERATION), modes=("official", "corrected"), headline="mrr",
        upstream_prompt=_PROMPTS + "i2r_prompts", record_fields=("pa_id", "research_type"),
        breakdowns=I2R_BREAKDOWNS, item_scores=i2r_items, cluster_field="pa_id",
        leaderboard_mode="corrected"),  # expected rank over ties: no alphabetical tie-break to lean on
}

CARD_SECTIONS = {
    "Deviations and decisions": "\n".join([
        "- **Whitespace normalisation (on by default, `normalize_whitespace`)**: titles and abstracts are "
        "collapsed with `\" \".join(s.split())`. In the release, gold cited papers have no hard line breaks "
        "while negatives and I2R distractors are raw hard-wrapped arXiv text, which leaks the label. Build with "
        "`--raw-whitespace` to keep the release text.",
        "- **Ids** are strings; arXiv ids stored as JSON floats (`2411.19`) and the corrupted `2412.2062` are "
        "zero-padded to five digits after the dot. Missing cited-paper ids are empty strings.",
        "- **Dates**: IPI negatives keep their own date (`date_precision=day`); every other row takes the month "
        "of P_A's arXiv id, and I3 negatives (no P_A) the latest month among the papers shown "
        "(`date_precision=month`). A cutoff only controls P_A: older cited papers may still be memorised.",
        "- **Disciplines** are mapped from arXiv categories (spec §1.1); free-text disciplines map to `Other`; "
        "decision: `math-ph` maps to Physics. `sides_share_discipline` flags the I3 pairs whose sides share a "
        "merged discipline (182 of the v1 Set-1 negatives do); they are kept, as upstream.",
        "- **Few-shot examples** are the paper's fixed ones (IPI 5, I3 3) and are also test items "
        "(`is_fewshot_example`). Decision: they stay in the scored set, as in the paper; filter on the flag to "
        "exclude them. The `fewshot` split holds them in prompt order; the third I3 example pairs side b of "
        "Set-1 negatives `neg-d21-554` and `neg-d21-518`.",
        "- **Release layout (issue 25)**: the files the pinned `tasks.py` (irllm-framework@aa621e4) reads: "
        "`data_exp_1.json` (`ipi`), `data_exp_2_1.json` (`i3_set1`), `data_exp_2_2.json` (`i3_set2`), "
        "`data_exp_3_1.json` (`i2r`), `data_exp_3_2.json` (`i2r_level2`), `data_exp_4_1.json` "
        "(`idea_generation`). The part files of older commits (`data_exp_3_{1,2}_part_<n>.json`) are read in part "
        "order when the single file is absent, as `recommend_task` accepts them. `data_exp_2_3.json` (commit "
        "5195b17, deleted before the pin) is the historical variant `i3_set2_5195b17`. A file the source lacks "
        "is named in one line and its config skipped; asked for with `--config`, it is an error. "
        "`sciprobe doctor` checks a folder or checkout against these files, their columns and the declared counts.",
        "- **Declared counts** are those of the release at the pin (spec idrbench.md §2-3: 1,120 / 1,120 / 253 / "
        "188 / 300); the v3 paper gives only totals (335 positives, 1,014 annotated papers), which the v1 files do "
        "not reproduce. `i3_set2` (`data_exp_2_2.json`, rewritten in af50f64) has no declared count: its content "
        "was not available when the count was declared.",
        "- **`idea_generation`** (paper §5.3, Table 19): each row is the (side b, side c) pair upstream's "
        "`generate_task` asks a model to write an interdisciplinary abstract for (negatives keep their P_A id and "
        "are keyed `<P_A>-neg-<k>`). The task's prompt and answer follow upstream's `generate_task` at the pin "
        "(the sides first, then the instruction; `Your abstract: ... Confidence score: N`, read with upstream's "
        "pattern; sciprobe's own wording). Its scoring follows the paper, since upstream's evaluation code is "
        "silent on generation: the paper's experts rate Correctness and Clarity from 1 to 5; here a judge panel "
        "(`--judge`) gives those ratings, which are not comparable with the paper's human ones.",
        "- **Version**: the v1 files (120 positives, 1:8.3) do not reproduce the v3 paper's Table 2 (335 "
        "positives); every build and result records the version and the source fingerprint.",
    ]),
}

BENCHMARK = Benchmark(
    name="idrbench",
    title="IDRBench",
    version="1.0.0",
    description=("IDRBench evaluates whether LLMs can identify interdisciplinary research papers (IPI), judge "
                 "whether two papers integrate into a valid interdisciplinary idea (I3, two negative sets), and "
                 "recommend the partner paper of a seed paper (I2R). Packaged by sciprobe from the v1 release "
                 "layout; only split `test` exists (plus `fewshot`, the fixed prompt examples)."),
    citation=CITATION,
    license="unknown",
    homepage="https://project-ai4science.github.io/idrbench-framework/",
    configs={
        "ipi": ConfigSpec("ipi", "IDR paper identification: one paper per row, label yes = interdisciplinary "
                          "(`data_exp_1.json`)", ipi_features, ("test", "fewshot"), context_splits=("fewshot",),
                          paper_count=PaperCount(1120, V1_COUNTS + ": 120 positives + 1,000 negatives")),
        "i3_set1": ConfigSpec("i3_set1", "IDR idea integration, Set 1 (feasibility): random cross-discipline "
                              "negatives (`data_exp_2_1.json`)", i3_features, ("test", "fewshot"),
                              context_splits=("fewshot",),
                              paper_count=PaperCount(1120, V1_COUNTS + ": 120 positives + 1,000 negatives")),
        "i3_set2": ConfigSpec("i3_set2", "IDR idea integration, Set 2 (awareness): same-sub-discipline negatives "
                              "(`data_exp_2_2.json`, the file the pinned `classify_task` reads)",
                              i3_features, ("test", "fewshot"), context_splits=("fewshot",)),
        "i3_set2_5195b17": ConfigSpec("i3_set2_5195b17", "historical variant of Set 2: `data_exp_2_3.json` of "
                                      "commit 5195b17 (deleted before the pin; built only when the source has it)",
                                      i3_features, ("test", "fewshot"), context_splits=("fewshot",),
                                      paper_count=PaperCount(1120, V1_COUNTS + " (5195b17): 120 + 1,000")),
        "i2r": ConfigSpec("i2r", "IDR idea recommendation, Level 1: a seed paper, its gold partner(s) and "
                          "distractors (`data_exp_3_1.json`, or its part files)", i2r_features,
                          paper_count=PaperCount(253, V1_COUNTS + ": 253 Level-1 I2R instances from 120 P_A")),
        "i2r_level2": ConfigSpec("i2r_level2", "IDR idea recommendation, Level 2 (harder: candidates biased "
                                 "toward the target's discipline; `data_exp_3_2.json`, or its part files)",
                                 i2r_features,
                                 paper_count=PaperCount(188, V1_COUNTS + ": 188 Level-2 instances from 90 P_A")),
        "idea_generation": ConfigSpec("idea_generation", "IDR idea generation (paper §5.3, Table 19): a "
                                      "(side b, side c) pair to write an interdisciplinary abstract for; label yes "
                                      "= the annotated pair (`data_exp_4_1.json`)", idea_features,
                                      paper_count=PaperCount(300, V1_COUNTS + ": 120 positives + 180 negatives")),
    },
    release_layouts=(PINNED,),
    tasks=TASKS,
    read_source=lazy("sciprobe.benchmarks.idrbench.source:read_source"),
    source_options={"normalize_whitespace": True},
    sample_source=Path(__file__).resolve().parent / "sample",
    card_sections=CARD_SECTIONS,
    # the demo: IPI, 8 items (the CLI's --limit)
    demo={"ipi": {}},
    upstream=UPSTREAM,
    upstream_logs="sciprobe.benchmarks.idrbench.upstream_logs:read_logs",
    baselines="sciprobe.benchmarks.idrbench.baselines:baselines",
    report_figures="sciprobe.benchmarks.idrbench.report_figures:figures",
)
