"""``sciprobe compare A.json B.json``: per task and mode, the difference B - A of the headline on the items both
runs scored, with a paired test that fits the metric, and loud warnings when the two runs are not comparable.

Both files are results JSON written by ``sciprobe evaluate`` / ``score`` / ``baselines``, read and validated by
:func:`sciprobe.results.read.load_results_file` (a malformed file is one ``error:`` line); their per-item tables
(``sciprobe.tasks[KEY].items``, :mod:`sciprobe.results.analysis`) give each item's contribution to the headline. Items
are
matched by id; an item counts when both runs scored it in that mode. On those items:

- the headline of each run is recomputed with the task's item statistic (so A and B are comparable numbers);
- a paired bootstrap (the same seeded resamples of items, or of clusters such as I2R seed papers, for both runs)
  gives the interval of B - A and a two-sided p-value;
- the test the metric calls for: McNemar (exact) for accuracy-like 0/1 scores, the Wilcoxon signed-rank test
  where the paper uses it (IDRBench I2R: per-query reciprocal rank), otherwise the paired bootstrap itself.

Each comparison also reports its minimum detectable effect (MDE): the smallest true difference the chosen test
would detect at ``--alpha`` with ``--power`` (default 0.8) on the items both runs scored, and how many items it would
take to detect ``--effect`` (default: the observed difference). The formula is in :mod:`sciprobe.scoring.power`:
``MDE = (z_{1-alpha/2} + z_power) * SE`` with SE the standard deviation of the paired bootstrap differences (the
Wilcoxon test's MDE divided by sqrt(3/pi), its efficiency), and ``n_required = n * (MDE / effect)^2``.

With ``--paper`` a single results file is compared with the numbers its benchmark's paper reports
(:mod:`sciprobe.results.paper_compare`).

Warnings: different item sets (ids only in one run, items scored in one run only), different dataset
fingerprints or hub revisions, benchmark versions, cutoffs or item limits, a different item statistic or
parameters, an incomplete run, and a result file without per-item tables (then only the headlines are shown).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciprobe.core.errors import SciprobeError

if TYPE_CHECKING:  # numpy and the bootstrap load when a comparison runs, not with `sciprobe compare --help`
    import numpy as np

    from sciprobe.scoring.bootstrap import BootstrapSettings
    from sciprobe.scoring.item_scores import ItemScores
    from sciprobe.scoring.power import Detectable

__all__ = ["Comparison", "compare_files", "compare_results", "configure_compare_parser", "format_comparisons"]

#: metrics where a lower value is better (every other headline: higher is better)
LOWER_IS_BETTER = frozenset({"mae", "mse", "rmse", "wape_pct", "abs_bias", "failure_rate", "log1p_mae"})


@dataclass
class Comparison:
    """One task and mode of two runs."""

    task: str
    mode: str
    metric: str
    a_full: float | None
    b_full: float | None
    n_common: int = 0
    a: float | None = None                # A's headline on the common items
    b: float | None = None
    difference: float | None = None       # b - a
    ci_low: float | None = None
    ci_high: float | None = None
    p_bootstrap: float | None = None
    test: dict[str, Any] | None = None    # the metric's own test (McNemar / Wilcoxon), None: the bootstrap's
    higher_is_better: bool = True
    warnings: list[str] = field(default_factory=list)
    detectable: Detectable | None = None  # the MDE at this size and the items needed for the target effect

    @property
    def p_value(self) -> float | None:
        return self.test["p_value"] if self.test else self.p_bootstrap

    @property
    def test_name(self) -> str:
        return self.test["test"].split(" (")[0] if self.test else ("paired bootstrap" if self.n_common else "none")

    def as_dict(self) -> dict[str, Any]:
        return {"task": self.task, "mode": self.mode, "metric": self.metric, "a_full": self.a_full,
                "b_full": self.b_full, "n_common": self.n_common, "a": self.a, "b": self.b,
                "difference": self.difference, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "p_bootstrap": self.p_bootstrap, "test": self.test, "p_value": self.p_value,
                "higher_is_better": self.higher_is_better, "warnings": list(self.warnings),
                "detectable": self.detectable.as_dict() if self.detectable else None}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _headline(data: Mapping[str, Any], key: str, entry: Mapping[str, Any]) -> str:
    config = (data.get("config_tasks") or {}).get(key) or {}
    return config.get("headline") or next((s.get("ci", {}).get("metric") for s in entry["scores"].values()
                                           if isinstance(s.get("ci"), dict)), "") or ""


def _run_warnings(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """What differs between the two tasks' provenance and makes their numbers hard to compare."""
    out = []
    pa, pb = a.get("provenance") or {}, b.get("provenance") or {}
    checks = (("dataset_revision", "dataset hub revisions"), ("dataset_fingerprint", "dataset files (fingerprints)"),
              ("benchmark_version", "benchmark versions"), ("limit", "item limits (--limit)"))
    for key, what in checks:
        if pa.get(key) != pb.get(key):
            out.append(f"different {what}: {pa.get(key)!r} vs {pb.get(key)!r}")
    cut_a, cut_b = ((p.get("cutoff") or {}).get("cutoff") if isinstance(p.get("cutoff"), dict) else None
                    for p in (pa, pb))
    if cut_a != cut_b:
        out.append(f"different cutoffs: {cut_a!r} vs {cut_b!r}")
    for name, p in (("A", pa), ("B", pb)):
        if p.get("incomplete"):
            out.append(f"run {name} is INCOMPLETE ({p['incomplete']}): it covers an arbitrary prefix of the items")
    return out


