"""SGI-Bench Wet Experiment: protocol parser, Sequence Similarity (SS), Parameter Accuracy (PA), final
(shared/spec/sgibench.md §3.4, §7.1 items 6-7, §8 "Wet experiment"). Deterministic, no LLM.

official (SGI-Bench@8268d43 ``task_3_wet_experiment/step_2_score.py``; the protocol is upstream's
``model_answer``: ``"None"`` for a failed or ``none``/empty/``[Error]`` reply, the last closed ``<answer>``
block, else the whole reply; a failed generation is scored like that, 0 against a non-empty reference):
- parser: one step per ``out = <Action>(`` ... a line holding only ``)``; one ``key=value`` per line
  (single-line calls swallow the following steps; several parameters on one line collapse into one key);
- SS: position-by-position *lexicographic* comparison of action-name strings, 0.0 whenever the step counts
  differ, 1.0 for n <= 1;
- PA: value-blind, position-aligned: a step is wrong if the action name differs, if the parameter-name sets
  differ, or if the data-flow wiring differs; literal values are never compared;
  PA = 1 - errors / max(len_gt, len_pred); both sides empty raises upstream and stops the whole upstream
  script (here: the item is a failure, scored 0, counted in ``n_upstream_crash``).

paper (the paper's formulas, our decisions documented in the metric card):
- parser: tolerant (balanced parentheses, several parameters per line, single-line calls);
- actions matched by (name, occurrence); SS = (1 - discordant pairs / C(m, 2)) x m / max(len_gt, len_pred)
  over the m matched actions (a true Kendall distance, scaled by the matched share so omissions and
  insertions cost);
- PA = correctly specified parameters / parameters, value-aware: literals compared after normalisation
  (quotes, case, whitespace, number+unit spacing, numbers with a relative tolerance), variables through the
  output-variable mapping of matched steps; missing, extra and unmatched parameters count in the denominator.

soft scores (``soft_ss``, ``soft_pa``, ``soft_final``; upstream added them after the pin, at SGI-Bench@3854aa9
``compare_exp_steps_soft``; the strict SS/PA above, and the SGI-Score, are unchanged there):
- actions (lower-cased, whitespace collapsed) aligned by a longest common subsequence, ties broken as upstream's
  backtrack does; soft SS = action recall x action precision (matched / len_gt x matched / len_pred);
- over the aligned pairs in order, a parameter score = Dice overlap of the parameter-name sets x the share of
  shared names whose values agree (variables through the pred -> gt output map of the earlier aligned pairs,
  every pair extends it; two literals always agree officially); soft PA = (sum / len_gt) x (sum / len_pred);
- both protocols empty: 1.0 upstream (its strict PA raises first, so official mode records the crash); one
  empty: 0.0. paper mode: the same formulas on the tolerant parse, literal values compared as paper PA compares
  them; a failed generation or an unusable reference scores 0.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from sciprobe.scoring.score_report import Coverage, ScoreReport
from sciprobe.benchmarks.sgibench.scoring._common import (
    check_lengths,
    check_mode,
    extract_answer_block,
    mean,
    official_model_answer,
    pct,
)

METRIC = "sgi_wet_experiment"
#: the later upstream commit whose ``compare_exp_steps_soft`` the soft scores reproduce in official mode
SOFT_COMMIT = "3854aa98c945e401c053d2770e1dc826c37ecf42"

_STEP = re.compile(r"(\w+)\s*=\s*<([^>]+)>\(\s*([\s\S]*?)(?=\n\s*\)\s*$)", re.MULTILINE)
_PARAM = re.compile(r"^\s*(\w+)\s*=\s*(.*?)\s*(?:,)?\s*$")
_STEP_HEAD = re.compile(r"(\w+)\s*=\s*<([^>]+)>\(")
_POOL_ENTRY = re.compile(r"<([^<>\n]+)>\s*\(")
_KEY = re.compile(r"\s*\w+\s*")


@dataclass(frozen=True)
class Step:
    action: str
    inputs: dict[str, str] = field(default_factory=dict)
    output: str = ""


# ------------------------------------------------------------------ parsing

def _parse_official(text: str) -> list[Step]:
    steps = []
    for match in _STEP.finditer(text):
        params: dict[str, str] = {}
        for line in match.group(3).strip().split("\n"):
            line = line.strip()
            if not line or line == ")":
                continue
            param = _PARAM.match(line)
            if param:
                value = param.group(2).strip()
                if value.startswith('"') and value.endswith('"'):
                    value = value[1:-1]
                params[param.group(1)] = value
        steps.append(Step(match.group(2).strip(), params, match.group(1).strip()))
    return steps


_SPLIT_CHARS = re.compile(r"[\"'()\[\]{},]")
_PAREN_CHARS = re.compile(r"[\"'()]")


def _split_top_level(args: str) -> list[str]:
    """Split on commas outside quotes and brackets."""
    parts, depth, quote, last = [], 0, "", 0
    for match in _SPLIT_CHARS.finditer(args):
        ch = match.group()
        if quote:
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            parts.append(args[last:match.start()])
            last = match.end()
    parts.append(args[last:])
    return [p.strip() for p in parts if p.strip()]


def _closing_paren(text: str, start: int) -> int:
    """Index just after the ``)`` closing the call opened before ``start`` (quote-aware), or -1."""
    depth, quote = 1, ""
    for match in _PAREN_CHARS.finditer(text, start):
        ch = match.group()
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return match.end()
    return -1


def _parse_tolerant(text: str) -> list[Step]:
    steps, pos = [], 0
    while True:
        head = _STEP_HEAD.search(text, pos)
        if not head:
            return steps
        close = _closing_paren(text, head.end())
        end = close if close >= 0 else len(text)
        body = text[head.end(): close - 1 if close >= 0 else end]
        params: dict[str, str] = {}
        for part in _split_top_level(body):
            key, sep, value = part.partition("=")
            if sep and _KEY.fullmatch(key):
                value = value.strip().rstrip(",").strip()
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                    value = value[1:-1]
                params[key.strip()] = value
        steps.append(Step(head.group(2).strip(), params, head.group(1)))
        pos = end


def parse_protocol(text: str, mode: str = "official") -> list[Step]:
    """Parse a protocol program (already extracted from ``<answer>``) into steps."""
    check_mode(mode)
    return _parse_official(text) if mode == "official" else _parse_tolerant(text)


def action_names(action_pool: str) -> list[str]:
    """Action names declared in an action pool (``<Name>(args)`` entries), in order, without duplicates."""
    return list(dict.fromkeys(m.group(1).strip() for m in _POOL_ENTRY.finditer(action_pool or "")))


# ------------------------------------------------------------------ official SS / PA

def _official_ss(gt: Sequence[str], pred: Sequence[str]) -> float:
    if len(gt) != len(pred):
        return 0.0
    n = len(gt)
    if n <= 1:
        return 1.0
    inversions = sum(1 for i, j in combinations(range(n), 2)
                     if (gt[i] < gt[j] and pred[i] > pred[j]) or (gt[i] > gt[j] and pred[i] < pred[j]))
    return 1.0 - inversions / (n * (n - 1) / 2)


def _official_pa(gt: Sequence[Step], pred: Sequence[Step]) -> float:
    """Raises ZeroDivisionError when both sides are empty, as upstream does."""
    generated_gt = {s.output for s in gt}
    generated_pred = {s.output for s in pred}
    var_map: dict[str, str] = {}
    errors = 0
    for g, p in zip(gt, pred):
        if g.action != p.action or set(g.inputs) != set(p.inputs):
            errors += 1
            continue
        step_error = False
        for key in g.inputs:
            vg, vp = g.inputs[key], p.inputs[key]
            gen_g, gen_p = vg in generated_gt, vp in generated_pred
            if gen_g and gen_p:
                step_error |= var_map.get(vp) != vg
            elif gen_g != gen_p:
                step_error = True
        if step_error:
            errors += 1
        else:
            var_map[p.output] = g.output
    errors += abs(len(gt) - len(pred))
    return 1 - errors / max(len(gt), len(pred))


# ------------------------------------------------------------------ paper SS / PA

def match_actions(gt: Sequence[str], pred: Sequence[str]) -> list[tuple[int, int]]:
    """(gt index, pred index) pairs: the k-th occurrence of a name in gt with its k-th occurrence in pred."""
    where: dict[str, deque[int]] = defaultdict(deque)
    for j, name in enumerate(pred):
        where[name].append(j)
    return [(i, where[name].popleft()) for i, name in enumerate(gt) if where[name]]


def _paper_ss(gt: Sequence[str], pred: Sequence[str]) -> float:
    pairs = match_actions(gt, pred)
    m = len(pairs)
    if m == 0:
        return 0.0
    order = [j for _, j in pairs]
    discordant = sum(1 for a, b in combinations(range(m), 2) if order[a] > order[b])
    kendall = 1.0 - discordant / (m * (m - 1) / 2) if m > 1 else 1.0
    return kendall * m / max(len(gt), len(pred))


_NUM_UNIT = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)\s*(.*)$")


_SPACES = re.compile(r"\s+")
_NUMBER_SPACE_UNIT = re.compile(r"(\d)\s+(?=[^\d\s])")


def normalise_literal(value: str) -> str:
    """Quotes stripped, casefolded, whitespace collapsed, micro sign unified, no space between a number and
    its unit ("10 mL" -> "10ml")."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    value = _SPACES.sub(" ", value.strip().casefold().replace("\u00b5", "\u03bc"))
    return _NUMBER_SPACE_UNIT.sub(r"\1", value)


