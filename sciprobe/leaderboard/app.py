"""The leaderboard Space (Gradio 6.31, no ``gradio_leaderboard``; shared/spec/ecosystem.md §6).

Tabs: an overview, one tab per *registered* benchmark (``sciprobe.benchmarks``), Breakdowns
(:mod:`~sciprobe.leaderboard.breakdown_tab`), Provenance, Judge agreement (:mod:`~sciprobe.leaderboard.agreement`),
Submit, Queue and About. Every table shows each score's 95% interval beside it and the reference baselines as
reference rows, computed at start on each benchmark's data when missing (:mod:`~sciprobe.leaderboard.baseline_runs`).
Tables are
``gr.Dataframe(show_search="search", pinned_columns=1)`` (built-in search and sort; the Model column is pinned by
our CSS, because gradio 6.31 ignores ``pinned_columns`` when rendering) plus our own filters (mode, model family,
contamination-free only, model search). Submissions are validated (:mod:`~sciprobe.leaderboard.validation`),
stored (:mod:`~sciprobe.leaderboard.store`) and scored server-side (:mod:`~sciprobe.leaderboard.queue`). Every
event handler has an explicit ``api_name``.

Environment:
  ``SCIPROBE_LEADERBOARD_DIR``        store folder (SQLite; hub cache) — tests point it at a tmp dir
  ``SCIPROBE_LEADERBOARD_STORE``      ``sqlite`` (default) or ``hub``
                                      (see :func:`~sciprobe.leaderboard.store_factory.open_store`)
  ``SCIPROBE_LEADERBOARD_AUTH``       ``oauth`` (Hugging Face sign-in; default on Spaces, i.e. when ``SPACE_ID``
                                      is set) or ``local`` (a user-name field; default elsewhere)
  ``SCIPROBE_LEADERBOARD_RATE_LIMIT`` ``N/SECONDS`` submissions per user (default ``10/86400``)
  ``SCIPROBE_LEADERBOARD_MAX_BYTES``  upload size limit (default 20 MB)
  ``SCIPROBE_LEADERBOARD_DATA``       ``bench=OWNER/NAME@REVISION,...``: the pinned dataset per benchmark (a built
                                      folder also works); a benchmark it does not name is scored against its
                                      bundled sample, a *demo*, which every tab then says
                                      (:mod:`~sciprobe.leaderboard.pins`)
  ``SCIPROBE_LEADERBOARD_SCORING_PROCESSES`` processes that validate and score submissions (default 0: in
                                      the request thread; SQLite store only,
                                      :mod:`~sciprobe.leaderboard.scoring_pool`)

Fixed costs (issue 28): the results table is decoded once per change (the store's ``results_version``) and at most
once per page load (:meth:`LeaderboardService.one_read`); every view derived from it (tables, plots drawn to PNG,
filter and row choices, breakdowns, the queue from ``requests_version``) is kept until the store changes
(:mod:`~sciprobe.leaderboard.derived`), so a page load on an unchanged store derives nothing; the dataset
fingerprints the start-up baseline check needs are kept in the store per pinned revision
(:func:`~sciprobe.leaderboard.baseline_runs.cached_fingerprint`), so a second start does not load the data again;
gradio is imported without its editor-stub writer (:mod:`~sciprobe.leaderboard.gradio_import`).
"""

import datetime as dt
import math
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from sciprobe.core.errors import SciprobeError
from sciprobe.leaderboard import queue as lb_queue
from sciprobe.leaderboard import tables
from sciprobe.leaderboard.derived import DerivedViews
from sciprobe.leaderboard.intervals import headline_interval
from sciprobe.leaderboard.records import SubmissionRequest
from sciprobe.leaderboard.store import LeaderboardStore
from sciprobe.leaderboard.store_factory import open_store
from sciprobe.leaderboard.validation import (
    MAX_FILE_BYTES,
    SubmissionError,
    display_text,
    task_ref_error,
    validate_model_info,
    validate_submission,
    validate_user,
)

T = TypeVar("T")

CSS = """
.sp-title h1 { margin-bottom: 0.2em; }
.sp-note { font-size: 0.92em; opacity: 0.85; }
.sp-reported-table { border-collapse: collapse; font-size: 0.85em; margin: 0.4em 0; }
.sp-reported-table th, .sp-reported-table td { border: 1px solid rgba(128, 128, 128, 0.35); padding: 0.2em 0.5em; }
.sp-reported td { font-style: italic; opacity: 0.85; }
.sp-demo { border-left: 4px solid #d97706; padding: 0.2em 0.8em; background: rgba(217, 119, 6, 0.08); }
#sp-status { min-height: 2.5em; }
/* Pinned Model column. gradio 6.31's Dataframe passes pinned_columns to TanStack's columnPinning state (column
   order only) and sets meta.isPinned, but nothing in its renderer reads either: no cell is made sticky, in any
   browser. The frame's first column carries the class "first-column" (header <th> and body cells, inside the
   horizontally scrolling .virtual-table-viewport), so CSS pins it. Checked by tests/test_leaderboard_browser.py. */
.sp-pinned .virtual-table-viewport th.first-column,
.sp-pinned .virtual-table-viewport .body-cell.first-column {
    position: sticky !important; left: 0; z-index: 3;
    background: var(--table-even-background-fill, var(--background-fill-primary));
    box-shadow: 1px 0 0 var(--border-color-primary);
}
"""