def _common(table_a: Mapping[str, Any], table_b: Mapping[str, Any], mode: str,
            warnings: list[str]) -> tuple[ItemScores, ItemScores, list[int], list[int], list[Any] | None]:
    from sciprobe.scoring.item_scores import ItemScores

    items_a, items_b = ItemScores.from_json(table_a["modes"][mode]), ItemScores.from_json(table_b["modes"][mode])
    ids_a, ids_b = [str(i) for i in table_a["ids"]], [str(i) for i in table_b["ids"]]
    if len(set(ids_a)) != len(ids_a) or len(set(ids_b)) != len(ids_b):
        raise SciprobeError("a results file repeats an item id in one task; items cannot be paired")
    where_b = {i: k for k, i in enumerate(ids_b)}
    only_a = [i for i in ids_a if i not in where_b]
    only_b = len(ids_b) - (len(ids_a) - len(only_a))
    if only_a or only_b:
        warnings.append(f"different item sets: {len(only_a)} item(s) only in A, {only_b} only in B "
                        f"({len(ids_a) - len(only_a)} in both)")
    scored_a, scored_b = items_a.scored(), items_b.scored()
    rows_a, rows_b = [], []
    one_sided = 0
    for k, item in enumerate(ids_a):
        j = where_b.get(item)
        if j is None:
            continue
        if scored_a[k] and scored_b[j]:
            rows_a.append(k)
            rows_b.append(j)
        elif scored_a[k] or scored_b[j]:
            one_sided += 1
    if one_sided:
        warnings.append(f"{one_sided} shared item(s) scored by one run only (e.g. dropped as unparsable) are left out")
    clusters = table_a.get("clusters")
    return items_a, items_b, rows_a, rows_b, [clusters[k] for k in rows_a] if clusters else None


def _subset(items: ItemScores, rows: list[int]) -> dict[str, np.ndarray]:
    return {name: values[rows] for name, values in items.arrays().items()}


@dataclass(frozen=True)
class PowerSettings:
    """What the MDE is computed for: ``power`` of a two-sided test at the comparison's alpha; ``effect``: the
    difference the required-n hint is for (None: the observed difference)."""

    power: float = 0.8
    effect: float | None = None


