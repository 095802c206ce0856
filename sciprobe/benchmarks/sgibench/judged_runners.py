"""SGI-Bench runners for the single-call tasks that also have judged metrics (shared/spec/sgibench.md §3.1,
§3.5, §3.8, §4.2, §4.3, §4.6, §8 "Deep research", "Experimental reasoning"):

- ``sgibench:deep_research`` (runner ``sgi_deep_research``): one answer per item (the generic single-call
  runner), then, with a judge, the answer re-formatting parser (§4.2; its output is EM's second candidate, as
  upstream), the step-level judge (§4.3) and the answer-level judge (``llm_judge``, SGI-Bench@5d562f6: only for
  items whose exact match is 0) -- once per judge of the panel (``--judge 'A;B'``);
- ``sgibench:experimental_reasoning`` (runner ``sgi_reasoning``): one answer per item with the item's images
  as OpenAI content parts (PNG base64 data URLs, images before the text, §3.5), then the reasoning-validity
  judge (§4.6), which also receives the images.

Judges are built only through ``ctx.judge_client(spec)`` (shared response cache and budget), the panel comes
from ``ctx.judge_specs()``. Every judge reply is stored raw in the records (``sla_replies`` / ``rv_replies``:
``{judge id: reply or None}``) and scored by the task's pure scorer (:mod:`sciprobe.benchmarks.sgibench.judged`).

Images and text-only models (decision, documented in the dataset and metric cards): the bundled local models
(``local/...``) are text-only, and their chat template cannot take content lists (SmolLM2's template raises
``TypeError: can only concatenate str (not "list") to str``, which would fail every item). For such a model,
or with the per-task option ``images="drop"``, every image is replaced by a placeholder line
(:data:`sciprobe.benchmarks.sgibench.prompts.IMAGE_PLACEHOLDER`) and the record says ``images_dropped``; the
score notes repeat it. ``images="send"`` forces content parts, ``"auto"`` (default) decides by the model. The
same rule applies to a text-only judge (``rv_images_dropped``). The response cache keys on the canonical JSON of
the messages, content lists included, so a different image is a different cache entry.

Per-task options (``EvaluationRequest.per_task["sgibench:deep_research"]`` etc.): ``judges`` (a panel, else
``--judge``), ``answer_parser`` (deep research: ``True``/absent = the first judge, ``False`` = none, or a model
spec), ``judge_params`` (default ``{"temperature": 0.0}``, as upstream), ``images`` (reasoning).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sciprobe.core.declaration import Runner
from sciprobe.core.errors import SciprobeError
from sciprobe.results.evidence import error_is_call_failure, mark_call_failure

JUDGE_PARAMS: dict[str, Any] = {"temperature": 0.0}  # upstream sends temperature 0 to o4-mini / gpt-4.1-mini
IMAGE_POLICIES = ("auto", "send", "drop")


# ------------------------------------------------------------------ helpers

def is_text_only(client: Any) -> bool:
    """The bundled local models are text-only; remote models are assumed to take images (use
    ``images="drop"`` for a remote text-only model)."""
    spec = getattr(client, "spec", None)
    return bool(getattr(spec, "is_local", False))


def image_policy(client: Any, option: str | None) -> str:
    """``"send"`` or ``"drop"`` for this client under the option ``images`` (auto/send/drop)."""
    option = (option or "auto").lower()
    if option not in IMAGE_POLICIES:
        raise SciprobeError(f"images={option!r}: use one of {', '.join(IMAGE_POLICIES)}")
    if option == "auto":
        return "drop" if is_text_only(client) else "send"
    return option


def flatten_for_text_model(messages: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Content lists -> plain strings (text parts kept, each image part replaced by a placeholder line);
    returns the messages and the number of images replaced."""
    from sciprobe.benchmarks.sgibench.prompts import IMAGE_PLACEHOLDER

    out, dropped = [], 0
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            out.append(dict(message))
            continue
        n_images = sum(1 for p in content if isinstance(p, Mapping) and p.get("type") != "text")
        lines, k = [], 0
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text":
                lines.append(str(part.get("text", "")))
            else:
                k += 1
                lines.append(IMAGE_PLACEHOLDER.format(k=k, n=n_images))
        dropped += n_images
        out.append({**message, "content": "\n".join(lines)})
    return out, dropped


