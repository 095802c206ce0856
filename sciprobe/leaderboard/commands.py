"""``sciprobe leaderboard`` and ``sciprobe publish``: argument definitions and handlers, ready to be wired into
``sciprobe/cli/commands.py`` (two lines each)::

    from sciprobe.leaderboard.commands import (cmd_leaderboard, cmd_publish, configure_leaderboard_parser,
                                               configure_publish_parser)
    configure_leaderboard_parser(
        sub.add_parser("leaderboard", help="run the leaderboard Space locally (or its scoring worker)"))
    configure_publish_parser(sub.add_parser("publish", help="stage or upload the dataset / metric / Space to the Hub"))
    COMMANDS.update({"leaderboard": cmd_leaderboard, "publish": cmd_publish})

Handlers return an exit status and raise :class:`~sciprobe.core.errors.SciprobeError` for user errors, like the others.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path


def configure_leaderboard_parser(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Serve the leaderboard Space locally (store: SCIPROBE_LEADERBOARD_DIR, default "
                          "$SCIPROBE_HOME/leaderboard), or run the scoring worker for queued (judge-scored) requests.")
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=7860, help="port (default 7860)")
    parser.add_argument("--store-dir", help="leaderboard store folder (sets SCIPROBE_LEADERBOARD_DIR)")
    parser.add_argument("--auth", choices=["local", "oauth"],
                        help="sign-in mode (default: oauth on Spaces, else local)")
    parser.add_argument("--import", dest="imports", action="append", metavar="DIR",
                        help="import sciprobe results files found below DIR (or the results file DIR) first "
                             "(default: results/demo, what `sciprobe demo` writes, when it exists); files of "
                             "`sciprobe baselines` become reference rows; a file that cannot be imported is a "
                             "one-line warning. Each tab's reference baselines are computed on its data at start "
                             "when the store lacks them")
    parser.add_argument("--worker", action="store_true", help="process PENDING requests instead of serving the UI")
    parser.add_argument("--once", action="store_true", help="with --worker: one pass over the queue, then exit")
    parser.add_argument("--poll-seconds", type=float, default=30.0, help="with --worker: seconds between polls")
    parser.add_argument("--judge", metavar="SPEC",
                        help="with --worker: the judge model spec for judged tasks (a panel: 'SPEC1;SPEC2'); without "
                             "it, judged requests stay PENDING")
    parser.add_argument("--max-calls", type=int, metavar="N",
                        help="with --worker: cap on judge requests (retries included) over the worker's lifetime")
    parser.add_argument("--max-cost", type=float, metavar="USD",
                        help="with --worker: cap on judge cost in USD over the worker's lifetime (litellm prices)")
    parser.add_argument("--lease-seconds", type=float, default=600.0, metavar="S",
                        help="with --worker: how long a claimed request stays this worker's without renewal (renewed "
                             "every S/3 while it is scored); after a worker dies, others take its request over once "
                             "the lease has expired (default 600)")
    parser.add_argument("--worker-name", default="", metavar="NAME",
                        help="with --worker: the name its claims carry (default HOST:PID)")
    parser.add_argument("--no-cache", action="store_true",
                        help="with --worker: do not read or write the response cache (default: the cache of "
                             "`sciprobe evaluate`)")


def cmd_leaderboard(args: argparse.Namespace) -> int:
    if args.store_dir:
        os.environ["SCIPROBE_LEADERBOARD_DIR"] = str(Path(args.store_dir).resolve())
    if args.auth:
        os.environ["SCIPROBE_LEADERBOARD_AUTH"] = args.auth
    if args.worker:
        from sciprobe.leaderboard.queue import Worker, run_worker
        from sciprobe.leaderboard.store_factory import open_store

        import datetime as dt

        from sciprobe.core.errors import SciprobeError

        lease = getattr(args, "lease_seconds", 600.0)
        if not 0 < lease < 10 ** 7:
            raise SciprobeError(f"--lease-seconds must be positive, not {lease}")
        worker = Worker.create(getattr(args, "judge", None), max_calls=getattr(args, "max_calls", None),
                               max_cost=getattr(args, "max_cost", None),
                               use_cache=not getattr(args, "no_cache", False),
                               name=getattr(args, "worker_name", ""), lease=dt.timedelta(seconds=lease))
        processed = run_worker(open_store(), poll_seconds=args.poll_seconds, max_rounds=1 if args.once else None,
                               worker=worker)
        print(f"processed {processed} request(s)")
        if worker.exhausted:
            print(f"worker budget spent ({worker.ledger.stop_reason}); the interrupted request is PENDING again "
                  "and resumes from the response cache")
            return 3  # as `sciprobe evaluate` when a cap stopped the run (EXIT_INCOMPLETE)
        if worker.paused is not None:
            print(f"request {worker.paused.request_id[:8]} ({worker.paused.task}) left PENDING: {worker.paused.error}")
            return 2
        return 0
    if any(getattr(args, name, None) not in (None, False) for name in ("judge", "max_calls", "max_cost", "no_cache")):
        from sciprobe.core.errors import SciprobeError

        raise SciprobeError("--judge, --max-calls, --max-cost and --no-cache apply to the scoring worker: "
                            "add --worker")
    from sciprobe.leaderboard.importer import import_results_dir
    from sciprobe.leaderboard.store_factory import open_store

    from sciprobe.data.sources import missing_path_message

    for folder in args.imports or []:  # a mistyped --import is an error, not an empty board served anyway
        if not Path(folder).exists():
            from sciprobe.core.errors import SciprobeError

            raise SciprobeError(missing_path_message(str(folder), "--import"))
    folders = args.imports or ([Path("results/demo")] if Path("results/demo").is_dir() else [])
    if folders:
        store = open_store()
        added = sum(import_results_dir(store, Path(folder)) for folder in folders)
        print(f"imported {added} task result(s) from {', '.join(map(str, folders))}")

    serve(args.host, args.port)
    return 0


def serve(host: str, port: int) -> None:
    """Launch the Space and block; its URL is printed once the page answers (printed before the launch, it led
    to a page that did not load for minutes while the app was built)."""
    from sciprobe.leaderboard.app import launch

    print("sciprobe leaderboard: starting (the first start computes each tab's reference baselines)", flush=True)
    demo = launch(host=host, port=port, prevent_thread_lock=True, quiet=True)
    url = f"http://{host}:{port}/"
    if wait_until_answers(_local_url(host, port)):
        print(f"sciprobe leaderboard on {url} (Ctrl-C to stop)", flush=True)
    else:
        print(f"sciprobe leaderboard: {url} does not answer yet; it may still be starting (Ctrl-C to stop)",
              flush=True)
    demo.block_thread()


def _local_url(host: str, port: int) -> str:
    """Where this machine reaches the server (a server on every interface answers on loopback)."""
    return f"http://{'127.0.0.1' if host in ('0.0.0.0', '::', '') else host}:{port}/"


def page_answers(url: str) -> bool:
    """Whether ``url`` answers a GET with a success or redirect status (the page loads)."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - our own loopback server
            return response.status < 400
    except urllib.error.HTTPError as exc:
        return exc.code in (401, 403)  # a page behind sign-in answers too
    except (OSError, ValueError):
        return False


