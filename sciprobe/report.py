"""``sciprobe report RESULTS... --out DIR``: a static HTML report of one or more results files (no server).

For every task the files share, ``DIR/index.html`` shows a table of each run's headline per mode with its 95%
bootstrap interval and coverage, and figures (PNG files in ``DIR/figures/``, drawn with matplotlib):

- the headline with its interval, one row per run and mode (reference baselines in grey);
- one heatmap per breakdown the task declares (group scores of the default mode, items per group);
- the score-vs-cutoff view: the headline on the items dated strictly after each cutoff, with a bootstrap band;
- the benchmark's own figures (``Benchmark.report_figures`` hook, reading the per-item details), e.g. IDRBench's
  reliability diagram and target-rank histogram, SciTaste's predicted-vs-gold scatter per dimension.

RESULTS are results JSON files or folders searched for ``results_*.json``. The page holds no date of its own, so
the same inputs give the same report.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciprobe.errors import SciprobeError

if TYPE_CHECKING:  # the figures (numpy, matplotlib) load when a report is built, not with `sciprobe report --help`
    from sciprobe.report_figures import RunTask

__all__ = ["build_report", "configure_report_parser", "read_details", "results_files"]

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px;
       color: #1d1d1f; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2.5rem; border-bottom: 2px solid #ddd; padding-bottom: .3rem; }
h3 { margin-top: 2rem; font-family: ui-monospace, monospace; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .85rem; }
th, td { border: 1px solid #ddd; padding: .25rem .55rem; text-align: left; vertical-align: top; }
th { background: #f4f4f6; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.baseline td { color: #666; font-style: italic; }
figure { margin: 1rem 0 1.6rem; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: .82rem; color: #555; max-width: 900px; }
.warn { color: #a40000; } .note { font-size: .82rem; color: #555; }
nav ul { columns: 2; font-size: .85rem; }
"""


@dataclass
class ResultsFile:
    path: Path
    data: dict[str, Any]
    label: str

    @property
    def baseline(self) -> bool:
        return bool(self.data["sciprobe"].get("reference_baseline"))


def results_files(paths: Sequence[str | Path]) -> list[Path]:
    """Every results JSON named (folders: their ``results_*.json``, recursively), in a stable order."""
    out: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = sorted(path.rglob("results_*.json"))
            if not found:
                raise SciprobeError(f"{path} holds no results_*.json file")
            out.extend(found)
        elif path.is_file():
            out.append(path)
        else:
            raise SciprobeError(f"{path}: no such results file or folder")
    unique = list(dict.fromkeys(p.resolve() for p in out))
    if not unique:
        raise SciprobeError("no results file given")
    return unique