def _image_parts(images: Sequence[Any]) -> tuple[list[dict[str, Any]], int]:
    """Content parts of the readable images and how many were missing or unreadable."""
    from sciprobe.benchmarks.sgibench.scoring.reasoning import image_part

    parts, missing = [], 0
    for image in images or []:
        if image is None:
            missing += 1
            continue
        try:
            parts.append(image_part(image))
        except Exception:  # noqa: BLE001 - an unreadable image is counted, never a crashed batch
            missing += 1
    return parts, missing


def _panel(ctx: Any) -> list[tuple[str, Any]]:
    """[(judge id, client)] from ``ctx.judge_specs()``; repeated model ids get ``#2``, ``#3`` suffixes."""
    panel: list[tuple[str, Any]] = []
    seen: dict[str, int] = {}
    for spec in ctx.judge_specs():
        client = ctx.judge_client(spec)
        seen[client.model_id] = seen.get(client.model_id, 0) + 1
        judge_id = client.model_id if seen[client.model_id] == 1 else f"{client.model_id}#{seen[client.model_id]}"
        panel.append((judge_id, client))
    return panel


def ask(client: Any, messages: Sequence[list[dict[str, Any]] | None], item_ids: Sequence[str], params: Mapping,
        desc: str) -> tuple[list[str | None], list[str | None]]:
    """One batch through ``client`` (cached); ``None`` messages are not asked. Returns (texts, errors)."""
    todo = [i for i, m in enumerate(messages) if m is not None]
    texts: list[str | None] = [None] * len(messages)
    errors: list[str | None] = [None] * len(messages)
    if not todo:
        return texts, errors
    from sciprobe.llm.types import Request  # here: the declaration imports this module for its runners

    requests = [Request.of(messages[i], dict(params), item_id=item_ids[i]) for i in todo]  # type: ignore[arg-type]
    for i, completion in zip(todo, client.complete_many(requests, desc=desc)):
        if completion.ok and completion.text is not None:
            texts[i] = completion.text
        else:
            errors[i] = completion.error or "judge returned no text"
    return texts, errors


def mark_judge_failures(records: Sequence[dict[str, Any]], errors: Sequence[str | None], who: str) -> None:
    """An item whose judge call got no answer has no verdict: it is left out of the score, never counted as a
    wrong answer (sciprobe.results.evidence)."""
    for record, error in zip(records, errors):
        if error_is_call_failure(error):
            mark_call_failure(record, str(error), who)


def _keep_replies(judge_id: str, texts: Sequence[str | None], errors: Sequence[str | None],
                  messages: Sequence[Any], replies: list[dict[str, str | None]],
                  failures: list[dict[str, str]]) -> None:
    """File one judge's replies per item; an item without a model response to judge is a recorded failure."""
    for i, (text, error) in enumerate(zip(texts, errors)):
        replies[i][judge_id] = text
        if error is not None:
            failures[i][judge_id] = error
        elif messages[i] is None:
            failures[i][judge_id] = "no model response to judge"


