"""Binary (Yes/No) classification scores for IDRBench IPI and I3 (spec ``idrbench.md`` §5.1, §9.2, §9.11, §9.12).

Every number is scikit-learn's (the library the official code calls), computed here with numpy from the 2×2
confusion matrix by sklearn's own formulas: importing ``sklearn.metrics`` and ``scipy.stats`` costs ~2.5 s of
CPU, more than a 10-item run (issue 28). tests/idrbench/test_classification_sklearn_parity.py checks every
value against scikit-learn and scipy themselves over every confusion matrix of up to 12 items. Two modes:

``official``
    Reproduces ``irllm-framework@aa621e4`` ``evaluation.py`` (``Evaluator.calculate_metrics`` inside
    ``evaluate_file``): an answer the regex could not parse is **dropped** (the official code skips it),
    then the pinned code builds ``confusion_matrix(y_true, y_pred)`` and unpacks it as
    ``TN, FP, FN, TP``. When a single class is left in gold ∪ predictions (or nothing is left) that matrix is
    1×1 (or empty), the unpacking raises, ``evaluate_file`` catches it and the file gets **no metrics**. Official
    mode then gives no number either: every value is ``None`` and ``no_score_reason`` says why. Otherwise the
    report carries upstream's full metrics dict: ``confusion_matrix`` (``[[TN, FP], [FN, TP]]``), ``accuracy``,
    positive-class ``precision`` / ``recall``, ``f1_score_0`` / ``f1_score_1``, ``macro_f1`` (=
    ``f1_score(average="macro", zero_division=0)``), ``weighted_f1_score``, ``gmean_f1_score`` (scipy
    ``gmean`` of the per-class F1) and ``auc`` (``roc_auc_score`` on the hard labels, ``None`` when gold has one
    class), plus ``size``.

``strict`` (alias ``paper``; spec §9.2 recommendation)
    Unparsable answers stay in the denominator and are scored by ``failure_policy``: ``"wrong"`` = counted as
    the opposite of the gold label, ``"no"`` = counted as a "No" answer. Macro-F1 is the unweighted mean of
    F1(No) and F1(Yes) over **both** classes (the paper's definition, ``labels=[False, True]``); a class absent
    from gold and predictions contributes 0 (``zero_division=0``).

Both modes also report positive-class F1, negative-class F1, TPR / TNR (Fig. 4 of the paper), accuracy,
balanced accuracy, ``n_parsed`` and ``parse_failure_rate`` (spec §9.11: label every number precisely; the
paper's "random 0.176" is a positive-class F1).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.score_report import Coverage, ScoreReport

__all__ = ["LABELS", "binary_classification", "normalize_label", "official_metrics", "sklearn_macro_f1",
           "subject_set_f1"]

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


def _bools(y: Sequence[bool] | np.ndarray) -> np.ndarray:
    return np.asarray(y, dtype=bool)


def sklearn_macro_f1(y_true: Sequence[bool] | np.ndarray, y_pred: Sequence[bool] | np.ndarray, *,
                     labels: Sequence[bool] | None = None, zero_division: float = 0.0) -> float:
    """``sklearn.metrics.f1_score(average="macro", zero_division=...)`` on bool labels.

    ``labels=None`` averages over the sorted union of labels present in ``y_true`` and ``y_pred`` (sklearn's
    default, used by the official IDRBench code); pass ``labels=(False, True)`` for the both-classes mean.
    Empty input raises :class:`SciprobeError` (sklearn raises ``ValueError`` too).
    """
    t, p = _bools(y_true), _bools(y_pred)
    if t.shape != p.shape or t.ndim != 1:
        raise SciprobeError(f"y_true and y_pred must be 1-D and equally long, got {t.shape} and {p.shape}")
    if t.size == 0:
        raise SciprobeError("macro-F1 of an empty sample is undefined")
    chosen = sorted(set(t.tolist()) | set(p.tolist())) if labels is None else [bool(x) for x in labels]
    f1 = _per_class_f1(_confusion(t, p), zero_division)
    return float(np.average([f1[int(label)] for label in chosen]))


def _confusion(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``[[TN, FP], [FN, TP]]`` (rows gold, columns predicted), as ``confusion_matrix(labels=[False, True])``."""
    return np.bincount(t.astype(np.int64) * 2 + p.astype(np.int64), minlength=4).reshape(2, 2)


