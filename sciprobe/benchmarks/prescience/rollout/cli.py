"""``sciprobe prescience rollout`` and ``sciprobe prescience rollout-report`` (wired by ``prescience/cli.py``)."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError

__all__ = ["cmd_rollout", "configure_rollout"]


def configure_rollout(sub: Any) -> None:
    from sciprobe.benchmarks.prescience.rollout.params import DAILY_COUNT_MODES, PAPER_T0, POLICIES, RolloutParams

    d = RolloutParams()
    p = sub.add_parser("rollout", help="simulate the corpus day by day from H^{<t0} and compare its diversity and "
                                       "novelty with the real months (paper §4.5, Figure 3)")
    p.add_argument("--output-dir", required=True, help="folder for the corpora, samples, results and figure")
    p.add_argument("--source", help="release folder (default: the bundled synthetic sample)")
    p.add_argument("--judge", required=True, metavar="SPEC", help="LACER judge model spec (several: 'SPEC1;SPEC2')")
    p.add_argument("--model", metavar="SPEC", help="contribution generation by this model (default: the bundled "
                                                  "random-reference baseline)")
    p.add_argument("--embedder", default="minilm", help="minilm (bundled, default), st:PATH or hashing[:DIM]")
    p.add_argument("--lacer-template", help="another LACER judge prompt: a template text or lattice (.json) file")
    p.add_argument("--upstream-dir", metavar="DIR", help="a local copy of allenai/prescience at the pinned commit "
                                                         "(upstream's judge prompt, offline)")
    p.add_argument("--t0", default=PAPER_T0, help=f"first simulated day (default: the paper's {PAPER_T0})")
    span = p.add_mutually_exclusive_group()
    span.add_argument("--days", type=int, help=f"simulated days (default {d.days})")
    span.add_argument("--months", type=int, help="simulated calendar months from t0 (instead of --days)")
    p.add_argument("--repeats", type=int, default=d.repeats, help=f"independent rollouts (default {d.repeats})")
    p.add_argument("--seed", type=int, default=d.seed, help=f"seed (default {d.seed}; repeat r uses seed + r)")
    p.add_argument("--n", type=int, default=d.n_queries, help=f"papers sampled per month (default {d.n_queries})")
    p.add_argument("--k", type=int, default=d.k_neighbours, help=f"neighbours per paper (default {d.k_neighbours})")
    p.add_argument("--n-bootstrap", type=int, default=d.n_bootstrap)
    p.add_argument("--daily-counts", default=d.daily_counts, choices=DAILY_COUNT_MODES,
                   help="empirical train distribution (paper) or normal (upstream simulate.py)")
    p.add_argument("--collaborators", default=d.collaborators, choices=POLICIES)
    p.add_argument("--prior-work", default=d.prior_work, choices=POLICIES)
    p.add_argument("--no-natural", action="store_true", help="skip the real-corpus curves")
    p.add_argument("--strict-pools", action="store_true", help="a month smaller than n (or k+1) is an error, as "
                                                               "upstream; default: use all of it and record it")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the model response cache")
    r = sub.add_parser("rollout-report", help="plot a rollout's monthly curves, real against synthetic (Figure 3)")
    r.add_argument("results", help="rollout_results.json")
    r.add_argument("--out", required=True, help="PNG file to write")


def _days(t0: str, months: int) -> int:
    start = dt.date.fromisoformat(t0)
    year, month = divmod(start.month - 1 + months, 12)
    return (dt.date(start.year + year, month + 1, min(start.day, 28)) - start).days


def _params(args: argparse.Namespace) -> Any:
    from sciprobe.benchmarks.prescience.rollout.params import RolloutParams

    try:
        dt.date.fromisoformat(args.t0)
    except ValueError:
        raise SciprobeError(f"--t0 {args.t0!r} is not a YYYY-MM-DD date") from None
    if args.months is not None and args.months < 1:
        raise SciprobeError("--months must be at least 1")
    days = _days(args.t0, args.months) if args.months is not None else (args.days or RolloutParams().days)
    return RolloutParams(t0=args.t0, days=days, repeats=args.repeats, seed=args.seed,
                         daily_counts=args.daily_counts, collaborators=args.collaborators,
                         prior_work=args.prior_work, n_queries=args.n, k_neighbours=args.k,
                         n_bootstrap=args.n_bootstrap, natural=not args.no_natural, strict_pools=args.strict_pools)


def cmd_rollout(args: argparse.Namespace) -> int:
    from sciprobe.benchmarks.prescience.rollout.report import load_results, save_figure

    if args.prescience_command == "rollout-report":
        print(f"wrote {save_figure(load_results(args.results), args.out)}")
        return 0
    from sciprobe.benchmarks.prescience.folders import source_folder
    from sciprobe.benchmarks.prescience.lacer_judge import load_template
    from sciprobe.benchmarks.prescience.rollout.policy import ModelGenerator, RandomReference
    from sciprobe.benchmarks.prescience.rollout.run import run_rollout
    from sciprobe.llm.spec import split_specs
    from sciprobe.run.task_runner import make_client

    params = _params(args)
    template = load_template(args.lacer_template, upstream_dir=args.upstream_dir)
    judges = [make_client(s, use_cache=not args.no_cache) for s in split_specs(args.judge)]
    generator = ModelGenerator(make_client(args.model, use_cache=not args.no_cache)) if args.model \
        else RandomReference()
    results = run_rollout(source_folder(args.source), args.output_dir, params, generator, judges, template,
                          embedder=args.embedder)
    _print(results, Path(args.output_dir))
    return 0


def _print(results: dict, out: Path) -> None:
    for curve, lines in results["curves"].items():
        for label, months in lines.items():
            for month, v in months.items():
                if v.get("mean") is not None:
                    print(f"{curve} {label} {month[:7]}: {v['mean']:.3f} [{v['ci95_low']:.3f}, {v['ci95_high']:.3f}]"
                          f" (papers {v['n_papers']})")
    cov, cache = results["coverage"], results["cache"]
    print(f"pairs judged {cov['n_scored']}/{cov['n_pairs']} (failed {cov['n_failed']}); from cache: "
          f"{cache['days_from_journal']} days, new judge calls {cache['judge_new_calls']}")
    print(f"wrote {out / 'rollout_results.json'}, {out / 'corpus'}, {out / 'rollout_figure.png'}")