def literals_equal(a: str, b: str, rel_tol: float = 1e-6) -> bool:
    na, nb = normalise_literal(a), normalise_literal(b)
    if na == nb:
        return True
    ma, mb = _NUM_UNIT.match(na), _NUM_UNIT.match(nb)
    if ma and mb and ma.group(2) == mb.group(2):
        return math.isclose(float(ma.group(1)), float(mb.group(1)), rel_tol=rel_tol, abs_tol=1e-12)
    return False


def _paper_pa(gt: Sequence[Step], pred: Sequence[Step], rel_tol: float = 1e-6) -> float:
    pairs = match_actions([s.action for s in gt], [s.action for s in pred])
    var_map = {pred[j].output: gt[i].output for i, j in pairs}
    generated_gt = {s.output for s in gt}
    generated_pred = {s.output for s in pred}
    matched_pred = {j: i for i, j in pairs}
    matched_gt = {i: j for i, j in pairs}
    correct = total = 0
    for i, g in enumerate(gt):
        p = pred[matched_gt[i]] if i in matched_gt else None
        for key, vg in g.inputs.items():
            total += 1
            if p is None or key not in p.inputs:
                continue
            vp = p.inputs[key]
            gen_g, gen_p = vg in generated_gt, vp in generated_pred
            if gen_g and gen_p:
                correct += var_map.get(vp) == vg
            elif not gen_g and not gen_p:
                correct += literals_equal(vg, vp, rel_tol)
        if p is not None:
            total += len(set(p.inputs) - set(g.inputs))
    total += sum(len(s.inputs) for j, s in enumerate(pred) if j not in matched_pred)
    if total == 0:
        return 1.0 if len(pairs) == len(gt) == len(pred) and gt else 0.0
    return correct / total