def _divide(numerator: np.ndarray, denominator: np.ndarray, zero_division: float = 0.0) -> np.ndarray:
    """sklearn's ``_prf_divide``: ``zero_division`` where the denominator is 0."""
    out = np.full(numerator.shape, float(zero_division))
    np.divide(numerator, denominator, out=out, where=denominator != 0, casting="unsafe")
    return out


def _per_class_f1(cm: np.ndarray, zero_division: float = 0.0) -> np.ndarray:
    """F1 of class 0 and class 1 as sklearn 1.3+ computes it: ``2·tp / (2·tp + fp + fn)``."""
    tp = np.diag(cm).astype(np.float64)
    fp, fn = cm.sum(axis=0) - tp, cm.sum(axis=1) - tp
    return _divide(2 * tp, 2 * tp + fp + fn, zero_division)


def _per_class_recall(cm: np.ndarray) -> np.ndarray:
    return _divide(np.diag(cm).astype(np.float64), cm.sum(axis=1).astype(np.float64))


def _accuracy(t: np.ndarray, p: np.ndarray) -> float:
    return float(np.average(t == p))


_BOTH = [False, True]
_OFFICIAL_KEYS = ("size", "confusion_matrix", "accuracy", "precision", "recall", "f1_score_0", "f1_score_1",
                  "macro_f1", "weighted_f1_score", "gmean_f1_score", "auc")
_SHARED_KEYS = ("positive_f1", "negative_f1", "tpr", "tnr", "balanced_accuracy")


def _shared_values(y_true: np.ndarray, y_pred: np.ndarray, positive: bool) -> dict[str, float]:
    """Per-class F1 and recall over both classes (0 for a class with no support), balanced accuracy (the mean
    recall over the classes present in gold, as ``balanced_accuracy_score``)."""
    cm = _confusion(y_true, y_pred)
    f1, recall = _per_class_f1(cm), _per_class_recall(cm)
    present = cm.sum(axis=1) > 0
    balanced = np.mean(recall[present])
    pos, neg = int(positive), int(not positive)
    return {"positive_f1": float(f1[pos]), "negative_f1": float(f1[neg]), "tpr": float(recall[pos]),
            "tnr": float(recall[neg]), "balanced_accuracy": float(balanced)}


def official_metrics(y_true: Sequence[bool] | np.ndarray,
                     y_pred: Sequence[bool] | np.ndarray) -> tuple[dict[str, Any] | None, str | None]:
    """The metrics dict of ``irllm-framework@aa621e4`` ``Evaluator.calculate_metrics`` for parsed answers, or
    ``(None, reason)`` where its ``evaluate_file`` fails and the file gets no metrics (a 1×1 or empty confusion
    matrix cannot be unpacked as ``TN, FP, FN, TP``)."""
    t, p = _bools(y_true), _bools(y_pred)
    if t.size == 0:
        return None, "no parsed answer is left: the official evaluate_file fails and gives no metrics"
    cm = _confusion(t, p)
    if len(set(t.tolist()) | set(p.tolist())) < 2:  # confusion_matrix(t, p) is 1x1 then
        label = "yes" if bool(t[0]) else "no"
        return None, (f"only one class ({label!r}) is left in gold and predictions after unparsable answers are "
                      "dropped: the official evaluate_file fails (its confusion matrix is 1x1) and gives no metrics")
    f1 = _per_class_f1(cm)
    with np.errstate(divide="ignore"):  # scipy's gmean: a zero F1 gives 0 (log(0) = -inf)
        gmean_f1 = float(np.exp(np.mean(np.log(f1))))
    tp, fp, fn = float(cm[1, 1]), float(cm[0, 1]), float(cm[1, 0])
    return {
        "size": int(t.size),
        "confusion_matrix": cm.tolist(),
        "accuracy": _accuracy(t, p),
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / (tp + fn) if tp + fn else 0.0,
        "f1_score_0": float(f1[0]),
        "f1_score_1": float(f1[1]),
        "macro_f1": float(np.average(f1)),
        "weighted_f1_score": float(np.average(f1, weights=cm.sum(axis=1))),
        "gmean_f1_score": gmean_f1,
        "auc": _hard_label_auc(cm) if np.unique(t).size > 1 else None,
    }, None


