"""The Figure 3 view of a rollout's results: one panel per curve (diversity, novelty against the evolving
H^{<t}, novelty against the fixed H^{<t0}), the real months and the pooled synthetic months with their 95%
bootstrap bands; y = 10 - mean LACER (upstream's ``plot_lacer_*.py`` axis)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError

#: the format tag of a rollout results file (written by sciprobe.benchmarks.prescience.rollout.run)
RESULTS_FORMAT = "sciprobe.prescience-rollout.v1"

__all__ = ["load_results", "rollout_figure", "save_figure"]

TITLES = {"diversity": "Diversity (same month)", "novelty_evolving": "Novelty vs evolving H<t",
          "novelty_fixed": "Novelty vs fixed H<t0"}
COLORS = {"natural": "#0072B2", "synthetic": "#E69F00"}  # upstream's colours


def load_results(path: Path | str) -> dict[str, Any]:

    path = Path(path)
    if not path.is_file():
        raise SciprobeError(f"rollout results {path} not found")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SciprobeError(f"{path} is not JSON ({exc.msg})") from None
    if not isinstance(results, dict) or results.get("format") != RESULTS_FORMAT:
        raise SciprobeError(f"{path} is not a rollout results file ({RESULTS_FORMAT})")
    return results


def rollout_figure(results: Mapping[str, Any]) -> Any:
    from sciprobe.results.figures import figure

    fig = figure(11, 3.4)
    axes = fig.subplots(1, len(TITLES), sharey=True)
    for ax, (curve, title) in zip(axes, TITLES.items()):
        lines = {label: {m: v for m, v in points.items() if v.get("mean") is not None}
                 for label, points in results["curves"].get(curve, {}).items()}
        months = sorted({m for points in lines.values() for m in points})  # one month axis for both curves
        for label, points in lines.items():
            if not points:
                continue
            shown = sorted(points)
            x = [months.index(m) for m in shown]
            mean = [points[m]["mean"] for m in shown]
            low, high = [points[m]["ci95_low"] for m in shown], [points[m]["ci95_high"] for m in shown]
            color = COLORS.get(label)
            ax.errorbar(x, mean, yerr=[[m - lo for m, lo in zip(mean, low)], [hi - m for m, hi in zip(mean, high)]],
                        marker="o", color=color, capsize=3, label=label.title())
            ax.fill_between(x, low, high, color=color, alpha=0.2)
        ax.set_xticks(range(len(months)), [m[:7] for m in months], rotation=45, ha="right", fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.grid(True, linestyle="--", alpha=0.3)
    axes[0].set_ylabel("10 - mean LACER")
    axes[0].legend(fontsize=7)
    p = results.get("provenance", {})
    fig.suptitle(f"PreScience rollout: {p.get('generator')} | embedder {p.get('embedder')} | "
                 f"{results['params']['repeats']} repeat(s)", fontsize=9)
    return fig


def save_figure(results: Mapping[str, Any], path: Path | str) -> Path:
    import matplotlib

    from sciprobe.results.figures import literal_text

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context({"text.parse_math": False}):
        fig = literal_text(rollout_figure(results))
        fig.savefig(path)
    return path