def read_details(results_path: Path, entry: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The task's per-item records from its details Parquet (``OUT/details/...`` beside ``OUT/results``), or None
    when the file is not there. Cells keep the details' types (dicts are JSON text)."""
    details = entry.get("details")
    parents = Path(results_path).resolve().parents
    if not details or len(parents) < 3:
        return None
    file = parents[2] / details
    if not file.is_file():
        return None
    import pyarrow.parquet as pq

    try:
        return pq.read_table(file).to_pylist()
    except Exception:  # noqa: BLE001 - an unreadable details file only loses the per-item figures
        return None


def _labels(files: list[ResultsFile]) -> None:
    """Model ids, made unique with the file name where two files share one."""
    seen: dict[str, int] = {}
    for f in files:
        seen[f.label] = seen.get(f.label, 0) + 1
    for f in files:
        if seen[f.label] > 1:
            f.label = f"{f.label} ({f.path.stem.removeprefix('results_')})"


def _load(paths: Sequence[Path]) -> list[ResultsFile]:
    from sciprobe.export import load_results

    files = []
    for path in paths:
        data = load_results(path)
        block = data["sciprobe"]
        label = block["model_id"] + (" (baseline)" if block.get("reference_baseline") else "")
        files.append(ResultsFile(path, data, label))
    _labels(files)
    return files


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


def _fmt(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "n/a"


def _score_table(runs: Sequence[RunTask]) -> str:
    from sciprobe.evidence import coverage_text

    head = "<tr><th>run</th><th>mode</th><th>metric</th><th>score</th><th>95% CI</th><th>scored</th><th>failed</th>" \
           "<th>interval</th></tr>"
    rows = []
    for run in runs:
        for mode, score in run.entry["scores"].items():
            ci = score.get("ci") or {}
            cov = score.get("coverage") or {}
            interval = (f"[{_fmt(ci.get('low'))}, {_fmt(ci.get('high'))}]" if ci.get("low") is not None else "n/a")
            unit = str(ci.get("unit") or "item")
            units = "items" if unit == "item" else f"clusters ({unit.partition(':')[2]})"
            how = (f"{ci.get('n_resamples')} resamples of {units}, seed {ci.get('seed')}"
                   if ci.get("low") is not None else html.escape(str(ci.get("reason") or "not computed")))
            rows.append(f"<tr class=\"{'baseline' if run.baseline else ''}\"><td>{html.escape(run.label)}</td>"
                        f"<td>{html.escape(mode)}</td><td>{html.escape(run.headline)}</td>"
                        f"<td class=num>{_fmt(run.score(mode))}</td><td class=num>{interval}</td>"
                        # against the dataset: a --limit sample reads 120/1120 (limit) (sciprobe.evidence)
                        f"<td class=num>{html.escape(coverage_text(cov, run.entry.get('provenance')))}</td>"
                        f"<td class=num>{cov.get('n_failed', '?')}</td><td class=note>{how}</td></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


class _Figures:
    """Saves figures as PNG files and collects their HTML."""

    def __init__(self, out: Path) -> None:
        self.folder = out / "figures"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def add(self, fig: Any, name: str, caption: str) -> str:
        self.count += 1
        file = f"{self.count:03d}-{_slug(name)[:60]}.png"
        with warnings.catch_warnings():  # a short date range: matplotlib's locator warns, then draws fine
            warnings.filterwarnings("ignore", message="AutoDateLocator was unable")
            fig.savefig(self.folder / file, dpi=100)
        return (f"<figure><img src=\"figures/{file}\" alt=\"{html.escape(name)}\" data-figure=\"{self.count}\">"
                f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def _benchmark_figures(bench: str) -> Any:
    from sciprobe.benchmarks import get_benchmark

    try:
        hook = get_benchmark(bench).report_figures
    except SciprobeError:
        return None
    if not hook:
        return None
    from sciprobe.lazy import resolve

    return resolve(hook)


def _task_section(key: str, runs: list[RunTask], figures: _Figures) -> str:
    from sciprobe.report_figures import breakdown_figure, cutoff_curve, cutoff_figure, scores_figure

    ref = key.rsplit("|", 1)[0]
    parts = [f"<section id=\"{_slug(key)}\"><h3>{html.escape(key)}</h3>", _score_table(runs)]
    metric = runs[0].headline
    parts.append(figures.add(scores_figure(runs, f"{ref}: {metric} with 95% bootstrap intervals"), f"{key} scores",
                             f"{metric} of each run and mode; bars: 95% percentile bootstrap interval over items "
                             "(clusters where items share a source); diamonds: reference baselines."))
    names: dict[str, str] = {}
    for run in runs:
        for name, entry in ((run.entry["scores"].get(run.default_mode) or {}).get("breakdowns") or {}).items():
            names.setdefault(name, entry.get("title") or name)
    for name, title in names.items():
        columns = [(run.label, ((run.entry["scores"][run.default_mode].get("breakdowns") or {}).get(name) or {})
                    .get("groups") or {}) for run in runs if run.default_mode in run.entry["scores"]]
        if any(groups for _, groups in columns):
            parts.append(figures.add(breakdown_figure(name, title, columns, metric), f"{key} by {name}",
                                     f"{metric} per {title} ({', '.join(sorted({r.default_mode for r in runs}))} "
                                     "mode); n = items scored / items in the group; an item with several groups "
                                     "counts in each."))
    curves = [(run, curve) for run in runs
              if (curve := cutoff_curve(run.entry.get("items") or {}, run.default_mode)) is not None]
    if curves:
        parts.append(figures.add(cutoff_figure(curves, metric, f"{ref}: {metric} vs cutoff"), f"{key} cutoff",
                                 f"{metric} on the items dated strictly after each cutoff (band: 95% interval, 200 "
                                 "resamples); grey steps: how many items of the first run remain."))
    extra = _benchmark_figures(ref.split(":")[0])
    if extra is not None:
        for title, fig, caption in extra(ref.split(":")[1], runs):
            parts.append(figures.add(fig, f"{key} {title}", caption))
    notes = sorted({n for run in runs for n in (run.entry.get("analysis_notes") or []) + run.notes})
    if notes:
        parts.append("<ul class=note>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>")
    parts.append("</section>")
    return "\n".join(parts)


def _runs_table(files: Sequence[ResultsFile]) -> str:
    rows = []
    for f in files:
        block = f.data["sciprobe"]
        general = f.data.get("config_general") or {}
        baseline = block.get("reference_baseline") or {}
        rows.append(f"<tr class=\"{'baseline' if f.baseline else ''}\"><td>{html.escape(f.label)}</td>"
                    f"<td>{html.escape(str(general.get('end_time') or ''))[:19]}</td>"
                    f"<td>{len(block['tasks'])}</td>"
                    f"<td>{html.escape(', '.join(block.get('judge_ids') or []) or '-')}</td>"
                    f"<td>{html.escape(baseline.get('description') or '')}</td>"
                    f"<td class=note>{html.escape(f.path.name)}</td></tr>")
        if block.get("incomplete"):
            rows.append(f"<tr><td colspan=6 class=warn>{html.escape(f.label)}: INCOMPLETE run "
                        f"({html.escape(str(block['incomplete'].get('reason')))})</td></tr>")
    return ("<table><tr><th>run</th><th>finished</th><th>tasks</th><th>judges</th><th>reference baseline</th>"
            f"<th>file</th></tr>{''.join(rows)}</table>")


def build_report(paths: Sequence[str | Path], out: Path | str) -> Path:
    """Write ``out/index.html`` and ``out/figures/*.png``; returns the HTML path."""
    from sciprobe import __version__
    from sciprobe.report_figures import PALETTE, RunTask
    from sciprobe.results import atomic_write_bytes

    files = _load(results_files(paths))
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise SciprobeError(f"{out} is a file; --out takes a folder")
    by_task: dict[str, list[RunTask]] = {}
    model_colors: dict[str, str] = {}
    for f in files:
        config_tasks = f.data.get("config_tasks") or {}
        for key, entry in f.data["sciprobe"]["tasks"].items():
            config = config_tasks.get(key) or {}
            mode = config.get("default_mode")
            mode = mode if mode in entry["scores"] else next(iter(entry["scores"]))
            headline = config.get("headline") or next((s["ci"]["metric"] for s in entry["scores"].values()
                                                       if (s.get("ci") or {}).get("metric")), "")
            color = model_colors.setdefault(f.label, PALETTE[len(model_colors) % len(PALETTE)])
            by_task.setdefault(key, []).append(RunTask(f.label, key, entry, headline, mode, f.baseline,
                                                       read_details(f.path, entry), color))
    figures = _Figures(out)
    sections, toc = [], []
    for bench in sorted({k.split(":")[0] for k in by_task}):
        sections.append(f"<h2 id=\"{_slug(bench)}\">{html.escape(_title(bench))}</h2>")
        for key in sorted(k for k in by_task if k.split(":")[0] == bench):
            runs = sorted(by_task[key], key=lambda r: (r.baseline, r.label))
            sections.append(_task_section(key, runs, figures))
            toc.append(f"<li><a href=\"#{_slug(key)}\">{html.escape(key)}</a> ({len(runs)} run(s))</li>")
    page = (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>sciprobe report</title>"
            f"<style>{CSS}</style></head><body><h1>sciprobe report</h1>"
            f"<p class=note>sciprobe {html.escape(__version__)}; {len(files)} results file(s); intervals are 95% "
            "percentile bootstrap intervals over items (1,000 seeded resamples, clusters of items that share a "
            "source resampled together), as recorded in each results file.</p>"
            f"{_runs_table(files)}<nav><ul>{''.join(toc)}</ul></nav>{''.join(sections)}</body></html>\n")
    index = out / "index.html"
    atomic_write_bytes(index, page.encode("utf-8"))
    return index


def _title(bench: str) -> str:
    from sciprobe.benchmarks import get_benchmark

    try:
        return get_benchmark(bench).title
    except SciprobeError:
        return bench


def configure_report_parser(parser: argparse.ArgumentParser, commands: dict | None = None) -> None:
    parser.description = ("Write a static HTML report (index.html + PNG figures) of results files: scores with "
                          "bootstrap intervals, breakdown heatmaps, score vs cutoff and each benchmark's own figures.")
    parser.add_argument("results", nargs="+", metavar="RESULTS", help="results_*.json files or folders holding them")
    parser.add_argument("--out", required=True, help="output folder (index.html and figures/)")
    if commands is not None:
        commands.setdefault("report", cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    index = build_report(args.results, Path(args.out))
    print(f"report: {index}", file=sys.stderr)
    print(index)
    return 0