# ------------------------------------------------------------------ soft SS / PA (SGI-Bench@3854aa9)

@dataclass(frozen=True)
class SoftScores:
    """One item's soft scores (0-1) and the counts upstream writes beside them (``soft_*`` fields)."""

    ss: float
    pa: float
    matched: int
    action_recall: float
    action_precision: float
    parameter_recall: float
    parameter_precision: float

    @property
    def final(self) -> float:
        return (self.ss + self.pa) / 2


def normalise_action(name: str) -> str:
    """Action names as the soft alignment compares them: lower-cased, whitespace collapsed (upstream's
    ``normalize_action``)."""
    return _SPACES.sub(" ", name.strip().lower())


def align_actions(gt: Sequence[str], pred: Sequence[str]) -> list[tuple[int, int]]:
    """(gt index, pred index) pairs of a longest common subsequence of the normalised action names. Among equal
    subsequences the one upstream's backtrack picks: from the end, a matching pair is taken when it extends the
    subsequence, else the gt step is skipped whenever that keeps the length, else the pred step."""
    a, b = [normalise_action(x) for x in gt], [normalise_action(x) for x in pred]
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, name in enumerate(a):
        above, row = table[i], table[i + 1]  # locals and no max() call: a long answer makes this loop long
        for j, other in enumerate(b):
            if name == other:
                row[j + 1] = above[j] + 1
            else:
                row[j + 1] = above[j + 1] if above[j + 1] >= row[j] else row[j]
    pairs = []
    i, j = len(a), len(b)
    while i and j:
        if a[i - 1] == b[j - 1] and table[i][j] == table[i - 1][j - 1] + 1:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif table[i - 1][j] >= table[i][j - 1]:
            i -= 1
        else:
            j -= 1
    return pairs[::-1]