ABOUT = """
### How the leaderboard works
* **Scored here, never trusted:** an upload is a predictions JSONL for one task (`{"id", "response"}` raw model
  text or `{"id", "prediction": "yes"|"no"|null}`; I2R: `{"id", "ranking": [titles], "scores": [...]}`), or the
  details `.parquet` that `lighteval --save-details` wrote for a run of sciprobe's task cards (its answers are
  rescored; its golds must be this leaderboard's data). The Space validates it strictly and scores it with
  `sciprobe score` (`sciprobe.run.score_predictions.score_file`) against the pinned dataset of the benchmark.
* **Complete results only:** a submission has one line per test item (null for no answer): a *missing* prediction
  is not a wrong answer, and a *partial* file is refused. Runs whose calls got no answer, or that a budget cut
  short, are *incomplete* and never imported. Only *complete* results are shown and ranked, and only on every item
  of the pinned data, checked against the data itself when a result is imported: a `--limit` sample, a run on other
  data or on some of the items is never shown. A result on the items after a temporal cutoff is ranked only among
  results with the same cutoff (column *Cutoff*), after the full-data rows; its coverage reads `20/31 (cutoff)`.
* **Ranked by a mode that cannot be gamed:** by default (mode *ranked*) each task is ranked by its headline in a
  mode that scores every item — an unparsable or null answer counts against the score instead of being dropped —
  so leaving hard items unanswered cannot raise a rank: IDRBench classification and SciTaste in *strict*, I2R and
  PreScience contribution generation in *corrected*, PreScience rankings in *strict*, SGI-Bench in *paper*; other
  tasks in their first mode. Every mode stays one click away in the *Mode* filter.
* **Rows:** one per submitter × model × benchmark version × dataset fingerprint / revision × cutoff × judge set.
  A result on another dataset revision (column *Revision*: the hub revision, or `files:<checksum>` for a local
  dataset folder) or benchmark version is a separate row, never merged; a newer result on the same revision
  replaces the cell.
  Runs with upstream's own prompts (column *Prompts*) are separate rows, listed after and never ranked with the
  runs on sciprobe's prompts; runs on upstream templates that differ from the pinned ones (`upstream-modified`)
  come last, ranked only among themselves. The *Overview* has one row per model with its rows of the benchmarks
  side by side (columns *Version*, *Dataset* and *Revision* name each benchmark's); a second data revision of one
  benchmark makes a second overview row.
* **Judge agreement:** for results scored by a panel of judges (SGI-Bench ideas, PreScience LACER), how far the
  judges agree item by item (Pearson / Spearman, mean absolute difference, identical verdicts).
* **Cells:** the task's headline metric in the chosen mode, written with the decimals its metric declares (3 on a
  0-1 scale, 2 on a 0-100 scale), with its 95% confidence interval (column `… 95% CI`:
  a percentile bootstrap over the items, 1,000 seeded resamples, computed when the result was scored; `n/a` when
  the result has none, e.g. a mode with no headline number or a result stored before intervals) and coverage
  `scored/total` beside every score (failures are counted, never silently dropped). The *Provenance* tab (or a
  click on a cell) shows where every number comes from.
* **Breakdowns:** the *Breakdowns* tab shows, for one task, mode and grouping (discipline, question type, team
  size, ...), every row's score per group with its interval and coverage; a group a row has no items in is left
  empty, never 0.
* **Reference baselines:** every tab lists non-LLM reference baselines (random, majority, similarity rankers,
  mean predictors ...; `sciprobe baselines`) as rows of Type *reference baseline*, after the models. They are
  scored by sciprobe on the tab's own data, never ranked and owned by nobody; the model-name prefix
  `reference-baseline/` is reserved for them. A mode a baseline cannot be scored in on the data is `n/a`, never 0.
* **Reported in the paper:** under each benchmark's leaderboard, the numbers the benchmark's paper prints for its
  task columns (`sciprobe paper BENCH`), as printed, in rows of Type *reported in the paper (Table N)*. They are a
  table of their own: not submissions, never ranked, owned by nobody, not in the plots; each links to its source.
  `sciprobe compare RESULTS --paper` says whether a run reproduces them, or why it is not comparable.
* **Who owns a row:** a model name belongs to its first submitter. Once you have submitted under a name, nobody
  else can (names count case-insensitively and after Unicode NFKC folding: `Org/Model`, `org/model` and their
  full-width forms are one name, one row); pick your own name for your own model. Every row carries its owner
  (column *Submitter*) and a result of one user never replaces another user's cell.
* **Users:** user names count the same way (`Alice`, `alice` and `alice` with stray spaces are one user) for the
  rate limit and duplicate detection.
* **Contamination-free:** every scored item is dated after the model's knowledge cutoff from sciprobe's cutoff
  registry (`yes` / `no`). A knowledge cutoff you claim never overrides the registry: when the registry knows the
  model, its date is used and a different claim is shown beside it (*registry; claimed …*). For a model the
  registry does not know, the claim is shown as *claimed*: it can mark a result `no` (the items may be in the
  training data), never `yes` — such rows say `unverified` and the contamination-free filter leaves them out.
  `unknown` when there is no cutoff at all.
* **Queue:** classification and ranking tasks are scored inline on submission; judge-scored tasks wait in the
  queue for the scoring worker (`sciprobe leaderboard --worker`).
"""