def _paired(comparison: Comparison, items_a: ItemScores, items_b: ItemScores, rows_a: list[int], rows_b: list[int],
            clusters: list[Any] | None, settings: BootstrapSettings, alpha: float,
            power: PowerSettings = PowerSettings()) -> None:
    import numpy as np

    from sciprobe.scoring.bootstrap import bootstrap, interval, mcnemar, paired_bootstrap_p, units_of
    from sciprobe.scoring.item_scores import evaluate_statistic

    cols_a, cols_b = _subset(items_a, rows_a), _subset(items_b, rows_b)
    n = len(rows_a)
    comparison.n_common = n
    ones = np.ones((1, n))
    a = evaluate_statistic(items_a.statistic, cols_a, ones, items_a.params)[0]
    b = evaluate_statistic(items_b.statistic, cols_b, ones, items_b.params)[0]
    comparison.a, comparison.b = _number(a), _number(b)
    comparison.difference = _number(b - a)

    def difference(weights: np.ndarray) -> np.ndarray:
        return (evaluate_statistic(items_b.statistic, cols_b, weights, items_b.params)
                - evaluate_statistic(items_a.statistic, cols_a, weights, items_a.params))

    unit_of_item, n_units = units_of(clusters, n)
    samples = bootstrap(difference, unit_of_item, n_units, settings)[:, 0]
    comparison.ci_low, comparison.ci_high, _ = interval(samples, settings.confidence)
    comparison.p_bootstrap = paired_bootstrap_p(samples)
    test = items_a.paired_test()
    if test == "mcnemar":
        comparison.test = mcnemar(cols_a["value"], cols_b["value"], alpha=alpha)
    elif test == "wilcoxon":
        from sciprobe.scoring.significance import paired_wilcoxon

        comparison.test = paired_wilcoxon(cols_b["value"], cols_a["value"], alpha=alpha)
        comparison.test["test"] = "Wilcoxon signed-rank (paired, B vs A)"
    comparison.detectable = _detectable(samples, n, test, alpha, power, comparison.difference)


def _detectable(samples: np.ndarray, n: int, test: str, alpha: float, power: PowerSettings,
                observed: float | None) -> Detectable | None:
    """The MDE from the spread of the paired bootstrap differences (None: fewer than two finite resamples)."""
    import numpy as np

    from sciprobe.scoring.power import detectable

    finite = samples[np.isfinite(samples)]
    if finite.size < 2:
        return None
    target = power.effect if power.effect is not None else observed
    return detectable(float(np.std(finite, ddof=1)), n, alpha=alpha, power=power.power, test=test,
                      target=target if target else None)


