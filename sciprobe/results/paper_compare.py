"""``sciprobe compare RESULTS --paper``: a run's numbers beside the ones its benchmark's paper reports.

For each (model, task, metric) that is both in the results file and in the paper (``published.yaml`` of the
benchmark, :mod:`sciprobe.results.published`), one :class:`PaperComparison`: our value with its 95% interval, the
paper's
value, and a verdict:

- **consistent**: the paper's value lies inside our interval (widened by half a unit of the paper's last printed
  digit: 0.630 is any number in [0.6295, 0.6305));
- **differs**: it lies outside;
- **not comparable**: the paper's number and ours were not obtained the same way, and the verdict says why, one
  reason per difference (:data:`REASONS`): the paper marks the number itself not comparable; a different scoring
  mode; prompt set; number of shots; a paper subset; another data variant (the bundled sample, another item count);
  a temporal cutoff; a ``--limit`` sample; a partial or incomplete result; or no interval to judge by.

Models are matched through the alias table ``sciprobe/data/paper_models.yaml`` (documented there): the same name
ignoring case, or two names of one entry. A run whose model matches no model of a paper is listed as unmatched with
the paper's models, never guessed.

Each comparable row also carries the minimum detectable effect (:mod:`sciprobe.scoring.power`) of a test of our
value against the paper's at this run's size, and how many items it would take to detect the gap observed.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciprobe.core.errors import SciprobeError

if TYPE_CHECKING:
    from sciprobe.results.published import PublishedResult
    from sciprobe.scoring.power import Detectable

__all__ = ["ALIASES_PATH", "CONSISTENT", "DIFFERS", "NOT_COMPARABLE", "REASONS", "PaperComparison", "PaperReport",
           "compare_with_paper", "format_paper_report", "model_aliases", "same_model"]

ALIASES_PATH = Path(__file__).resolve().parent / "data" / "paper_models.yaml"
CONSISTENT, DIFFERS, NOT_COMPARABLE = "consistent", "differs", "not comparable"
#: the kinds of reason a number is not comparable (each reason's text starts with its kind)
REASONS = ("paper", "partial", "incomplete", "mode", "prompt set", "shots", "subset", "data variant", "cutoff",
           "--limit", "no interval")


@dataclass(frozen=True)
class PaperComparison:
    """One published number beside the run's."""

    benchmark: str
    task: str
    mode: str
    metric: str
    model: str                       # the run's model id
    published: PublishedResult
    ours: float | None
    ci_low: float | None
    ci_high: float | None
    verdict: str
    reasons: tuple[str, ...] = ()    # why not comparable ("<kind>: ..."), or why consistent / differs
    notes: tuple[str, ...] = ()      # caveats the verdict cannot check (another judge, the data's release)
    detectable: Detectable | None = None

    @property
    def reason_kinds(self) -> tuple[str, ...]:
        return tuple(r.split(":", 1)[0] for r in self.reasons) if self.verdict == NOT_COMPARABLE else ()

    def as_dict(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "task": self.task, "mode": self.mode, "metric": self.metric,
                "model": self.model, "paper_model": self.published.model, "ours": self.ours,
                "ci_low": self.ci_low, "ci_high": self.ci_high, "paper": self.published.value,
                "paper_printed": self.published.printed, "verdict": self.verdict, "reasons": list(self.reasons),
                "notes": list(self.notes), "paper_notes": list(self.published.notes),
                "source": self.published.source.as_dict(),
                "detectable": self.detectable.as_dict() if self.detectable else None}


@dataclass
class PaperReport:
    model: str
    comparisons: list[PaperComparison] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)   # one line per benchmark whose paper lacks the model
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "comparisons": [c.as_dict() for c in self.comparisons],
                "unmatched": list(self.unmatched), "notes": list(self.notes)}


# ---------------------------------------------------------------- model names