@dataclass(frozen=True)
class Settings:
    """Space settings, read from the environment."""

    auth: str = "local"
    max_recent: int = 10
    window: dt.timedelta = dt.timedelta(days=1)
    max_bytes: int = MAX_FILE_BYTES
    data: tuple[tuple[str, str], ...] = ()  # SCIPROBE_LEADERBOARD_DATA, checked: ((bench, location), ...)

    @classmethod
    def from_env(cls) -> "Settings":
        default_auth = "oauth" if os.environ.get("SPACE_ID") else "local"
        auth = (os.environ.get("SCIPROBE_LEADERBOARD_AUTH") or default_auth).lower()
        if auth not in ("oauth", "local"):
            raise SciprobeError(f"SCIPROBE_LEADERBOARD_AUTH must be oauth or local, not {auth!r}")
        limit = os.environ.get("SCIPROBE_LEADERBOARD_RATE_LIMIT") or "10/86400"
        count, _, seconds = limit.partition("/")
        try:
            max_recent, window = int(count), dt.timedelta(seconds=int(seconds or 86400))
        except ValueError:
            raise SciprobeError(f"SCIPROBE_LEADERBOARD_RATE_LIMIT must look like N/SECONDS, not {limit!r}") from None
        raw_bytes = os.environ.get("SCIPROBE_LEADERBOARD_MAX_BYTES") or str(MAX_FILE_BYTES)
        try:
            max_bytes = int(raw_bytes)
        except ValueError:
            raise SciprobeError(f"SCIPROBE_LEADERBOARD_MAX_BYTES must be a number of bytes, not {raw_bytes!r}") \
                from None
        if max_recent < 0 or window.total_seconds() <= 0 or max_bytes <= 0:
            raise SciprobeError("SCIPROBE_LEADERBOARD_RATE_LIMIT and SCIPROBE_LEADERBOARD_MAX_BYTES must be positive")
        from sciprobe.core.registry import benchmark_names
        from sciprobe.leaderboard.pins import DATA_ENV, parse_data_setting

        data = parse_data_setting(os.environ.get(DATA_ENV), benchmark_names())  # a bad pin fails at start
        return cls(auth, max_recent, window, max_bytes, tuple(sorted(data.items())))


def accept_submission(store: LeaderboardStore, settings: Settings, benchmarks: Sequence[str], pins: dict,
                      user: str | None, task: str, file_path: str | None, model_name: str, model_family: str,
                      model_revision: str, model_cutoff: str, description: str,
                      file_name: str | None) -> "SubmissionRequest":
    """Validate, store and (inline tasks) score one submission; raises a one-line :class:`SciprobeError` when it
    is refused. Runs in the Space's process or in a scoring process (:mod:`~sciprobe.leaderboard.scoring_pool`)."""
    user = validate_user(user)
    model = validate_model_info(model_name, model_family, model_revision, model_cutoff, description)
    error = task_ref_error(task)
    if error:
        raise SubmissionError(error)
    bench = task.partition(":")[0]
    if bench not in benchmarks:
        raise SubmissionError(f"wrong task: {task!r} is not on this leaderboard")
    location = pins[bench].resolve()
    sub = validate_submission(task, file_path, model, data=location, file_name=file_name,
                              max_bytes=settings.max_bytes)
    return lb_queue.submit(store, sub, user, data=lambda b: pins[b].resolve(), max_recent=settings.max_recent,
                           window=settings.window)


