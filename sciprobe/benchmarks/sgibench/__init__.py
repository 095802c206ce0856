"""
name: SGI-Bench
dataset: the five InternScience/SGI-* hub datasets (split test), read from local Parquet in the hub schema
abstract: Scientific general intelligence probed with scientist-aligned workflows: scientific deep research
  (318), idea generation (315), dry experiments (code completion run on 5 unit tests; 271), wet experiments
  (protocol design from an action pool; 68) and multimodal experimental reasoning (291). The SGI-Score is the
  mean of five component scores.
paper: "Probing Scientific General Intelligence of LLMs with Scientist-Aligned Workflows", arXiv:2512.16969v1
spec: shared/spec/sgibench.md

The declaration every artifact reads: dataset configs and features, tasks (prompt, parser, scorer,
generation parameters), card text. Scoring lives in ``sciprobe.benchmarks.sgibench.scoring`` (official and paper
modes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sciprobe.benchmarks.sgibench.dry_runner import SANDBOX
from sciprobe.benchmarks.sgibench.idea_runner import IDEA_PANEL
from sciprobe.benchmarks.sgibench.judged_runners import DEEP_RESEARCH, REASONING
from sciprobe.benchmarks.sgibench.release_layout import HUB_DATASETS, PAPER_COUNTS, hub_layout
from sciprobe.benchmarks.sgibench.upstream import UPSTREAM, WET_SOFT_COMMIT
from sciprobe.core.declaration import Benchmark, Breakdown, Command, ConfigSpec, Parsed, TaskSpec
from sciprobe.core.lazy import lazy
from sciprobe.core.score_ranges import non_negative, percent

CITATION = """
@article{sgibench2025,
  title   = {Probing Scientific General Intelligence of {LLMs} with Scientist-Aligned Workflows},
  author  = {{Shanghai AI Laboratory (InternScience)}},
  journal = {arXiv preprint arXiv:2512.16969},
  year    = {2025}
}
"""

BENCHMARK_DATE = "2025-12"  # freeze: repository commits 9-12 Dec 2025, arXiv v1 18 Dec 2025
UPSTREAM_COMMIT = UPSTREAM.commit
_PROMPTS = "sciprobe.benchmarks.sgibench.upstream:"
# Upstream generation settings: temperature 0, no max_tokens, one zero-shot template (spec §3).
OFFICIAL_GENERATION = {"temperature": 0.0, "max_tokens": None}
ROWS = {"deep_research": 318, "idea_generation": 315, "dry_experiment": 271, "wet_experiment": 68,
        "experimental_reasoning": 291}


# ---------------------------------------------------------------- features (lazy: datasets imports on use)

def _common() -> dict:
    from datasets import Value

    # ``id`` = ``idx``: the item key every generic runner, predictions file and the lighteval adapter read.
    return {"id": Value("string"), "discipline": Value("string"), "direction": Value("string"),
            "date": Value("string")}


def deep_research_features():
    from datasets import Features, List, Value

    return Features({"idx": Value("string"), "question": Value("string"), "steps": List(Value("string")),
                     "answer": Value("string"), "type": Value("string"), **_common()})


def idea_features():
    from datasets import Features, List, Value

    pairs = List({"key": Value("string"), "value": Value("string")})
    text = {k: Value("string") for k in ("question", "challenge", "limitation", "motivation", "task_objective",
                                         "core_idea", "data", "expected_outcome")}
    return Features({"idx": Value("string"), **text, "related_work": pairs, "existing_solutions": pairs,
                     "implementation_steps": pairs, "evaluation_metrics": pairs, "related_work_test": pairs,
                     "keywords": List(Value("string")), "implementation_order": List(Value("string")),
                     "parse_errors": List(Value("string")), **_common()})


def dry_features():
    from datasets import Features, List, Value

    tests = {f"unit_test_{i}_{k}": Value("string") for i in range(5) for k in ("data", "output")}
    return Features({"idx": Value("string"), "question": Value("string"), "data_code": Value("string"),
                     "main_code": Value("string"), "incomplete_main_code": Value("string"),
                     "incomplete_functions": List(Value("string")), **tests, "function_type": Value("string"),
                     "runtime": Value("float32"), "external_files": List(Value("string")), **_common()})


def wet_features():
    from datasets import Features, List, Value

    return Features({"idx": Value("string"), "question": Value("string"), "action_pool": Value("string"),
                     "answer": Value("string"), "action_names": List(Value("string")), **_common()})


def reasoning_features():
    from datasets import Features, Image, List, Value

    return Features({"idx": Value("string"), "question": Value("string"), "images": List(Image()),
                     "options": List(Value("string")), "steps": List(Value("string")),
                     "step_images": List(Image()), "answer": Value("int32"), "answer_letter": Value("string"),
                     "image_type": Value("string"), "type": Value("string"), **_common()})


# ---------------------------------------------------------------- parsing (one generation serves both modes)

def parse_deep_research(text: str) -> Parsed:
    from sciprobe.benchmarks.sgibench.scoring._common import has_answer_block
    from sciprobe.benchmarks.sgibench.scoring.deep_research import extract_answer

    text = text or ""
    return Parsed(extract_answer(text), "official" if has_answer_block(text) else "official:no_tag",
                  {"response": text})


def parse_wet(text: str) -> Parsed:
    from sciprobe.benchmarks.sgibench.scoring._common import extract_answer_block
    from sciprobe.benchmarks.sgibench.scoring.wet_experiment import parse_protocol

    text = text or ""
    block = extract_answer_block(text)
    official, tolerant = parse_protocol(block, "official"), parse_protocol(block, "paper")
    path = "official" if official else ("tolerant:balanced_parentheses" if tolerant else "failed")
    return Parsed(block if (official or tolerant) else None, path,
                  {"response": text, "n_steps_official": len(official), "n_steps_tolerant": len(tolerant)})


def parse_reasoning(text: str) -> Parsed:
    from sciprobe.benchmarks.sgibench.scoring.reasoning import extract_choice

    text = text or ""
    official, lenient = extract_choice(text, "official"), extract_choice(text, "paper")
    path = "official" if official else ("tolerant:last_box" if lenient else "failed")
    return Parsed(lenient, path, {"official": official, "response": text})


# ---------------------------------------------------------------- scoring (records: response, gold, row, ...)

def _responses(records: Sequence[Mapping[str, Any]]) -> list[str | None]:
    return [r.get("response") for r in records]


def score_deep_research(records: Sequence[Mapping[str, Any]], mode: str = "official") -> Any:
    """EM (with the answer re-formatting parser's candidate when the runner asked one, as upstream), plus the
    step-level accuracy from the stored step-judge replies (``sciprobe.benchmarks.sgibench.judged``)."""
    from sciprobe.benchmarks.sgibench.judged import merge_judged
    from sciprobe.benchmarks.sgibench.scoring.deep_research import exact_match, step_level_accuracy

    parsed = [r.get("parsed_answer") for r in records]
    golds = [r["gold"] for r in records]
    parser_ran = any(r.get("parser_id") for r in records)
    report = exact_match(_responses(records), golds, mode=mode,
                         parsed_answers=parsed if parser_ran or any(p is not None for p in parsed) else None)
    if parser_ran:
        parser_id = next(r["parser_id"] for r in records if r.get("parser_id"))
        plain = exact_match(_responses(records), golds, mode=mode)
        report.values["exact_match_without_parser"] = plain.values["exact_match"]
        report.values["parser_n_failed"] = sum(1 for r in records if r.get("response") is not None
                                               and r.get("parsed_answer") is None)
        report.params["answer_parser"] = parser_id
        report.notes.append(f"exact_match accepts the answer re-formatting parser's output ({parser_id}) as a "
                            "second candidate, as upstream; exact_match_without_parser is the parser-free value")
    elif any(r.get("judge_ids") is not None for r in records):  # an evaluate run: say the parser did not run
        report.notes.append("answer re-formatting parser not run: exact_match uses the extracted answer only")
    merge_judged(report, records, mode, key="step_level_accuracy", prefix="sla", name="step-level accuracy (SLA)",
                 score=step_level_accuracy)
    return merge_answer_judge(report, records, mode)


def merge_answer_judge(report: Any, records: Sequence[Mapping[str, Any]], mode: str) -> Any:
    """``llm_judge`` (the answer-level judge of SGI-Bench@5d562f6: 1 whenever exact match is 1) from the stored
    replies (``answer_judge_replies``); None, with a note, where no answer judge ran."""
    from sciprobe.benchmarks.sgibench.judged import merge_judged
    from sciprobe.benchmarks.sgibench.scoring.deep_research import LLM_JUDGE_COMMIT, answer_judge_accuracy

    if not any(r.get("answer_judge_replies") is not None for r in records):
        report.values["llm_judge"] = None
        report.notes.append("llm_judge (answer-level judge) not computed: it needs a judge (`--judge SPEC`)")
        return report
    exact = report.values["per_item"]
    merge_judged(report, records, mode, key="llm_judge", prefix="answer_judge",
                 name=f"llm_judge (answer-level judge, SGI-Bench@{LLM_JUDGE_COMMIT[:7]}; 1 whenever exact match is 1)",
                 score=lambda outputs, m: answer_judge_accuracy(outputs, exact, m))
    return report


def score_wet(records: Sequence[Mapping[str, Any]], mode: str = "official") -> Any:
    from sciprobe.benchmarks.sgibench.scoring.wet_experiment import wet_experiment_scores

    return wet_experiment_scores(_responses(records), [r["gold"] for r in records], mode=mode)


def score_reasoning(records: Sequence[Mapping[str, Any]], mode: str = "official") -> Any:
    """MCA, how the images reached the model (``images_dropped``), and the reasoning validity (RV) from the
    stored judge replies (``sciprobe.benchmarks.sgibench.judged``)."""
    from sciprobe.benchmarks.sgibench.judged import merge_images, merge_judged
    from sciprobe.benchmarks.sgibench.scoring.reasoning import multiple_choice_accuracy, reasoning_validity

    report = multiple_choice_accuracy(_responses(records), [r["gold"] for r in records], mode=mode)
    merge_images(report, records)
    return merge_judged(report, records, mode, key="rv", prefix="rv", name="reasoning validity (RV)",
                        score=reasoning_validity)


def score_idea(records: Sequence[Mapping[str, Any]], mode: str = "official") -> Any:
    """Records carry ``response``, ``row`` and the panel's ``votes`` (from the idea-panel runner)."""
    from sciprobe.benchmarks.sgibench.scoring.idea import idea_generation_scores

    votes = [r.get("votes") for r in records]
    judge_ids = next((list(r["judge_ids"]) for r in records if r.get("judge_ids")), [])
    return idea_generation_scores(_responses(records), [r["row"] for r in records], mode=mode,
                                  votes=votes if judge_ids or any(v is not None for v in votes) else None,
                                  judge_ids=judge_ids)


def score_dry(records: Sequence[Mapping[str, Any]], mode: str = "official") -> Any:
    """Records carry ``runs`` (the sandbox runner's five results, or None), ``runs_paper`` (the paper-mode
    program's runs when it differs), ``gold`` (reference outputs) and the stored output-equivalence judge
    replies (replayed, never re-asked; see ``sciprobe.benchmarks.sgibench.dry_runner``)."""
    from sciprobe.benchmarks.sgibench.dry_runner import replay_judge
    from sciprobe.benchmarks.sgibench.scoring.dry_experiment import dry_experiment_scores

    runs = [(r.get("runs_paper") or r.get("runs")) if mode == "paper" else r.get("runs") for r in records]
    return dry_experiment_scores(runs, [r["gold"] for r in records], mode=mode, judge=replay_judge(records))


# ---------------------------------------------------------------- headlines as statistics over items

def _no_answer(records: Sequence[Mapping[str, Any]]) -> list[bool]:
    return [r.get("response") is None for r in records]


def per_item_items(records: Sequence[Mapping[str, Any]], mode: str, report: Any,
                   headline: str = "") -> Any:
    """EM / MCA ×100: the mean of the scorer's 0/1 ``per_item`` over every item (McNemar between runs)."""
    from sciprobe.scoring.item_scores import mean_items

    return mean_items(report.values["per_item"], _no_answer(records), scale=100.0)


#: the wet metrics that are a mean over items of a per-item number of the same name
_WET_ITEM_METRICS = ("final", "ss", "pa", "soft_final", "soft_ss", "soft_pa")


def wet_items(records: Sequence[Mapping[str, Any]], mode: str, report: Any,
              headline: str = "") -> Any:
    """``final`` (the headline) or another of :data:`_WET_ITEM_METRICS` ×100: the mean over every item."""
    from sciprobe.scoring.item_scores import mean_items

    metric = headline if headline in _WET_ITEM_METRICS else "final"
    items = report.values["per_item"]
    failed = [it["status"] in ("no_response", "bad_reference", "upstream_crash") for it in items]
    return mean_items([it[metric] for it in items], failed, scale=100.0)


def dry_items(records: Sequence[Mapping[str, Any]], mode: str, report: Any,
              headline: str = "") -> Any:
    """PassAll@5 ×100: an item passes when all of its (up to five) unit tests pass."""
    from sciprobe.scoring.item_scores import mean_items

    items = report.values["per_item"]
    return mean_items([float(it["pass_nums"] >= min(5, max(len(r["gold"]), 1))) for it, r in zip(items, records)],
                      [it["failed"] for it in items], scale=100.0)


def idea_items(records: Sequence[Mapping[str, Any]], mode: str, report: Any,
               headline: str = "") -> Any:
    """``final``: the mean item score (official: over the items upstream does not raise on); None without the
    judge panel's votes."""
    from sciprobe.scoring.item_scores import mean_items
    from sciprobe.benchmarks.sgibench.scoring.idea import _DROPPED_UPSTREAM

    if report.values.get("final") is None:
        return None
    items = report.values["per_item"]
    values = [None if mode == "official" and it["status"] in _DROPPED_UPSTREAM else (it.get("final") or 0.0)
              for it in items]
    return mean_items(values, [it["status"] not in ("ok", "unparsable") for it in items])


def _breakdowns(*extra: str) -> tuple[Breakdown, ...]:
    titles = {"type": "question type", "image_type": "image type", "function_type": "function type"}
    return (Breakdown("discipline", "discipline"), Breakdown("direction", "research direction"),
            *(Breakdown(name, titles[name]) for name in extra))


#: SGI-Bench@3854aa9's soft wet scores (``compare_exp_steps_soft``): intervals and breakdowns in every results file
_WET_SOFT_METRICS = ("soft_final", "soft_ss", "soft_pa")


def _dry_gold(row: Mapping) -> list[str]:
    return [row[f"unit_test_{i}_output"] for i in range(5)]


# ---------------------------------------------------------------- tasks

#: the valid range of each sgi_score score (sciprobe.scoring.ranges)
SGI_RANGES = (
    *non_negative("aet", "n_*"),
    *percent("exact_match*", "step_level_accuracy*", "llm_judge*", "final*", "passall_at_*", "mca*", "rv*", "ss", "pa",
             "soft_*", "ser", "objective_*", "win_rate_*", "effectiveness", "novelty", "detailedness", "feasibility",
             "sgi_score"),
)


# prompt builders load on their first call (sciprobe.core.lazy)
_OWN_PROMPTS = "sciprobe.benchmarks.sgibench.prompts:"
_MODES = ("official", "paper")
#: the leaderboard ranks SGI-Bench by the paper's definitions: a failed generation scores 0 and is counted
#: (official mode reproduces upstream, which leaves some failing items out)
_RANKED = "paper"
TASKS = {
    "deep_research": TaskSpec(
        name="deep_research", config="deep_research", description="Scientific deep research, Exact Match",
        metric="sgi_score", score_ranges=SGI_RANGES,
        score=score_deep_research, build_messages=lazy(_OWN_PROMPTS + "deep_research_messages"),
        parse=parse_deep_research, gold=lambda row: row["answer"], runner=DEEP_RESEARCH,
        generation=dict(OFFICIAL_GENERATION), modes=_MODES, leaderboard_mode=_RANKED, headline="exact_match",
        corpus_metrics=(("exact_match", True),), extra_columns=("llm_judge",),
        upstream_prompt=_PROMPTS + "deep_research_prompts", record_fields=("discipline", "direction", "type"),
        breakdowns=_breakdowns("type"), item_scores=per_item_items),
    "idea_generation": TaskSpec(
        name="idea_generation", config="idea_generation",
        description="Idea generation: objective terms + 3-judge panel (2 position-swapped votes each)",
        metric="sgi_score", score_ranges=SGI_RANGES,
        score=score_idea, build_messages=lazy(_OWN_PROMPTS + "idea_messages"),
        gold=lambda row: row, runner=IDEA_PANEL, generation=dict(OFFICIAL_GENERATION), modes=_MODES,
        leaderboard_mode=_RANKED, headline="final",
        upstream_prompt=_PROMPTS + "idea_prompts", record_fields=("discipline", "direction"),
        breakdowns=_breakdowns(), item_scores=idea_items),
    "dry_experiment": TaskSpec(
        name="dry_experiment", config="dry_experiment",
        description="Dry experiment: completed functions run on 5 unit tests (PassAll@5)", metric="sgi_score",
        score_ranges=SGI_RANGES,
        score=score_dry, build_messages=lazy(_OWN_PROMPTS + "dry_messages"), gold=_dry_gold, runner=SANDBOX,
        generation=dict(OFFICIAL_GENERATION), modes=_MODES, leaderboard_mode=_RANKED, headline="passall_at_5",
        upstream_prompt=_PROMPTS + "dry_prompts", record_fields=("discipline", "direction", "function_type"),
        breakdowns=_breakdowns("function_type"), item_scores=dry_items),
    "wet_experiment": TaskSpec(
        name="wet_experiment", config="wet_experiment", description="Wet experiment protocol design, (SS + PA) / 2",
        metric="sgi_score", score_ranges=SGI_RANGES,
        score=score_wet, build_messages=lazy(_OWN_PROMPTS + "wet_experiment_messages"),
        parse=parse_wet, gold=lambda row: row["answer"], generation=dict(OFFICIAL_GENERATION), modes=_MODES,
        leaderboard_mode=_RANKED, headline="final",
        # the soft scores follow SGI-Bench@3854aa9 (after the pin); the SGI-Score keeps the strict `final`
        corpus_metrics=(("final", True), ("ss", True), ("pa", True), *((m, True) for m in _WET_SOFT_METRICS)),
        upstream_prompt=_PROMPTS + "wet_prompts", record_fields=("discipline", "direction"),
        breakdowns=_breakdowns(), item_scores=wet_items, analysed_metrics=_WET_SOFT_METRICS),
    "experimental_reasoning": TaskSpec(
        name="experimental_reasoning", config="experimental_reasoning",
        description="Multimodal experimental reasoning, multiple-choice accuracy", metric="sgi_score",
        score_ranges=SGI_RANGES,
        score=score_reasoning, build_messages=lazy(_OWN_PROMPTS + "reasoning_messages"), parse=parse_reasoning,
        gold=lambda row: int(row["answer"]), runner=REASONING, generation=dict(OFFICIAL_GENERATION),
        modes=_MODES, leaderboard_mode=_RANKED, headline="mca", corpus_metrics=(("mca", True),),
        upstream_prompt=_PROMPTS + "reasoning_prompts",
        record_fields=("discipline", "direction", "type", "image_type"),
        breakdowns=_breakdowns("type", "image_type"), item_scores=per_item_items),
}

CARD_SECTIONS = {
    "Deviations and decisions": "\n".join([
        f"- **Source**: the five `InternScience/SGI-*` hub datasets (split `test`), read from local Parquet in the "
        f"hub schema; expected sizes {ROWS} (paper §2.4; `sciprobe doctor` and the build compare them).",
        "- **Schemas checked against the pinned code** (`step_*.py` of `InternScience/SGI-Bench@8268d43`, which "
        "loads each dataset with `datasets.load_dataset` and no config name; there is no `load_sgi_dataset`): wet "
        "experiments are read as `question`, `discipline` and the protocol string `answer`; experimental reasoning "
        "as `question`, the `options` list (lettered in order), `images`, `step_images`, the `steps` list and the "
        "integer `answer` (letter `chr(65 + answer)`).",
        "- **Named subsets**: upstream publishes none that its code reads (its only selector is the discipline "
        "list); the hub's `SGI-*-Lite` and `SGI-DeepResearch-Gold` datasets are loaded by no script at the pin, "
        "their contents are unverified, and they are not read.",
        "- **Stringified dicts** (`related_work`, `existing_solutions`, `implementation_steps`, "
        "`evaluation_metrics`, `related_work_test`) are parsed with `ast.literal_eval` (never `eval`) into "
        "`[{key, value}]` lists; a field that does not parse becomes `[]` and is named in `parse_errors`.",
        "- **Reasoning answers** keep the 0-based `answer` and add `answer_letter = chr(65 + answer)`; images are "
        "`datasets.Image` lists (`images`, `step_images`).",
        "- **Wet experiments** add `action_names`, the actions declared in the pool (`<Name>(args)` entries).",
        "- **Dry experiments** keep the code fields and `unit_test_{0..4}_{data,output}`; `runtime` (float16 on "
        "the hub) is float32; `external_files` lists the upstream-relative paths items 0200 (UCI Adult, "
        "truncated upstream copy kept for fidelity), 0206 (MNIST) and 0236 (EM 3-D user study) need. The files "
        "are not redistributed: point `SCIPROBE_SGIBENCH_DRY_DATA` at a folder with upstream's layout; sha256 "
        "values are pinned in `sciprobe.benchmarks.sgibench.external`.",
        f"- **Dates**: items carry no dates (`date` is null); benchmark freeze `{BENCHMARK_DATE}` (repository "
        "commits 9-12 Dec 2025, arXiv v1 18 Dec 2025). Decision: a build with a cutoff keeps no undated rows and "
        "therefore fails with a clear error; the source papers date 2017-2025, so the freeze date does not imply "
        "post-cutoff content.",
        "- **Images in `sciprobe evaluate`**: reasoning items go to the model with their images as OpenAI content "
        "parts (PNG base64 data URLs, images before the text, as upstream). Decision: the bundled local models are "
        "text-only, so each image is replaced by a placeholder line and the run is flagged `images_dropped` (record, "
        "score value and score note; per-task option `images`: auto/send/drop); missing images are skipped and "
        "counted.",
        "- **Judged metrics in `sciprobe evaluate`**: with `--judge` (a panel: `'A;B'`), deep research also reports "
        "the step-level accuracy and `llm_judge` (the answer-level judge of SGI-Bench@5d562f6: 1 whenever exact "
        "match is 1, else the judge's semantic-equivalence verdict; failures score 0 and are counted), and runs the "
        "answer re-formatting parser (EM's second candidate as upstream); "
        "experimental reasoning the reasoning validity (the judge gets the images), with their own coverage; "
        "without a judge the score notes say they were not computed. None of them is part of the SGI-Score "
        "(`sciprobe sgibench score-overall`).",
        "- **Prompts** are sciprobe's own wording by default; only the formats the official parsers read are kept "
        "(`<answer>` tags, the protocol step layout, `\\boxed{X}`, the idea JSON keys). `--prompts upstream` uses "
        "upstream's templates at the pinned commit instead (see Upstream); results record the prompt set.",
        "- **Scoring**: `sciprobe.benchmarks.sgibench.scoring` / the `sgi_score` metric module, `mode=official` "
        f"(SGI-Bench@{UPSTREAM_COMMIT[:7]}, quirks included) and `mode=paper`; see the metric card for every "
        "difference and for the failure accounting.",
        "- **Soft wet scores**: wet experiments also report `soft_ss`, `soft_pa` and `soft_final`, the soft scores "
        f"upstream added after the pin (SGI-Bench@{WET_SOFT_COMMIT[:7]}, `compare_exp_steps_soft`: actions aligned "
        "by a longest common subsequence, SS and PA as recall x precision, so a missing or an extra step no longer "
        "zeroes SS or shifts every later step); official mode reproduces that commit, paper mode applies the same "
        "formulas to the tolerant parse and compares literal values. The SGI-Score keeps the strict `final`, as "
        "upstream does; results carry intervals and breakdowns of the soft scores too.",
        "- **Licensing**: the upstream repository has no license and the dataset cards disagree (MIT on "
        "SGI-DryExperiment, a proposed CC-BY-NC-4.0 on SGI-IdeaGeneration); load the data from the Hub, do not "
        "redistribute builds.",
    ]),
}

BENCHMARK = Benchmark(
    name="sgibench",
    title="SGI-Bench",
    version="1.0.0",
    description=("SGI-Bench probes scientific general intelligence with four scientist-aligned task families: "
                 "scientific deep research, idea generation, dry and wet experiments, and multimodal "
                 "experimental reasoning, over 10 disciplines. Packaged by sciprobe from the hub Parquet; only "
                 "split `test` exists."),
    citation=CITATION,
    license="unknown",
    homepage="https://internscience.github.io/SGI-Page/",
    configs={
        "deep_research": ConfigSpec("deep_research", "Scientific deep research: a literature-grounded question, "
                                    "reference steps and a short answer", deep_research_features,
                                    paper_count=PAPER_COUNTS["deep_research"]),
        "idea_generation": ConfigSpec("idea_generation", "Idea generation: research context and the reference "
                                      "method idea with implementation graph", idea_features,
                                    paper_count=PAPER_COUNTS["idea_generation"]),
        "dry_experiment": ConfigSpec("dry_experiment", "Dry experiment: scientific code with masked functions and "
                                     "five unit tests", dry_features,
                                    paper_count=PAPER_COUNTS["dry_experiment"]),
        "wet_experiment": ConfigSpec("wet_experiment", "Wet experiment: protocol design from a closed action pool",
                                     wet_features,
                                    paper_count=PAPER_COUNTS["wet_experiment"]),
        "experimental_reasoning": ConfigSpec("experimental_reasoning", "Experimental reasoning: multiple-choice "
                                             "questions over several experimental images", reasoning_features,
                                    paper_count=PAPER_COUNTS["experimental_reasoning"]),
    },
    tasks=TASKS,
    read_source=lazy("sciprobe.benchmarks.sgibench.source:read_source"),
    # a few invented items of each dataset in the exact hub schema (sample/README.md; sample_writer.py)
    sample_source=Path(__file__).resolve().parent / "sample",
    card_sections=CARD_SECTIONS,
    release_layouts=(hub_layout(HUB_DATASETS),),
    commands=(Command("sgibench", "SGI-Bench tools: SGI-Score, external files, build from the hub",
                      "sciprobe.benchmarks.sgibench.cli"),),
    lighteval_tasks="sciprobe.benchmarks.sgibench.lighteval_metrics:tasks_table",
    # the five components, one item each, so the demo can print an SGI-Score (summary_rows); the idea panel is the
    # bundled model itself (one vote pair, no re-asks): a stand-in that lets `final` exist, not a real judge
    demo={"deep_research": {"limit": 1, "modes": ["official"]},
          "idea_generation": {"limit": 1, "modes": ["official"], "judges": ["local/smollm2"], "judge_attempts": 1,
                              "judge_params": {"temperature": 0.0, "max_tokens": 64}},
          "dry_experiment": {"limit": 1, "modes": ["official"]}, "wet_experiment": {"limit": 1, "modes": ["official"]},
          "experimental_reasoning": {"limit": 1, "modes": ["official"]}},
    summary_rows="sciprobe.benchmarks.sgibench.demo:sgi_score_rows",
    # the mean of the five components (sciprobe.benchmarks.sgibench.scoring.overall)
    aggregates={"sgi_score": "sgi_score"},
    upstream=UPSTREAM,
    upstream_logs="sciprobe.benchmarks.sgibench.upstream_logs:read_logs",
    baselines="sciprobe.benchmarks.sgibench.baselines:baselines",
)
