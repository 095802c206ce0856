"""The Figure 3 view of a rollout's results: one panel per curve (diversity, novelty against the evolving
H^{<t}, novelty against the fixed H^{<t0}), the real months and the pooled synthetic months with their 95%
bootstrap bands; y = 10 - mean LACER (upstream's ``plot_lacer_*.py`` axis)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciprobe.errors import SciprobeError

__all__ = ["load_results", "rollout_figure", "save_figure"]

TITLES = {"diversity": "Diversity (same month)", "novelty_evolving": "Novelty vs evolving H<t",
          "novelty_fixed": "Novelty vs fixed H<t0"}
COLORS = {"natural": "#0072B2", "synthetic": "#E69F00"}  # upstream's colours


def load_results(path: Path | str) -> dict[str, Any]:
    from sciprobe.benchmarks.prescience.rollout.run import RESULTS_FORMAT

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
    from sciprobe.report_figures import figure

    fig = figure(11, 3.4)
    axes = fig.subplots(1, len(TITLES), sharey=True)
    for ax, (curve, title) in zip(axes, TITLES.items()):
        for label, points in results["curves"].get(curve, {}).items():
            months = [m for m, v in sorted(points.items()) if v.get("mean") is not None]
            if not months:
                continue
            x = list(range(len(months)))
            ax.plot(x, [points[m]["mean"] for m in months], marker="o", color=COLORS.get(label), label=label.title())
            ax.fill_between(x, [points[m]["ci95_low"] for m in months], [points[m]["ci95_high"] for m in months],
                            color=COLORS.get(label), alpha=0.2)
            ax.set_xticks(x, [m[:7] for m in months], rotation=45, ha="right", fontsize=7)
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

    from sciprobe.report_figures import literal_text

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context({"text.parse_math": False}):
        fig = literal_text(rollout_figure(results))
        fig.savefig(path)
    return path
