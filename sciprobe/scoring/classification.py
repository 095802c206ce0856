"""Binary (Yes/No) classification scores for IDRBench IPI and I3 (spec ``idrbench.md`` §5.1, §9.2, §9.11, §9.12).

Two modes:

``official``
    Reproduces ``irllm-framework@aa621e4`` ``evaluation.py``: an answer the regex could not parse is
    **dropped** (``continue``), then macro-F1 is sklearn's
    ``f1_score(y_true, y_pred, average="macro", zero_division=0)`` on Python bools, i.e. the mean F1 over the
    labels *present* in ``y_true ∪ y_pred``. When only one label is present (every gold and every parsed
    prediction is the same class) that mean has a single term and the macro-F1 is 1.0. The F1 arithmetic is
    re-implemented here in numpy with sklearn's exact formula ``2·tp / (2·tp + fp + fn)``.

``strict`` (alias ``paper``; spec §9.2 recommendation)
    Unparsable answers stay in the denominator and are scored by ``failure_policy``: ``"wrong"`` = counted as
    the opposite of the gold label, ``"no"`` = counted as a "No" answer. Macro-F1 is the unweighted mean of
    F1(No) and F1(Yes) over **both** classes (the paper's definition); a class absent from gold and predictions
    contributes 0 (``zero_division=0``).

Every report also carries positive-class F1, negative-class F1, TPR / TNR (Fig. 4 of the paper), accuracy,
balanced accuracy, ``n_parsed`` and ``parse_failure_rate`` (spec §9.11: label every number precisely; the
paper's "random 0.176" is a positive-class F1).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from sciprobe.errors import SciprobeError
from sciprobe.scoring.report import Coverage, ScoreReport

__all__ = ["LABELS", "binary_classification", "normalize_label", "sklearn_macro_f1", "subject_set_f1"]

#: Label order used for reports: index 0 = "no" (False), index 1 = "yes" (True).
LABELS: tuple[str, str] = ("no", "yes")

_MODES = {"official": "official", "strict": "strict", "paper": "strict"}
_FAILURE_POLICIES = ("wrong", "no")
_TEXT_LABELS = {"yes": True, "no": False}


def normalize_label(value: Any, *, field: str = "label", index: int | None = None,
                    allow_none: bool = False) -> bool | None:
    """Map one label to ``True`` (yes) / ``False`` (no), or ``None`` for an unparsable answer.

    Accepted: ``"yes"``/``"no"`` in any case with surrounding whitespace, Python or numpy bools, and the
    integers 0/1. ``None`` is accepted only when ``allow_none`` (predictions). Anything else raises
    :class:`SciprobeError` naming the field and position.
    """
    where = f"{field}[{index}]" if index is not None else field
    if value is None:
        if allow_none:
            return None
        raise SciprobeError(f"{where} is None; only predictions may be None (= unparsable answer)")
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        if int(value) in (0, 1):
            return bool(int(value))
    elif isinstance(value, str):
        label = _TEXT_LABELS.get(value.strip().casefold())
        if label is not None:
            return label
    hint = "'yes'/'no', a bool, 0/1" + (" or None for an unparsable answer" if allow_none else "")
    raise SciprobeError(f"{where}: unknown label {value!r} (expected {hint})")


def _per_label_f1(y_true: np.ndarray, y_pred: np.ndarray, label: bool, zero_division: float) -> float:
    """sklearn's F1 for one label: ``2·tp / (2·tp + fp + fn)``, ``zero_division`` when the denominator is 0."""
    true_is = y_true == label
    pred_is = y_pred == label
    tp = int(np.count_nonzero(true_is & pred_is))
    denom = int(np.count_nonzero(true_is)) + int(np.count_nonzero(pred_is))  # = 2·tp + fn + fp
    if denom == 0:
        return float(zero_division)
    return float(2 * tp / denom)


def sklearn_macro_f1(y_true: Sequence[bool] | np.ndarray, y_pred: Sequence[bool] | np.ndarray, *,
                     labels: Sequence[bool] | None = None, zero_division: float = 0.0) -> float:
    """Macro-F1 with the semantics of ``sklearn.metrics.f1_score(average="macro", zero_division=...)``.

    ``labels=None`` averages over the sorted union of labels present in ``y_true`` and ``y_pred`` (sklearn's
    default, used by the official IDRBench code); pass ``labels=(False, True)`` for the both-classes mean.
    Empty input raises :class:`SciprobeError` (sklearn raises ``ValueError`` too).
    """
    t = np.asarray(y_true, dtype=bool)
    p = np.asarray(y_pred, dtype=bool)
    if t.shape != p.shape or t.ndim != 1:
        raise SciprobeError(f"y_true and y_pred must be 1-D and equally long, got {t.shape} and {p.shape}")
    if t.size == 0:
        raise SciprobeError("macro-F1 of an empty sample is undefined")
    use = np.union1d(t, p) if labels is None else np.asarray(labels, dtype=bool)
    scores = [_per_label_f1(t, p, bool(lab), zero_division) for lab in use]
    return float(np.mean(scores))