def _usage(panel: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    return {jid: c.stats.as_dict() for jid, c in panel if hasattr(c, "stats")}


# ------------------------------------------------------------------ deep research

def _answer_parser(ctx: Any, panel: Sequence[tuple[str, Any]]) -> tuple[str, Any] | None:
    option = ctx.options.get("answer_parser", True)
    if option is False or (isinstance(option, str) and option.lower() in ("", "none", "false", "off")):
        return None
    if isinstance(option, str) and option.lower() not in ("true", "judge"):
        client = ctx.judge_client(option)
        return client.model_id, client
    return panel[0] if panel else None


def answer_judge_requests(rows: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]],
                          responses: Sequence[str | None]) -> list[list[dict[str, Any]] | None]:
    """The answer-level judge's messages per item (None: not asked, the answer is missing or matches exactly in
    some mode); also what ``sciprobe judge-check`` asks another judge."""
    from sciprobe.benchmarks.sgibench.scoring.deep_research import (
        answer_judge_messages, exact_match_item, extract_answer)

    messages: list[list[dict[str, Any]] | None] = []
    for row, record, resp in zip(rows, records, responses):
        reference, parsed = str(row["answer"]), record.get("parsed_answer")
        if resp is None or all(exact_match_item(reference, resp, parsed, m) for m in ("official", "paper")):
            messages.append(None)
            continue
        messages.append(answer_judge_messages(row["question"], reference, extract_answer(resp), parsed))
    return messages


def _answer_judge(records: list[dict[str, Any]], rows: Sequence[Mapping[str, Any]], responses: Sequence[str | None],
                  panel: Sequence[tuple[str, Any]], ids: Sequence[str], params: Mapping[str, Any]) -> int:
    """The answer-level judge (``llm_judge``, SGI-Bench@5d562f6): asked about every answered item whose exact
    match is 0 in some mode (an exact match scores 1 without a call); replies stored per judge in
    ``answer_judge_replies``. Returns the number of requests."""
    messages = answer_judge_requests(rows, records, responses)
    replies: list[dict[str, str | None]] = [{} for _ in rows]
    failures: list[dict[str, str]] = [{} for _ in rows]
    for judge_id, client in panel:
        texts, errors = ask(client, messages, ids, params, f"sgi answer judge {judge_id}")
        for i, (text, error) in enumerate(zip(texts, errors)):
            replies[i][judge_id] = text
            if error is not None:
                failures[i][judge_id] = error
    for record, reply, failure in zip(records, replies, failures):
        record["answer_judge_replies"] = json.dumps(reply, ensure_ascii=False)
        record["answer_judge_errors"] = json.dumps(failure, ensure_ascii=False)
    return sum(m is not None for m in messages) * len(panel)


def run_deep_research(ctx: Any) -> list[Any]:
    """Answers, then (with a judge) the answer parser and the step judge; one :class:`TaskResult`."""
    from sciprobe.run.runners.single_call import run_single_call
    from sciprobe.benchmarks.sgibench.scoring.deep_research import (
        extract_answer, reformat_messages, step_judge_messages)

    rows = ctx.data.rows
    records, phash, n_calls = run_single_call(ctx.task, rows, ctx.data.fewshot, ctx.client, ctx.params)
    panel = _panel(ctx)
    parser = _answer_parser(ctx, panel)
    params = dict(ctx.options.get("judge_params") or JUDGE_PARAMS)
    ids = [str(r["id"]) for r in rows]
    responses = [r["response"] if r.get("error") is None else None for r in records]

    if parser is not None:
        parser_id, parser_client = parser
        messages = [reformat_messages(extract_answer(resp), str(row["answer"])) if resp is not None else None
                    for row, resp in zip(rows, responses)]
        texts, errors = ask(parser_client, messages, ids, params, f"sgi answer parser {parser_id}")
        for record, text, error in zip(records, texts, errors):
            record["parsed_answer"] = text.strip() if text is not None else None
            record["parser_error"] = error
            record["parser_id"] = parser_id
        mark_judge_failures(records, errors, f"answer parser {parser_id}")

    replies: list[dict[str, str | None]] = [{} for _ in rows]
    failures: list[dict[str, str]] = [{} for _ in rows]
    messages = [step_judge_messages(row["question"], list(row.get("steps") or []), str(row["answer"]), resp)
                if resp is not None else None for row, resp in zip(rows, responses)]
    for judge_id, client in panel:
        texts, errors = ask(client, messages, ids, params, f"sgi step judge {judge_id}")
        _keep_replies(judge_id, texts, errors, messages, replies, failures)
        mark_judge_failures(records, errors, f"judge {judge_id}")
    judge_ids = [jid for jid, _ in panel]
    for record, reply, failure in zip(records, replies, failures):
        record["judge_ids"] = judge_ids
        record["sla_replies"] = json.dumps(reply, ensure_ascii=False)
        record["sla_errors"] = json.dumps(failure, ensure_ascii=False)
    n_answer_calls = _answer_judge(records, rows, responses, panel, ids, params) if panel else 0

    extra: dict[str, Any] = {
        "sgi_judges": judge_ids, "judge_params": params,
        "answer_parser_id": parser[0] if parser else None,
        "n_judge_calls": sum(m is not None for m in messages) * len(panel)
        + (sum(r is not None for r in responses) if parser else 0) + n_answer_calls,
        "judge_usage": _usage([*panel, *([parser] if parser and parser not in panel else [])]),
    }
    if not panel:
        extra["warnings"] = ["no judge: step-level accuracy not computed (pass --judge SPEC)"]
    return [ctx.result(records, phash, n_calls, **extra)]