def compare_results(data_a: Mapping[str, Any], data_b: Mapping[str, Any], *, alpha: float = 0.05,
                    settings: BootstrapSettings | None = None,
                    power: PowerSettings = PowerSettings()) -> tuple[list[Comparison], list[str]]:
    """Every task and mode both results files score; plus the warnings that concern the whole pair (``settings``:
    the bootstrap's, default :class:`~sciprobe.scoring.bootstrap.BootstrapSettings`)."""
    from sciprobe.scoring.bootstrap import BootstrapSettings

    settings = settings or BootstrapSettings()
    tasks_a, tasks_b = data_a["sciprobe"]["tasks"], data_b["sciprobe"]["tasks"]
    general: list[str] = []
    only_a, only_b = sorted(set(tasks_a) - set(tasks_b)), sorted(set(tasks_b) - set(tasks_a))
    if only_a:
        general.append(f"tasks only in A (not compared): {', '.join(only_a)}")
    if only_b:
        general.append(f"tasks only in B (not compared): {', '.join(only_b)}")
    for name, data in (("A", data_a), ("B", data_b)):
        baseline = data["sciprobe"].get("reference_baseline")
        if baseline:
            general.append(f"{name} is the reference baseline {baseline.get('name')!r}")
    out = []
    for key in [k for k in tasks_a if k in tasks_b]:
        entry_a, entry_b = tasks_a[key], tasks_b[key]
        metric = _headline(data_a, key, entry_a)
        if metric != _headline(data_b, key, entry_b):
            general.append(f"{key}: the runs report different headlines ({metric!r} vs "
                           f"{_headline(data_b, key, entry_b)!r}); not compared")
            continue
        task_warnings = _run_warnings(entry_a, entry_b)
        for mode in [m for m in entry_a["scores"] if m in entry_b["scores"]]:
            comparison = Comparison(key.rsplit("|", 1)[0], mode, metric,
                                    _number(entry_a["scores"][mode].get(metric)),
                                    _number(entry_b["scores"][mode].get(metric)),
                                    higher_is_better=metric not in LOWER_IS_BETTER, warnings=list(task_warnings))
            out.append(comparison)
            tables = (entry_a.get("items") or {}, entry_b.get("items") or {})
            if not all(mode in (t.get("modes") or {}) for t in tables):
                comparison.warnings.append("no per-item scores in one of the files: headlines only, no paired test")
                continue
            table_a, table_b = tables
            spec_a, spec_b = table_a["modes"][mode], table_b["modes"][mode]
            if (spec_a["statistic"], spec_a.get("params")) != (spec_b["statistic"], spec_b.get("params")):
                comparison.warnings.append(f"different item statistics ({spec_a['statistic']} {spec_a.get('params')} "
                                           f"vs {spec_b['statistic']} {spec_b.get('params')}): no paired test")
                continue
            items_a, items_b, rows_a, rows_b, clusters = _common(table_a, table_b, mode, comparison.warnings)
            if not rows_a:
                comparison.warnings.append("no item is scored by both runs: nothing to compare")
                continue
            _paired(comparison, items_a, items_b, rows_a, rows_b, clusters, settings, alpha, power)
    return out, general


def compare_files(path_a: Path | str, path_b: Path | str, *, alpha: float = 0.05,
                  power: PowerSettings = PowerSettings()) -> tuple[list[Comparison], list[str]]:
    from sciprobe.results.read import load_results_file

    return compare_results(load_results_file(path_a).data, load_results_file(path_b).data, alpha=alpha,
                           power=power)