def _recall(y_true: np.ndarray, y_pred: np.ndarray, label: bool) -> float:
    support = int(np.count_nonzero(y_true == label))
    if support == 0:
        return 0.0
    return float(np.count_nonzero((y_true == label) & (y_pred == label)) / support)


def _values(y_true: np.ndarray, y_pred: np.ndarray, *, official: bool, positive: bool) -> dict[str, float]:
    """All classification numbers for one (already filtered / imputed) sample."""
    if y_true.size == 0:
        nan = float("nan")
        return {k: nan for k in ("macro_f1", "positive_f1", "negative_f1", "tpr", "tnr", "accuracy",
                                 "balanced_accuracy")}
    macro = sklearn_macro_f1(y_true, y_pred, labels=None if official else (False, True))
    tpr = _recall(y_true, y_pred, positive)
    tnr = _recall(y_true, y_pred, not positive)
    present = [lab for lab in (False, True) if np.any(y_true == lab)]
    balanced = float(np.mean([_recall(y_true, y_pred, lab) for lab in present]))
    return {
        "macro_f1": macro,
        "positive_f1": _per_label_f1(y_true, y_pred, positive, 0.0),
        "negative_f1": _per_label_f1(y_true, y_pred, not positive, 0.0),
        "tpr": tpr,
        "tnr": tnr,
        "accuracy": float(np.mean(y_true == y_pred)),
        "balanced_accuracy": balanced,
    }


def binary_classification(predictions: Sequence[Any], references: Sequence[Any], *, mode: str = "official",
                          failure_policy: str = "wrong", positive: str = "yes") -> ScoreReport:
    """Score Yes/No answers for IDRBench IPI / I3 (spec ``idrbench.md`` §5.1, §9.2).

    Args:
        predictions: one label per item (``"yes"``/``"no"`` case-insensitive, bool, 0/1), or ``None`` when
            the model's answer could not be parsed.
        references: gold labels, same forms, no ``None``.
        mode: ``"official"`` (drop unparsable items, sklearn macro-F1 over the labels present) or
            ``"strict"`` (keep them, impute by ``failure_policy``, macro-F1 over both classes). ``"paper"`` is
            accepted as an alias of ``"strict"``; the report records ``"strict"``.
        failure_policy: strict mode only: ``"wrong"`` (opposite of gold) or ``"no"`` (a "No" answer).
            Official mode ignores it and records ``failure_policy="drop"`` in ``params``.
        positive: which class is "positive" for ``positive_f1`` / ``tpr`` (default ``"yes"``); ``negative_f1``
            / ``tnr`` refer to the other class.

    Returns:
        A :class:`ScoreReport` with values ``macro_f1, positive_f1, negative_f1, tpr, tnr, accuracy,
        balanced_accuracy, n_parsed, parse_failure_rate`` and coverage ``n_items`` (all items), ``n_failed``
        (unparsable) and ``n_scored`` (official: parsed items only; strict: all items). F1 of a class with no
        gold and no predicted item, and the recall of a class with no gold item, are 0; balanced accuracy is
        the mean recall over the classes present in the gold labels (sklearn's ``balanced_accuracy_score``).
        If official mode has no parsed item left, every rate is NaN (sklearn would raise) and a note says so.

    Raises:
        SciprobeError: empty input, length mismatch, unknown label, ``None`` in references, bad option.
    """
    if mode not in _MODES:
        raise SciprobeError(f"mode must be one of {sorted(_MODES)}, got {mode!r}")
    if failure_policy not in _FAILURE_POLICIES:
        raise SciprobeError(f"failure_policy must be one of {list(_FAILURE_POLICIES)}, got {failure_policy!r}")
    if positive not in _TEXT_LABELS:
        raise SciprobeError(f"positive must be 'yes' or 'no', got {positive!r}")
    preds = list(predictions)
    refs = list(references)
    if len(preds) != len(refs):
        raise SciprobeError(f"predictions and references differ in length: {len(preds)} vs {len(refs)}")
    if not preds:
        raise SciprobeError("binary_classification needs at least one item, got empty predictions/references")
    canonical_mode = _MODES[mode]
    official = canonical_mode == "official"
    pos = _TEXT_LABELS[positive]

    gold = np.array([normalize_label(r, field="references", index=i) for i, r in enumerate(refs)], dtype=bool)
    parsed = [normalize_label(p, field="predictions", index=i, allow_none=True) for i, p in enumerate(preds)]
    failed = np.array([p is None for p in parsed], dtype=bool)
    n_items = len(parsed)
    n_failed = int(failed.sum())
    notes: list[str] = []

    if official:
        keep = ~failed
        y_true = gold[keep]
        y_pred = np.array([p for p in parsed if p is not None], dtype=bool)
        n_scored = n_items - n_failed
        params: dict[str, Any] = {"failure_policy": "drop", "positive": positive}
        if n_failed:
            notes.append(f"official mode dropped {n_failed} unparsable item(s) of {n_items} before scoring")
        if n_scored == 0:
            notes.append("official mode: no parsed item left; metrics are NaN (the official code would fail)")
        elif np.union1d(y_true, y_pred).size == 1:
            notes.append("official mode: only one label present in gold ∪ predictions; "
                         "macro-F1 averages that single class (sklearn semantics)")
    else:
        if failure_policy == "wrong":
            imputed = ~gold
        else:
            imputed = np.zeros_like(gold)
        y_pred = np.where(failed, imputed, np.array([bool(p) for p in parsed], dtype=bool))
        y_true = gold
        n_scored = n_items
        params = {"failure_policy": failure_policy, "positive": positive}
        if mode != canonical_mode:
            notes.append(f"mode {mode!r} is an alias of {canonical_mode!r}")

    values: dict[str, Any] = _values(y_true, y_pred, official=official, positive=pos)
    values["n_parsed"] = n_items - n_failed
    values["parse_failure_rate"] = n_failed / n_items
    return ScoreReport(metric="binary_classification", mode=canonical_mode, values=values,
                       coverage=Coverage(n_items=n_items, n_scored=n_scored, n_failed=n_failed),
                       params=params, notes=notes)