def wait_until_answers(url: str, *, attempts: int = 600) -> bool:
    """Poll ``url`` (every 0.5 s, up to ``attempts`` times) until :func:`page_answers`; False when it never does."""
    for n in range(attempts):
        if page_answers(url):
            return True
        if n + 1 < attempts:
            time.sleep(0.5)
    return False


def configure_publish_parser(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Stage (--dry-run --out DIR) or upload a Hub artifact: dataset (hub layout of a benchmark), "
                          "metric (metrics/<name>/ as an evaluate Space; the repo name is the metric name), space "
                          "(the leaderboard Space), or all (REPO_ID is then an owner namespace).")
    parser.add_argument("kind", choices=["dataset", "metric", "space", "all"])
    parser.add_argument("repo_id", metavar="REPO_ID", help="owner/name (owner only for `all`)")
    parser.add_argument("--dry-run", action="store_true", help="write the folder that would be uploaded; no network")
    parser.add_argument("--out", help="where to write the staged folder (required with --dry-run)")
    parser.add_argument("--benchmark", help="benchmark of `dataset` (default: the repo name when it is a registered "
                                            "benchmark); with `all`: the one benchmark whose --source is given")
    parser.add_argument("--source", help="the benchmark's release files to build the dataset from")
    parser.add_argument("--sample", action="store_true",
                        help="publish the bundled synthetic sample instead of a release (refused otherwise); the "
                             "card's first line says it is a sample")


def cmd_publish(args: argparse.Namespace) -> int:
    from sciprobe.interop.publish import publish

    artifacts = publish(args.kind, args.repo_id, dry_run=args.dry_run, out=args.out, benchmark=args.benchmark,
                        source=args.source, token=os.environ.get("HF_TOKEN"), sample=getattr(args, "sample", False))
    verb = "staged" if args.dry_run else "uploaded"
    for artifact in artifacts:
        print(f"{verb} {artifact.kind:7s} {artifact.repo_type}:{artifact.repo_id}  <- {artifact.folder}")
    datasets = [a for a in artifacts if a.kind == "dataset"]
    if datasets and not getattr(args, "sample", False):  # what the Space must be told to score against
        pins = ",".join(f"{a.benchmark}={a.repo_id}@REVISION" for a in datasets)
        print(f"pin the leaderboard to them: SCIPROBE_LEADERBOARD_DATA={pins} (REVISION: the commit uploaded)")
    return 0
