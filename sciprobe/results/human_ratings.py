"""Human ratings for ``sciprobe judge-check --human FILE``: read once, validated, then tau_b against a judge.

The file is untrusted input: a UTF-8 CSV of at most :data:`MAX_BYTES` with a header naming ``id`` and exactly one
of ``score`` (higher = better) or ``rank`` (1 = best), and optionally ``annotator`` and ``model`` (needed when
several models' runs are checked together, since item ids repeat across models). Every problem is one line
naming the row. A rank becomes the score ``-rank`` so both read "higher is better"; tau_b is invariant to that.

:func:`judge_vs_human` gives Kendall tau_b between a judge's item scores and each annotator's, averaged over
annotators, and (two or more annotators) the annotators' own mean pairwise tau_b, the ceiling PreScience
Appendix B.3 compares LACER with (0.57 against an inter-annotator 0.53). Unlike B.3, which ranks candidates
within each target paper, the file is one flat list: tau_b runs over all its items at once.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError

__all__ = ["MAX_BYTES", "judge_vs_human", "parse_human_ratings", "read_human_ratings"]

#: the largest ratings file read (a few thousand rated items take well under 1 MiB)
MAX_BYTES = 4 << 20
MAX_ROWS = 200_000
MAX_ID_CHARS = 256
_OPTIONAL = ("annotator", "model")


def read_human_ratings(path: Path | str) -> dict[str, Any]:
    from sciprobe.results.read import read_regular_file

    raw = read_regular_file(path, MAX_BYTES, "human ratings file")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SciprobeError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    return parse_human_ratings(text, str(path))


def _header(fields: list[str] | None, where: str) -> str:
    fields = [f.strip() for f in fields or []]
    if "id" not in fields:
        raise SciprobeError(f"{where}: the header must name an 'id' column and 'score' or 'rank', got {fields}")
    kinds = [f for f in ("score", "rank") if f in fields]
    if len(kinds) != 1:
        raise SciprobeError(f"{where}: the header must name exactly one of 'score' or 'rank', got {fields}")
    unknown = set(fields) - {"id", kinds[0], *_OPTIONAL}
    if unknown or len(set(fields)) != len(fields):
        raise SciprobeError(f"{where}: unexpected or repeated columns {sorted(unknown) or fields} "
                            f"(allowed: id, {kinds[0]}, annotator, model)")
    return kinds[0]


def _value(text: str, kind: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SciprobeError(f"{where}: {kind} {text[:40]!r} is not a number") from None
    if not math.isfinite(value) or (kind == "rank" and value < 1):
        raise SciprobeError(f"{where}: {kind} {text[:40]!r} is out of range"
                            + (" (ranks start at 1)" if kind == "rank" else ""))
    return -value if kind == "rank" else value


def parse_human_ratings(text: str, where: str = "<ratings>") -> dict[str, Any]:
    """``{"kind": "score"|"rank", "by_annotator": {annotator: {item key: score}}, "has_model": bool}``; an item
    key is ``model|id`` with a model column, else ``id``."""
    try:
        return _parse(text, where)
    except csv.Error as exc:  # NUL bytes, an unclosed quote, a field over csv's size limit
        raise SciprobeError(f"{where}: not a readable CSV file ({exc})") from None


def _parse(text: str, where: str) -> dict[str, Any]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    kind = _header(reader.fieldnames, where)
    by_annotator: dict[str, dict[str, float]] = {}
    has_model = "model" in [f.strip() for f in reader.fieldnames or []]
    reader.fieldnames = [f.strip() for f in reader.fieldnames or []]
    for line, row in enumerate(reader, start=2):
        at = f"{where} line {line}"
        if line - 1 > MAX_ROWS:
            raise SciprobeError(f"{where}: more than {MAX_ROWS} rows")
        if None in row or any(v is None for v in row.values()):
            raise SciprobeError(f"{at}: {len(row)} cells do not match the header's columns")
        item = row["id"].strip()
        if not item or len(item) > MAX_ID_CHARS or "|" in item or not item.isprintable():
            raise SciprobeError(f"{at}: id must be 1-{MAX_ID_CHARS} printable characters without '|'")
        key = f"{row['model'].strip()}|{item}" if has_model else item
        annotator = (row.get("annotator") or "").strip() or "annotator"
        table = by_annotator.setdefault(annotator, {})
        if key in table:
            raise SciprobeError(f"{at}: {key!r} is rated twice by {annotator!r}")
        table[key] = _value(row[kind].strip(), kind, at)
    if not by_annotator:
        raise SciprobeError(f"{where}: no ratings")
    return {"kind": kind, "by_annotator": by_annotator, "has_model": has_model}


def _aligned(ratings: Mapping[str, Any], judge: Mapping[str, float]) -> tuple[list[str], Any, Any]:
    """(items the judge and some annotator scored, judge scores, annotators x items human scores, NaN = unrated)."""
    import numpy as np

    items = sorted(set(judge) & {k for scores in ratings["by_annotator"].values() for k in scores})
    human = np.array([[scores.get(i, np.nan) for i in items] for scores in ratings["by_annotator"].values()], float)
    return items, np.array([judge[i] for i in items], float), human


def _mean_tau(judge: Any, human: Any, index: Any) -> float | None:
    """Mean over annotators of tau_b(judge, annotator) on the items ``index`` picks (each annotator's own)."""
    import numpy as np

    from sciprobe.scoring.judge_agreement import kendall_tau_b

    taus = []
    for row in human:
        rated = index[~np.isnan(row[index])]
        taus.append(kendall_tau_b(judge[rated], row[rated]))
    return _mean(taus)


def _mean(values: list[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def _inter_annotator(ratings: Mapping[str, Any]) -> float | None:
    import numpy as np

    from sciprobe.scoring.judge_agreement import kendall_tau_b

    taus = []
    for a, b in itertools.combinations(ratings["by_annotator"].values(), 2):
        common = sorted(set(a) & set(b))
        taus.append(kendall_tau_b(np.array([a[i] for i in common], float), np.array([b[i] for i in common], float)))
    return _mean(taus) if taus else None


def judge_vs_human(ratings: Mapping[str, Any], judge_scores: Mapping[str, float], several_models: bool,
                   settings: Any = None) -> dict[str, Any]:
    """tau_b between a judge (``{"model|id": score}``) and each annotator, averaged, with a percentile bootstrap
    interval over items; and the annotators' own mean pairwise tau_b."""
    import numpy as np

    from sciprobe.scoring.bootstrap import BootstrapSettings, interval

    if several_models and not ratings["has_model"]:
        raise SciprobeError("several models' runs are checked: the human ratings need a 'model' column "
                            "(item ids repeat across models)")
    settings = settings or BootstrapSettings()
    # the judge's keys are "model|id"; a file without a model column names the id alone
    judge = dict(judge_scores) if ratings["has_model"] else {k.split("|", 1)[1]: v for k, v in judge_scores.items()}
    items, judge_values, human = _aligned(ratings, judge)
    everything = np.arange(len(items))
    value = _mean_tau(judge_values, human, everything) if items else None
    low = high = None
    if len(items) >= 2:
        rng = np.random.default_rng(settings.seed)
        draws = (_mean_tau(judge_values, human, rng.integers(0, len(items), len(items)))
                 for _ in range(settings.n_resamples))
        samples = np.array([np.nan if tau is None else tau for tau in draws], float)
        low, high, _ = interval(samples, settings.confidence)
    per_annotator = {name: _mean_tau(judge_values, human[k:k + 1], everything) if items else None
                     for k, name in enumerate(ratings["by_annotator"])}
    return {"tau_b": value, "ci95_low": low, "ci95_high": high, "n": len(items), "per_annotator": per_annotator,
            "inter_annotator_tau_b": _inter_annotator(ratings), "kind": ratings["kind"]}
