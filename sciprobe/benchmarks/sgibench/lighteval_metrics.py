"""lighteval 0.13 metrics and prompt functions for the SGI-Bench task card (shared/spec/ecosystem.md §4.2-4.3,
shared/spec/sgibench.md §9 "lighteval cards").

Kept apart from ``sciprobe.interop.lighteval_tasks`` (which is IDRBench/SciTaste-oriented): SGI rows have ``idx``
rather than ``id``, score raw responses (not parsed labels), and reasoning items carry images in ``Doc.images``.
The computations are module-level classes naming their task, so lighteval can pickle them for its workers.
Importing this module imports lighteval.

Tasks: ``deep_research`` (EM), ``wet_experiment`` (SS, PA, final, and the soft scores of SGI-Bench@3854aa9:
soft_final, soft_ss, soft_pa), ``experimental_reasoning`` (MCA, images in ``Doc.images``) and
``idea_generation``: one answer per item, scored by the declaration's scorer -- the objective
halves (all-MiniLM-L6-v2, graph similarity) always, and the judge panel's position-swapped votes (hence the
``final`` SGI component) when ``$SCIPROBE_SGI_IDEA_JUDGES`` names the panel (``SPEC`` or ``SPEC1;SPEC2``; calls go
through sciprobe's client and response cache, as ``sciprobe evaluate sgibench:idea_generation --judge`` does).
``dry_experiment`` is sciprobe-only: its answer is executed on five unit tests in a sandbox.
"""

from __future__ import annotations

from typing import Any

from lighteval.metrics.metrics_corpus import CorpusLevelComputation
from lighteval.metrics.metrics_sample import SampleLevelComputation
from lighteval.metrics.utils.metric_utils import CorpusLevelMetric
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc, SamplingMethod

from sciprobe.interop.lighteval_tasks import final_text

LIGHTEVAL_TASKS = ("deep_research", "wet_experiment", "experimental_reasoning", "idea_generation")
IDEA_JUDGES_ENV = "SCIPROBE_SGI_IDEA_JUDGES"
IDEA_KEYS = (("final", True), ("objective_effectiveness", True), ("objective_novelty", True),
             ("objective_detailedness", True), ("objective_feasibility", True))


def _task(name: str) -> Any:
    from sciprobe.core.registry import get_benchmark

    return get_benchmark("sgibench").task(name)




class SgiRecord(SampleLevelComputation):
    """One answer -> the record the declaration's scorer takes (raw response + gold; idea items: their row)."""

    def compute(self, doc: Doc, model_response: Any, **kwargs: Any) -> dict:
        record = {"idx": doc.specific["idx"], "gold": doc.specific["gold"], "response": final_text(model_response)}
        if "row" in doc.specific:
            record.update({"id": doc.specific["idx"], "row": doc.specific["row"]})
        return record


#: (judges, idx, response) -> (votes, judge ids): each answer is judged once per process, whichever metric of the
#: task or resample of lighteval's bootstrap stderr asks (an answer's votes depend on that answer only).
_ITEM_VOTES: dict[tuple, tuple[Any, list[str]]] = {}


def idea_votes(records: list[dict], judges: str) -> list[dict]:
    """The panel's votes on every idea, through sciprobe's cached client; answers judged before are not asked
    again."""
    todo = list({(r["idx"], r["response"]): r for r in records
                 if (judges, r["idx"], r["response"]) not in _ITEM_VOTES}.values())
    if todo:
        from sciprobe.benchmarks.sgibench.idea_runner import collect_panel_votes
        from sciprobe.llm.cache import ResponseCache, default_cache_path
        from sciprobe.llm.client import LLMClient
        from sciprobe.llm.spec import split_specs

        cache = ResponseCache(default_cache_path())
        panel = [(c.model_id, c) for c in (LLMClient(spec, cache=cache) for spec in split_specs(judges))]
        votes, _, _ = collect_panel_votes([r["row"] for r in todo], [r["response"] for r in todo], panel)
        judge_ids = [j for j, _ in panel]
        _ITEM_VOTES.update({(judges, r["idx"], r["response"]): (v, judge_ids) for r, v in zip(todo, votes)})
    out = []
    for r in records:
        votes, judge_ids = _ITEM_VOTES[(judges, r["idx"], r["response"])]
        out.append({**r, "votes": votes, "judge_ids": judge_ids})
    return out


