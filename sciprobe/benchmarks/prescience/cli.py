"""CLI hooks for ``sciprobe prescience baselines``, ``score`` and ``rollout`` / ``rollout-report`` (wired by
:mod:`sciprobe.cli.commands`): :func:`configure_parser` adds the actions to a ``prescience`` parser, :func:`cmd` runs
them. Both read release files (``train.parquet``/``test.parquet`` + JSONL; default: the bundled sample) and
print one line per metric; ``--json FILE`` also writes the full score reports.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from sciprobe.benchmarks.prescience.folders import source_folder
from sciprobe.core.errors import SciprobeError

__all__ = ["cmd", "configure_parser"]


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``parser`` is the ``prescience`` sub-command parser; adds ``baselines`` and ``score``."""
    from sciprobe.core.registry import get_benchmark

    # every task of the declaration is scored from prediction files (evaluation.SCORED_TASKS): read from the
    # declaration so `sciprobe prescience --help` does not load the scorers (pyarrow)
    tasks = tuple(get_benchmark("prescience").tasks)
    sub = parser.add_subparsers(dest="prescience_command", required=True, metavar="ACTION")
    base = sub.add_parser("baselines", help="score the default non-LLM baseline of each task (offline)")
    base.add_argument("--source", help="release folder (default: the bundled synthetic sample)")
    base.add_argument("--task", action="append", dest="tasks", choices=tasks,
                      help="only this task (repeatable; default: all)")
    base.add_argument("--json", help="also write the score reports to this JSON file")
    score = sub.add_parser("score", help="score a JSONL prediction file ({id, prediction} per line) for one task")
    score.add_argument("task", choices=tasks)
    score.add_argument("--predictions", required=True, help="JSONL prediction file")
    score.add_argument("--source", help="release folder (default: the bundled synthetic sample)")
    score.add_argument("--mode", default="official", help="scoring mode (topic tasks: official or paper)")
    score.add_argument("--unknown", default="drop", choices=("drop", "error"),
                       help="ranking tasks: ids outside H^{<t_p} are dropped and counted, or an error")
    score.add_argument("--judge", metavar="SPEC", help="contribution_generation: also score LACER with this judge "
                       "(several: 'SPEC1;SPEC2'); judge prompt from --lacer-template, --upstream-dir or "
                       "SCIPROBE_LACER_TEMPLATE, else upstream's (fetched from the pinned commit, cached)")
    score.add_argument("--lacer-template", help="another LACER judge prompt: a template text or lattice (.json) file")
    score.add_argument("--upstream-dir", metavar="DIR",
                       help="a local copy of allenai/prescience at the pinned commit (offline): upstream's LACER "
                            "template and system message are read from it; also $SCIPROBE_PRESCIENCE_UPSTREAM")
    score.add_argument("--lacer-mode", default="official", choices=("official", "corrected"))
    score.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    score.add_argument("--json", help="also write the score report to this JSON file")
    from sciprobe.benchmarks.prescience.rollout.cli import configure_rollout

    configure_rollout(sub)
    return parser


def _scalars(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _print(task: str, report: Any) -> None:
    cov = report.coverage
    shown = ", ".join(f"{k}={v:.4f}" if isinstance(v, float) and math.isfinite(v) else f"{k}={v}"
                      for k, v in _scalars(report.values).items())
    print(f"prescience:{task} [{report.mode}] {shown} (scored {cov.n_scored}/{cov.n_items}, failed {cov.n_failed})")


def _write(path: str | None, reports: dict[str, Any]) -> None:
    if path:
        Path(path).write_text(json.dumps({t: r.as_dict() for t, r in reports.items()}, indent=2, default=str) + "\n",
                              encoding="utf-8")
        print(f"wrote {path}")


def _lacer(args: argparse.Namespace) -> Any:
    """LACER of a T1 prediction file: every instance judged (a missing prediction as an empty generation)."""
    from sciprobe.benchmarks.prescience.offline_scoring import TaskData, read_predictions
    from sciprobe.llm.spec import split_specs
    from sciprobe.run.task_runner import make_client
    from sciprobe.benchmarks.prescience.lacer_judge import judge_pairs, load_template

    template = load_template(args.lacer_template, upstream_dir=args.upstream_dir)
    data = TaskData(source_folder(args.source), "contribution_generation")
    preds = read_predictions(args.predictions)
    ids = [str(r["corpus_id"]) for r in data.instances]
    judges = [make_client(s, use_cache=not args.no_cache) for s in split_specs(args.judge)]
    run = judge_pairs(ids, [preds.get(i) or None for i in ids],
                      [{"title": r["title"], "abstract": r["abstract"]} for r in data.instances], judges, template,
                      modes=(args.lacer_mode,))
    return run.average[args.lacer_mode]


def cmd(args: argparse.Namespace) -> int:
    from sciprobe.benchmarks.prescience.offline_scoring import (
        SCORED_TASKS,
        run_baselines,
        score_prediction_file,
    )

    action = getattr(args, "prescience_command", None)
    if action in ("rollout", "rollout-report"):
        from sciprobe.benchmarks.prescience.rollout.cli import cmd_rollout

        return cmd_rollout(args)
    if action == "baselines":
        reports = run_baselines(source_folder(args.source), tuple(args.tasks or SCORED_TASKS))
    elif action == "score":
        if getattr(args, "judge", None) and args.task != "contribution_generation":
            raise SciprobeError("--judge applies to contribution_generation only")
        if not Path(args.predictions).is_file():
            raise SciprobeError(f"prediction file {args.predictions} not found")
        reports = {args.task: score_prediction_file(source_folder(args.source), args.task, args.predictions,
                                                    mode=args.mode, unknown=args.unknown)}
        if getattr(args, "judge", None):
            reports["contribution_generation:lacer"] = _lacer(args)
    else:
        raise SciprobeError(f"unknown prescience action {action!r} (baselines, score, rollout, rollout-report)")
    for task, report in reports.items():
        _print(task, report)
    _write(args.json, reports)
    return 0