def _aligned_parameter_score(gt: Sequence[Step], pred: Sequence[Step], pairs: Sequence[tuple[int, int]],
                             literal_match: Any) -> float:
    """The summed per-pair parameter score (Dice of the name sets x share of agreeing values), in pair order
    with a plain float sum, as upstream accumulates it."""
    generated_gt = {s.output for s in gt}
    generated_pred = {s.output for s in pred}
    var_map: dict[str, str] = {}
    total = 0.0
    for gi, pj in pairs:
        g, p = gt[gi], pred[pj]
        keys_gt, keys_pred = set(g.inputs), set(p.inputs)
        shared = keys_gt & keys_pred
        no_keys = not keys_gt and not keys_pred
        key_score = 1.0 if no_keys else 2 * len(shared) / (len(keys_gt) + len(keys_pred))
        if not shared:
            value_score = 1.0 if no_keys else 0.0
        else:
            agree = 0
            for key in shared:
                vg, vp = g.inputs[key], p.inputs[key]
                gen_g, gen_p = vg in generated_gt, vp in generated_pred
                if gen_g and gen_p:
                    agree += var_map.get(vp) == vg
                elif not gen_g and not gen_p:
                    agree += literal_match(vg, vp)
            value_score = agree / len(shared)
        total += key_score * value_score
        var_map[p.output] = g.output  # every aligned pair extends the map, right or wrong
    return total


def soft_scores(gt: Sequence[Step], pred: Sequence[Step], mode: str = "official",
                rel_tol: float = 1e-6) -> SoftScores:
    """Soft SS and PA of two parsed protocols. official: SGI-Bench@3854aa9 ``compare_exp_steps_soft`` (literals
    always agree); paper: literals compared by :func:`literals_equal`."""
    check_mode(mode)
    n_gt, n_pred = len(gt), len(pred)
    if n_gt == 0 or n_pred == 0:
        both = 1.0 if n_gt == n_pred else 0.0
        return SoftScores(both, both, 0, both, both, both, both)
    pairs = align_actions([s.action for s in gt], [s.action for s in pred])
    if mode == "official":
        def literal_match(a: str, b: str) -> bool:
            return True
    else:
        def literal_match(a: str, b: str) -> bool:
            return literals_equal(a, b, rel_tol)
    matched = len(pairs)
    action_recall, action_precision = matched / n_gt, matched / n_pred
    score = _aligned_parameter_score(gt, pred, pairs, literal_match)
    parameter_recall, parameter_precision = score / n_gt, score / n_pred
    return SoftScores(action_recall * action_precision, parameter_recall * parameter_precision, matched,
                      action_recall, action_precision, parameter_recall, parameter_precision)


_NO_SOFT = SoftScores(0.0, 0.0, 0, 0.0, 0.0, 0.0, 0.0)


def _soft_fields(soft: SoftScores) -> dict[str, Any]:
    return {"soft_ss": soft.ss, "soft_pa": soft.pa, "soft_final": soft.final, "soft_matched": soft.matched,
            "soft_action_recall": soft.action_recall, "soft_action_precision": soft.action_precision,
            "soft_parameter_recall": soft.parameter_recall, "soft_parameter_precision": soft.parameter_precision}


# ------------------------------------------------------------------ items and corpus

