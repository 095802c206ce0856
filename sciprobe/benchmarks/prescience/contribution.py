"""T1 contribution generation: prompt, parser, scorer and the multi-call runner (spec ``prescience.md`` §2 T1, §3).

The prompt is sciprobe's own wording of the task (E.2 is not reproduced): a system message casting the model as
an experienced ML researcher, the answer format ``Reasoning:`` / ``Title:`` / ``Abstract:``, and a user message
listing each influential reference as ``Background Paper {i}:\\nTitle: {t}\\nAbstract: {a}\\n\\n`` (the spec's
input format). No few-shot examples.

Parsing: the last ``Title:`` label and the ``Abstract:`` after it (case-insensitive, markdown emphasis ignored);
anything else is a failure with an empty generation, which is still judged and scores 0 on ROUGE-L/BERTScore
(upstream behaviour after its retries; decision: no retries, since a cached identical request would return the
same answer).

Runner ``prescience_contribution`` (``sciprobe evaluate prescience:contribution_generation --model SPEC --judge
SPEC``): one generation call per target, then one LACER judge call per generation and judge (several judges:
``--judge "SPEC1;SPEC2"``), everything through the cached client. The judge prompt comes from
:func:`sciprobe.benchmarks.prescience.lacer_judge.load_template`: upstream's template and system message (from
``--upstream-dir`` when given), unless ``$SCIPROBE_LACER_TEMPLATE`` names another judge prompt.
Scores per mode (``official``/``corrected`` LACER parsing; ROUGE-L and BERTScore do not depend on the mode):
``lacer`` (the multi-judge average over ids every judge scored, or the single judge), ``lacer[<judge>]``,
bootstrap CI, ``rougeL`` (official rouge-score rule) and ``bertscore_f1`` (the bundled MiniLM, offline, not
comparable with published deberta numbers).

Per-task options ``context`` (``--context``), ``context_seed`` and ``reference_sets``: the context variants of
:mod:`.context_variants` (more than the influential references, all from H^{<t_p}; recorded in provenance).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciprobe.core.declaration import Parsed, Runner
from sciprobe.core.errors import SciprobeError
from sciprobe.results.evidence import error_is_call_failure, mark_call_failure, unanswered
from sciprobe.benchmarks.prescience.contribution_prompt import SYSTEM  # noqa: F401 - part of this module's interface

if TYPE_CHECKING:  # the declaration imports this module for CONTRIBUTION: the rest loads when it runs
    from sciprobe.scoring.score_report import ScoreReport

__all__ = [
    "PROMPT_VERSION",
    "contribution_gold",
    "contribution_messages",
    "parse_contribution",
    "CONTRIBUTION",
    "ContributionRunner",
    "run_contribution_task",
    "score_records",
]

PROMPT_VERSION = "sciprobe-t1-1"



def contribution_messages(row: Mapping[str, Any], examples: Sequence[Mapping] = ()) -> list[dict[str, str]]:
    user = "".join(f"Background Paper {i}:\nTitle: {ref.get('title') or ''}\nAbstract: {ref.get('abstract') or ''}\n\n"
                   for i, ref in enumerate(row["references"], 1))
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user.rstrip("\n")}]


_TITLE = re.compile(r"^[\s>#*_-]*title[*_\s]*:[*_\s]*", re.IGNORECASE | re.MULTILINE)
_ABSTRACT = re.compile(r"^[\s>#*_-]*abstract[*_\s]*:[*_\s]*", re.IGNORECASE | re.MULTILINE)


def parse_contribution(text: str | None) -> Parsed:
    """``{"title", "abstract"}`` from a ``Reasoning:/Title:/Abstract:`` answer, or a failure."""
    if not text:
        return Parsed(None, "failed:empty", {"official": None})
    titles = list(_TITLE.finditer(text))
    if not titles:
        return Parsed(None, "failed:no_title", {"official": None})
    t = titles[-1]
    abstract = _ABSTRACT.search(text, t.end())
    if abstract is None:
        return Parsed(None, "failed:no_abstract", {"official": None})
    title = text[t.end():abstract.start()].strip().strip("*_ ").strip()
    body = text[abstract.end():].strip().strip("*_ ").strip()
    if not title or not body:
        return Parsed(None, "failed:empty_field", {"official": None})
    value = {"title": title, "abstract": body}
    return Parsed(value, "official", {"official": value})


def _own_messages(row: Mapping[str, Any], examples: Sequence[Mapping] = ()) -> list[dict[str, str]]:
    return contribution_messages(row, examples)


def contribution_gold(row: Mapping[str, Any]) -> dict[str, str]:
    return {"title": row.get("title") or "", "abstract": row.get("abstract") or ""}


def _text(x: Any) -> str:
    if not x:
        return ""
    if isinstance(x, str):
        x = json.loads(x)
    return f"{x.get('title') or ''} {x.get('abstract') or ''}".strip()


def _maybe_json(x: Any) -> Any:
    return json.loads(x) if isinstance(x, str) and x[:1] in "{[" else x


def score_records(records: Sequence[Mapping[str, Any]], mode: str = "official", *, bertscore: bool = True
                  ) -> ScoreReport:
    """Records carry ``gold`` and ``prediction`` (``{"title", "abstract"}`` or None) and, from the runner,
    ``lacer_replies`` (``{judge_id: reply or None}``, JSON text in stored details)."""
    from sciprobe.benchmarks.prescience.scoring.lacer import MODES, average_judges, lacer_from_replies
    from sciprobe.scoring.score_report import ScoreReport
    from sciprobe.scoring.text_similarity import rouge_l

    if mode not in MODES:
        raise SciprobeError(f"unknown mode {mode!r} for contribution generation ({', '.join(MODES)})")
    if not records:
        raise SciprobeError("no records to score")
    preds = [_text(_maybe_json(r.get("prediction"))) or None for r in records]
    golds = [_text(_maybe_json(r["gold"])) for r in records]
    rouge = rouge_l(preds, golds)
    values: dict[str, Any] = {"rougeL": rouge.values["rougeL"], "per_item_rougeL": rouge.values["per_item_rougeL"]}
    notes = list(rouge.notes)
    params: dict[str, Any] = {"rouge": rouge.params}
    if bertscore:
        from sciprobe.scoring.text_similarity import bertscore

        bert = bertscore(preds, golds, offline=True)  # scores each pair once per process (every mode, resample)
        values["bertscore_f1"] = bert.values["bertscore_f1"]
        values["per_item_bertscore_f1"] = bert.values["per_item_bertscore_f1"]
        params["bertscore"] = bert.params
        notes += [n for n in bert.notes if n not in notes]
    values["n_generation_failed"] = sum(1 for p in preds if p is None)
    replies = [_maybe_json(r.get("lacer_replies")) for r in records]
    coverage = rouge.coverage
    if any(replies):
        ids = [str(r["id"]) for r in records]
        judges = list(dict.fromkeys(j for rep in replies if rep for j in rep))
        table = {}
        for j in judges:
            report = lacer_from_replies([(rep or {}).get(j) for rep in replies], judge_id=j, mode=mode, ids=ids)
            table[j] = dict(zip(ids, report.values["per_item"]))
            values[f"lacer[{j}]"] = report.values["lacer"]
            values[f"lacer_failed[{j}]"] = report.coverage.n_failed
            notes += [f"{j}: {n}" for n in report.notes]
        avg = average_judges(table, mode=mode)
        values.update({"lacer": avg.values["lacer"], "lacer_ci95_low": avg.values["ci95_low"],
                       "lacer_ci95_high": avg.values["ci95_high"],
                       "lacer_per_item": dict(zip(avg.values["ids"], avg.values["per_item"]))})
        coverage = avg.coverage
        params["lacer"] = {**avg.params, "mode": mode}
        notes += avg.notes
    else:
        values.update({"lacer": None, "lacer_ci95_low": None, "lacer_ci95_high": None})
        notes.append("no judge replies: LACER not computed (run with --judge)")
    return ScoreReport(metric="contribution_generation", mode=mode, values=values, coverage=coverage, params=params,
                       notes=notes)


def _judge_specs(judge: str | None) -> list[str]:
    from sciprobe.llm.spec import SPEC_SEPARATOR, split_specs

    specs = split_specs(judge)
    if not specs:
        raise SciprobeError("prescience:contribution_generation is scored with LACER: pass --judge SPEC "
                            f"(several judges: 'SPEC1{SPEC_SEPARATOR}SPEC2')")
    return specs


def run_contribution_task(ctx: Any) -> list[Any]:
    """What :class:`ContributionRunner` runs; ``ctx`` is its ``RunContext``.
    Judges: ``per_task[ref]["judges"]`` (a list of specs) or ``--judge`` (``;``-separated)."""
    from sciprobe.benchmarks.prescience.lacer_judge import judge_pairs, load_template
    from sciprobe.llm.spec import SPEC_SEPARATOR
    from sciprobe.llm.types import Request, canonical_json, sha256_hex
    from sciprobe.results.write import TaskResult

    task, data, client, base, modes, ref = ctx.task, ctx.data, ctx.client, ctx.base, ctx.modes, ctx.ref
    specs = list(ctx.options.get("judges") or _judge_specs(ctx.request.judge))
    # before any model call: fail fast; --upstream-dir supplies upstream's judge prompt too
    template = load_template(ctx.options.get("lacer_template"),
                             upstream_dir=ctx.options.get("upstream_dir", ctx.request.upstream_dir))
    judges = [ctx.judge_client(s) for s in specs]
    params = dict(ctx.params)
    rows = data.rows
    # the task's prompt: sciprobe's wording, or upstream's with --prompts upstream (run_task sets it)
    build = task.build_messages or _own_messages
    context, contexts, reference_files = context_of_run(ctx)
    if contexts is None:
        messages = [build(r, ()) for r in rows]
    else:
        from sciprobe.benchmarks.prescience.context_variants import context_messages

        messages = [context_messages(c, context) for c in contexts]
    requests = [Request.of(m, dict(params), item_id=str(r["corpus_id"])) for m, r in zip(messages, rows)]
    completions = client.complete_many(requests, desc=task.name)
    parsed = [parse_contribution(c.text) if c.ok else unanswered(c) for c in completions]
    ids = [str(r["corpus_id"]) for r in rows]
    golds = [contribution_gold(r) for r in rows]
    run = judge_pairs(ids, [p.value for p in parsed], golds, judges, template, modes=tuple(modes))
    records = []
    for k, (row, c, p) in enumerate(zip(rows, completions, parsed)):
        records.append({
            "id": ids[k], "date": row.get("date"), "gold": golds[k], "prediction": p.value, "parse_path": p.path,
            "response": c.text, "error": c.error, "cached": c.cached, "request_hash": c.request_hash,
            "lacer_replies": {j: run.replies[j][k] for j in run.replies},
            "lacer_errors": {j: run.errors[j][k] for j in run.errors},
            "lacer_official": {j: run.per_judge[j]["official"].values["per_item"][k]
                               for j in run.per_judge if "official" in run.per_judge[j]},
        })
        if contexts is not None:  # what this target was shown (ids and dates: the leak check reads them)
            from sciprobe.benchmarks.prescience.context_variants import verbatim_leak

            records[-1]["context"] = {"counts": contexts[k].counts, "verbatim_leak": verbatim_leak(messages[k], row),
                                      "shown": [[p["corpus_id"], p["date"]] for p in contexts[k].retrieved()]}
        judge_failed = next(((j, e[k]) for j, e in run.errors.items() if error_is_call_failure(e[k])), None)
        if judge_failed:  # no verdict is no evidence: the item is left out, never scored as a wrong answer
            mark_call_failure(records[-1], judge_failed[1], f"judge {judge_failed[0]}")
    scores = {mode: task.score(records, mode) for mode in modes}
    for mode in modes:
        scores[mode].params["lacer"] = {**scores[mode].params.get("lacer", {}), **run.prompt,
                                        "judge_ids": [j.model_id for j in judges]}
    provenance = {**base, "judge_id": SPEC_SEPARATOR.join(j.model_id for j in judges),
                  "judge_ids": [j.model_id for j in judges], "lacer_template_sha256": run.template_sha256,
                  "lacer_template_source": run.template_source,
                  "lacer_system_prompt_sha256": template.system_sha256,
                  "lacer_system_prompt_source": template.system_source,
                  "prompt_version": PROMPT_VERSION if base.get("prompt_set", "sciprobe") == "sciprobe"
                  else base.get("prompt_version"),
                  "prompt_hash": sha256_hex(canonical_json([list(r.messages) for r in requests])),
                  "n_calls": len(requests) + len(ids) * len(judges),
                  "judge_usage": {j.model_id: j.stats.as_dict() for j in judges}}
    if contexts is not None:
        from sciprobe.benchmarks.prescience.context_variants import summary

        # another input than the task's: the prompt version says so wherever results are compared
        provenance["prompt_version"] = f"{PROMPT_VERSION}+context:{context.label}"
        provenance["context"] = {**context.provenance(), **summary(contexts),
                                 "reference_set_files": reference_files,
                                 "n_verbatim_leaks": sum(1 for r in records if r["context"]["verbatim_leak"])}
    if template.warnings:
        provenance["prompt_warnings"] = [*base.get("prompt_warnings", []), *template.warnings]
    return [TaskResult(ref, 0, scores, records, provenance, "lacer", default_mode=modes[0])]


def context_of_run(ctx: Any) -> tuple[Any, list[Any] | None, dict[str, str]]:
    """The run's context variant (per-task option ``context``) and, unless it is the default, every target's
    context from H^{<t_p} of the run's corpus (:mod:`.context_variants`)."""
    from sciprobe.benchmarks.prescience.context_variants import parse_context

    options = ctx.options
    spec = parse_context(options.get("context"), seed=int(options.get("context_seed", 0)))
    if spec.is_default:
        return spec, None, {}
    if ctx.base.get("prompt_set", "sciprobe") != "sciprobe":
        raise SciprobeError("--context other than 'influential' runs with sciprobe's prompts only: upstream's "
                            "expanded-context templates are not pinned (see the PreScience README)")
    import sciprobe.benchmarks.prescience.context_variants as cv
    from sciprobe.benchmarks.prescience.forecast_context import load_corpus

    location = ctx.data.location
    corpus = load_corpus(location, None if Path(location).exists() else ctx.data.revision)
    paths = dict(options.get("reference_sets") or {})
    needed = {s for s in (spec.references, spec.match_size) if s in ("all", "impact")}
    if ctx.data.source.startswith("sample:"):  # the bundled sample carries invented sets
        from sciprobe.core.registry import get_benchmark

        folder = Path(get_benchmark("prescience").sample_source)
        paths = {**{n: str(folder / f) for n, f in cv.SAMPLE_REFERENCE_FILES.items() if n in needed}, **paths}
    sets = cv.load_reference_sets({n: p for n, p in paths.items() if n in needed})
    embeddings = cv.default_embeddings(corpus.test) if "related" in spec.extras else None
    contexts = [cv.target_context(corpus.test, row, spec, sets, embeddings) for row in ctx.data.rows]
    return spec, contexts, {n: Path(p).name for n, p in paths.items() if n in needed}


class ContributionRunner(Runner):
    """T1: one generation per target, then one LACER judge call per generation and judge (``--judge``)."""

    name = "prescience_contribution"
    kind = "judged"
    judge = "required"
    judge_check = "sciprobe.benchmarks.prescience.judge_check:LACER_CHECK"

    def run(self, ctx: Any) -> list[Any]:
        return run_contribution_task(ctx)


CONTRIBUTION = ContributionRunner()
