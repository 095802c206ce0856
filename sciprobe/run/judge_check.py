"""``sciprobe judge-check RESULTS... --judge SPEC``: how far another judge agrees with the one a run was scored
with (issue 26 item 4; PreScience Table 9 and Appendix B.3).

For every judged task in the results files, the task's runner says how (``Runner.judge_check``, a
:class:`JudgeCheck`): ``original`` reads each stored judge's item scores and labels from the run's details (the
verdicts the run received, which its response cache also holds); ``rejudge`` asks the new judge about the same
stored responses through the LLM client, with the response cache, so a second check costs no call. Then, pooled
over every model's items (an item is ``model|id``), :mod:`sciprobe.scoring.judge_agreement` gives Pearson,
Spearman and Kendall tau_b on scores and Cohen's kappa on labels with bootstrap intervals, whether the model
ranking changes, and, for pairwise judges, position-swap consistency. ``--human FILE`` adds tau_b between each
judge and people (:mod:`sciprobe.results.human_ratings`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from sciprobe.core.errors import SciprobeError

__all__ = ["JudgeCheck", "JudgeView", "TaskRun", "check_judges", "cmd_judge_check",
           "configure_judge_check_parser", "format_check"]


@dataclass
class JudgeView:
    """One judge's verdicts on one run's items: scores, labels (for kappa) and, for a pairwise judge, each vote's
    winner with the answers in the original and in the swapped order (``{item|dimension: {"original": w,
    "swapped": w}}``)."""

    judge: str
    scores: dict[str, float]
    labels: dict[str, str] = field(default_factory=dict)
    swaps: dict[str, dict[str, str | None]] = field(default_factory=dict)
    n_failed: int = 0


class JudgeCheck(Protocol):
    scale: str

    def original(self, records: Sequence[Mapping[str, Any]], provenance: Mapping[str, Any]) -> list[JudgeView]: ...

    def rejudge(self, records: Sequence[Mapping[str, Any]], provenance: Mapping[str, Any], client: Any,
                options: Mapping[str, Any]) -> JudgeView: ...


@dataclass
class TaskRun:
    """One judged task of one results file: its model, records and provenance, and the check its runner names."""

    model: str
    task_key: str
    records: list[dict[str, Any]]
    provenance: dict[str, Any]
    check: JudgeCheck


def _details_records(results_path: Path, details: Any) -> list[dict[str, Any]]:
    from sciprobe.results.read import details_file as _details_file  # the one place details paths are resolved

    file = _details_file(results_path, details)
    if file is None:
        raise SciprobeError(f"{results_path}: the details file {details!r} is missing (judge-check re-judges the "
                            "stored responses)")
    import pyarrow.parquet as pq

    return pq.read_table(file).to_pylist()


def _task_check(task_key: str) -> JudgeCheck | None:
    from sciprobe.core.registry import resolve_task
    from sciprobe.core.lazy import resolve

    _, task = resolve_task(task_key.split("|", 1)[0])
    ref = getattr(task.runner, "judge_check", None)
    return resolve(ref) if ref else None


def load_task_runs(paths: Sequence[Path | str], task: str | None = None) -> list[TaskRun]:
    """The judged tasks of the results files (``task``: only keys starting with it)."""
    from sciprobe.results.read import load_results_file

    runs = []
    for path in paths:
        results = load_results_file(path)
        for key, entry in results.tasks.items():
            if task and not key.startswith(task):
                continue
            check = _task_check(key)
            if check is None:
                continue
            runs.append(TaskRun(results.model_id, key, _details_records(Path(path), entry.get("details")),
                                dict(entry.get("provenance") or {}), check))
    if not runs:
        matching = f" matching {task!r}" if task else ""
        raise SciprobeError(f"no judged task with a judge check in these results{matching} (the tasks whose "
                            "runner declares one; see the README)")
    return runs


def _pooled(views: Sequence[tuple[str, JudgeView]]) -> JudgeView:
    """One judge's views over several runs as one, item ids prefixed by the run's model."""
    judge = views[0][1].judge
    out = JudgeView(judge, {})
    for model, view in views:
        out.scores.update({f"{model}|{i}": s for i, s in view.scores.items()})
        out.labels.update({f"{model}|{i}": s for i, s in view.labels.items()})
        out.swaps.update({f"{model}|{i}": s for i, s in view.swaps.items()})
        out.n_failed += view.n_failed
    return out


def _model_means(views: Sequence[tuple[str, JudgeView]], other: Sequence[tuple[str, JudgeView]]
                 ) -> dict[str, float]:
    """Each model's mean over the items both judges scored (so the two judges rank the same items)."""
    theirs = {model: view for model, view in other}
    out = {}
    for model, view in views:
        common = set(view.scores) & set(theirs.get(model, JudgeView("", {})).scores)
        if common:
            out[model] = sum(view.scores[i] for i in common) / len(common)
    return out