def score_item(reference: str, response: str | None, mode: str = "official",
               rel_tol: float = 1e-6) -> dict[str, Any]:
    """SS, PA and final (0-1), their soft counterparts (``soft_ss``, ``soft_pa``, ``soft_final`` and upstream's
    recall/precision terms) for one item plus diagnostics (``status``: ok, no_response, unparsable, bad_reference,
    upstream_crash)."""
    check_mode(mode)
    if response is None and mode == "paper":
        return {"ss": 0.0, "pa": 0.0, "final": 0.0, "status": "no_response", "n_gt": 0, "n_pred": 0,
                **_soft_fields(_NO_SOFT)}
    gt = parse_protocol(reference, mode)
    # official: upstream's model_answer ("None" for a failed generation, the whole reply after an unclosed tag)
    answer = official_model_answer(response) if mode == "official" else extract_answer_block(response or "")
    pred = parse_protocol(answer, mode)
    status = "no_response" if response is None else "ok" if pred else "unparsable"
    if not gt:
        status = "bad_reference"
    if mode == "official":
        ss = _official_ss([s.action for s in gt], [s.action for s in pred])
        soft = soft_scores(gt, pred, mode)
        try:
            pa = _official_pa(gt, pred)
        except ZeroDivisionError:  # upstream's script stops before its soft scores
            ss, pa, status, soft = 0.0, 0.0, "upstream_crash", _NO_SOFT
    else:
        ss = _paper_ss([s.action for s in gt], [s.action for s in pred]) if gt else 0.0
        pa = _paper_pa(gt, pred, rel_tol) if gt else 0.0
        soft = soft_scores(gt, pred, mode, rel_tol) if gt else _NO_SOFT
    return {"ss": ss, "pa": pa, "final": (ss + pa) / 2, "status": status, "n_gt": len(gt), "n_pred": len(pred),
            **_soft_fields(soft)}


def wet_experiment_scores(predictions: Sequence[str | None], references: Sequence[str], *,
                          mode: str = "official", rel_tol: float = 1e-6) -> ScoreReport:
    """SS, PA and final ×100 over all items, and their soft counterparts (``soft_ss``, ``soft_pa``,
    ``soft_final``; official: SGI-Bench@3854aa9, named in ``params["soft_upstream_commit"]``, with the two
    length-mismatch counts upstream prints beside them). Failed generations and unusable references count as
    failed (official mode scores a failed generation as upstream does, paper mode scores it 0); unparsable
    protocols are scored (0) and counted in ``n_unparsable``. ``final_upstream`` leaves out failed generations and
    upstream crashes: the pinned code keeps failed generations, but published denominators suggest some runs
    dropped them (spec §6 "Denominator caveat")."""
    check_mode(mode)
    check_lengths("predictions", predictions, "references", references)
    items = [score_item(str(r), p, mode, rel_tol) for p, r in zip(predictions, references)]
    failed = [it["status"] in ("no_response", "bad_reference", "upstream_crash") for it in items]
    values: dict[str, Any] = {
        "ss": pct(mean([it["ss"] for it in items])),
        "pa": pct(mean([it["pa"] for it in items])),
        "final": pct(mean([it["final"] for it in items])),
        "soft_ss": pct(mean([it["soft_ss"] for it in items])),
        "soft_pa": pct(mean([it["soft_pa"] for it in items])),
        "soft_final": pct(mean([it["soft_final"] for it in items])),
        "n_unparsable": sum(it["status"] == "unparsable" for it in items),
        "per_item": items,
    }
    if mode == "official":
        kept = [it for it, f in zip(items, failed) if it["status"] not in ("no_response", "upstream_crash")]
        values["final_upstream"] = pct(mean([it["final"] for it in kept]))
        values["n_upstream_dropped"] = sum(it["status"] == "no_response" for it in items)
        values["n_upstream_crash"] = sum(it["status"] == "upstream_crash" for it in items)
        # the two counts upstream prints after its soft scores
        mismatched = [it for it in items if it["n_gt"] != it["n_pred"]]
        values["n_length_mismatch"] = len(mismatched)
        values["n_length_mismatch_soft_ss_nonzero"] = sum(it["soft_ss"] > 0 for it in mismatched)
    n = len(items)
    return ScoreReport(METRIC, mode, values, Coverage(n, n - sum(failed), sum(failed)),
                       params={"rel_tol": rel_tol} if mode == "paper" else {"soft_upstream_commit": SOFT_COMMIT})
