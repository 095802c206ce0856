"""The ``sciprobe`` command line.

Exit status: 0 done; 2 a user error (one line, ``error: ...``, nothing written); 3 (:data:`EXIT_INCOMPLETE`) the
run is INCOMPLETE — a ``--max-calls``/``--max-cost`` cap stopped it, the provider's quota ran out, or calls got
no answer (connection refused, timeout, 5xx after the retries): its results are written marked incomplete (the
unanswered items left out of every score, never counted wrong), no model-index is written, the results are
never exported or ranked, and rerunning the same command resumes from the response cache (only the missing
calls are made); 4 (:data:`EXIT_PARTIAL`) a ``sciprobe score --partial`` score: written and marked as asked, but
not a benchmark result, so a script never mistakes it for one; 130 interrupted (Ctrl-C): nothing written, the answers
received so far are cached (the bundled model stops at its next token), a rerun resumes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sciprobe import __version__
from sciprobe.core.errors import SciprobeError

TYPE_CHECKING = False  # typing's flag without importing typing: these modules are on the CLI's start-up path
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence

EXAMPLES = """\
examples (`sciprobe tasks` lists every BENCH:TASK):
  sciprobe demo                                   # the bundled model on the bundled samples, offline
  sciprobe build BENCH --source RELEASE_DIR --out build/BENCH
  sciprobe build BENCH --source DIR --out build/BENCH-gpt4o --model-cutoff gpt-4o-mini
  sciprobe evaluate BENCH:TASK --model local/smollm2 --data build/BENCH --limit 20
  sciprobe evaluate BENCH:TASK --model "openai/gpt-4o-mini" --model-cutoff auto --data build/BENCH
  sciprobe evaluate BENCH:TASK --model "openai/gpt-4o-mini,rpm=500" --dry-run     # calls, tokens, cost
  sciprobe evaluate BENCH:TASK --model "openai/gpt-4o-mini,rpm=500" --max-cost 2  # stops at $2, resumable
  sciprobe score BENCH:TASK --predictions preds.jsonl --data build/BENCH
  sciprobe evaluate BENCH:TASK --model SPEC --prompts upstream   # upstream's templates at the pinned commit
  sciprobe import-upstream BENCH --logs UPSTREAM_OUTPUT_DIR --data build/BENCH   # score upstream's own outputs
  sciprobe baselines BENCH --data build/BENCH                 # reference baselines, one results file each
  sciprobe compare A.json B.json                              # paired difference, interval, test and MDE per task
  sciprobe compare A.json --paper                             # a run against the paper's numbers, with a verdict
  sciprobe report results/results/*/*.json --out report/      # static HTML report with figures
  sciprobe paper BENCH [--json]                               # the numbers the benchmark's paper reports
  sciprobe judge-check A.json B.json --judge SPEC [--human ratings.csv]   # does another judge agree?
  sciprobe evaluate BENCH:TASK --model SPEC --executor ray://HEAD:10001       # sandbox runs on a Ray cluster
"""

#: Exit status of an incomplete run: a cap stopped it, or calls got no answer (results written, marked).
EXIT_INCOMPLETE = 3
#: Exit status of a ``score --partial`` run: written as asked, but not a benchmark result.
EXIT_PARTIAL = 4

#: Subcommands whose arguments and handler live in their own module, as ``configure_<name>_parser(parser)`` and
#: ``cmd_<name>(args)``: {name: (module, help)}. The module loads only when its subcommand is used (parsed or its
#: help printed), so ``sciprobe --help`` and the other commands never import it.
MODULE_COMMANDS: dict[str, tuple[str, str]] = {
    "leaderboard": ("sciprobe.leaderboard.commands", "run the leaderboard Space locally (or its scoring worker)"),
    "publish": ("sciprobe.leaderboard.commands",
                "stage (--dry-run) or upload a dataset, metric or the Space to the Hub"),
    "export": ("sciprobe.results.export", "results JSON -> Hugging Face model-index or .eval_results YAML"),
    "baselines": ("sciprobe.run.baselines", "score a benchmark's reference baselines (no model)"),
    "compare": ("sciprobe.results.compare", "paired comparison of two results files (difference, interval, test, "
                "MDE), or of one with its paper (--paper)"),
    "report": ("sciprobe.results.html_report", "static HTML report of results files (figures, CIs, breakdowns)"),
    "doctor": ("sciprobe.data.doctor", "check release files against a benchmark's declared files, columns, "
                                       "types and paper counts, without building"),
    "paper": ("sciprobe.results.published",
              "the numbers a benchmark's paper reports, with task, metric, setting and source"),
    "judge-check": ("sciprobe.run.judge_check", "re-judge a judged run's stored responses with another judge: "
                    "agreement, ranking change, position-swap consistency"),
}


class _Subcommand(argparse.ArgumentParser):
    """A subcommand's parser whose arguments are added by ``configure(parser)`` on first use (parsing the
    subcommand's arguments or printing its help): ``sciprobe --help`` and every other command skip them, and a
    lazy ``configure`` (:mod:`sciprobe.core.lazy`) imports its module only then."""

    def __init__(self, *args: Any, configure: Callable[[argparse.ArgumentParser], Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._configure = configure

    def _configured(self) -> None:
        if self._configure is not None:
            configure, self._configure = self._configure, None
            configure(self)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._configured()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._configured()
        return super().format_help()


def _add_cutoff(parser: argparse.ArgumentParser, auto: bool) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--cutoff", metavar="YYYY-MM-DD", help="keep only items dated strictly after this date")
    group.add_argument("--model-cutoff", metavar="MODEL" + ("|auto" if auto else ""),
                       help="use a model's knowledge cutoff from the registry (`sciprobe cutoffs` lists it)"
                            + ("; auto = the evaluated model" if auto else ""))


def _add_prompts(parser: argparse.ArgumentParser, what: str) -> None:
    from sciprobe.run.upstream import PROMPT_SETS

    parser.add_argument("--prompts", choices=PROMPT_SETS, default="sciprobe",
                        help=f"{what}: sciprobe's own wording (default) or upstream's templates at the pinned commit, "
                             "fetched at run time, sha256-checked and cached under $SCIPROBE_HOME/upstream; recorded "
                             "with every result, never ranked with the other set")
    parser.add_argument("--upstream-dir", metavar="DIR",
                        help="a local copy of the upstream files at their repository paths (e.g. a checkout of the "
                             "pinned commit; offline): the templates of --prompts upstream and, whatever the prompt "
                             "set, upstream's judge prompts (PreScience LACER); also $SCIPROBE_<BENCH>_UPSTREAM")
    parser.add_argument("--allow-modified-prompts", action="store_true",
                        help="with --prompts upstream: run templates whose sha256 differs from the pin (refused "
                             "otherwise); the results are labelled upstream-modified everywhere, never ranked with "
                             "the upstream or sciprobe prompts")


def _add_executor(parser: argparse.ArgumentParser) -> None:
    from sciprobe.core.executors import EXECUTOR_HELP

    parser.add_argument("--executor", default="local", metavar="local|ray|ray://HOST:PORT", help=EXECUTOR_HELP)


def _configure_build(build: argparse.ArgumentParser) -> None:
    build.description = ("Write Parquet shards + README (configs, features, card) that "
                         "`datasets.load_dataset(OUT, CONFIG)` reads.")
    build.add_argument("benchmark", help="benchmark name (`sciprobe tasks` lists them)")
    build.add_argument("--source", help="folder of release files, or a hub dataset id owner/name holding them "
                                        "(default: the bundled sample)")
    build.add_argument("--revision", help="hub revision (commit, branch or tag) of --source; the commit is recorded")
    build.add_argument("--out", required=True, help="output folder (written atomically)")
    build.add_argument("--config", action="append", dest="configs", help="only this config (repeatable)")
    build.add_argument("--raw-whitespace", action="store_true",
                       help="keep titles/abstracts as released (by default whitespace is normalised; see the card)")
    build.add_argument("--overwrite", action="store_true", help="replace an existing output folder")
    _add_cutoff(build, auto=False)


def _mode_list(value: str) -> list[str]:
    """``--mode a,b`` -> ``["a", "b"]`` (``--mode a --mode b`` appends one list each)."""
    modes = [m.strip() for m in value.split(",") if m.strip()]
    if not modes:
        raise argparse.ArgumentTypeError("needs a mode name")
    return modes


def _flat_modes(given: list[list[str]] | None) -> list[str] | None:
    return list(dict.fromkeys(m for group in given for m in group)) if given else None


def _configure_evaluate(evaluate: argparse.ArgumentParser) -> None:
    evaluate.description = ("Tasks are BENCH:TASK (`sciprobe tasks` lists them). Results go to "
                            "OUTPUT_DIR/results and OUTPUT_DIR/details.")
    evaluate.add_argument("tasks", nargs="+", metavar="BENCH:TASK")
    evaluate.add_argument("--model", required=True, metavar="SPEC",
                          help="local/smollm2 (bundled) or a litellm model, with options: "
                               "'openai/gpt-4o-mini,base_url=http://...,concurrency=16'")
    evaluate.add_argument("--data", help="built dataset folder or hub id (default: the bundled sample)")
    evaluate.add_argument("--revision", help="hub dataset revision (commit or tag) to load")
    evaluate.add_argument("--limit", type=int,
                          help="only N items (after the cutoff): a seeded sample, stratified by gold label for "
                               "classification tasks, never the first N; a sample is labelled as one and never "
                               "ranked or exported")
    evaluate.add_argument("--judge", metavar="SPEC", help="judge model for judge-scored tasks; a panel: 'SPEC1;SPEC2'")
    evaluate.add_argument("--mode", "--modes", action="append", dest="modes", type=_mode_list,
                          help="scoring mode(s): repeatable or comma-separated (default: every mode of the task); "
                               "I2R plays one tournament per mode, so one mode costs one tournament")
    evaluate.add_argument("--max-tokens", type=int, help="override the task's max output tokens")
    evaluate.add_argument("--temperature", type=float, help="override the task's temperature")
    evaluate.add_argument("--output-dir", default="results",
                          help="where results (OUTPUT_DIR/results) and details (OUTPUT_DIR/details) go "
                               "(default: %(default)s)")
    evaluate.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    evaluate.add_argument("--allow-unsandboxed", action="store_true",
                          help="run model-written code (sandbox tasks) even without a working sandbox "
                               "(UNSAFE: no filesystem, network or process isolation)")
    _add_prompts(evaluate, "the prompts the model gets")
    evaluate.add_argument("--context", metavar="VARIANTS",
                          help="for tasks that take it (`sciprobe tasks`): what the model is shown, comma-separated "
                               "variants the task's README lists")
    evaluate.add_argument("--context-seed", type=int, default=0,
                          help="seed of --context's matched-size subsampling (default: %(default)s)")
    evaluate.add_argument("--reference-set", action="append", default=[], metavar="NAME=PATH",
                          help="with --context all|impact: the set's JSON-lines file {key: target id, value: [ids]}")
    _add_executor(evaluate)
    economics = evaluate.add_argument_group(
        "cost and pacing", "Pacing is part of a model spec: 'openai/gpt-4o-mini,rpm=500,tpm=200000,concurrency=16'.")
    economics.add_argument("--dry-run", action="store_true",
                           help="print the calls, tokens and cost the run would make (cached calls free), "
                                "call nothing")
    economics.add_argument("--json", action="store_true", help="with --dry-run: the plan as JSON")
    economics.add_argument("--max-calls", type=int, metavar="N",
                           help="stop after N requests (retries included, model and judges together); the tasks "
                                "run so far are written marked incomplete, and a rerun resumes from the cache")
    economics.add_argument("--max-cost", type=float, metavar="USD", help="stop once the run has spent USD (same)")
    economics.add_argument("--meter", action=argparse.BooleanOptionalAction, default=None,
                           help="live calls/tokens/cost/ETA line on stderr (default: on when stderr is a terminal)")
    _add_cutoff(evaluate, auto=True)


def _configure_score(score: argparse.ArgumentParser) -> None:
    score.description = ("JSONL lines: {\"id\", \"response\"} (the raw model text); tasks with labels also "
                         "take {\"id\", \"prediction\"}; ranking tasks {\"id\", \"ranking\": [...], "
                         "\"scores\": [...]}; tournaments also {\"id\", \"comparisons\": [{\"paper_1\", "
                         "\"paper_2\", \"response\"}, ...]}, replayed (`sciprobe tasks` says which).")
    score.add_argument("task", metavar="BENCH:TASK")
    score.add_argument("--predictions", required=True, help="JSONL predictions file")
    score.add_argument("--data", help="built dataset folder or hub id (default: the bundled sample)")
    score.add_argument("--mode", action="append", dest="modes", help="scoring mode (default: all)")
    score.add_argument("--model-name", default="submitted", help="model name recorded in the results")
    score.add_argument("--output-dir", default="results",
                       help="where results (OUTPUT_DIR/results) and details (OUTPUT_DIR/details) go "
                            "(default: %(default)s)")
    score.add_argument("--judge", metavar="SPEC", help="judge(s) for judge-scored tasks ('SPEC1;SPEC2'): the task's "
                                                      "runner runs with the predictions as the model's answers")
    score.add_argument("--max-calls", type=int, metavar="N", help="cap on judge requests (as for evaluate)")
    score.add_argument("--max-cost", type=float, metavar="USD", help="cap on judge spend (as for evaluate)")
    _add_prompts(score, "the prompt set the predictions were made with (recorded; tasks replayed through their "
                        "runner also build their judge requests from it)")
    score.add_argument("--partial", action="store_true",
                       help="score a file that lacks items over the items it has (refused by default); the result "
                            "is marked partial everywhere and never exported or ranked")


def _configure_import_upstream(imported: argparse.ArgumentParser) -> None:
    imported.description = (
        "Read the per-item outputs a benchmark's pinned upstream code writes (its README lists the formats), score "
        "them in every mode and write a normal results file (export and the leaderboard read it). The dataset must "
        "hold every item of the logs (build the release the run used).")
    imported.add_argument("benchmark", help="benchmark name (`sciprobe tasks` lists them)")
    imported.add_argument("--logs", required=True, metavar="PATH", help="an upstream output file or a folder of them")
    imported.add_argument("--data", help="built dataset folder or hub id (default: the bundled sample)")
    imported.add_argument("--model-name", help="model name for the results (default: from the upstream file names)")
    imported.add_argument("--mode", action="append", dest="modes", help="scoring mode (default: every mode)")
    imported.add_argument("--output-dir", default="results",
                          help="where results (OUTPUT_DIR/results) and details (OUTPUT_DIR/details) go "
                               "(default: %(default)s)")


def _configure_demo(demo: argparse.ArgumentParser) -> None:
    demo.add_argument("--model", default="local/smollm2", metavar="SPEC")
    demo.add_argument("--output-dir", default="results/demo",
                      help="where results and details go (default: %(default)s)")
    demo.add_argument("--max-tokens", type=int, default=64,
                      help="answer length for the demo (the official 500 is slow on a CPU); decoding is greedy")
    demo.add_argument("--limit", type=int, default=8,
                      help="items per task (unless the benchmark's demo says otherwise), a seeded sample of the "
                           "bundled data; the bundled model takes ~4 s an answer")
    _add_executor(demo)


def _configure_lighteval(lighteval: argparse.ArgumentParser) -> None:
    lighteval.description = ("Same arguments as `lighteval`, e.g. sciprobe lighteval accelerate "
                             "\"model_name=$(sciprobe model-path)\" \"BENCH:TASK|0\" "
                             "--custom-tasks task_cards/sciprobe_tasks.py --max-samples 8")
    lighteval.add_argument("args", nargs=argparse.REMAINDER)


def _configure_sandbox(sandbox: argparse.ArgumentParser) -> None:
    sandbox_sub = sandbox.add_subparsers(dest="sandbox_command", required=True, metavar="ACTION")
    check = sandbox_sub.add_parser("check", help="probe whether bubblewrap can sandbox code here (or on every "
                                                 "node of a Ray cluster: --executor)")
    _add_executor(check)
    env = sandbox_sub.add_parser("create-env", help="create the pinned SGI-Bench dry-experiment environment "
                                                    "(printed digits depend on library versions)")
    env.add_argument("--path", required=True, help="folder of the new venv")
    env.add_argument("--python", help="a Python 3.10 interpreter (default: found on PATH or pyenv)")
    env.add_argument("--force", action="store_true", help="recreate an existing venv")
    env.add_argument("--dry-run", action="store_true", help="print what would be installed")


def _configure_new_benchmark(new: argparse.ArgumentParser) -> None:
    new.description = ("Writes a declaration with a single-call task and a two-step task (its own runner), prompts, "
                       "parser, source reader, a bundled sample and a README; build, evaluate, score, the lighteval "
                       "card and the leaderboard find it at once.")
    new.add_argument("name", help="the benchmark's name (a Python package name, e.g. mybench)")
    new.add_argument("--title", help="its display title (default: from the name)")


def _configure_tasks(tasks: argparse.ArgumentParser) -> None:
    tasks.add_argument("benchmarks", nargs="*", metavar="BENCH", help="only these benchmarks")
    tasks.add_argument("--json", action="store_true", help="as JSON")


def _configure_model_path(path: argparse.ArgumentParser) -> None:
    path.add_argument("name", nargs="?", default="smollm2")


def build_parser(benchmark_commands: bool = True) -> argparse.ArgumentParser:
    """The ``sciprobe`` parser; ``benchmark_commands=False`` leaves out the benchmarks' own commands (listing them
    imports every declaration). A subcommand's arguments are added when it is used (:class:`_Subcommand`)."""
    from sciprobe.core.lazy import lazy

    parser = argparse.ArgumentParser(
        prog="sciprobe", description="Science-of-science LLM benchmarks, Hugging Face-native and offline-first.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"sciprobe {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Subcommand)
    builtin = [
        ("build", "package a benchmark's release files as a hub dataset folder", _configure_build),
        ("evaluate", "run a model on tasks, score them, write results", _configure_evaluate),
        ("score", "score a predictions JSONL file against a task", _configure_score),
        ("import-upstream", "score the per-item output files an upstream repository wrote",
         _configure_import_upstream),
        ("demo", "evaluate the bundled model on the bundled samples (offline)", _configure_demo),
        ("lighteval", "lighteval's CLI, offline (only --custom-tasks modules load)", _configure_lighteval),
        *((name, help_text, lazy(f"{module}:configure_{_identifier(name)}_parser"))
          for name, (module, help_text) in MODULE_COMMANDS.items()),
        ("sandbox", "the sandbox for model-written code", _configure_sandbox),
        ("new-benchmark", "scaffold a working example benchmark in sciprobe/benchmarks/NAME/",
         _configure_new_benchmark),
        ("tasks", "list every task: metric, modes, kind, judge, default data", _configure_tasks),
    ]
    for name, help_text, configure in builtin:
        sub.add_parser(name, help=help_text, configure=configure)
    # each benchmark's own commands (its declaration's hook); their modules load only when they run
    for name, command in (_benchmark_commands() if benchmark_commands else {}).items():
        if name in COMMANDS or name in MODULE_COMMANDS:  # a built-in's name: the built-in runs (_handler)
            continue
        extra = sub.add_parser(name, help=command["help"].replace("%", "%%"), add_help=False, prefix_chars="\0")
        extra.add_argument("args", nargs=argparse.REMAINDER)
    sub.add_parser("cutoffs", help="list the model knowledge-cutoff registry")
    sub.add_parser("model-path", help="convert the bundled model once and print its folder "
                                      "(for `lighteval accelerate model_name=...`)", configure=_configure_model_path)
    return parser


def _benchmark_commands() -> dict[str, dict[str, str]]:
    """``{name: {"module": ..., "help": ...}}`` over every registered benchmark's own commands
    (``Benchmark.commands``), from the cached index of the declarations (:mod:`sciprobe.cli.index`)."""
    from sciprobe.cli.index import cli_index

    return cli_index()["commands"]


def _cmd_benchmark_command(args: argparse.Namespace) -> int:
    """A benchmark's own command: its module configures a parser for the rest of the command line and runs it."""
    import importlib

    command = _benchmark_commands()[args.command]
    module = importlib.import_module(command["module"])
    parser = argparse.ArgumentParser(prog=f"sciprobe {args.command}", description=command["help"])
    module.configure_parser(parser)
    return module.cmd(parser.parse_args(args.args))


def _cmd_new_benchmark(args: argparse.Namespace) -> int:
    from sciprobe.cli.scaffold import create_benchmark

    folder = create_benchmark(args.name, args.title)
    print(f"wrote {folder}\nnext: sciprobe tasks {args.name}; sciprobe build {args.name} --out build/{args.name}; "
          f"sciprobe evaluate {args.name}:verify {args.name}:verify_after_summary --model local/smollm2 --limit 4")
    return 0


def _cmd_tasks(args: argparse.Namespace) -> int:
    from sciprobe.cli.index import cli_index
    from sciprobe.cli.task_listing import format_tasks

    rows = cli_index()["tasks"]
    if args.benchmarks:
        known = {row["task"].split(":", 1)[0] for row in rows}
        for name in args.benchmarks:
            if name not in known:
                from sciprobe.core.registry import get_benchmark

                get_benchmark(name)  # its own error: unknown, or a declaration that fails to import
        rows = [row for name in args.benchmarks for row in rows if row["task"].split(":", 1)[0] == name]
    print(json.dumps(rows, indent=2) if args.json else format_tasks(rows))
    return 0


def _cmd_build(args: argparse.Namespace) -> int:
    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.build import build_benchmark
    from sciprobe.data.cutoffs import resolve_cutoff

    benchmark = get_benchmark(args.benchmark)
    cutoff, source = resolve_cutoff(args.cutoff, args.model_cutoff)
    from sciprobe.data.sources import ResolvedSource, resolve_source

    if not args.source and benchmark.sample_source is None:
        raise SciprobeError(f"{benchmark.name} has no bundled sample; pass --source FOLDER")
    resolved = resolve_source(args.source, args.revision) if args.source else ResolvedSource(benchmark.sample_source)
    options = {"normalize_whitespace": False} if args.raw_whitespace else None
    report = build_benchmark(benchmark, resolved.path, Path(args.out), configs=args.configs, cutoff=cutoff,
                             cutoff_source=source, options=options, overwrite=args.overwrite,
                             source_label=resolved.describe(), source_revision=resolved.revision)
    for config, splits in report.rows.items():
        counts = report.cutoff["counts"][config]
        print(f"{benchmark.name}:{config}: " + ", ".join(f"{s}={n}" for s, n in splits.items())
              + (f" (cutoff {counts['cutoff']}: {counts['n_items_after']}/{counts['n_items_before']} kept)"
                 if counts["cutoff"] else ""))
    for config in report.skipped:
        print(f"{benchmark.name}:{config}: skipped, the cutoff leaves no items")
    for note in report.release.get("notes", []):
        print(f"{benchmark.name}: {note}")
    for config, reason in report.release.get("unavailable", {}).items():
        print(f"{benchmark.name}:{config}: {reason}")
    for config, files in report.missing_files.items():
        print(f"{benchmark.name}:{config}: skipped, the source has no {', '.join(files)}")
    from sciprobe.data.doctor import comparison_warnings

    for line in comparison_warnings(benchmark, report.paper_counts):
        print(line, file=sys.stderr)
    print(f"wrote {report.out_dir}")
    return 0


def _generation(args: argparse.Namespace) -> dict:
    out = {}
    if getattr(args, "max_tokens", None) is not None:
        out["max_tokens"] = args.max_tokens
    if getattr(args, "temperature", None) is not None:
        out["temperature"] = args.temperature
    return out


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from sciprobe.data.cutoffs import resolve_cutoff
    from sciprobe.run.evaluation import EvaluationRequest, evaluate
    from sciprobe.llm.spec import ModelSpec
    from sciprobe.results.summary import print_summary

    spec = ModelSpec.parse(args.model)
    cutoff, source = resolve_cutoff(args.cutoff, args.model_cutoff, spec.model_id)
    if args.limit is not None and args.limit < 1:
        raise SciprobeError("--limit must be at least 1")
    request = EvaluationRequest(tasks=args.tasks, model=spec, data=args.data, limit=args.limit, cutoff=cutoff,
                                cutoff_source=source, judge=args.judge, modes=_flat_modes(args.modes),
                                output_dir=Path(args.output_dir), generation=_generation(args),
                                use_cache=not args.no_cache, revision=args.revision,
                                allow_unsandboxed=args.allow_unsandboxed, max_calls=args.max_calls,
                                max_cost=args.max_cost, executor=args.executor,
                                meter=sys.stderr.isatty() if args.meter is None else args.meter,
                                prompts=args.prompts,
                                upstream_dir=Path(args.upstream_dir) if args.upstream_dir else None,
                                allow_modified_prompts=args.allow_modified_prompts,
                                per_task=_context_options(args))
    if args.dry_run:
        from sciprobe.run.plan import format_plan, plan_run

        plan = plan_run(request)
        print(json.dumps(plan.as_dict(), indent=2) if args.json else format_plan(plan))
        return 0
    path, results = evaluate(request)
    print_summary(results)
    print(f"results: {path}")
    return _exit_status(path, results)


def _context_options(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """``--context`` / ``--context-seed`` / ``--reference-set`` as per-task options of the tasks that declare them
    (``TaskSpec.options``); each such task checks the values (``TaskSpec.check_options``) before anything runs."""
    if args.context is None and not args.reference_set:
        return {}
    from sciprobe.core.registry import resolve_task

    sets = {}
    for item in args.reference_set:
        name, sep, path = item.partition("=")
        if not sep or not path:
            raise SciprobeError(f"--reference-set {item!r}: expected NAME=PATH (all=refs_all.jsonl)")
        sets[name] = path
    options = {"context": args.context, "context_seed": args.context_seed, "reference_sets": sets}
    out = {}
    for ref in args.tasks:
        _, task = resolve_task(ref.split("|")[0])
        if "context" not in task.options:
            raise SciprobeError(f"--context and --reference-set apply to tasks that take them; {ref} does not "
                                "(see `sciprobe tasks`)")
        if task.check_options is not None:
            task.check_options(options, args.prompts or "sciprobe")
        out[ref] = dict(options)
    return out


def _exit_status(path: Path, results: Sequence) -> int:
    """0, or EXIT_INCOMPLETE with what is missing and why on stderr when the run is incomplete (a cap, an
    exhausted quota, calls that got no answer). Only a complete run gets its Hugging Face model-card
    ``model-index`` YAML next to the results JSON (``sciprobe export`` for more); a partial score never does."""
    from sciprobe.results.read import load_results_file

    if not results:  # every task was skipped (each said why on stderr): there is no score to qualify
        return 0
    block = load_results_file(path).block  # evaluate and score_file set incomplete / partial
    incomplete, partial = block.get("incomplete"), block.get("partial")
    if incomplete:
        from sciprobe.results.evidence import describe_failures

        not_run = ", ".join(incomplete.get("tasks_not_run") or []) or "none"
        print(f"INCOMPLETE: {incomplete['reason']}; {incomplete.get('skipped_calls', 0)} call(s) skipped, "
              f"tasks not run: {not_run}. No model-index written; not exported or ranked. Rerun the same command "
              "to resume from the cache.", file=sys.stderr)
        for key, summary in (incomplete.get("call_failures") or {}).items():
            print(f"  {key}: {describe_failures(summary)}; e.g. {summary.get('example')}", file=sys.stderr)
        return EXIT_INCOMPLETE
    if partial:
        print(f"PARTIAL: {partial['n_predicted']} of {partial['n_items']} items scored (--partial); the score "
              "covers those items only: no model-index written, never exported or ranked.", file=sys.stderr)
        return EXIT_PARTIAL
    samples = _limit_samples(block)
    if samples:  # a --limit sample is not the benchmark: the run did what was asked, but gets no model card
        print(f"LIMITED: {'; '.join(samples)}: not the benchmark. No model-index written; never exported or ranked "
              "(run without --limit for a benchmark result).", file=sys.stderr)
        return 0
    if results:  # a run whose every task was skipped has nothing to put in a model card
        from sciprobe.results.export import export_results
        from sciprobe.results.write import atomic_write_bytes

        card = path.with_name(path.stem + ".model-index.yaml")
        left_out: list[str] = []
        try:
            text = export_results(path, left_out=left_out)
        except SciprobeError as exc:  # e.g. nothing scored: the results stand, there is no model card to write
            print(f"no model-index: {exc}", file=sys.stderr)
            return 0
        atomic_write_bytes(card, text.encode("utf-8"))
        print(f"model-index: {card}")
        for line in left_out_summary(left_out, path):
            print(f"  {line}", file=sys.stderr)
    return 0


#: Up to this many numbers left out of a model-index are listed one by one; more are counted per class.
LEFT_OUT_LISTED = 3


def left_out_summary(left_out: Sequence[str], results: Path) -> list[str]:
    """What a model-index left out, for stderr: each number when there are few, else one line per class of
    omission (n/a, NaN, not computed, not a finite number) with its count and a first example; the results
    file has every one (a demo over four benchmarks leaves out dozens of n/a strict-mode numbers)."""
    import re

    if len(left_out) <= LEFT_OUT_LISTED:
        return [f"left out of the model-index: {line}" for line in left_out]
    classes: dict[str, list[str]] = {}
    for line in left_out:
        found = re.search(r"\): (n/a|NaN|not computed|not a finite number)", line)
        classes.setdefault(found.group(1) if found else "other", []).append(line)
    return [f"{len(lines)} number(s) left out of the model-index: {what} (e.g. {lines[0].split('): ', 1)[0]})); "
            f"every one is in {results.name}" for what, lines in classes.items()]


def _limit_samples(block: dict) -> list[str]:
    """``idrbench:ipi|0 120 of 1120 items (a seeded sample, stratified by gold label, seed 0)`` for every task of a
    results file's ``sciprobe`` block that ran on a ``--limit`` sample (sciprobe.results.evidence,
    sciprobe.data.task_data)."""
    from sciprobe.results.evidence import LIMIT, subset_of

    out = []
    for key, task in (block.get("tasks") or {}).items():
        provenance = task.get("provenance") if isinstance(task, dict) else None
        subset = subset_of(provenance)
        if subset is None or subset["kind"] != LIMIT:
            continue
        limit = provenance.get("limit") if isinstance(provenance.get("limit"), dict) else {}
        how = f" (a seeded sample, {limit['strategy']}, seed {limit.get('seed')})" if limit.get("strategy") else ""
        out.append(f"{key} {subset['n']} of {subset['of']} items{how}")
    return out


def _cmd_score(args: argparse.Namespace) -> int:
    from sciprobe.run.score_predictions import score_file
    from sciprobe.results.summary import print_summary

    path, results = score_file(args.task, Path(args.predictions), data=args.data, modes=args.modes,
                               model_name=args.model_name, output_dir=Path(args.output_dir), judge=args.judge,
                               max_calls=args.max_calls, max_cost=args.max_cost, prompts=args.prompts,
                               upstream_dir=Path(args.upstream_dir) if args.upstream_dir else None,
                               partial=args.partial, allow_modified_prompts=args.allow_modified_prompts)
    print_summary(results)
    print(f"results: {path}")
    return _exit_status(path, results)


def _cmd_import_upstream(args: argparse.Namespace) -> int:
    from sciprobe.results.summary import print_summary
    from sciprobe.run.upstream_import import import_logs

    path, results = import_logs(args.benchmark, Path(args.logs), data=args.data, model_name=args.model_name,
                                modes=args.modes, output_dir=Path(args.output_dir))
    print_summary(results)
    print(f"results: {path}")
    return _exit_status(path, results)


def _cmd_demo(args: argparse.Namespace) -> int:
    from sciprobe.core.registry import benchmark_names, get_benchmark
    from sciprobe.run.evaluation import EvaluationRequest, evaluate
    from sciprobe.results.summary import benchmark_tables

    per_task = {f"{b}:{t}": _with_ranked_mode(get_benchmark(b).task(t), options)
                for b in benchmark_names() for t, options in get_benchmark(b).demo.items()}
    tasks = list(per_task)
    skipped = _demo_unrunnable(tasks)
    for ref, why in skipped.items():
        print(f"sciprobe demo: skipping {ref}: {why}", flush=True)
    tasks = [t for t in tasks if t not in skipped]
    print(f"sciprobe demo: {args.model} on the bundled samples ({', '.join(tasks)}); offline", flush=True)
    # Greedy decoding lets the local model batch its generations.
    request = EvaluationRequest(tasks=tasks, model=args.model, output_dir=Path(args.output_dir),
                                generation={"max_tokens": args.max_tokens, "temperature": 0.0},
                                limit=args.limit, per_task={ref: dict(o) for ref, o in per_task.items() if o},
                                # progress and ETA on a terminal; CI logs stay quiet
                                meter=sys.stderr.isatty(), executor=args.executor)
    path, results = evaluate(request)
    print(benchmark_tables(results))
    print(f"results: {path}")
    return _exit_status(path, results)


def _with_ranked_mode(task: Any, options: dict[str, Any]) -> dict[str, Any]:
    """A demo task's options, its modes extended by the mode the leaderboard ranks it by (scoring only, no extra
    call), so that `sciprobe leaderboard` shows the demo's results (its default view would be blank)."""
    modes = options.get("modes")
    if not modes or task.ranked_mode in modes:
        return options
    return {**options, "modes": [*modes, task.ranked_mode]}


def _demo_unrunnable(tasks: list[str]) -> dict[str, str]:
    """Demo tasks this machine cannot run (code-executing tasks without a working sandbox), with the reason."""
    from sciprobe.core.registry import resolve_task
    from sciprobe.run.task_runner import runner_of

    sandboxed = [ref for ref in tasks if runner_of(resolve_task(ref)[1]).kind == "sandbox"]
    if not sandboxed:
        return {}
    from sciprobe.sandbox.runner import sandbox_available

    ok, reason = sandbox_available()
    return {} if ok else {ref: f"the sandbox is not available ({reason})" for ref in sandboxed}


def _cmd_lighteval(args: argparse.Namespace) -> int:
    from sciprobe.interop.lighteval_cli import run

    return run(args.args)


def _cmd_sandbox(args: argparse.Namespace) -> int:
    if args.sandbox_command == "check":
        return _sandbox_check(args.executor)
    from sciprobe.sandbox.env import create_env

    print(create_env(args.path, python=args.python, force=args.force, dry_run=args.dry_run))
    return 0


def _sandbox_check(executor_name: str) -> int:
    """One line here; with a Ray executor one line per node that runs tasks, then the verdict. Exit 1 unless all
    pass."""
    from sciprobe.core.executors import get_executor

    executor = get_executor(executor_name)
    if not executor.remote:
        from sciprobe.sandbox.runner import sandbox_available

        ok, reason = sandbox_available()
        print(("sandbox available: " if ok else "sandbox NOT available: ") + reason)
        return 0 if ok else 1
    from sciprobe.sandbox.runner import fresh_sandbox_probe
    from sciprobe.sandbox.ship import cluster_sandbox_status

    ok, summary, per_node = cluster_sandbox_status(executor, fresh_sandbox_probe)
    for label, node_ok, reason in per_node:
        print(f"{'ok ' if node_ok else 'NOT'} {label}: {reason}")
    print(("sandbox available: " if ok else "sandbox NOT available: ") + summary)
    return 0 if ok else 1


def _cmd_cutoffs(_: argparse.Namespace) -> int:
    from sciprobe.data.cutoffs import model_cutoffs

    for entry in sorted(model_cutoffs().values(), key=lambda e: e.model):
        note = f"  [{entry.note}]" if entry.note else ""
        print(f"{entry.model:28s} {entry.cutoff.isoformat()}  {entry.source}{note}")
    return 0


def _cmd_model_path(args: argparse.Namespace) -> int:
    from sciprobe.llm.local import ensure_local_model

    print(ensure_local_model(args.name))
    return 0


COMMANDS = {"build": _cmd_build, "evaluate": _cmd_evaluate, "score": _cmd_score, "demo": _cmd_demo,
            "import-upstream": _cmd_import_upstream,
            "cutoffs": _cmd_cutoffs, "lighteval": _cmd_lighteval, "tasks": _cmd_tasks,
            "new-benchmark": _cmd_new_benchmark, "sandbox": _cmd_sandbox, "model-path": _cmd_model_path}


def _identifier(command: str) -> str:
    """A command's name as its module's functions spell it (``judge-check`` -> ``judge_check``)."""
    return command.replace("-", "_")


def _handler(command: str) -> Any:
    """The function that runs ``command``: a built-in, a module's ``cmd_<name>``, or a benchmark's own command."""
    if command in COMMANDS:
        return COMMANDS[command]
    if command in MODULE_COMMANDS:
        from sciprobe.core.lazy import resolve

        return resolve(f"{MODULE_COMMANDS[command][0]}:cmd_{_identifier(command)}")
    return _cmd_benchmark_command


def _builtin_command(argv: Sequence[str]) -> bool:
    """Whether the command line starts with a built-in command: its parser needs no benchmark declaration."""
    return bool(argv) and (argv[0] in COMMANDS or argv[0] in MODULE_COMMANDS)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(benchmark_commands=not _builtin_command(argv)).parse_args(argv)
    try:
        return _handler(args.command)(args)
    except SciprobeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; completed calls are cached, rerun to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