class LeaderboardService:
    """Everything the UI does, without gradio: tables, provenance, submissions. Tested directly and via the app."""

    def __init__(self, store: LeaderboardStore, settings: Settings, benchmarks: Sequence[str]) -> None:
        self.store = store
        self.settings = settings
        self.benchmarks = list(benchmarks)
        self.columns = {b: tables.task_columns([b]) for b in self.benchmarks}
        self.all_columns = [c for b in self.benchmarks for c in self.columns[b]]
        from sciprobe.leaderboard.pins import data_pin

        self.pins = {b: data_pin(b, dict(settings.data)) for b in self.benchmarks}
        self.baseline_notes: dict[str, list[str]] = {}
        # the decoded results table and the store's results_version it was read at; a page load asks for the
        # results a dozen times, and decoding the table is the cost, so it is decoded once per change
        self._results_cache: tuple[Any, list] | None = None
        self._pinned = threading.local()  # (version, results) held for one page load
        # the tables, plots and choices derived from the results (and the queue from the requests), kept until
        # the store changes: an unchanged store answers a page load without deriving anything again
        self.views = DerivedViews()
        from sciprobe.leaderboard.scoring_pool import ScoringPool, processes_from_env, shareable

        self.scoring = ScoringPool(processes_from_env() if shareable(store) else 0)

    def ensure_baselines(self) -> None:
        """Compute and store the reference baselines missing on each benchmark's data
        (:mod:`~sciprobe.leaderboard.baseline_runs`); what could not be computed becomes a note on its tab."""
        from sciprobe.leaderboard.baseline_runs import ensure_baselines

        self.baseline_notes = ensure_baselines(self.store, self.pins)

    def baselines_note(self, key: str) -> str:
        """The tab's line about its reference rows (``overview``: all benchmarks)."""
        if key == "overview":
            return tables.baselines_note(self.results())
        return tables.baselines_note(self.results(), key, self.baseline_notes.get(key, []))

    def reported_note(self, key: str) -> str:
        """What the tab's rows of published numbers are (:mod:`~sciprobe.leaderboard.reported`)."""
        from sciprobe.leaderboard.reported import reported_note

        return reported_note(key)

    def reported_html(self, key: str) -> str:
        """The tab's rows of published numbers, apart from the leaderboard table."""
        from sciprobe.leaderboard.reported import reported_html

        return reported_html(key, self.columns[key])

    def demo_notice(self) -> str:
        """What every tab of a demo Space says ('' when every benchmark is scored against pinned data)."""
        from sciprobe.leaderboard.pins import demo_notice

        return demo_notice(list(self.pins.values()))

    def data_note(self, benchmark: str) -> str:
        """Which data a benchmark's submissions are scored against (its tab and the Submit tab say it)."""
        return f"Scored against {self.pins[benchmark].describe()}."

    def results(self) -> list:
        """Every stored result, decoded once per change of the table (a store with ``results_version``), or once
        per page load inside :meth:`one_read`."""
        return list(self._versioned_results()[1])

    def _versioned_results(self) -> tuple[Any, list]:
        """(the results version read before the results, the results); version None: the store has none."""
        pinned = getattr(self._pinned, "results", None)
        if pinned is not None:
            return pinned
        version_of = getattr(self.store, "results_version", None)
        if version_of is None:
            return None, self.store.list_results()
        version = version_of()
        cached = self._results_cache
        if cached is None or cached[0] != version:
            cached = (version, self.store.list_results())
            self._results_cache = cached
        return cached

    def derived(self, key: tuple, compute: Callable[[], T]) -> T:
        """``compute()`` (a view of the results) once per version of the results; each call on a store without
        versions. ``key`` names the view and its arguments."""
        return self.views.get("results", self._versioned_results()[0], key, compute)

    @contextmanager
    def one_read(self) -> Iterator[None]:
        """Within the block (one page load, on this thread) the results are read from the store once."""
        self._pinned.results = self._versioned_results()
        try:
            yield
        finally:
            self._pinned.results = None

    def reload(self) -> None:
        refresh = getattr(self.store, "refresh", None)
        if refresh is not None:
            refresh()

    def table(self, key: str, mode: str = tables.DEFAULT_MODE, families: Sequence[str] | None = None,
              contamination_free_only: bool = False, query: str = ""):
        columns = self.all_columns if key == "overview" else self.columns[key]
        return tables.leaderboard_frame(self.results(), columns, overview=key == "overview",
                                        mode=mode or tables.DEFAULT_MODE, families=families or None,
                                        contamination_free_only=bool(contamination_free_only),
                                        query=query or "")

    def table_view(self, key: str, mode: str = tables.DEFAULT_MODE, families: Sequence[str] | None = None,
                   contamination_free_only: bool = False, query: str = ""):
        """:meth:`table` as the page shows it: every score with its metric's declared precision."""
        columns = self.all_columns if key == "overview" else self.columns[key]
        mode, families, clean, query = (mode or tables.DEFAULT_MODE, tuple(families or ()),
                                        bool(contamination_free_only), query or "")
        frame = self.derived(("table", key, mode, families, clean, query),
                             lambda: self.table(key, mode, list(families), clean, query))
        # a copy in a new Styler: the caller may change or render it; the kept frame serves the next load
        return tables.display_frame(frame.copy(), columns, overview=key == "overview")

    def families(self) -> list[str]:
        """The model families of the stored results (the family filter's choices)."""
        return list(self.derived(("families",), lambda: tables.families_of(self.results())))

    def row_choices(self) -> list[tuple[str, str]]:
        def compute() -> list[tuple[str, str]]:
            shown = [r for r in self.results() if tables.is_shown(r)]
            return [(tables.row_label(cells), row_id) for row_id, cells in tables.group_rows(shown).items()]

        return list(self.derived(("rows",), compute))

    def task_choices(self) -> list[str]:
        """Every task once (a task's extra columns are not other tasks)."""
        return list(dict.fromkeys(c.ref for c in self.all_columns))

    def provenance(self, row_id: str | None, task: str | None = None) -> dict[str, Any]:
        if not row_id:
            return {"hint": "choose a row (or click a cell in a leaderboard table)"}
        return tables.row_provenance(self.results(), row_id, task or None)

    def panel_choices(self) -> list[tuple[str, str]]:
        """Results scored by a panel of two or more judges, as (label, result id)."""
        from sciprobe.leaderboard.agreement import panels

        return list(self.derived(("panels",), lambda: [(label, result.result_id)
                                                        for label, result in panels(self.results())]))

    def agreement(self, result_id: str | None):
        """(heatmap figure, pairwise table) of the judges of one result; an empty view when there is none."""
        return self.agreement_figure(result_id), self.agreement_frame(result_id)

    def agreement_figure(self, result_id: str | None):
        """The heatmap of :meth:`agreement` (a hint when there is nothing to show)."""
        from sciprobe.leaderboard.agreement import agreement_plot

        return agreement_plot(*self._panel_scores(result_id))

    def agreement_frame(self, result_id: str | None):
        """The pairwise table of :meth:`agreement`."""
        import pandas as pd

        from sciprobe.leaderboard.agreement import agreement_table

        columns = ["Judge A", "Judge B", "Items", "Pearson r", "Spearman rho", "Mean |diff|", "Verdict agreement"]
        scores = self._panel_scores(result_id)[0]
        rows = [{"Judge A": display_text(r["judge_a"], 80), "Judge B": display_text(r["judge_b"], 80), "Items": r["n"],
                 "Pearson r": r["pearson"], "Spearman rho": r["spearman"], "Mean |diff|": r["mean_abs_diff"],
                 "Verdict agreement": r.get("verdict_agreement")}
                for r in (agreement_table(scores) if scores else [])]
        return pd.DataFrame(rows, columns=columns)

    def _panel_scores(self, result_id: str | None) -> tuple[Any, str]:
        """(the per-judge item scores of one result or None, the plot's title)."""
        from sciprobe.leaderboard.agreement import PROVENANCE_KEY

        if result_id:
            try:
                result = self.store.get_result(result_id)
            except SciprobeError:
                result = None
            if result is not None:
                scores = (result.provenance or {}).get(PROVENANCE_KEY)
                return scores, f"{display_text(result.model_name)} · {result.task}"
        return None, "Judge agreement"

    def queue_frame(self):
        """The Queue tab's table, derived once per change of the requests."""
        version_of = getattr(self.store, "requests_version", None)
        frame = self.views.get("requests", version_of() if version_of else None, ("queue",), self._queue_frame)
        return frame.copy()

    def _queue_frame(self):
        import pandas as pd

        rows = [{"Submitted": r.submitted_time[:19].replace("T", " "), "Status": r.status,
                 "Model": display_text(r.model_name), "Task": r.task, "User": display_text(r.user, 40),
                 "Items": r.n_predictions, "Error": display_text(r.error or "", 200),
                 "File": display_text(r.predictions_file, 60), "Request": r.request_id[:8]}
                for r in reversed(self.store.list_requests())]
        return pd.DataFrame(rows, columns=["Submitted", "Status", "Model", "Task", "User", "Items", "Error", "File",
                                           "Request"])

    def submit(self, user: str | None, task: str, file_path: str | None, model_name: str, model_family: str = "",
               model_revision: str = "", model_cutoff: str = "", description: str = "", *,
               file_name: str | None = None) -> tuple[str, dict[str, Any]]:
        """Validate, store, score. Returns (markdown status, request record or error).

        ``file_name`` is the name the browser sent (default: the uploaded file's base name)."""
        args = (user, task, file_path, model_name, model_family, model_revision, model_cutoff, description,
                file_name)
        try:
            if self.scoring.enabled:  # validated, stored and scored in a scoring process: off this one's GIL
                request = self.scoring.accept(self.store, self.settings, self.benchmarks, self.pins, args)
            else:
                request = accept_submission(self.store, self.settings, self.benchmarks, self.pins, *args)
        except SciprobeError as exc:
            return f"**Rejected:** {display_text(exc, 400)}", {"status": "REJECTED", "error": str(exc)}
        if request.status == "FINISHED" and request.result_id:
            result = self.store.get_result(request.result_id)
            from sciprobe.core.registry import resolve_task

            from sciprobe.scoring.ranges import display_decimals

            spec = resolve_task(result.task)[1]
            mode = spec.ranked_mode if spec.ranked_mode in result.scores else result.default_mode
            report = result.scores.get(mode, {})
            value, places = report.get(result.headline), display_decimals(spec.metric, result.headline)
            shown = f"{value:.{places}f}" if isinstance(value, (int, float)) and math.isfinite(value) else "n/a"
            ci = headline_interval(report, result.headline, places)
            message = (f"**Scored:** {display_text(request.model_name)} on `{request.task}`: {result.headline} "
                       f"{shown}, 95% CI {ci} ({mode}, the ranked mode), coverage "
                       f"{tables.coverage_text(report.get('coverage'), result.provenance)} — request "
                       f"`{request.request_id[:8]}` FINISHED.")
        elif request.status == "FAILED":
            message = f"**Scoring failed:** {display_text(request.error or 'unknown error', 300)}"
        else:
            message = (f"**Queued:** {display_text(request.model_name)} on `{request.task}` (request "
                       f"`{request.request_id[:8]}`, {request.status}); the scoring worker will pick it up.")
        return message, request.to_json()


