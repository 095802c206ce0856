"""``sciprobe report RESULTS... --out DIR``: a static HTML report of one or more results files (no server).

For every task the files share, ``DIR/index.html`` shows a table of each run's headline per mode with its 95%
bootstrap interval and coverage, and figures (PNG files in ``DIR/figures/``, drawn with matplotlib):

- the headline with its interval, one row per run and mode (reference baselines in grey);
- one heatmap per breakdown the task declares (group scores of the default mode, items per group);
- the score-vs-cutoff view: the headline on the items dated strictly after each cutoff, with a bootstrap band;
- the benchmark's own figures (``Benchmark.report_figures`` hook, reading the per-item details), e.g. IDRBench's
  reliability diagram and target-rank histogram, SciTaste's predicted-vs-gold scatter per dimension.

RESULTS are results JSON files or folders searched for ``results_*.json``, each read and validated by
:func:`sciprobe.results.read.load_results_file`. A file that is not a sciprobe results file (lighteval's own results
in the same ``results/`` folder) or is malformed is skipped with one line on stderr, and so is a malformed task of
an otherwise good file; the report is built from the rest (none left: one ``error:`` line, exit 2).

Runs of one task are ranked and drawn together only when they ran on the same data: the same dataset (label and
fingerprint, hub revision), cutoff, ``--limit`` and item subset, and report the same headline. Each such group has
its own table and figures, headed by the data it used (``sample:idrbench · 8 items``, ``folder:idrbench · 16 of
1120 items (--limit 16)``); the table names the data in a column too, and an incomplete or partial result says so
beside its run (``org/model (INCOMPLETE: 3/16 no answer)``).

Below each task's runs, the numbers its benchmark's paper reports for the task's headline (``published.yaml``,
:mod:`sciprobe.results.published`) are rows labelled *reported in the paper (Table N)*, in a table of their own: never
ranked, owned by nobody, never drawn in the figures, each linking to its source (``sciprobe compare RESULTS
--paper`` gives the verdict of a run against them).

Every value from a results file reaches ``index.html`` through one escape (:func:`_h`), whatever its type; every
figure draws its text literally (no matplotlib mathtext). The page holds no date of its own, so the same inputs
give the same report.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import re
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciprobe.core.errors import SciprobeError

if TYPE_CHECKING:  # the figures (numpy, matplotlib) load when a report is built, not with `sciprobe report --help`
    from sciprobe.results.figures import RunTask
    from sciprobe.results.read import ResultsFile

Warn = Callable[[str], None]

__all__ = ["DataUsed", "build_report", "configure_report_parser", "data_used", "read_details", "results_files"]

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px;
       color: #1d1d1f; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2.5rem; border-bottom: 2px solid #ddd; padding-bottom: .3rem; }
h3 { margin-top: 2rem; font-family: ui-monospace, monospace; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .85rem; }
th, td { border: 1px solid #ddd; padding: .25rem .55rem; text-align: left; vertical-align: top; }
th { background: #f4f4f6; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.baseline td { color: #666; font-style: italic; }
table.reported td { color: #555; background: #fafaf5; }
figure { margin: 1rem 0 1.6rem; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: .82rem; color: #555; max-width: 900px; }
.warn { color: #a40000; } .note { font-size: .82rem; color: #555; }
nav ul { columns: 2; font-size: .85rem; }
"""


def _h(value: Any) -> str:
    """Any value as HTML text: the one escape at the output edge, for strings, numbers and None alike."""
    return html.escape(str(value), quote=True)