def _normalize_subject(s: Any, where: str) -> str:
    if not isinstance(s, str):
        raise SciprobeError(f"{where}: subject labels must be strings, got {type(s).__name__}")
    return " ".join(s.split()).casefold()


def _as_subject_set(item: Any, where: str) -> frozenset[str]:
    if isinstance(item, str):
        raise SciprobeError(f"{where}: expected a collection of subject labels, got a single string {item!r}")
    if not isinstance(item, Iterable):
        raise SciprobeError(f"{where}: expected a collection of subject labels, got {type(item).__name__}")
    return frozenset(_normalize_subject(s, f"{where}") for s in item)


def subject_set_f1(pred_sets: Sequence[Iterable[str] | None],
                   gold_sets: Sequence[Iterable[str]]) -> ScoreReport:
    """Mean per-item set-F1 and Jaccard of predicted vs gold disciplines (IPI ``Subject:``; spec §9.12).

    Not scored upstream, so there is no official mode (the report's mode is ``"strict"``). Labels are
    compared after whitespace collapsing and case folding (map spellings such as "System Science" /
    "Systems Science" to one discipline name before calling). Per item: set-F1 = 2|P∩G| / (|P| + |G|),
    Jaccard = |P∩G| / |P∪G|; both are 1.0 when P and G are both empty. A ``None`` prediction (unparsable)
    scores 0 for both and counts in ``n_failed``; it is not dropped.

    Returns values ``set_f1``, ``jaccard``, ``n_parsed``, ``parse_failure_rate``.
    """
    preds = list(pred_sets)
    golds = list(gold_sets)
    if len(preds) != len(golds):
        raise SciprobeError(f"pred_sets and gold_sets differ in length: {len(preds)} vs {len(golds)}")
    if not preds:
        raise SciprobeError("subject_set_f1 needs at least one item, got empty input")
    f1s: list[float] = []
    jaccards: list[float] = []
    n_failed = 0
    for i, (p, g) in enumerate(zip(preds, golds)):
        gold = _as_subject_set(g, f"gold_sets[{i}]")
        if p is None:
            n_failed += 1
            f1s.append(0.0)
            jaccards.append(0.0)
            continue
        pred = _as_subject_set(p, f"pred_sets[{i}]")
        inter = len(pred & gold)
        union = len(pred | gold)
        if union == 0:
            f1s.append(1.0)
            jaccards.append(1.0)
        else:
            f1s.append(2 * inter / (len(pred) + len(gold)))
            jaccards.append(inter / union)
    n = len(preds)
    values = {"set_f1": math.fsum(f1s) / n, "jaccard": math.fsum(jaccards) / n,
              "n_parsed": n - n_failed, "parse_failure_rate": n_failed / n}
    return ScoreReport(metric="subject_set_f1", mode="strict", values=values,
                       coverage=Coverage(n_items=n, n_scored=n, n_failed=n_failed),
                       params={"normalization": "collapse whitespace + casefold"})