def loadable_benchmarks() -> list[str]:
    """The registered benchmarks whose declaration imports; a broken one is skipped with a warning instead of
    taking the whole leaderboard down."""
    import warnings

    from sciprobe.core.registry import benchmark_names, get_benchmark

    names = []
    for name in benchmark_names():
        try:
            get_benchmark(name)
        except Exception as exc:  # noqa: BLE001 - any import error of one benchmark module
            warnings.warn(f"leaderboard: skipping benchmark {name!r}: {exc}", stacklevel=2)
            continue
        names.append(name)
    return names


def build_app(store: LeaderboardStore | None = None, settings: Settings | None = None,
              benchmarks: Sequence[str] | None = None):
    """The Gradio Blocks of the leaderboard (not launched)."""
    from sciprobe.leaderboard.gradio_import import import_gradio

    gr = import_gradio()  # without regenerating its editor stubs: a second off every start

    from sciprobe.core.registry import get_benchmark
    from sciprobe.leaderboard.breakdown_tab import build_breakdown_tab

    settings = settings or Settings.from_env()
    service = LeaderboardService(store or open_store(), settings, benchmarks or loadable_benchmarks())
    service.ensure_baselines()  # every tab has its reference rows, computed on the tab's own data
    tab_keys = ["overview", *service.benchmarks]

    notice = service.demo_notice()

    def plots_of(key: str, mode: str | None = None) -> tuple[Any, Any]:
        """A tab's two plots (score vs cutoff, per-task bars), drawn once per version of the results."""
        chosen = mode or tables.DEFAULT_MODE
        return service.derived(("plots", key, chosen), lambda: (
            rendered_plot(tables.cutoff_plot(service.results(), service.columns[key], chosen)),
            rendered_plot(tables.task_bars(service.results(), service.columns[key], chosen))))

    def agreement_plot_view(result_id: str | None) -> Any:
        """The Judge agreement tab's heatmap of one result, drawn once per version of the results."""
        return service.derived(("agreement-plot", result_id),
                               lambda: rendered_plot(service.agreement_figure(result_id)))

    def agreement_frame_view(result_id: str | None) -> Any:
        return service.derived(("agreement-table", result_id), lambda: service.agreement_frame(result_id)).copy()

    def agreement_view(result_id: str | None) -> tuple[Any, Any]:
        """The Judge agreement tab's (plot, table) of one result."""
        return agreement_plot_view(result_id), agreement_frame_view(result_id)

    def demo_banner(tab: str) -> None:
        """A demo Space says so on every tab."""
        if notice:
            gr.Markdown(notice, elem_classes=["sp-demo"], elem_id=f"demo-{tab}")

    with gr.Blocks(title="sciprobe leaderboard" + (" (demo)" if notice else "")) as demo:
        gr.Markdown("# sciprobe leaderboard" + (" — DEMO" if notice else "")
                    + "\nScience-of-science LLM benchmarks, scored server-side from submitted predictions. Rows "
                    "never mix dataset revisions; every cell carries coverage and provenance.",
                    elem_classes=["sp-title"])
        with gr.Row():
            refresh_button = gr.Button("Refresh", size="sm", variant="secondary", scale=0, min_width=120)
        tables_out: dict[str, Any] = {}
        filters: dict[str, list[Any]] = {}
        family_boxes, plots = [], []
        with gr.Tabs():
            for key in tab_keys:
                title = "Overview" if key == "overview" else get_benchmark(key).title
                columns = service.all_columns if key == "overview" else service.columns[key]
                with gr.Tab(title, id=f"tab-{key}") as tab:
                    demo_banner(key)
                    if key != "overview":
                        bench = get_benchmark(key)
                        gr.Markdown(f"**{bench.title} v{bench.version}** — {display_text(bench.description, 800)} "
                                    f"{service.data_note(key)}", elem_classes=["sp-note"], elem_id=f"about-{key}")
                    gr.Markdown(tables.ranking_note(columns), elem_classes=["sp-note"], elem_id=f"ranking-{key}")
                    gr.Markdown(service.baselines_note(key), elem_classes=["sp-note"], elem_id=f"baselines-{key}")
                    with gr.Row():
                        mode = gr.Dropdown(tables.mode_choices(columns), value=tables.DEFAULT_MODE, label="Mode",
                                           scale=1, min_width=140)
                        families = gr.CheckboxGroup(service.families(), label="Model family",
                                                    scale=2)
                        clean = gr.Checkbox(False, label="Contamination-free only", scale=1, min_width=160)
                        query = gr.Textbox(label="Model search", placeholder="e.g. gpt", scale=1, min_width=160)
                    table = gr.Dataframe(service.table_view(key), datatype="auto", interactive=False,
                                         show_search="search", pinned_columns=1, max_height=420, wrap=False,
                                         label="Leaderboard" if key == "overview" else f"{title} leaderboard",
                                         buttons=["copy", "fullscreen"], elem_id=f"table-{key}",
                                         elem_classes=["sp-pinned"])  # CSS pins it: see CSS above
                    with gr.Accordion("Provenance of the selected cell", open=False) as acc:
                        selected = gr.JSON(label="Provenance", elem_id=f"provenance-{key}", open=True)
                    if key != "overview":
                        # the paper's numbers and the plots are filled in when the tab is opened, not for the
                        # first page (the Overview shows neither): reading and checking every published number and
                        # drawing eight plots with matplotlib were a third of the time to the first page
                        with gr.Accordion("Reported in the paper (not ranked)", open=True):
                            reported_note = gr.Markdown("", elem_classes=["sp-note"])
                            reported_rows = gr.HTML("", elem_id=f"reported-{key}")
                        with gr.Row():
                            scatter = gr.Plot(None, label="Score vs cutoff", format="png", show_label=False)
                            bars = gr.Plot(None, label="Per-task scores", format="png", show_label=False)
                        plots.append((key, scatter, bars, mode))

                        def open_tab(mode_value: str | None, _key: str = key) -> tuple[Any, Any, str, str]:
                            return (*plots_of(_key, mode_value), service.reported_note(_key),
                                    service.reported_html(_key))

                        tab.select(open_tab, inputs=mode, outputs=[scatter, bars, reported_note, reported_rows],
                                   api_name=f"open_{key}")
                    tables_out[key] = table
                    filters[key] = [mode, families, clean, query]
                    family_boxes.append(families)

                    def on_filter(mode_value, family_values, clean_value, query_value, _key=key):
                        return service.table_view(_key, mode_value, family_values, clean_value, query_value)

                    gr.on([mode.change, families.change, clean.change, query.submit], on_filter,
                          inputs=[mode, families, clean, query], outputs=table, api_name=f"filter_{key}")

                    def on_select(frame, evt: gr.SelectData, _key=key):
                        row_index, col_index = (evt.index if isinstance(evt.index, (list, tuple)) else (evt.index, 0))
                        if frame is None or len(frame) == 0 or row_index >= len(frame):
                            return {"hint": "no row selected"}, gr.update(open=True)
                        row_id = frame.iloc[row_index][tables.ROW_COLUMN]
                        header = str(frame.columns[col_index])
                        task = next((c.ref for c in service.all_columns
                                     if header in (c.score_header(True), c.score_header(False), c.coverage_header(),
                                                   c.coverage_header(True), c.ci_header(True), c.ci_header(False))
                                     and (_key == "overview" or c.ref.startswith(_key + ":"))), None)
                        return service.provenance(row_id, task), gr.update(open=True)

                    table.select(on_select, inputs=table, outputs=[selected, acc], api_name=f"select_{key}")

            breakdown = build_breakdown_tab(gr, service, demo_banner)

            with gr.Tab("Provenance", id="tab-provenance"):
                demo_banner("provenance")
                gr.Markdown("Choose a leaderboard row (and optionally one task) to see how its numbers were made.",
                            elem_classes=["sp-note"])
                with gr.Row():
                    row_box = gr.Dropdown(service.row_choices(), label="Row", scale=3, elem_id="provenance-row")
                    task_box = gr.Dropdown(["", *service.task_choices()], value="", label="Task (optional)", scale=1)
                    show = gr.Button("Show provenance", variant="primary", scale=0, min_width=220)
                provenance = gr.JSON(label="Provenance", open=True, elem_id="provenance")
                show.click(service.provenance, inputs=[row_box, task_box], outputs=provenance, api_name="provenance")

            with gr.Tab("Judge agreement", id="tab-agreement") as agreement_tab:
                demo_banner("agreement")
                gr.Markdown("Where several judges scored the same items (SGI-Bench idea-generation panel, PreScience "
                            "LACER with several judges), how far they agree item by item: Pearson / Spearman "
                            "correlation of their per-item scores, mean absolute difference and, for pairwise "
                            "votes, the share of identical verdicts.", elem_classes=["sp-note"])
                panel_choices = service.panel_choices()
                first_panel = panel_choices[0][1] if panel_choices else None
                panel_box = gr.Dropdown(panel_choices, value=first_panel, label="Result scored by a judge panel",
                                        elem_id="agreement-result")
                # the heatmap is drawn when the tab is opened (as the benchmark tabs' plots)
                agreement_fig = gr.Plot(None, format="png", show_label=False, elem_id="agreement-plot")
                agreement_df = gr.Dataframe(agreement_frame_view(first_panel), interactive=False,
                                            label="Pairwise agreement", elem_id="agreement-table")
                agreement_tab.select(agreement_plot_view, inputs=panel_box, outputs=agreement_fig,
                                     api_name="open_agreement")
                panel_box.change(agreement_view, inputs=panel_box, outputs=[agreement_fig, agreement_df],
                                 api_name="agreement")

            with gr.Tab("Submit", id="tab-submit"):
                demo_banner("submit")
                gr.Markdown(" ".join(f"{get_benchmark(b).title}: {service.data_note(b)}" for b in service.benchmarks)
                            + " A submission has one line per test item of that dataset (null for no answer).",
                            elem_classes=["sp-note"], elem_id="submit-data")
                if settings.auth == "oauth":
                    gr.LoginButton()
                    user_box = None
                    signed_in = gr.Markdown("Sign in with your Hugging Face account to submit.")
                else:
                    with gr.Row():
                        user_box = gr.Textbox(label="User name (local sign-in)", placeholder="your-name", scale=2,
                                              elem_id="user-name")
                        sign_in = gr.Button("Sign in", scale=0, min_width=120, elem_id="sign-in")
                    signed_in = gr.Markdown("Not signed in (local mode).", elem_id="signed-in")

                    def do_sign_in(name: str) -> str:
                        try:
                            name = validate_user(name)
                        except SubmissionError:
                            return "**Invalid user name:** letters, digits and _ . - only."
                        return f"Signed in as **{display_text(name, 40)}** (local mode)."

                    sign_in.click(do_sign_in, inputs=user_box, outputs=signed_in, api_name="sign_in")
                with gr.Row():
                    with gr.Column(scale=1):
                        task_in = gr.Dropdown(service.task_choices(), value=(service.task_choices() or [None])[0],
                                              label="Task", elem_id="task")
                        file_in = gr.File(label="Predictions (JSONL, one line per test item) or a lighteval details "
                                                "file (.parquet)", file_types=[".jsonl", ".json", ".parquet"],
                                          type="filepath", elem_id="predictions")
                    with gr.Column(scale=1):
                        name_in = gr.Textbox(label="Model name", placeholder="owner/model", elem_id="model-name")
                        with gr.Row():
                            family_in = gr.Textbox(label="Model family (optional)", placeholder="gpt")
                            revision_in = gr.Textbox(label="Model revision (optional)")
                            cutoff_in = gr.Textbox(label="Knowledge cutoff (optional)", placeholder="YYYY-MM")
                        desc_in = gr.Textbox(label="Notes (optional)", lines=2, max_length=500)
                gr.Markdown("A model name belongs to its first submitter: once you submit under a name (in any "
                            "letter case), other users cannot. A knowledge cutoff you enter is shown as your claim; "
                            "sciprobe's cutoff registry decides whenever it knows the model.",
                            elem_classes=["sp-note"], elem_id="submit-rules")
                submit_button = gr.Button("Submit", variant="primary", elem_id="submit")
                status = gr.Markdown(elem_id="sp-status")
                request_json = gr.JSON(label="Request", open=False)
                inputs = [task_in, file_in, name_in, family_in, revision_in, cutoff_in, desc_in]
                # named parameters: they are the API's parameter names (a lambda gave param_1..7)
                if user_box is not None:
                    def submit_local(user, task, predictions, model_name, model_family, model_revision,
                                     knowledge_cutoff, notes):
                        return service.submit(user, task, predictions, model_name, model_family, model_revision,
                                              knowledge_cutoff, notes)

                    submit_event = submit_button.click(submit_local, inputs=[user_box, *inputs],
                                                       outputs=[status, request_json], api_name="submit")
                else:
                    def submit_oauth(task, predictions, model_name, model_family, model_revision, knowledge_cutoff,
                                     notes, profile: gr.OAuthProfile | None):
                        user = profile.username if profile is not None else None
                        return service.submit(user, task, predictions, model_name, model_family, model_revision,
                                              knowledge_cutoff, notes)

                    submit_event = submit_button.click(submit_oauth, inputs=inputs, outputs=[status, request_json],
                                                       api_name="submit")

            with gr.Tab("Queue", id="tab-queue"):
                demo_banner("queue")
                queue_table = gr.Dataframe(service.queue_frame(), interactive=False, show_search="search",
                                           max_height=420, label="Requests (newest first)", elem_id="queue")

            with gr.Tab("About", id="tab-about"):
                demo_banner("about")
                gr.Markdown(ABOUT)

        def refresh_all(selected_panel: str | None = None, task: str | None = None, mode: str | None = None,
                        by: str | None = None):
            service.reload()
            with service.one_read():
                return page_outputs(selected_panel, task, mode, by, with_plots=True)

        def load_page(selected_panel: str | None = None, task: str | None = None, mode: str | None = None,
                      by: str | None = None):
            """The first page: every table, no plot (each tab draws its plots when it is opened)."""
            service.reload()
            with service.one_read():
                return page_outputs(selected_panel, task, mode, by, with_plots=False)

        def page_outputs(selected_panel: str | None, task: str | None, mode: str | None, by: str | None, *,
                         with_plots: bool):
            fams = service.families()
            out: list[Any] = [service.table_view(key) for key in tab_keys]
            out += [gr.update(choices=fams) for _ in family_boxes]
            for key, _, _, _ in plots if with_plots else []:
                out += list(plots_of(key))
            out += breakdown.refresh(task, mode, by)
            out += [gr.update(choices=service.row_choices()), service.queue_frame()]
            # keep the chosen panel result if it still exists, else show the first: a dropdown with choices but
            # no value would leave the start-up plot ("no panel yet") on screen
            choices = service.panel_choices()
            ids = [result_id for _, result_id in choices]
            keep = selected_panel if selected_panel in ids else (ids[0] if ids else None)
            out.append(gr.update(choices=choices, value=keep))
            out += [agreement_plot_view(keep)] if with_plots else []
            out.append(agreement_frame_view(keep))
            return out

        table_outputs = [tables_out[k] for k in tab_keys] + family_boxes
        plot_outputs = [plot for _, scatter, bars, _ in plots for plot in (scatter, bars)]
        rest = [breakdown.note, breakdown.table, row_box, queue_table, panel_box]
        refresh_outputs = table_outputs + plot_outputs + rest + [agreement_fig, agreement_df]
        refresh_inputs = [panel_box, breakdown.task, breakdown.mode, breakdown.breakdown]
        refresh_button.click(refresh_all, inputs=refresh_inputs, outputs=refresh_outputs, api_name="refresh")
        submit_event.then(refresh_all, inputs=refresh_inputs, outputs=refresh_outputs, api_name="refresh_after_submit")
        demo.load(load_page, inputs=refresh_inputs, outputs=table_outputs + rest + [agreement_df], api_name="load")

        for key, scatter, bars, mode in plots:
            def replot(mode_value, _key=key):
                return plots_of(_key, mode_value)

            mode.change(replot, inputs=mode, outputs=[scatter, bars], api_name=f"plots_{key}")
    demo.sciprobe_service = service  # for tests and the CLI
    return demo