def check_judges(runs: Sequence[TaskRun], client: Any, options: Mapping[str, Any] | None = None, *,
                 human: Mapping[str, Any] | None = None, settings: Any = None) -> list[dict[str, Any]]:
    """One report per (task, original judge): agreement of the new judge with it (module docstring)."""
    from sciprobe.scoring import judge_agreement as ja
    from sciprobe.scoring.bootstrap import BootstrapSettings

    settings = settings or BootstrapSettings()
    by_task: dict[str, list[TaskRun]] = {}
    for run in runs:
        by_task.setdefault(run.task_key, []).append(run)
    reports = []
    for task_key, task_runs in by_task.items():
        new = [(r.model, r.check.rejudge(r.records, r.provenance, client, {**(options or {}), "task_key": task_key}))
               for r in task_runs]
        originals: dict[str, list[tuple[str, JudgeView]]] = {}
        for r in task_runs:
            for view in r.check.original(r.records, r.provenance):
                originals.setdefault(view.judge, []).append((r.model, view))
        new_pooled = _pooled(new)
        for judge, views in originals.items():
            old = _pooled(views)
            report: dict[str, Any] = {
                "task": task_key, "scale": task_runs[0].check.scale, "original_judge": judge,
                "new_judge": new_pooled.judge, "models": [r.model for r in task_runs],
                "n_new_failed": new_pooled.n_failed,
                "scores": ja.score_agreement(old.scores, new_pooled.scores, settings),
                "labels": ja.label_agreement(old.labels, new_pooled.labels, settings),
                "ranking": ja.ranking_change(_model_means(views, new), _model_means(new, views)),
            }
            if old.swaps or new_pooled.swaps:
                report["swap_consistency"] = {"original": ja.swap_consistency(old.swaps),
                                              "new": ja.swap_consistency(new_pooled.swaps)}
            if human is not None:
                from sciprobe.results.human_ratings import judge_vs_human

                several = len(task_runs) > 1
                report["human"] = {"original": judge_vs_human(human, old.scores, several, settings),
                                   "new": judge_vs_human(human, new_pooled.scores, several, settings)}
            reports.append(report)
    return reports