def _fmt(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _p(value: float | None) -> str:
    if value is None:
        return "n/a"
    return "<0.001" if value < 0.001 else f"{value:.3g}"


def format_comparisons(comparisons: list[Comparison], general: list[str], labels: tuple[str, str],
                       alpha: float = 0.05) -> str:
    from sciprobe.results.summary import format_table

    rows = []
    for c in comparisons:
        better = ""
        if c.difference is not None and c.p_value is not None and c.p_value < alpha and c.difference != 0:
            better = "B" if (c.difference > 0) == c.higher_is_better else "A"
        metric = c.metric + ("" if c.higher_is_better else " (lower=better)")
        rows.append({"task": c.task, "mode": c.mode, "metric": metric,
                     "A": _fmt(c.a_full), "B": _fmt(c.b_full), "common": str(c.n_common),
                     "A|common": _fmt(c.a), "B|common": _fmt(c.b), "B-A": _fmt(c.difference, signed=True),
                     "95% CI": f"[{_fmt(c.ci_low, True)}, {_fmt(c.ci_high, True)}]" if c.ci_low is not None else "n/a",
                     "test": c.test_name, "p": _p(c.p_value),
                     "better": better, "MDE": _fmt(c.detectable.mde) if c.detectable else "n/a",
                     "needed": c.detectable.hint() if c.detectable else ""})
    lines = [f"A = {labels[0]}", f"B = {labels[1]}", "", format_table(rows)]
    power = next((c.detectable.power for c in comparisons if c.detectable), None)
    if power is not None:
        lines += ["", f"MDE: the smallest difference the test detects with power {power:g} at alpha {alpha:g} on the "
                      "common items; needed: items to detect --effect (default: the observed difference)."]
    warned = [(c, w) for c in comparisons for w in c.warnings]
    if general or warned:
        lines += ["", "WARNINGS:"]
        lines += [f"  ! {w}" for w in general]
        lines += [f"  ! {c.task} [{c.mode}]: {w}" for c, w in warned]
    return "\n".join(lines)


def configure_compare_parser(parser: argparse.ArgumentParser, commands: dict | None = None) -> None:
    parser.description = (
        "Per task and mode, the headline difference B - A on the items both runs scored, with a paired bootstrap "
        "interval and the test that fits the metric (McNemar for accuracy-like scores, Wilcoxon where the paper uses "
        "it, else the paired bootstrap); warns when the item sets or the dataset revisions differ. With --paper, one "
        "results file against the numbers its benchmark's paper reports: our value and 95% interval, the paper's "
        "value, and a verdict (consistent / differs / not comparable, with the reason). Every comparison reports "
        "its minimum detectable effect MDE = (z_{1-alpha/2} + z_power) * SE (SE: the standard deviation of the "
        "paired bootstrap differences, or our interval's width / 3.92 against the paper; Wilcoxon: divided by "
        "sqrt(3/pi)) and the items needed to detect an effect d, n * (MDE / d)^2.")
    parser.add_argument("a", metavar="A.json", help="results JSON of run A (with --paper: the run to check)")
    parser.add_argument("b", metavar="B.json", nargs="?", help="results JSON of run B (not with --paper)")
    parser.add_argument("--paper", action="store_true",
                        help="compare A with the published numbers of its benchmarks' papers (`sciprobe paper BENCH`)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--power", type=float, default=0.8,
                        help="power the minimum detectable effect is computed for (default 0.8)")
    parser.add_argument("--effect", type=float, default=None,
                        help="the difference the required-items hint is for (default: the observed difference)")
    parser.add_argument("--json", action="store_true", help="print the comparisons as JSON")
    if commands is not None:
        commands.setdefault("compare", cmd_compare)


def _label(path: str, data: Mapping[str, Any]) -> str:
    block = data["sciprobe"]
    baseline = block.get("reference_baseline")
    return f"{block['model_id']}{' (reference baseline)' if baseline else ''}  [{path}]"


def cmd_compare(args: argparse.Namespace) -> int:
    from sciprobe.results.read import load_results_file

    if not 0.0 < args.alpha < 1.0:
        raise SciprobeError(f"--alpha must be in (0, 1), got {args.alpha}")
    if not 0.0 < args.power < 1.0:
        raise SciprobeError(f"--power must be in (0, 1), got {args.power}")
    if args.effect is not None and (not math.isfinite(args.effect) or args.effect == 0):
        raise SciprobeError(f"--effect must be a non-zero number, got {args.effect}")
    if args.paper:
        if args.b is not None:
            raise SciprobeError("--paper compares one results file with the paper: give A.json only")
        return _cmd_paper(args)
    if args.b is None:
        raise SciprobeError("compare needs two results files (A.json B.json), or one with --paper")
    data_a, data_b = load_results_file(args.a).data, load_results_file(args.b).data
    comparisons, general = compare_results(data_a, data_b, alpha=args.alpha,
                                           power=PowerSettings(args.power, args.effect))
    if args.json:
        print(json.dumps({"a": args.a, "b": args.b, "warnings": general,
                          "comparisons": [c.as_dict() for c in comparisons]}, indent=2))
    else:
        print(format_comparisons(comparisons, general, (_label(args.a, data_a), _label(args.b, data_b)), args.alpha))
    if not comparisons:
        print("nothing to compare: the files share no task", file=sys.stderr)
    return 0


def _cmd_paper(args: argparse.Namespace) -> int:
    from sciprobe.results.paper_compare import compare_with_paper, format_paper_report
    from sciprobe.results.read import load_results_file

    data = load_results_file(args.a).data
    report = compare_with_paper(data, alpha=args.alpha, power=args.power)
    if args.json:
        print(json.dumps({"results": args.a, **report.as_dict()}, indent=2, ensure_ascii=False))
    else:
        print(format_paper_report(report, _label(args.a, data)))
    if not report.comparisons:
        print("nothing to compare: the papers report no number for this model and these tasks", file=sys.stderr)
    return 0