@functools.lru_cache(maxsize=None)
def model_aliases(path: Path = ALIASES_PATH) -> tuple[frozenset[str], ...]:
    """The alias table: one set of case-folded names per model (its paper names and its run ids)."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise SciprobeError(f"{path.name}: cannot be read ({exc})") from None
    if not isinstance(data, Mapping) or data.get("format") != 1 or not isinstance(data.get("models"), list):
        raise SciprobeError(f"{path.name}: expected format: 1 and a list of models")
    out = []
    for index, entry in enumerate(data["models"]):
        names = [*(entry.get("paper") or []), *(entry.get("runs") or [])] if isinstance(entry, Mapping) else []
        if not entry.get("paper") or not all(isinstance(n, str) and n.strip() for n in names):
            raise SciprobeError(f"{path.name}: models[{index}] needs paper names and text names only")
        out.append(frozenset(n.strip().casefold() for n in names))
    return tuple(out)


def same_model(run_model: str, paper_model: str, aliases: Sequence[frozenset[str]] | None = None) -> bool:
    """Whether a run's model id is the paper's model: the same text ignoring case, or one alias entry."""
    run, paper = run_model.strip().casefold(), paper_model.strip().casefold()
    if run == paper:
        return True
    return any(run in names and paper in names for names in (model_aliases() if aliases is None else aliases))


# ---------------------------------------------------------------- the comparison

def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _shots(key: str, config: Mapping[str, Any]) -> int | None:
    shots = config.get("num_fewshot")
    if isinstance(shots, int) and not isinstance(shots, bool):
        return shots
    suffix = key.rsplit("|", 1)[-1] if "|" in key else ""
    return int(suffix) if suffix.isdigit() else None


def _status_reasons(block: Mapping[str, Any], prov: Mapping[str, Any]) -> list[str]:
    from sciprobe.results.evidence import INCOMPLETE, PARTIAL, result_status

    status = result_status(prov)
    reasons = []
    if status == INCOMPLETE or block.get("incomplete"):
        why = (block.get("incomplete") or {}).get("reason") if isinstance(block.get("incomplete"), Mapping) else None
        reasons.append("incomplete: some items got no answer" + (f" ({why})" if why else "")
                       + "; the score covers the answered ones only")
    if status == PARTIAL or block.get("partial"):
        reasons.append("partial: scored from a predictions file that lacks items")
    return reasons


def _data_reasons(p: PublishedResult, entry: Mapping[str, Any], mode: str) -> list[str]:
    """Subset, cutoff, --limit and data variant: is the run's item set the paper's?"""
    from sciprobe.results.evidence import CUTOFF, LIMIT, subset_of

    prov = entry.get("provenance") or {}
    reasons = []
    subset = subset_of(prov)
    if subset is not None and subset["kind"] == LIMIT:
        reasons.append(f"--limit: the run scored a sample of {subset['n'] or '?'} of {subset['of'] or '?'} items")
    if subset is not None and subset["kind"] == CUTOFF:
        cutoff = (prov.get("cutoff") or {}).get("cutoff") if isinstance(prov.get("cutoff"), Mapping) else None
        reasons.append(f"cutoff: the run scored only the {subset['n'] or '?'} of {subset['of'] or '?'} items after "
                       f"{cutoff or 'a cutoff'}; the paper scored every item")
    if p.setting.subset:
        reasons.append(f"subset: the paper's number is on {p.setting.subset}; the run's on the whole test split")
    dataset = str(prov.get("dataset") or "")
    if dataset.startswith("sample:"):
        reasons.append(f"data variant: the run used the bundled sample ({dataset}); the paper used "
                       f"{p.setting.data or 'the full test set'}")
    elif p.setting.n_items is not None:
        coverage = ((entry.get("scores") or {}).get(mode) or {}).get("coverage") or {}
        total = subset["of"] if subset is not None else _number(coverage.get("n_items"))
        if total is not None and int(total) != p.setting.n_items:
            reasons.append(f"data variant: the paper scored {p.setting.n_items} items; the run's data has "
                           f"{int(total)}")
    return reasons


def _setting_reasons(p: PublishedResult, entry: Mapping[str, Any], key: str, config: Mapping[str, Any]) -> list[str]:
    """Mode, prompt set and shots."""
    from sciprobe.core.prompt_sets import RECORDED_PROMPT_SETS, recorded_prompt_set

    reasons = []
    scores = entry.get("scores") or {}
    if p.setting.mode is not None and p.setting.mode not in scores:
        reasons.append(f"mode: the paper's number is {p.setting.mode} mode; the run scored "
                       f"{', '.join(scores) or 'no mode'}")
    ours = recorded_prompt_set(entry.get("provenance"))
    if p.setting.prompts is not None and p.setting.prompts != ours:
        theirs = (f"the {p.setting.prompts} prompt set" if p.setting.prompts in RECORDED_PROMPT_SETS
                  else p.setting.prompts)
        reasons.append(f"prompt set: the paper used {theirs}; the run the {ours} prompt set")
    shots = _shots(key, config)
    if p.setting.shots is not None and shots is not None and shots != p.setting.shots:
        reasons.append(f"shots: the paper's number is {p.setting.shots}-shot; the run {shots}-shot")
    return reasons


def _our_value(p: PublishedResult, report: Mapping[str, Any]) -> tuple[float | None, float | None, float | None,
                                                                       int | None, str | None]:
    """(value, ci low, ci high, items scored, why there is no interval) of the run for ``p``'s metric and group."""
    coverage = report.get("coverage") or {}
    if p.setting.group is not None:
        breakdown, name = p.setting.group
        found = (((report.get("breakdowns") or {}).get(breakdown) or {}).get("groups") or {}).get(name)
        if not isinstance(found, Mapping):
            return None, None, None, None, f"no interval: the run has no {breakdown}={name} group"
        low, high = _number(found.get("ci_low")), _number(found.get("ci_high"))
        return (_number(found.get("score")), low, high, found.get("n_scored"),
                None if low is not None and high is not None else "no interval: the group has none")
    ci = report.get("ci") if isinstance(report.get("ci"), Mapping) else {}
    value = _number(report.get(p.metric))
    if ci.get("metric") == p.metric and _number(ci.get("low")) is not None and _number(ci.get("high")) is not None:
        return value, float(ci["low"]), float(ci["high"]), coverage.get("n_scored"), None
    return value, None, None, coverage.get("n_scored"), (
        f"no interval: the results carry a 95% interval for {ci.get('metric') or 'no metric'}, not {p.metric}")