class SgiCorpusScore(CorpusLevelComputation):
    """One number of ``sciprobe.benchmarks.sgibench.scoring`` (via the declaration) over all records; ``failure_rate``
    reads
    the coverage."""

    def __init__(self, task: str, mode: str, key: str) -> None:
        self.task, self.mode, self.key = task, mode, key

    def compute_corpus(self, items: list[dict]) -> float:
        import math
        import os

        judges = os.environ.get(IDEA_JUDGES_ENV, "").strip()
        if self.task == "idea_generation" and judges:
            items = idea_votes(items, judges)
        report = _task(self.task).score(items, self.mode)
        if self.key == "failure_rate":
            return float(report.coverage.failure_rate)
        value = report.values.get(self.key)
        return math.nan if value is None else float(value)  # idea `final` without a judge panel: not computed


def metrics_for(task_name: str) -> list[CorpusLevelMetric]:
    """Headline keys in both modes (paper-mode names end in ``_paper``) plus the failure rate."""
    task = _task(task_name)
    out = []
    for mode in task.modes:
        suffix = "" if mode == "official" else f"_{mode}"
        for key, higher in (IDEA_KEYS if task_name == "idea_generation" else task.corpus_metrics):
            out.append(CorpusLevelMetric(metric_name=f"{key}{suffix}", higher_is_better=higher,
                                         category=SamplingMethod.GENERATIVE, sample_level_fn=SgiRecord(),
                                         corpus_level_fn=SgiCorpusScore(task_name, mode, key)))
    out.append(CorpusLevelMetric(metric_name="failure_rate", higher_is_better=False,
                                 category=SamplingMethod.GENERATIVE, sample_level_fn=SgiRecord(),
                                 corpus_level_fn=SgiCorpusScore(task_name, "official", "failure_rate")))
    return out


def _user_text(task_name: str, line: dict) -> str:
    messages = _task(task_name).build_messages(line, ())
    return messages[-1]["content"]


def deep_research_prompt(line: dict, task_name: str = "") -> Doc:
    return Doc(task_name=task_name, query=_user_text("deep_research", line), choices=[""], gold_index=0,
               id=str(line["idx"]), specific={"idx": str(line["idx"]), "gold": line["answer"]})


def wet_experiment_prompt(line: dict, task_name: str = "") -> Doc:
    return Doc(task_name=task_name, query=_user_text("wet_experiment", line), choices=[""], gold_index=0,
               id=str(line["idx"]), specific={"idx": str(line["idx"]), "gold": line["answer"]})


def experimental_reasoning_prompt(line: dict, task_name: str = "") -> Doc:
    """Images go to ``Doc.images`` (a multimodal model sends them before the text, as upstream); missing
    images are skipped; an item without any image is still asked (and usually answered wrongly)."""
    images = [im for im in (line.get("images") or []) if im is not None]
    return Doc(task_name=task_name, query=_user_text("experimental_reasoning", line), choices=[""], gold_index=0,
               images=images or None, id=str(line["idx"]),
               specific={"idx": str(line["idx"]), "gold": int(line["answer"]),
                         "answer_letter": line.get("answer_letter"), "n_images": len(images)})


def idea_generation_prompt(line: dict, task_name: str = "") -> Doc:
    """The row travels with the doc: the objective terms and the judges compare the idea with its reference."""
    return Doc(task_name=task_name, query=_user_text("idea_generation", line), choices=[""], gold_index=0,
               id=str(line["idx"]), specific={"idx": str(line["idx"]), "gold": None, "row": dict(line)})


PROMPTS = {"deep_research": deep_research_prompt, "wet_experiment": wet_experiment_prompt,
           "experimental_reasoning": experimental_reasoning_prompt, "idea_generation": idea_generation_prompt}


def tasks_table(repo: str, generation_size: int | None = None) -> list[LightevalTaskConfig]:
    """``sgibench:<task>`` configs over a built dataset folder or hub id. Upstream sends no max_tokens; pass
    ``generation_size`` to cap it, and the system prompt ("You are a helpful assistant.") through the model
    config's ``system_prompt``."""
    return [LightevalTaskConfig(name=f"sgibench:{name}", prompt_function=PROMPTS[name], hf_repo=repo, hf_subset=name,
                                hf_avail_splits=["test"], evaluation_splits=["test"], few_shots_split=None,
                                generation_size=generation_size, metrics=metrics_for(name), stop_sequence=(),
                                version=0)
            for name in LIGHTEVAL_TASKS]