def _hard_label_auc(cm: np.ndarray) -> float:
    """``roc_auc_score`` of hard 0/1 predictions: the trapezoid under (0,0), (FPR, TPR), (1,1)."""
    fpr = cm[0, 1] / cm[0].sum()
    tpr = cm[1, 1] / cm[1].sum()
    return float(np.trapezoid([0.0, tpr, 1.0], [0.0, fpr, 1.0]))


def binary_classification(predictions: Sequence[Any], references: Sequence[Any], *, mode: str = "official",
                          failure_policy: str = "wrong", positive: str = "yes") -> ScoreReport:
    """Score Yes/No answers for IDRBench IPI / I3 (spec ``idrbench.md`` §5.1, §9.2).

    Args:
        predictions: one label per item (``"yes"``/``"no"`` case-insensitive, bool, 0/1), or ``None`` when
            the model's answer could not be parsed.
        references: gold labels, same forms, no ``None``.
        mode: ``"official"`` (drop unparsable items, upstream's metrics dict; no number where upstream has
            none) or ``"strict"`` (keep them, impute by ``failure_policy``, macro-F1 over both classes).
            ``"paper"`` is accepted as an alias of ``"strict"``; the report records ``"strict"``.
        failure_policy: strict mode only: ``"wrong"`` (opposite of gold) or ``"no"`` (a "No" answer).
            Official mode ignores it and records ``failure_policy="drop"`` in ``params``.
        positive: which class is "positive" for ``positive_f1`` / ``tpr`` (default ``"yes"``); ``negative_f1``
            / ``tnr`` refer to the other class. Upstream's ``precision`` / ``recall`` are always for "yes".

    Returns:
        A :class:`ScoreReport` with values ``macro_f1, positive_f1, negative_f1, tpr, tnr, accuracy,
        balanced_accuracy, n_parsed, parse_failure_rate`` (official mode adds upstream's ``size,
        confusion_matrix, precision, recall, f1_score_0, f1_score_1, weighted_f1_score, gmean_f1_score, auc``)
        and coverage ``n_items`` (all items), ``n_failed`` (unparsable) and ``n_scored`` (official: parsed
        items only; strict: all items). Where the official code gives no metrics (one class left, or none),
        every metric value is ``None``, ``no_score_reason`` says why and ``n_scored`` is 0.

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
    pos = _TEXT_LABELS[positive]

    gold = np.array([normalize_label(r, field="references", index=i) for i, r in enumerate(refs)], dtype=bool)
    parsed = [normalize_label(p, field="predictions", index=i, allow_none=True) for i, p in enumerate(preds)]
    failed = np.array([p is None for p in parsed], dtype=bool)
    n_items = len(parsed)
    n_failed = int(failed.sum())
    notes: list[str] = []
    values: dict[str, Any]

    if canonical_mode == "official":
        y_true = gold[~failed]
        y_pred = np.array([p for p in parsed if p is not None], dtype=bool)
        n_scored = n_items - n_failed
        params: dict[str, Any] = {"failure_policy": "drop", "positive": positive}
        if n_failed:
            notes.append(f"official mode dropped {n_failed} unparsable item(s) of {n_items} before scoring")
        metrics, reason = official_metrics(y_true, y_pred)
        if metrics is None:
            values = {k: None for k in (*_OFFICIAL_KEYS, *_SHARED_KEYS)}
            values["no_score_reason"] = reason
            n_scored = 0
            notes.append(f"official mode: no number: {reason}")
        else:
            values = {**metrics, **_shared_values(y_true, y_pred, pos)}
    else:
        imputed = ~gold if failure_policy == "wrong" else np.zeros_like(gold)
        y_pred = np.where(failed, imputed, np.array([bool(p) for p in parsed], dtype=bool))
        y_true = gold
        n_scored = n_items
        params = {"failure_policy": failure_policy, "positive": positive}
        if mode != canonical_mode:
            notes.append(f"mode {mode!r} is an alias of {canonical_mode!r}")
        values = {"macro_f1": sklearn_macro_f1(y_true, y_pred, labels=_BOTH), **_shared_values(y_true, y_pred, pos),
                  "accuracy": _accuracy(y_true, y_pred)}
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