def _tolerance(printed: str) -> float:
    """Half a unit of the last printed digit (0.630 -> 0.0005)."""
    digits = printed.split("±")[0].strip().rstrip("*∗†‡").partition(".")[2]
    decimals = len([c for c in digits if c.isdigit()])
    return 0.5 * 10 ** -decimals


def _caveats(p: PublishedResult, entry: Mapping[str, Any]) -> tuple[str, ...]:
    """What the verdict cannot check: another judge, and which release the run's data is (results record the
    dataset's name and fingerprint, not the paper's data version)."""
    prov = entry.get("provenance") or {}
    out = []
    ours = prov.get("judge_id")
    # the paper's judge(s), "a; b (what they judge)", matched like models (openai/gpt-5-2025-08-07 is gpt-5)
    theirs = [j.split(" (")[0].strip() for j in (p.setting.judge or "").split(";") if j.strip()]
    if theirs and ours and not any(same_model(str(ours), judge) for judge in theirs):
        out.append(f"judge: the paper's was {p.setting.judge}; the run's {ours}")
    dataset = str(prov.get("dataset") or "")
    if p.setting.data and not dataset.startswith("sample:"):
        out.append(f"data: the paper's is {p.setting.data}; whether the run's ({dataset or 'unnamed'}) is that "
                   "release is not checked")
    return tuple(out)


def compare_one(p: PublishedResult, block: Mapping[str, Any], key: str, entry: Mapping[str, Any],
                config: Mapping[str, Any], *, alpha: float = 0.05, power: float = 0.8) -> PaperComparison:
    """The verdict for one published number against one task of a results file."""
    from sciprobe.scoring.power import detectable, se_from_interval

    scores = entry.get("scores") or {}
    preferred = [p.setting.mode, config.get("default_mode"), *scores]  # the paper's mode when the run has it
    mode = str(next((m for m in preferred if m in scores), p.setting.mode or ""))
    report = scores.get(mode) or {}
    prov = entry.get("provenance") or {}
    reasons = [] if p.comparable else [f"paper: {p.reason}"]
    reasons += _status_reasons(block, prov) + _setting_reasons(p, entry, key, config) + _data_reasons(p, entry, mode)
    ours, low, high, n_scored, no_interval = _our_value(p, report)
    if no_interval:
        reasons.append(no_interval)
    base = dict(benchmark=p.benchmark, task=p.task or "", mode=mode, metric=p.metric, model=str(block["model_id"]),
                published=p, ours=ours, ci_low=low, ci_high=high, notes=_caveats(p, entry))
    if reasons or ours is None or low is None or high is None:
        return PaperComparison(**base, verdict=NOT_COMPARABLE, reasons=tuple(reasons or ["no interval: no value"]))
    slack = _tolerance(p.printed)
    inside = low - slack <= p.value <= high + slack
    verdict = CONSISTENT if inside else DIFFERS
    why = f"{p.printed} is {'inside' if inside else 'outside'} [{low:.4g}, {high:.4g}]"
    found = None
    if isinstance(n_scored, int) and n_scored > 0:
        found = detectable(se_from_interval(low, high), n_scored, alpha=alpha, power=power,
                           target=abs(ours - p.value) or None)
    return PaperComparison(**base, verdict=verdict, reasons=(why,), detectable=found)


