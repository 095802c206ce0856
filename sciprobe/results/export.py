"""Export a sciprobe results JSON in the Hugging Face evaluation-results formats (``sciprobe export``).

Two formats, both built with ``huggingface_hub``'s own data classes (1.33), so the output is what the Hub parses:

* ``model-index`` — the model card's ``model-index`` front matter (``huggingface_hub.EvalResult`` ->
  ``eval_results_to_model_index``): per task ``task`` (type ``text-generation``, name), ``dataset`` (name, type =
  Hub dataset id or the benchmark name, config, split ``test``, revision = recorded hub revision or the dataset
  files' fingerprint), ``metrics`` (type, value, name ``<metric> (<mode>)``: the headline of every mode, its 95%
  bootstrap interval in ``args`` (``ci_low``, ``ci_high``, ``ci_confidence``, ``ci_method``, ``ci_resamples``,
  ``ci_seed``, ``ci_unit``), then the default mode's other scalar values) and ``source``. Paste it into the model's
  README front matter.
* ``eval-results`` — the newer ``.eval_results/<name>.yaml`` file of a model repo (https://huggingface.co/docs/hub/
  eval-results; ``huggingface_hub.EvalResultEntry`` -> ``eval_result_entries_to_yaml``): one entry per task with
  ``dataset.id`` (the Hub *benchmark* dataset), ``dataset.task_id``, ``dataset.revision`` (only a recorded hub
  revision), ``value`` (the headline metric of the default mode), ``date`` and ``notes`` (metric, mode, its 95%
  bootstrap interval, coverage, judges). ``dataset.id`` is required by the Hub, so results computed on local
  files need ``--dataset-id``.

``--mode MODE`` exports that mode of every task (``ranked``: each task's leaderboard mode, ``TaskSpec.ranked_mode``)
instead of its default mode: the eval-results value is then that mode's headline, and the model index lists that
mode only. A task that lacks the mode is an error naming the modes it has (an I2R mode written as its own entry,
``idrbench:i2r:corrected``, stands for the task). A ``--limit`` sample is refused unless ``--allow-sample`` (its
entries then say so): it is not the benchmark (:func:`sciprobe.results.evidence.rank_verdict`).

Results obtained with upstream's prompts (``provenance.prompt_set == "upstream"``: ``--prompts upstream`` runs and
``sciprobe import-upstream``) are named ``<benchmark> <task> (upstream prompts)`` in the model index and say so in
the notes, so they never merge with runs on sciprobe's prompts; runs on upstream templates that differ from the pin
(``upstream-modified``, :func:`sciprobe.core.prompt_sets.recorded_prompt_set`) are named ``(MODIFIED upstream
prompts)``.

Output goes to stdout or, with ``-o FILE``, is written atomically. The results file is read by
:func:`sciprobe.results.read.load_results_file`; any unreadable or malformed input is a
:class:`~sciprobe.core.errors.SciprobeError` (one line from the CLI).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.core.numbers import finite_number
from sciprobe.core.prompt_sets import PROMPT_SET_TITLES, recorded_prompt_set

FORMATS = ("model-index", "eval-results")
TASK_TYPE = "text-generation"
SPLIT = "test"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class ExportedTask:
    """One task of a results file, as both formats need it."""

    key: str                 # "idrbench:i2r:corrected|0"
    benchmark: str           # "idrbench"
    task: str                # "i2r"
    variant: str             # "corrected" (a per-mode entry of the same task) or ""
    title: str               # "IDRBench"
    config: str | None       # dataset config of the task
    headline: str
    default_mode: str
    scores: Mapping[str, Mapping[str, Any]]
    provenance: Mapping[str, Any]

    @property
    def value(self) -> float | None:
        return finite_number((self.scores.get(self.default_mode) or {}).get(self.headline))

    @property
    def ref(self) -> str:
        return f"{self.benchmark}:{self.task}"


#: ``--mode`` value meaning each task's leaderboard mode (``TaskSpec.ranked_mode``)
RANKED = "ranked"


def _ranked_mode(task: ExportedTask) -> str | None:
    from sciprobe.core.registry import resolve_task

    try:
        return resolve_task(task.ref)[1].ranked_mode
    except SciprobeError:
        return None


def in_mode(tasks: Sequence[ExportedTask], mode: str | None) -> list[ExportedTask]:
    """``tasks`` with ``mode`` as their default mode (None: unchanged; ``ranked``: each task's leaderboard mode).
    An entry without the mode is dropped when another entry of the same task has it (I2R writes one entry per
    mode); a task none of whose entries has it is an error."""
    if mode is None:
        return list(tasks)
    wanted = {t.key: (_ranked_mode(t) if mode == RANKED else mode) for t in tasks}
    out = []
    for task in tasks:
        chosen = wanted[task.key]
        if chosen in task.scores:
            out.append(ExportedTask(task.key, task.benchmark, task.task, task.variant, task.title, task.config,
                                    task.headline, chosen, {chosen: task.scores[chosen]}, task.provenance))
            continue
        siblings = [t for t in tasks if t.ref == task.ref]
        if any(wanted[t.key] in t.scores for t in siblings):
            continue
        modes = sorted({m for t in siblings for m in t.scores})
        raise SciprobeError(f"{task.ref} has no mode {chosen or mode!r} in this results file (modes: "
                            f"{', '.join(modes)}); pass one of them, or --mode {RANKED} for each task's "
                            "leaderboard mode")
    return out


def load_results(path: Path | str) -> dict[str, Any]:
    """The parsed, validated results JSON (:func:`sciprobe.results.read.load_results_file`, the one reader of
    results files; any problem is one line naming the file and the field)."""
    from sciprobe.results.read import load_results_file

    return load_results_file(path).data


def exported_tasks(data: Mapping[str, Any]) -> list[ExportedTask]:
    """Every task entry of a (checked) results JSON."""
    from sciprobe.core.registry import get_benchmark

    out = []
    config_tasks = data.get("config_tasks") if isinstance(data.get("config_tasks"), dict) else {}
    for key, entry in data["sciprobe"]["tasks"].items():
        ref = key.rsplit("|", 1)[0]
        parts = ref.split(":")
        if len(parts) < 2 or not parts[0] or not parts[1]:
            raise SciprobeError(f"task {key!r} is not a BENCHMARK:TASK reference")
        bench, task, variant = parts[0], parts[1], ":".join(parts[2:])
        title, config, headline = bench, None, ""
        try:
            benchmark = get_benchmark(bench)
            title = benchmark.title
            spec = benchmark.tasks.get(task)
            if spec is not None:
                config, headline = spec.config, spec.headline
        except SciprobeError:
            pass  # a benchmark this sciprobe does not know: export what the file says
        info = config_tasks.get(key) if isinstance(config_tasks.get(key), dict) else {}
        scores = entry["scores"]
        mode = info.get("default_mode") if info.get("default_mode") in scores else next(iter(scores))
        headline = info.get("headline") or headline
        if not headline:
            headline = next((k for k, v in scores[mode].items() if finite_number(v) is not None), "")
        out.append(ExportedTask(key, bench, task, variant, title, config, headline, mode, scores,
                                entry.get("provenance") or {}))
    return out


def hub_dataset_id(provenance: Mapping[str, Any]) -> str | None:
    """The Hub dataset the results were computed on, when they were (``hub:owner/name@rev:...`` fingerprint or
    an ``owner/name`` dataset that is not a local path)."""
    fingerprint = str(provenance.get("dataset_fingerprint") or "")
    if fingerprint.startswith("hub:") and "@" in fingerprint:
        candidate = fingerprint[4:].split("@", 1)[0]
        if _HUB_ID.match(candidate):
            return candidate
    dataset = str(provenance.get("dataset") or "")
    if _HUB_ID.match(dataset) and not Path(dataset).exists():
        return dataset
    return None


def parse_dataset_ids(values: Sequence[str] | None) -> dict[str, str]:
    """``--dataset-id`` values: ``OWNER/NAME`` (every benchmark) or ``BENCH=OWNER/NAME``; key ``*`` = all."""
    out: dict[str, str] = {}
    for value in values or []:
        bench, sep, repo = value.partition("=")
        bench, repo = (bench.strip(), repo.strip()) if sep else ("*", value.strip())
        if not _HUB_ID.match(repo):
            raise SciprobeError(f"--dataset-id {value!r}: expected OWNER/NAME or BENCHMARK=OWNER/NAME")
        out[bench] = repo
    return out


def _dataset_id(task: ExportedTask, overrides: Mapping[str, str]) -> str | None:
    return overrides.get(task.benchmark) or overrides.get("*") or hub_dataset_id(task.provenance)


def _date(data: Mapping[str, Any]) -> str | None:
    general = data.get("config_general") if isinstance(data.get("config_general"), dict) else {}
    for key in ("end_time", "start_time"):
        value = general.get(key)
        if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}", value):
            return value
    return None


def interval(task: ExportedTask, mode: str) -> dict[str, Any] | None:
    """The headline's bootstrap interval of ``mode`` (``scores[mode]["ci"]``), when the results file has one."""
    ci = (task.scores.get(mode) or {}).get("ci")
    if not isinstance(ci, dict) or finite_number(ci.get("low")) is None or finite_number(ci.get("high")) is None:
        return None
    return ci


def _interval_text(ci: Mapping[str, Any]) -> str:
    unit = str(ci.get("unit") or "item")
    units = "items" if unit == "item" else f"clusters of items sharing {unit.partition(':')[2] or unit}"
    return (f"{round(100 * float(ci.get('confidence') or 0.95))}% CI [{ci['low']:.4f}, {ci['high']:.4f}] "
            f"({ci.get('method', 'bootstrap')}, {ci.get('n_resamples')} resamples of {units}, seed {ci.get('seed')})")


def _notes(task: ExportedTask, judges: Sequence[str]) -> str:
    from sciprobe import __version__
    from sciprobe.results.evidence import LIMIT, coverage_text, subset_of

    coverage = (task.scores.get(task.default_mode) or {}).get("coverage") or {}
    parts = [f"sciprobe {__version__}", f"{task.benchmark}:{task.task} {task.headline} ({task.default_mode} mode)"]
    ci = interval(task, task.default_mode)
    if ci is not None:
        parts.append(_interval_text(ci))
    if coverage:  # against the dataset: a --limit sample reads 120/1120 (limit)
        parts.append(f"coverage {coverage_text(coverage, task.provenance)}")
    subset = subset_of(task.provenance)
    if subset is not None and subset["kind"] == LIMIT:  # exported only with --allow-sample
        limit = task.provenance.get("limit")
        how = f", {limit.get('strategy')}, seed {limit.get('seed')}" if isinstance(limit, Mapping) else ""
        parts.append(f"a --limit SAMPLE of {subset['n']} of {subset['of']} items{how}, not the benchmark")
    if task.provenance.get("incomplete"):
        parts.append(f"INCOMPLETE run ({task.provenance['incomplete']})")
    if not task.provenance.get("dataset_revision"):
        fingerprint = str(task.provenance.get("dataset_fingerprint") or "")
        if fingerprint:
            parts.append(f"data {fingerprint[:16]}")
    cutoff_info = task.provenance.get("cutoff")
    cutoff = cutoff_info.get("cutoff") if isinstance(cutoff_info, dict) else None
    if cutoff:
        parts.append(f"items after {cutoff}")
    if judges:
        parts.append("judges " + ", ".join(judges))
    prompts = PROMPT_SET_TITLES.get(recorded_prompt_set(task.provenance))
    if prompts:
        parts.append(prompts)
    return "; ".join(parts)


def _not_a_number(task: ExportedTask, mode: str, metric: str) -> str:
    """Why ``task``'s ``metric`` in ``mode`` is no number (for the list of what an export left out)."""
    report = task.scores.get(mode) or {}
    value = report.get(metric)
    coverage = report.get("coverage") if isinstance(report.get("coverage"), Mapping) else {}
    scored = f" (scored {coverage.get('n_scored', '?')}/{coverage.get('n_items', '?')})" if coverage else ""
    if metric not in report:
        what = "not computed"
    elif value is None:
        what = "n/a"
    elif isinstance(value, float) and value != value:
        what = "NaN"
    else:
        what = f"not a finite number ({str(value)[:30]})"
    name = f"{task.benchmark}:{task.task}" + (f":{task.variant}" if task.variant else "")
    return f"{name} {metric} ({mode}): {what}{scored}"


def to_eval_results(data: Mapping[str, Any], *, dataset_ids: Mapping[str, str] | None = None,
                    source_url: str | None = None, source_name: str | None = None,
                    left_out: list[str] | None = None, mode: str | None = None) -> list[dict[str, Any]]:
    """The ``.eval_results/*.yaml`` content (a list of entries) for a checked results JSON, each task's headline in
    its default mode or in ``mode`` (see :func:`in_mode`). A task whose headline is no finite number (NaN: nothing
    scored) has no entry; ``left_out`` gets one line per such task."""
    from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

    overrides = dict(dataset_ids or {})
    entries = []
    left_out = [] if left_out is None else left_out
    for task in in_mode(exported_tasks(data), mode):
        if task.value is None:
            left_out.append(_not_a_number(task, task.default_mode, task.headline))
            continue
        dataset_id = _dataset_id(task, overrides)
        if dataset_id is None:
            raise SciprobeError(f"{task.benchmark}:{task.task} was scored on local files "
                                f"({task.provenance.get('dataset') or 'unknown'}); the eval-results format needs the "
                                f"Hub benchmark dataset: pass --dataset-id {task.benchmark}=OWNER/NAME")
        judges = task.provenance.get("judge_ids") or data["sciprobe"].get("judge_ids") or []
        entries.append(EvalResultEntry(
            dataset_id=dataset_id, task_id=task.task, value=round(task.value, 6),
            dataset_revision=task.provenance.get("dataset_revision") or None, date=_date(data),
            source_url=source_url, source_name=source_name if source_url else None,
            notes=_notes(task, [str(j) for j in judges])))
    if not entries:
        modes = sorted({m for t in exported_tasks(data) for m, report in t.scores.items()
                        if finite_number((report or {}).get(t.headline)) is not None})
        hint = f"; these modes have one: {', '.join(modes)} (--mode MODE)" if modes and mode is None else ""
        raise SciprobeError("the results file has no task with a numeric headline score to export (left out: "
                            + "; ".join(left_out) + ")" + hint)
    return eval_result_entries_to_yaml(entries)


def _metrics(task: ExportedTask,
             left_out: list[str] | None = None) -> list[tuple[str, float, str, dict[str, Any] | None]]:
    """(type, value, name, args): every mode's headline (args: its bootstrap interval), then the default mode's
    other scalar values. A headline that is no finite number (NaN, None) is left out and listed in ``left_out``; so
    is another value that is NaN or None (not lists, texts or booleans, which are no metrics)."""
    out: list[tuple[str, float, str, dict[str, Any] | None]] = []
    for mode, report in task.scores.items():
        value = finite_number(report.get(task.headline))
        if value is not None:
            ci = interval(task, mode)
            args = None if ci is None else {
                "ci_low": round(float(ci["low"]), 6), "ci_high": round(float(ci["high"]), 6),
                "ci_confidence": ci.get("confidence"), "ci_method": ci.get("method"),
                "ci_resamples": ci.get("n_resamples"), "ci_seed": ci.get("seed"), "ci_unit": ci.get("unit")}
            out.append((task.headline, value, f"{task.headline} ({mode})", args))
        elif left_out is not None:
            left_out.append(_not_a_number(task, mode, task.headline))
    for key, value in (task.scores.get(task.default_mode) or {}).items():
        if key == task.headline or key.startswith("n_") or key in ("metric", "mode"):
            continue
        number = finite_number(value)
        if number is not None:
            out.append((key, number, f"{key} ({task.default_mode})", None))
        elif left_out is not None and (value is None or isinstance(value, float)):
            left_out.append(_not_a_number(task, task.default_mode, key))
    return out


def to_model_index(data: Mapping[str, Any], *, dataset_ids: Mapping[str, str] | None = None,
                   source_url: str | None = None, source_name: str | None = None,
                   model_name: str | None = None, left_out: list[str] | None = None,
                   mode: str | None = None) -> dict[str, Any]:
    """``{"model-index": [...]}`` (model card front matter) for a checked results JSON (every mode, or ``mode``
    only: :func:`in_mode`); ``left_out`` gets one line per metric that is no finite number (never written as
    one)."""
    from huggingface_hub import EvalResult
    from huggingface_hub.repocard_data import eval_results_to_model_index

    overrides = dict(dataset_ids or {})
    results = []
    left_out = [] if left_out is None else left_out
    for task in in_mode(exported_tasks(data), mode):
        revision = task.provenance.get("dataset_revision") or task.provenance.get("dataset_fingerprint") or None
        name = f"{task.title} {task.task}"  # a per-mode variant joins its task's group; the mode is in the metric name
        prompts = PROMPT_SET_TITLES.get(recorded_prompt_set(task.provenance))
        if prompts:  # never one entry with runs on another prompt set
            name += f" ({prompts})"
        for metric_type, value, metric_name, args in _metrics(task, left_out):
            results.append(EvalResult(
                task_type=TASK_TYPE, task_name=name, dataset_type=_dataset_id(task, overrides) or task.benchmark,
                dataset_name=task.title, dataset_config=task.config, dataset_split=SPLIT,
                dataset_revision=str(revision) if revision else None, metric_type=metric_type,
                metric_value=round(value, 6), metric_name=metric_name, metric_args=args, source_url=source_url,
                source_name=source_name if source_url else None))
    if not results:
        raise SciprobeError("the results file has no numeric score to export (left out: " + "; ".join(left_out) + ")")
    return {"model-index": eval_results_to_model_index(model_name or data["sciprobe"]["model_id"], results)}


def export_results(path: Path | str, fmt: str = "model-index", *, dataset_ids: Sequence[str] | None = None,
                   source_url: str | None = None, source_name: str | None = "sciprobe",
                   model_name: str | None = None, allow_incomplete: bool = False,
                   left_out: list[str] | None = None, mode: str | None = None, allow_sample: bool = False) -> str:
    """The YAML text of ``path`` in format ``fmt`` (each task in its default mode, or in ``mode``). An incomplete
    run (a cap stopped it, or calls got no answer: ``sciprobe.incomplete``) is refused unless ``allow_incomplete``
    (its entries then say so in ``notes``); so is a ``--limit`` sample unless ``allow_sample``; a partial score
    (``sciprobe score --partial``) is always refused. ``left_out`` gets one line per task or metric that had no
    finite number to export, and why."""
    import yaml

    from sciprobe.results.evidence import PARTIAL, rank_verdict, run_status

    if fmt not in FORMATS:
        raise SciprobeError(f"unknown export format {fmt!r}; use {' or '.join(FORMATS)}")
    data = load_results(path)
    if run_status(data["sciprobe"]) == PARTIAL:
        partial = data["sciprobe"].get("partial") or {}
        raise SciprobeError(f"{path} is a partial score ({partial.get('n_predicted', '?')} of "
                            f"{partial.get('n_items', '?')} items, `sciprobe score --partial`); partial scores "
                            "are never exported: score a predictions file for every item")
    incomplete = data["sciprobe"].get("incomplete") or next(
        (t["provenance"]["incomplete"] for t in data["sciprobe"]["tasks"].values()
         if isinstance(t.get("provenance"), dict) and t["provenance"].get("incomplete")), None)
    if incomplete and not allow_incomplete:
        reason = incomplete.get("reason") if isinstance(incomplete, dict) else incomplete
        raise SciprobeError(f"{path} is an incomplete run ({reason}); rerun it to completion, or pass "
                            "--allow-incomplete to export the partial scores")
    samples = [f"{key} ({verdict.reason})" for key, verdict in
               ((key, rank_verdict(t.get("provenance"))) for key, t in data["sciprobe"]["tasks"].items())
               if verdict.cause == "sample"]
    if samples and not allow_sample:
        raise SciprobeError(f"{path} is not the benchmark: {'; '.join(samples)}; run without --limit, or pass "
                            "--allow-sample to export it labelled as a sample")
    ids = parse_dataset_ids(dataset_ids)
    if fmt == "model-index":
        content: Any = to_model_index(data, dataset_ids=ids, source_url=source_url, source_name=source_name,
                                      model_name=model_name, left_out=left_out, mode=mode)
    else:
        content = to_eval_results(data, dataset_ids=ids, source_url=source_url, source_name=source_name,
                                  left_out=left_out, mode=mode)
    return yaml.safe_dump(content, sort_keys=False, allow_unicode=True, width=120)


def configure_export_parser(parser: argparse.ArgumentParser, commands: dict | None = None) -> None:
    """Arguments of ``sciprobe export``; registers :func:`cmd_export` as ``commands["export"]`` when given."""
    parser.description = ("Convert a sciprobe results JSON into the Hugging Face evaluation-results formats: the "
                          "model card's `model-index` front matter, or a `.eval_results/*.yaml` file.")
    parser.add_argument("results", metavar="RESULTS_JSON", help="a results_*.json written by sciprobe evaluate/score")
    parser.add_argument("--format", choices=FORMATS, default="model-index", help="output format (default model-index)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")
    parser.add_argument("--dataset-id", action="append", metavar="[BENCH=]OWNER/NAME",
                        help="Hub dataset the benchmark is published at (needed by eval-results when the results "
                             "were computed on local files); repeatable")
    parser.add_argument("--source-url", help="link to the evaluation logs / results (the entries' source)")
    parser.add_argument("--model-name", help="model-index name (default: the results file's model id)")
    parser.add_argument("--allow-incomplete", action="store_true",
                        help="export an incomplete run (a cap stopped it, or calls got no answer; refused by "
                             "default; partial scores are never exported)")
    parser.add_argument("--mode", metavar="MODE",
                        help="export this scoring mode of every task (e.g. strict) instead of each task's default "
                             f"mode; '{RANKED}': each task's leaderboard mode")
    parser.add_argument("--allow-sample", action="store_true",
                        help="export a --limit sample (refused by default: a sample is not the benchmark); its "
                             "entries then say so")
    if commands is not None:
        commands.setdefault("export", cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    left_out: list[str] = []
    text = export_results(args.results, args.format, dataset_ids=args.dataset_id, source_url=args.source_url,
                          model_name=args.model_name, allow_incomplete=args.allow_incomplete, left_out=left_out,
                          mode=args.mode, allow_sample=args.allow_sample)
    for line in left_out:  # said before the output, so a reader of either stream sees it
        print(f"left out: {line}", file=sys.stderr)
    if args.output:
        from sciprobe.results.write import atomic_write_bytes

        out = Path(args.output)
        if out.is_dir():
            raise SciprobeError(f"{out} is a folder; -o takes a file name")
        try:
            atomic_write_bytes(out, text.encode("utf-8"))
        except OSError as exc:
            raise SciprobeError(f"cannot write {out}: {exc.strerror or type(exc).__name__}") from None
        print(f"wrote {args.format} to {out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


__all__ = ["FORMATS", "RANKED", "cmd_export", "configure_export_parser", "export_results", "in_mode", "load_results",
           "to_eval_results", "to_model_index"]
