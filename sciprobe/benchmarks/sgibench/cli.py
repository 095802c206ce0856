"""CLI hooks for ``sciprobe sgibench score-overall``, ``check-external`` and ``build-from-hub`` (wired by
:mod:`sciprobe.cli.commands`): :func:`configure_parser` adds the actions to an ``sgibench`` parser, :func:`cmd` runs
them
(the work is done by :mod:`sciprobe.benchmarks.sgibench.commands`; spec sgibench.md §3.6, §7).
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["cmd", "configure_parser"]

_OVERALL_EPILOG = """\
examples:
  sciprobe sgibench score-overall deep_research=18.48 idea_generation=39.68 dry_experiment=36.64 \\
      wet_experiment=32.45 experimental_reasoning=41.92
  sciprobe sgibench score-overall --results results/results/MODEL/results_*.json --mode paper
  sciprobe sgibench score-overall deep_research=dr.json ... (a component report: ScoreReport.as_dict())
"""


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``parser`` is the ``sgibench`` sub-command parser; adds ``score-overall`` and ``check-external``."""
    sub = parser.add_subparsers(dest="sgibench_command", required=True, metavar="ACTION")
    overall = sub.add_parser(
        "score-overall", help="the SGI-Score (mean of the five component scores) with per-component coverage",
        description="Combine the five SGI-Bench component scores (deep_research EM, idea_generation final, "
                    "dry_experiment PassAll@5, wet_experiment final, experimental_reasoning MCA; each 0-100) "
                    "into the SGI-Score. official: each component rounded to 2 decimals before the mean, as "
                    "upstream; paper: no intermediate rounding. A missing component gives no score. Components "
                    "read from results files must come from one run (model, data, prompts, cutoff, items) unless "
                    "--allow-mixed. Prints the report as JSON, with each component's source.",
        epilog=_OVERALL_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    overall.add_argument("components", nargs="*", metavar="COMPONENT=VALUE",
                         help="a component and its score (a number) or a JSON component report file")
    overall.add_argument("--results", action="append", default=[], metavar="FILE",
                         help="a `sciprobe evaluate` results JSON file to read sgibench:* component reports "
                              "from (repeatable; after it, further file names without '=' count too)")
    overall.add_argument("--mode", default="official", choices=("official", "paper"),
                         help="scoring mode (default: official)")
    overall.add_argument("--allow-mixed", action="store_true",
                         help="combine components of different runs (models, data, prompts, cutoffs or item "
                              "selections; refused by default); the report lists what differs")
    external = sub.add_parser(
        "check-external", help="check the external input files three dry-experiment items need (sha256)",
        description="Report the status of the external files of dry-experiment items 0200, 0206 and 0236 "
                    "(pinned sha256). Exit status 1 when a pinned file is missing or differs.")
    external.add_argument("--data", metavar="DIR",
                          help="folder with upstream's layout (default: $SCIPROBE_SGIBENCH_DRY_DATA)")
    hub = sub.add_parser(
        "build-from-hub", help="download the five InternScience/SGI-* hub datasets and build them (one step)",
        description="Build the released data: InternScience/SGI-DeepResearch, SGI-IdeaGeneration, "
                    "SGI-DryExperiment, SGI-WetExperiment and SGI-Reasoning (split test), downloaded with "
                    "huggingface_hub (or taken from its cache; HF_HUB_OFFLINE=1 works once they are cached). "
                    "The build records the commit of every dataset.")
    hub.add_argument("--out", required=True, help="output folder (written atomically)")
    hub.add_argument("--revision", action="append", default=[], metavar="DATASET=REV",
                     help="pin a dataset (e.g. SGI-Reasoning=<commit>); repeatable; default: main")
    hub.add_argument("--config", action="append", dest="configs", help="only this config (repeatable)")
    hub.add_argument("--overwrite", action="store_true", help="replace an existing output folder")
    return parser


def cmd(args: argparse.Namespace) -> int:
    from sciprobe.benchmarks.sgibench.commands import build_from_hub, check_external_command, sgi_score_command
    from sciprobe.core.errors import SciprobeError

    action = getattr(args, "sgibench_command", None)
    if action == "score-overall":
        # `--results DIR/results_*.json`: the shell expands the glob, so every file after the first arrives as a
        # positional; a positional without "=" is read as one more results file
        pairs = [c for c in args.components if "=" in c]
        results = [*args.results, *(c for c in args.components if "=" not in c)]
        if not pairs and not results:
            raise SciprobeError("give COMPONENT=VALUE pairs and/or --results FILE")
        print(sgi_score_command(pairs, mode=args.mode, results=results, allow_mixed=args.allow_mixed))
        return 0
    if action == "check-external":
        status, text = check_external_command(args.data)
        print(text)
        return status
    if action == "build-from-hub":
        pairs = [r.partition("=") for r in args.revision]
        if any(not sep or not rev for _, sep, rev in pairs):
            raise SciprobeError("--revision takes DATASET=REV, e.g. SGI-Reasoning=main")
        report = build_from_hub(args.out, {name: rev for name, _, rev in pairs}, configs=args.configs,
                                overwrite=args.overwrite)
        for config, splits in report.rows.items():
            print(f"{config}: " + ", ".join(f"{split} {n}" for split, n in splits.items()))
        from sciprobe.core.registry import get_benchmark
        from sciprobe.data.doctor import comparison_warnings

        for line in comparison_warnings(get_benchmark("sgibench"), report.paper_counts):  # paper §2.4's counts
            print(line, file=sys.stderr)
        print(f"built {args.out} from {report.source}")
        return 0
    raise SciprobeError(f"unknown sgibench action {action!r}")