def compare_with_paper(data: Mapping[str, Any], *, alpha: float = 0.05, power: float = 0.8) -> PaperReport:
    """Every published number for the results file's model and tasks, with its verdict."""
    from sciprobe.results.published import published_results

    block = data["sciprobe"]
    model = str(block["model_id"])
    report = PaperReport(model)
    configs = data.get("config_tasks") or {}
    by_bench: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    for key, entry in block["tasks"].items():
        by_bench.setdefault(key.split(":", 1)[0], []).append((key, entry))
    for bench, entries in by_bench.items():
        try:
            published = published_results(bench)
        except SciprobeError as exc:
            report.notes.append(f"{bench}: {exc}")
            continue
        mine = [p for p in published if same_model(model, p.model)]
        if not mine:
            names = sorted({p.model for p in published if p.task is not None})
            report.unmatched.append(f"{model} is none of the {bench} paper's models ({', '.join(names)}); if it is "
                                    "one of them, add it to sciprobe/data/paper_models.yaml")
            continue
        before = len(report.comparisons)
        seen: set[tuple[Any, ...]] = set()
        for key, entry in entries:
            task = key.rsplit("|", 1)[0].split(":", 1)[1]
            scored = {m for r in (entry.get("scores") or {}).values() for m in r if _number(r.get(m)) is not None}
            for p in mine:
                if p.task != task or (p.metric not in scored and p.setting.group is None) or (p.key, p.value) in seen:
                    continue
                seen.add((p.key, p.value))
                report.comparisons.append(compare_one(p, block, key, entry, configs.get(key) or {}, alpha=alpha,
                                                      power=power))
        if len(report.comparisons) == before:
            report.notes.append(f"{bench}: the paper reports {model} ({len(mine)} number(s)), but none for a task "
                                "and metric of this results file")
    return report


# ---------------------------------------------------------------- output

def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def format_paper_report(report: PaperReport, label: str) -> str:
    from sciprobe.results.summary import format_table

    rows, footnotes = [], []
    for c in report.comparisons:
        footnotes.append(f"[{len(footnotes) + 1}] {c.verdict}: " + "; ".join(c.reasons)
                         + "".join(f" (note: {n})" for n in c.notes))
        rows.append({"paper model": c.published.model, "task": c.task, "mode": c.mode, "metric": c.metric,
                     "ours": _fmt(c.ours),
                     "95% CI": f"[{_fmt(c.ci_low)}, {_fmt(c.ci_high)}]" if c.ci_low is not None else "n/a",
                     "paper": c.published.printed, "source": c.published.source.describe(),
                     "verdict": f"{c.verdict} [{len(footnotes)}]",
                     "MDE": _fmt(c.detectable.mde) if c.detectable else "n/a",
                     "needed": c.detectable.hint() if c.detectable else ""})
    lines = [f"run: {label}", ""]
    lines.append(format_table(rows) if rows else "no published number to compare with")
    if footnotes:
        lines += ["", *footnotes]
    found = next((c.detectable for c in report.comparisons if c.detectable), None)
    if found is not None:
        lines += ["", f"MDE: the smallest gap from the paper's value a two-sided test at alpha {found.alpha:g} "
                      f"detects with power {found.power:g} at this run's size; needed: items to detect the gap "
                      "observed."]
    if report.unmatched:
        lines += ["", "UNMATCHED MODEL (never guessed):", *(f"  ! {u}" for u in report.unmatched)]
    if report.notes:
        lines += ["", *(f"  note: {n}" for n in report.notes)]
    return "\n".join(lines)