def rendered_plot(figure: Any) -> Any:
    """A matplotlib figure as the PNG a ``gr.Plot`` sends (gradio's ``PlotData``, which it passes through as is):
    a kept view is drawn once, and never by two page loads at the same time. The figures of
    :mod:`~sciprobe.leaderboard.tables` are not pyplot's, so there is nothing to close."""
    from gradio.components.plot import PlotData
    from gradio.processing_utils import encode_plot_to_base64

    return PlotData(type="matplotlib", plot=encode_plot_to_base64(figure, "png"))


def launch_options() -> dict[str, Any]:
    """Gradio 6 takes css/theme at launch time."""
    import gradio as gr

    # Uploads over the size limit are refused by gradio before they reach the disk (validation checks again).
    return {"css": CSS, "theme": gr.themes.Default(primary_hue="indigo"),
            "max_file_size": Settings.from_env().max_bytes}


def launch(*, host: str = "127.0.0.1", port: int | None = None, store_dir: Path | None = None,
           prevent_thread_lock: bool = False, **kwargs: Any):
    """Build and launch the app (what ``sciprobe leaderboard`` runs). Returns the Blocks."""
    if store_dir is not None:
        os.environ["SCIPROBE_LEADERBOARD_DIR"] = str(store_dir)
    demo = build_app()
    # scoring processes start and load their data in the background; the page does not wait
    demo.sciprobe_service.scoring.warm_up(demo.sciprobe_service.pins)
    demo.queue(default_concurrency_limit=8)
    demo.launch(server_name=host, server_port=port, prevent_thread_lock=prevent_thread_lock,
                **{**launch_options(), **kwargs})
    return demo