# ------------------------------------------------------------------ experimental reasoning

def reasoning_request(row: Mapping[str, Any], policy: str, text_of: Any = None
                      ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The model-facing messages of one reasoning item under ``policy`` and what happened to its images
    (``text_of(row)``: the prompt text; default sciprobe's wording)."""
    from sciprobe.benchmarks.sgibench.prompts import (
        reasoning_multimodal_messages,
        reasoning_placeholder_messages,
        reasoning_text,
    )

    text_of = text_of or reasoning_text
    images = list(row.get("images") or [])
    parts, missing = _image_parts(images)
    if policy == "send":
        messages = reasoning_multimodal_messages(row, parts, text_of)
        info = {"n_images": len(images), "n_images_sent": len(parts), "n_images_missing": missing,
                "images_dropped": False}
    else:
        messages = reasoning_placeholder_messages(row, len(parts), text_of)
        info = {"n_images": len(images), "n_images_sent": 0, "n_images_missing": missing,
                "images_dropped": bool(parts)}
    return messages, {**info, "images_policy": policy}


def rv_judge_requests(rows: Sequence[Mapping[str, Any]], responses: Sequence[str | None], text_of: Any, client: Any,
                      row_parts: Sequence[list[dict[str, Any]]] | None = None
                      ) -> tuple[list[list[dict[str, Any]] | None], list[bool]]:
    """The reasoning-validity judge's messages per item for ``client`` (None: no answer to judge) and, per item,
    whether a text-only judge lost its images; also what ``sciprobe judge-check`` asks another judge."""
    from sciprobe.benchmarks.sgibench.scoring.reasoning import rv_judge_messages

    if row_parts is None:
        row_parts = [_image_parts(list(row.get("images") or []))[0] for row in rows]
    judge_text_only = is_text_only(client)
    messages: list[list[dict[str, Any]] | None] = []
    dropped = [False] * len(rows)
    for i, (row, resp) in enumerate(zip(rows, responses)):
        if resp is None:
            messages.append(None)
            continue
        built = rv_judge_messages(text_of(row), list(row.get("steps") or []), resp, [])
        built[0]["content"] = [*row_parts[i], *built[0]["content"]]
        if judge_text_only:
            built, n = flatten_for_text_model(built)
            dropped[i] = n > 0
        messages.append(built)
    return messages, dropped


def run_reasoning(ctx: Any) -> list[Any]:
    """Answers with images (or placeholders for a text-only model), then the RV judge; one TaskResult."""
    from sciprobe.benchmarks.sgibench.prompts import reasoning_text
    from sciprobe.llm.types import Request
    from sciprobe.run.runners.single_call import prompt_hash, sample_record

    rows = ctx.data.rows
    policy = image_policy(ctx.client, ctx.options.get("images"))
    text_of = ctx.prompt("reasoning_text", reasoning_text)  # the judge sees the question as the model saw it
    requests, infos = [], []
    for row in rows:
        messages, info = reasoning_request(row, policy, text_of)
        requests.append(Request.of(messages, dict(ctx.params), item_id=str(row["id"])))
        infos.append(info)
    completions = ctx.client.complete_many(requests, desc=ctx.task.name) if requests else []
    records = [{**sample_record(ctx.task, row, c), **info} for row, c, info in zip(rows, completions, infos)]

    panel = _panel(ctx)
    params = dict(ctx.options.get("judge_params") or JUDGE_PARAMS)
    ids = [str(r["id"]) for r in rows]
    responses = [c.text if c.ok else None for c in completions]
    replies: list[dict[str, str | None]] = [{} for _ in rows]
    failures: list[dict[str, str]] = [{} for _ in rows]
    rv_dropped = [False] * len(rows)
    # the readable images only (an unreadable one is left out, not a failed verdict), before the text
    row_parts = [_image_parts(list(row.get("images") or []))[0] if panel else [] for row in rows]
    for judge_id, client in panel:
        messages, dropped = rv_judge_requests(rows, responses, text_of, client, row_parts)
        rv_dropped = [a or b for a, b in zip(rv_dropped, dropped)]
        texts, errors = ask(client, messages, ids, params, f"sgi reasoning-validity judge {judge_id}")
        _keep_replies(judge_id, texts, errors, messages, replies, failures)
        mark_judge_failures(records, errors, f"judge {judge_id}")
    judge_ids = [jid for jid, _ in panel]
    for record, reply, failure, dropped in zip(records, replies, failures, rv_dropped):
        record["judge_ids"] = judge_ids
        record["rv_replies"] = json.dumps(reply, ensure_ascii=False)
        record["rv_errors"] = json.dumps(failure, ensure_ascii=False)
        record["rv_images_dropped"] = dropped

    extra: dict[str, Any] = {
        "sgi_judges": judge_ids, "judge_params": params, "images_policy": policy,
        "n_items_images_dropped": sum(1 for i in infos if i["images_dropped"]),
        "n_judge_calls": sum(r is not None for r in responses) * len(panel), "judge_usage": _usage(panel),
    }
    warnings = []
    if extra["n_items_images_dropped"]:
        warnings.append(f"images_dropped: {ctx.client.model_id} is treated as text-only (images={policy}); "
                        "every image was replaced by a placeholder line")
    if not panel:
        warnings.append("no judge: reasoning validity (RV) not computed (pass --judge SPEC)")
    if warnings:
        extra["warnings"] = warnings
    return [ctx.result(records, prompt_hash(requests), len(requests), **extra)]


class DeepResearchRunner(Runner):
    """``sgibench:deep_research``: one answer per item, then (with judges) the answer parser and step judge."""

    name = "sgi_deep_research"
    judge_check = "sciprobe.benchmarks.sgibench.judge_check:ANSWER_JUDGE_CHECK"
    kind = "judged"
    judge = "optional"

    def run(self, ctx: Any) -> list[Any]:
        return run_deep_research(ctx)


class ReasoningRunner(Runner):
    """``sgibench:experimental_reasoning``: one answer per item with its images, then (with judges) the
    reasoning-validity judge."""

    name = "sgi_reasoning"
    judge_check = "sciprobe.benchmarks.sgibench.judge_check:RV_CHECK"
    kind = "judged"
    judge = "optional"

    def run(self, ctx: Any) -> list[Any]:
        return run_reasoning(ctx)


DEEP_RESEARCH = DeepResearchRunner()
REASONING = ReasoningRunner()