def _warn(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class ReportFile:
    results: ResultsFile
    label: str

    @property
    def path(self) -> Path:
        return self.results.path

    @property
    def block(self) -> dict[str, Any]:
        return self.results.block

    @property
    def baseline(self) -> bool:
        return bool(self.block.get("reference_baseline"))


def results_files(paths: Sequence[str | Path]) -> list[Path]:
    """Every results JSON named (folders: their ``results_*.json``, recursively), in a stable order. A named path
    that is not a folder is kept whatever it is: reading it decides (a FIFO or a device is refused unread)."""
    out: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = sorted(path.rglob("results_*.json"))
            if not found:
                raise SciprobeError(f"{path} holds no results_*.json file")
            out.extend(found)
        elif path.exists() or path.is_symlink():
            out.append(path)
        else:
            raise SciprobeError(f"{path}: no such results file or folder")
    seen: set[Path] = set()
    unique = []
    for path in out:  # one report row per file, named as given (a symlink keeps its own name)
        if path.resolve() not in seen:
            seen.add(path.resolve())
            unique.append(path.absolute())
    if not unique:
        raise SciprobeError("no results file given")
    return unique


def read_details(results_path: Path, entry: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The task's per-item records from its details Parquet (``OUT/details/...`` beside ``OUT/results``), or None
    when the file is not there, is not a regular file or lies outside ``OUT``. Cells keep the details' types
    (dicts are JSON text)."""
    details = entry.get("details")
    parents = Path(results_path).resolve().parents
    if not details or len(parents) < 3:
        return None
    file = (parents[2] / details).resolve()
    if not file.is_relative_to(parents[2]) or not file.is_file():
        return None
    import pyarrow.parquet as pq

    try:
        return pq.read_table(file).to_pylist()
    except Exception:  # noqa: BLE001 - an unreadable details file only loses the per-item figures
        return None


def _unique_labels(runs: Sequence[RunTask], files: Mapping[int, Path]) -> None:
    """Model ids, made unique with the results file's name where two runs of one table share one (the same model
    on other data is in another table, and keeps its plain label)."""
    seen: dict[str, int] = {}
    for run in runs:
        seen[run.label] = seen.get(run.label, 0) + 1
    for run in runs:
        if seen[run.label] > 1:
            run.label = f"{run.label} ({files[id(run)].stem.removeprefix('results_')})"


def _load(paths: Sequence[Path], warn: Warn) -> list[ReportFile]:
    """The readable sciprobe results files among ``paths``; one ``warn`` line per file skipped (another tool's
    file, a malformed one) and per malformed task left out of a file."""
    from sciprobe.results.read import ResultsFileError, load_results_file

    files = []
    for path in paths:
        try:
            results = load_results_file(path, skip_bad_tasks=True)
        except ResultsFileError as exc:
            warn(f"skipped {exc}")
            continue
        for problem in results.skipped_tasks:
            warn(f"skipped a task of {results.path}: {problem}")
        label = results.model_id + (" (baseline)" if results.reference_baseline else "")
        files.append(ReportFile(results, label))
    if not files:
        raise SciprobeError(f"no sciprobe results file to report ({len(paths)} file(s) skipped, see above)")
    return files


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


def _fmt(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "n/a"


# ---------------------------------------------------------------- which data a run used

@dataclass(frozen=True)
class DataUsed:
    """The data one task of one run was scored on. Runs are ranked and drawn together only when ``key`` (and the
    headline) agree: a sample, a ``--limit`` prefix, a cutoff or a partial predictions file is other data than the
    full set, and two files of one name with different fingerprints are different data."""

    key: tuple[Any, ...]
    label: str               # "folder:idrbench · 16 of 1120 items (--limit 16) · data 3f2a9c01b2d4"
    full: bool               # neither limited nor partial


def data_used(entry: Mapping[str, Any], mode: str) -> DataUsed:
    """What ``entry`` (a validated ``sciprobe.tasks[KEY]``) ran on, from its provenance (the item count falls
    back to the coverage of ``mode``)."""
    prov = entry.get("provenance") or {}
    cutoff = prov.get("cutoff") or {}
    partial = prov.get("partial") or {}
    from sciprobe.results.evidence import limit_count

    limit, total, after = limit_count(prov), cutoff.get("n_items_after"), cutoff.get("cutoff")
    asked = min(limit, total) if limit is not None and total is not None else total
    if asked is None:
        asked = ((entry["scores"].get(mode) or {}).get("coverage") or {}).get("n_items")
    subset = None
    if partial:  # a partial score stands on the items its predictions file has: those ids are its data
        ids = (entry.get("items") or {}).get("ids") or []
        subset = hashlib.sha256("\n".join(sorted(ids)).encode("utf-8")).hexdigest()[:12]
    fingerprint = str(prov.get("dataset_fingerprint") or "")
    dataset = str(prov.get("dataset") or "unknown data")
    parts = [dataset + (f"@{prov['dataset_revision']}" if prov.get("dataset_revision") else "")]
    if partial:
        parts.append(f"partial: {partial.get('n_predicted', '?')} of {partial.get('n_items', '?')} items predicted")
    elif limit is not None and total is not None and limit < total:
        parts.append(f"{asked} of {total} items (--limit {limit})")
    elif limit is not None and total is None:
        parts.append(f"{asked if asked is not None else '?'} items (--limit {limit})")
    else:
        parts.append(f"{asked if asked is not None else '?'} items")
    if after:
        parts.append(f"items after {after}")
    if fingerprint:
        parts.append(f"data {fingerprint.rsplit(':', 1)[-1][:12]}")
    truncated = limit is not None and (total is None or limit < total)
    key = (dataset, fingerprint, prov.get("dataset_revision"), after, limit if truncated else None, subset)
    return DataUsed(key, " · ".join(parts), not truncated and not partial)


def _groups(runs: Sequence[RunTask], used: Mapping[int, DataUsed]) -> list[tuple[DataUsed, list[RunTask]]]:
    """``runs`` grouped by the data they used and the headline they report: full data first, then by size."""
    groups: dict[tuple[Any, ...], tuple[DataUsed, list[RunTask]]] = {}
    for run in runs:
        data = used[id(run)]
        groups.setdefault((run.headline, data.key), (data, []))[1].append(run)
    return sorted(groups.values(), key=lambda g: (not g[0].full, g[1][0].headline, g[0].label))


# ---------------------------------------------------------------- the page

def _score_table(runs: Sequence[RunTask]) -> str:
    from sciprobe.results.evidence import coverage_text

    head = ("<tr><th>run</th><th>data</th><th>mode</th><th>metric</th><th>score</th><th>95% CI</th><th>scored</th>"
            "<th>failed</th><th>interval</th></tr>")
    rows = []
    for run in runs:
        for mode, score in run.entry["scores"].items():
            ci = score.get("ci") or {}
            cov = score.get("coverage") or {}
            interval = f"[{_fmt(ci.get('low'))}, {_fmt(ci.get('high'))}]" if ci.get("low") is not None else "n/a"
            unit = str(ci.get("unit") or "item")
            units = "items" if unit == "item" else f"clusters ({unit.partition(':')[2]})"
            how = (f"{ci.get('n_resamples')} resamples of {units}, seed {ci.get('seed')}"
                   if ci.get("low") is not None else str(ci.get("reason") or "not computed"))
            cells = [(run.label, ""), (run.data, "note"), (mode, ""), (run.headline, ""),
                     (_fmt(run.score(mode)), "num"), (interval, "num"),
                     (coverage_text(cov, run.entry.get("provenance")), "num"),
                     (cov.get("n_failed", "?"), "num"), (how, "note")]
            rows.append(f"<tr class=\"{'baseline' if run.baseline else ''}\">"
                        + "".join(f"<td class=\"{css}\">{_h(text)}</td>" for text, css in cells) + "</tr>")
    return f"<table>{head}{''.join(rows)}</table>"


class _Figures:
    """Saves figures as PNG files and collects their HTML."""

    def __init__(self, out: Path) -> None:
        self.folder = out / "figures"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def add(self, make: Callable[[], Any], name: str, caption: str) -> str:
        """Draw ``make()`` and save it; a figure that cannot be drawn (a results file asking for 3,000 rows: a
        PNG beyond matplotlib's 2^16 pixels) is a line on the page saying so, never the end of the report."""
        import matplotlib

        from sciprobe.results.figures import literal_text

        self.count += 1
        file = f"{self.count:03d}-{_slug(name)[:60]}.png"
        try:
            with warnings.catch_warnings(), matplotlib.rc_context({"text.parse_math": False}):
                warnings.filterwarnings("ignore", message="AutoDateLocator was unable")  # a short date range
                literal_text(make()).savefig(self.folder / file, dpi=100)
        except Exception as exc:  # noqa: BLE001 - one figure never ends the report: the failure is shown instead
            (self.folder / file).unlink(missing_ok=True)
            return f"<p class=warn>figure {_h(name)} not drawn ({_h(type(exc).__name__)}: {_h(str(exc)[:200])})</p>"
        return (f"<figure><img src=\"figures/{_h(file)}\" alt=\"{_h(name)}\" data-figure=\"{self.count}\">"
                f"<figcaption>{_h(caption)}</figcaption></figure>")


def _benchmark_figures(bench: str) -> Any:
    from sciprobe.core.registry import get_benchmark

    try:
        hook = get_benchmark(bench).report_figures
    except SciprobeError:
        return None
    if not hook:
        return None
    from sciprobe.core.lazy import resolve

    return resolve(hook)


def _declared_range(ref: str, metric: str, mode: str) -> tuple[float, float] | None:
    """The range of ``metric`` in ``mode`` declared for the task's metric family (None: not declared)."""
    from sciprobe.core.registry import resolve_task
    from sciprobe.scoring.ranges import score_range

    try:
        _, spec = resolve_task(":".join(ref.split(":")[:2]))
    except SciprobeError:
        return None
    found = score_range(spec.metric, metric, mode)
    return (found.low, found.high) if found is not None else None


def _group_figures(key: str, name: str, runs: list[RunTask], figures: _Figures) -> list[str]:
    """The figures of one group of runs (same data, same headline)."""
    from sciprobe.results.figures import breakdown_figure, cutoff_curve, cutoff_figure, scores_figure

    ref = key.rsplit("|", 1)[0]
    metric = runs[0].headline
    declared = _declared_range(ref, metric, runs[0].default_mode)
    data = runs[0].data  # in every title: a figure saved on its own still says which data it shows
    parts = [figures.add(lambda: scores_figure(runs, f"{ref}: {metric} with 95% bootstrap intervals\n{data}",
                                               declared), f"{name} scores",
                         f"{metric} of each run and mode on {data}; bars: 95% percentile bootstrap interval "
                         "over items (clusters where items share a source); diamonds: reference baselines.")]
    titles: dict[str, str] = {}
    for run in runs:
        for breakdown, entry in ((run.entry["scores"].get(run.default_mode) or {}).get("breakdowns") or {}).items():
            titles.setdefault(breakdown, entry.get("title") or breakdown)
    for breakdown, title in titles.items():
        columns = []
        for run in runs:
            found = (run.entry["scores"].get(run.default_mode) or {}).get("breakdowns") or {}
            columns.append((f"{run.label} [{run.default_mode}]",
                            (found[breakdown].get("groups") or {}) if breakdown in found else None))
        if any(groups for _, groups in columns):
            parts.append(figures.add(lambda: breakdown_figure(breakdown, title, columns, metric, data),
                                     f"{name} by {breakdown}",
                                     f"{metric} per {title} (each run's default mode, in brackets); n = items scored "
                                     "/ items in the group; an item with several groups counts in each; \"n/a in this "
                                     "mode\": the run's mode gives no number, so it has no breakdown."))
    curves = [(run, curve) for run in runs
              if (curve := cutoff_curve(run.entry.get("items") or {}, run.default_mode)) is not None]
    if curves:
        parts.append(figures.add(lambda: cutoff_figure(curves, metric, f"{ref}: {metric} vs cutoff\n{data}", declared),
                                 f"{name} cutoff",
                                 f"{metric} on the items dated strictly after each cutoff (band: 95% interval, 200 "
                                 "resamples); grey steps: how many items of the first run remain."))
    extra = _benchmark_figures(ref.split(":")[0])
    if extra is not None:
        try:
            drawn = list(extra(ref.split(":")[1], runs))
        except Exception as exc:  # noqa: BLE001 - a benchmark's own figure never ends the report
            for run in runs:
                run.notes.append(f"{ref}'s own figures were not drawn ({type(exc).__name__}: {str(exc)[:120]})")
            drawn = []
        for title, fig, caption in drawn:
            parts.append(figures.add(lambda fig=fig: fig, f"{name} {title}", caption))
    return parts


def _task_section(key: str, runs: list[RunTask], used: Mapping[int, DataUsed], files: Mapping[int, Path],
                  figures: _Figures) -> str:
    parts = [f"<section id=\"{_slug(key)}\"><h3>{_h(key)}</h3>"]
    groups = _groups(runs, used)
    if len(groups) > 1:
        parts.append(f"<p class=warn>These runs used {len(groups)} different data sets or headlines; each is ranked "
                     "and drawn on its own, never against the others.</p>")
    for number, (data, group) in enumerate(groups, start=1):
        _unique_labels(group, files)
        group.sort(key=lambda r: (r.baseline, r.label))
        metric = "" if len({g[1][0].headline for g in groups}) == 1 else f" · headline {group[0].headline}"
        parts.append(f"<h4>data: {_h(data.label + metric)}</h4>")
        parts.append(_score_table(group))
        parts.extend(_group_figures(key, key if number == 1 else f"{key} data {number}", group, figures))
    parts.append(_reported_table(key, sorted({run.headline for run in runs})))
    notes = sorted({n for run in runs for n in (run.entry.get("analysis_notes") or []) + run.notes})
    if notes:
        parts.append("<ul class=note>" + "".join(f"<li>{_h(n)}</li>" for n in notes) + "</ul>")
    parts.append("</section>")
    return "\n".join(parts)


def _reported_table(key: str, headlines: Sequence[str]) -> str:
    """The paper's numbers for the task's headline(s): rows of their own, apart from the scored runs."""
    from sciprobe.results.published import published_file, reported_label, reported_numbers, source_url

    bench, _, task = key.rsplit("|", 1)[0].partition(":")
    numbers = reported_numbers(bench, task, headlines)
    if not numbers:
        return ""
    paper = published_file(bench).paper
    rows = []
    for r in numbers:
        url = source_url(r)
        source = _h(f"{paper.version}, {r.source.describe()}")
        link = f"<a href=\"{_h(url)}\" rel=\"noopener\">{source}</a>" if url else source
        cells = [(reported_label(r), ""), (r.model, ""), (r.setting.mode or "", ""), (r.metric, ""),
                 (r.printed, "num"), (r.setting.describe(), "note")]
        rows.append("<tr class=reported>" + "".join(f"<td class=\"{css}\">{_h(t)}</td>" for t, css in cells)
                    + f"<td class=note>{link}</td></tr>")
    head = ("<tr><th>row</th><th>model (as the paper names it)</th><th>mode</th><th>metric</th><th>value</th>"
            "<th>setting</th><th>source</th></tr>")
    return (f"<h4>reported in the paper: {_h(paper.title)}</h4><p class=note>Published numbers, not runs of this "
            "report: never ranked and left out of the figures. <code>sciprobe compare RESULTS --paper</code> says "
            "whether a run reproduces them.</p>"
            f"<table class=reported data-reported=\"{_h(key)}\">{head}{''.join(rows)}</table>")


def _runs_table(files: Sequence[ReportFile]) -> str:
    rows = []
    for f in files:
        block = f.block
        general = f.results.data.get("config_general") or {}
        baseline = block.get("reference_baseline") or {}
        cells = [f.label, str(general.get("end_time") or "")[:19], len(block["tasks"]),
                 ", ".join(block.get("judge_ids") or []) or "-", baseline.get("description") or "", f.path.name]
        rows.append(f"<tr class=\"{'baseline' if f.baseline else ''}\">"
                    + "".join(f"<td>{_h(c)}</td>" for c in cells[:-1]) + f"<td class=note>{_h(cells[-1])}</td></tr>")
        if block.get("incomplete"):
            rows.append(f"<tr><td colspan=6 class=warn>{_h(f.label)}: INCOMPLETE run "
                        f"({_h(block['incomplete'].get('reason'))})</td></tr>")
    return ("<table><tr><th>run</th><th>finished</th><th>tasks</th><th>judges</th><th>reference baseline</th>"
            f"<th>file</th></tr>{''.join(rows)}</table>")


def build_report(paths: Sequence[str | Path], out: Path | str, *, warn: Warn = _warn) -> Path:
    """Write ``out/index.html`` and ``out/figures/*.png``; returns the HTML path. ``warn`` gets one line per file
    or task skipped."""
    from sciprobe import __version__
    from sciprobe.results.figures import PALETTE, RunTask
    from sciprobe.results.write import atomic_write_bytes
    from sciprobe.results.summary import status_label

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise SciprobeError(f"{out} is a file; --out takes a folder")
    files = _load(results_files(paths), warn)
    by_task: dict[str, list[RunTask]] = {}
    used: dict[int, DataUsed] = {}
    run_files: dict[int, Path] = {}
    model_colors: dict[str, str] = {}
    for f in files:
        for key, entry in f.results.tasks.items():
            mode = f.results.default_mode(key)
            data = data_used(entry, mode)
            color = model_colors.setdefault(f.label, PALETTE[len(model_colors) % len(PALETTE)])
            label = f.label + status_label(entry.get("provenance") or {})  # " (INCOMPLETE: 3/16 no answer)"
            run = RunTask(label, key, entry, f.results.headline(key), mode, f.baseline, read_details(f.path, entry),
                          color, data=data.label)
            used[id(run)], run_files[id(run)] = data, f.path
            by_task.setdefault(key, []).append(run)
    figures = _Figures(out)
    sections, toc = [], []
    for bench in sorted({k.split(":")[0] for k in by_task}):
        sections.append(f"<h2 id=\"{_slug(bench)}\">{_h(_title(bench))}</h2>")
        for key in sorted(k for k in by_task if k.split(":")[0] == bench):
            runs = by_task[key]
            sections.append(_task_section(key, runs, used, run_files, figures))
            n_data = len(_groups(runs, used))
            toc.append(f"<li><a href=\"#{_slug(key)}\">{_h(key)}</a> ({len(runs)} run(s)"
                       + (f", {n_data} data sets" if n_data > 1 else "") + ")</li>")
    page = (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>sciprobe report</title>"
            f"<style>{CSS}</style></head><body><h1>sciprobe report</h1>"
            f"<p class=note>sciprobe {_h(__version__)}; {len(files)} results file(s); intervals are 95% "
            "percentile bootstrap intervals over items (1,000 seeded resamples, clusters of items that share a "
            "source resampled together), as recorded in each results file.</p>"
            f"{_runs_table(files)}<nav><ul>{''.join(toc)}</ul></nav>{''.join(sections)}</body></html>\n")
    index = out / "index.html"
    atomic_write_bytes(index, page.encode("utf-8"))
    return index


def _title(bench: str) -> str:
    from sciprobe.core.registry import get_benchmark

    try:
        return get_benchmark(bench).title
    except SciprobeError:
        return bench


def configure_report_parser(parser: argparse.ArgumentParser, commands: dict | None = None) -> None:
    parser.description = ("Write a static HTML report (index.html + PNG figures) of results files: scores with "
                          "bootstrap intervals, breakdown heatmaps, score vs cutoff and each benchmark's own figures.")
    parser.add_argument("results", nargs="+", metavar="RESULTS",
                        help="results_*.json files or folders holding them (other files there, such as lighteval's "
                             "results, are skipped with one line each)")
    parser.add_argument("--out", required=True, help="output folder (index.html and figures/)")
    if commands is not None:
        commands.setdefault("report", cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    index = build_report(args.results, Path(args.out))  # a skipped file or task: one line on stderr each
    print(f"report: {index}", file=sys.stderr)
    print(index)
    return 0