# ------------------------------------------------------------------------------------------------ output
def _stat(cell: Mapping[str, Any] | None) -> str:
    if not cell or cell.get("value") is None:
        return "n/a"
    low, high = cell.get("ci95_low"), cell.get("ci95_high")
    interval = f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else ""
    return f"{cell['value']:.3f}{interval}"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def format_check(report: Mapping[str, Any]) -> str:
    scores, labels, ranking = report["scores"], report["labels"], report["ranking"]
    lines = [f"{report['task']}: {report['original_judge']} (stored) vs {report['new_judge']} (re-judged), "
             f"{report['scale']}",
             f"  items both scored: {scores['n']} (only stored {scores['n_only_a']}, only re-judged "
             f"{scores['n_only_b']}, re-judge failed {report['n_new_failed']})",
             f"  Pearson r      {_stat(scores['pearson'])}",
             f"  Spearman rho   {_stat(scores['spearman'])}",
             f"  Kendall tau_b  {_stat(scores['kendall_tau_b'])}",
             f"  Cohen's kappa  {_stat(labels['cohen_kappa'])} (identical labels {_number(labels['identical'])})",
             f"  95% percentile bootstrap over items, {scores['bootstrap']['n_resamples']} resamples, "
             f"seed {scores['bootstrap']['seed']}"]
    if ranking["n_models"] >= 2:
        verdict = "CHANGES" if ranking["changes"] else "unchanged"
        # PreScience Table 9's correlations are over the models' mean scores, not over items
        lines.append(f"  model ranking {verdict}: {' > '.join(ranking['order_a'])} (stored) vs "
                     f"{' > '.join(ranking['order_b'])} (re-judged)")
        lines.append(f"  over the {ranking['n_models']} models' means: Pearson {_number(ranking['pearson'])}, "
                     f"Spearman {_number(ranking['spearman'])}, tau_b {_number(ranking['kendall_tau_b'])}")
    else:
        lines.append("  model ranking: one model only (give several results files to compare rankings)")
    for side, cell in (report.get("swap_consistency") or {}).items():
        lines.append(f"  position-swap consistency ({side}): {_number(cell['consistency'])} over "
                     f"{cell['n_pairs']} vote pairs")
    for side, cell in (report.get("human") or {}).items():
        tau = _stat({**cell, "value": cell["tau_b"]})
        lines.append(f"  vs people ({side} judge): tau_b {tau} over {cell['n']} items"
                     + (f"; annotators among themselves {_number(cell['inter_annotator_tau_b'])}"
                        if cell.get("inter_annotator_tau_b") is not None else ""))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ command
def configure_judge_check_parser(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Re-judge the stored responses of judged results with another judge and report the "
                          "agreement (Pearson, Spearman, Kendall tau_b, Cohen's kappa, with bootstrap intervals), "
                          "whether the model ranking changes, and position-swap consistency for pairwise judges.")
    parser.add_argument("results", nargs="+", type=Path, help="results JSON files of judged runs (one per model)")
    parser.add_argument("--judge", required=True, help="the other judge's model spec")
    parser.add_argument("--task", help="only the task keys starting with this (BENCH:TASK)")
    parser.add_argument("--human", type=Path, help="CSV of human ratings: id,score or id,rank (optional annotator "
                        "and model columns); adds tau_b against people")
    parser.add_argument("--lacer-template", help="the LACER judge prompt the run used (checked by its sha256)")
    parser.add_argument("--upstream-dir", help="upstream checkout holding the official LACER prompt")
    parser.add_argument("--data", help="the run's dataset (built folder or hub id; default: the bundled sample), "
                        "for judges whose prompt needs the question (SGI deep-research llm_judge)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")


def cmd_judge_check(args: argparse.Namespace) -> int:
    from sciprobe.llm.cache import ResponseCache, default_cache_path
    from sciprobe.llm.client import LLMClient
    from sciprobe.scoring.bootstrap import BootstrapSettings

    settings = BootstrapSettings(n_resamples=args.resamples, seed=args.seed)
    human = None
    if args.human is not None:
        from sciprobe.results.human_ratings import read_human_ratings

        human = read_human_ratings(args.human)  # validated before any judge call
    runs = load_task_runs(args.results, args.task)
    client = LLMClient(args.judge, cache=None if args.no_cache else ResponseCache(default_cache_path()))
    options = {"lacer_template": args.lacer_template, "upstream_dir": args.upstream_dir, "data": args.data}
    reports = check_judges(runs, client, options, human=human, settings=settings)
    if args.json:
        json.dump(reports, sys.stdout, indent=2)
        print()
    else:
        print("\n\n".join(format_check(r) for r in reports))
    return 0
