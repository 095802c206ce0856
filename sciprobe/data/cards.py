"""Card text derived from a declaration (dataset cards now; metric and Space cards reuse the sections)."""

from __future__ import annotations

from typing import Any

from sciprobe.core.declaration import Benchmark


def _table(rows: dict[str, dict[str, int]]) -> str:
    lines = ["| config | split | rows |", "|---|---|---|"]
    for config, splits in rows.items():
        lines += [f"| `{config}` | `{split}` | {n:,} |" for split, n in splits.items()]
    return "\n".join(lines)


def upstream_section(benchmark: Benchmark) -> str:
    """The pinned upstream code as the dataset and metric cards state it (from the declaration)."""
    upstream = benchmark.upstream
    if upstream is None:
        return ("No public upstream code: official mode follows the paper's definitions (see the metric card); "
                "there is no upstream prompt set and no upstream output format to import.")
    lines = [f"- Pinned upstream code: [`{upstream.label}`]({upstream.url}) (commit `{upstream.commit}`); "
             "`mode=\"official\"` reproduces it, quirks included."]
    if upstream.prompt_files:
        lines.append("- `--prompts upstream` builds the model's prompts from the templates in "
                     + ", ".join(f"`{path}`" for path in upstream.prompt_files)
                     + " at that commit (fetched at run time, sha256-checked, cached; never redistributed here); "
                       "results record their prompt set and the leaderboard never ranks the two sets together.")
    if upstream.judge_files:
        lines.append("- The official judge prompts are upstream's: "
                     + ", ".join(f"`{path}`" for path in upstream.judge_files)
                     + " at that commit, whatever the prompt set (fetched at run time, sha256-checked, cached, or "
                       "read from `--upstream-dir DIR`; never redistributed here).")
    if benchmark.upstream_logs:
        lines.append(f"- `sciprobe import-upstream {benchmark.name} --logs PATH` scores the per-item outputs the "
                     "upstream code writes, in every mode.")
    if upstream.note:
        lines.append(f"- Also from upstream: {upstream.note}.")
    return "\n".join(lines)


def sample_notice(benchmark: Benchmark) -> str:
    """The first line of the card of a dataset built from the bundled sample: it is not the benchmark."""
    return (f"**SYNTHETIC SAMPLE, NOT THE BENCHMARK.** This is sciprobe's bundled sample of {benchmark.title}: a "
            "handful of items written for sciprobe's tests and demos in the release format. No score on it says "
            f"anything about a model; evaluate on the {benchmark.title} release.")


def _context_splits(benchmark: Benchmark, rows: dict[str, dict[str, int]]) -> str:
    """The splits a cutoff keeps whole (history corpora, few-shot demonstrations), as the card names them."""
    whole = [f"`{config}` {split}" for config, splits in rows.items() for split in splits
             if config in benchmark.configs and not benchmark.config(config).cutoff_applies(split)]
    return f"; kept whole as context, never evaluated: {', '.join(whole)}" if whole else ""


def _empty_splits(empty: dict[str, list[str]]) -> str:
    splits = [f"`{config}` {split}" for config, names in empty.items() for split in names]
    return f"; splits with no rows, not written (`datasets` cannot load an empty split): {', '.join(splits)}" \
        if splits else ""


def _declared_counts(benchmark: Benchmark, report: Any) -> list[str]:
    """The build's rows (before any cutoff) beside the counts the benchmark declares, and the configs not built
    because the source lacks their files."""
    comparison = getattr(report, "paper_counts", {}) or {}
    missing = getattr(report, "missing_files", {}) or {}
    if not comparison and not missing:
        return []
    lines = ["| config | split | declared | read | matches | declared in |", "|---|---|---|---|---|---|"]
    lines += [f"| `{name}` | {c['split']} | {c['declared']} | {c['found']} | {'yes' if c['matches'] else '**no**'} "
              f"| {c['source']} |" for name, c in comparison.items()]
    undeclared = [n for n in report.rows if n not in comparison]
    notes = ([f"- no count declared for: {', '.join(f'`{n}`' for n in undeclared)}"] if undeclared else [])
    notes += [f"- `{name}` not built: the source has no {', '.join(f'`{f}`' for f in files)}"
              for name, files in missing.items()]
    return ["## Declared counts", "\n".join(lines + ([""] + notes if notes else []))]


def _release_read(report: Any) -> list[str]:
    """Which published release variant the build read, notes on it, and the configs it cannot give (and why)."""
    release = getattr(report, "release", {}) or {}
    if not release:
        return []
    lines = [f"- {note}" for note in release.get("notes", [])]
    lines += [f"- {config}: {reason}" for config, reason in release.get("unavailable", {}).items()]
    return ["## Release read", "\n".join(lines)]


def dataset_card_body(benchmark: Benchmark, report: Any) -> str:
    cutoff = report.cutoff or {}
    parts = [
        *([sample_notice(benchmark)] if getattr(report, "sample", False) else []),
        f"# {benchmark.title}" + (" (synthetic sample)" if getattr(report, "sample", False) else ""),
        benchmark.description,
        "## Configs",
        "\n".join(f"- `{c.name}`: {c.description}" for c in benchmark.configs.values()),
        "## Build",
        _table(report.rows),
        "",
        f"- built by sciprobe {report.sciprobe_version} from `{report.source}` "
        f"(source fingerprint `{report.source_fingerprint[:16]}`)",
        f"- benchmark version: `{report.version}`; reader options: `{report.options}`",
        f"- temporal cutoff: `{cutoff.get('cutoff')}` ({cutoff.get('source')}); in every split of items rows kept "
        "have `date` strictly after the cutoff, undated rows are dropped when a cutoff is set"
        + _context_splits(benchmark, report.rows)
        + (f"; configs left empty by it and not written: {', '.join(report.skipped)}" if report.skipped else "")
        + _empty_splits(getattr(report, "empty_splits", {})),
        "",
        "Load with `datasets.load_dataset(\"<this folder or hub id>\", \"<config>\")`.",
    ]
    parts += _release_read(report)
    parts += _declared_counts(benchmark, report)
    parts += ["## Upstream", upstream_section(benchmark)]
    for title, text in benchmark.card_sections.items():
        parts += [f"## {title}", text]
    parts += ["## Citation", f"```bibtex\n{benchmark.citation.strip()}\n```"]
    return "\n\n".join(parts) + "\n"
