"""SciTaste-Bench tool and search modes: the DimAgent-v3 two-round loop and native web search
(spec ``scitaste.md`` §2.3–§2.6, §6.11, §6.19). The tasks' runner is :data:`AGENT` (:class:`AgentRunner`).

``dimagent_v3`` — round 1: the model gets the reviewer prompt and the nine bibliometric tools
(:mod:`~sciprobe.benchmarks.scitaste.tools`) and is asked to call all of them for the paper's identifier; the
calls run against the configured backend (frozen snapshot by default); round 2: the results go back and the
model answers with the strict JSON of ``pure_qa`` (same lenient parser, same scorer). Every tool call and
result is recorded in the sample's details (``tool_calls`` JSON); a model that answers in round 1 without
calling tools is scored on that answer (``rounds = 1``).

Tool-call protocols (``tool_protocol`` option / ``SCIPROBE_SCITASTE_TOOL_PROTOCOL``; default ``auto``):

- ``native`` — OpenAI function calling through litellm: ``tools=`` and ``tool_choice="auto"`` in round 1,
  ``tool_choice="none"`` in round 2 (the tool list stays in the request: some providers reject tool messages
  without it). Used under ``auto`` for every remote model except those litellm's bundled model table marks
  as without function calling (:func:`auto_protocol`; the choice and its reason are in the provenance).
- ``text`` — for models without function calling (the bundled ``local/smollm2`` under ``auto``): the prompt
  lists the tools and asks for one line ``CALL <tool_name> <identifier>`` per call; those lines are parsed from
  the reply, and the results come back in a user message. A reply with no parseable ``CALL`` line is recorded
  (``protocol_error``) and round 2 still asks for the JSON, with no evidence. The 135M model rarely follows
  either step; its failures are recorded, never scored as zero.

Freezing: ``record_snapshot=PATH`` (option) / ``SCIPROBE_SCITASTE_RECORD=PATH`` keeps every successful tool
response of the run and writes them as a snapshot file (``collected_on`` = today), so a live run can be replayed
offline with ``snapshot=PATH``.

Cap: at most ``max_tool_calls`` (default 9, one per tool) calls are executed per paper; further calls are
answered with an error ("cap reached") and recorded with ``executed = false``.

``native_search`` / ``dimagent_v3_native`` add the provider's built-in web search (litellm
``web_search_options``). Provider-dependent: they run only when litellm reports web-search support for the model
(``litellm.supports_web_search``) or the run forces it (``native_search="force"`` option /
``SCIPROBE_SCITASTE_NATIVE_SEARCH=force``, e.g. for a gateway litellm cannot inspect); otherwise the task is
skipped with a message and produces no result. They cannot run offline on the bundled model.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sciprobe.benchmarks.scitaste.prompts as prompts
from sciprobe.benchmarks.scitaste.parsing import parse_answer
from sciprobe.benchmarks.scitaste.tools import (
    TOOL_NAMES,
    TOOLS,
    RecordingBackend,
    ToolBackend,
    ToolOutcome,
    execute,
    tool_schemas,
)
from sciprobe.core.declaration import Parsed, Runner
from sciprobe.core.errors import SciprobeError
from sciprobe.results.evidence import unanswered

if TYPE_CHECKING:  # the declaration imports this module for AGENT: the LLM types load when it runs
    from sciprobe.llm.types import Completion

#: Prompt versions (own wording; the paper's Appendix C prompts are missing): ``scitaste-<task>-v1``.
PROMPT_REVISION = "v1"
AGENT_PROMPT_VERSION = f"scitaste-dimagent_v3-{PROMPT_REVISION}"
DEFAULT_MAX_TOOL_CALLS = len(TOOL_NAMES)
#: Longest tool result (characters) sent back to the model in the text protocol (small local context).
TEXT_RESULT_CHARS = 600
WEB_SEARCH_OPTIONS = {"search_context_size": "medium"}

_AGENT_STEPS = (
    "\n\nYou work in two rounds. Round one: gather evidence by calling every one of the nine bibliometric tools "
    "below for the paper's identifier (call them all at once, each with the identifier exactly as given). "
    "Round two: when the tool results arrive, study the raw evidence and only then score the paper. The tools "
    "return raw data (counts, lists, venues), not scores; a tool may report an error, in which case judge that "
    "dimension from what you have."
)
_TEXT_PROTOCOL = (
    "\n\nYou cannot call functions directly. In round one reply with nothing but one line per tool call, "
    "written exactly as\nCALL <tool_name> <identifier>\nfor example: CALL get_citation_stats 2001XyZ..12..345A\n"
    "Available tools:\n"
)
_SEARCH_NOTE = ("\n\nYou may use your built-in web search to look the paper up before answering.")
TEXT_ROUND_ONE = ("\n\nRound one: request the evidence now, one line per tool, e.g.\n"
                  "CALL get_paper_metadata {ident}\nCALL get_citation_stats {ident}")
FINAL_REQUEST = "All tool results are above. Now reply with the JSON object only, exactly in the requested shape."
NO_EVIDENCE = ("No valid tool call was found in your reply, so no evidence is available. Reply with the JSON "
               "object only, exactly in the requested shape.")
#: One ``CALL <tool> <identifier>`` line (also ``CALL tool(bibcode="id")``, a list bullet before it, any case).
_CALL_LINE = re.compile(r"^[ \t]*(?:[-*\d.)]+[ \t]*)?CALL\b[ \t]*:?[ \t]*([A-Za-z_]\w*)[ \t]*(?:\([ \t]*)?"
                        r"(?:bibcode[ \t]*[=:][ \t]*)?[\"']?([^\s\"'),]+)?", re.IGNORECASE | re.MULTILINE)


# ---------------------------------------------------------------- prompts

def system_prompt(*, tools: bool, protocol: str = "native", search: bool = False) -> str:
    text = prompts.SYSTEM
    if tools:
        text += _AGENT_STEPS
        if protocol == "text":
            text += _TEXT_PROTOCOL + "\n".join(f"- {name}: {desc}" for name, (desc, _) in TOOLS.items())
    if search:
        text += _SEARCH_NOTE
    return text


def first_messages(row: Mapping, *, tools: bool, protocol: str = "native", search: bool = False) -> list[dict]:
    """Round-1 messages. The text protocol ends the user message with two example lines carrying the paper's
    own identifier: the bundled 135M model follows an example it can copy, not a rule in the system prompt."""
    user = prompts.user_message(row)
    if tools and protocol == "text":
        ident = str(row.get("bibcode", row.get("id")))
        user += TEXT_ROUND_ONE.format(ident=ident)
    return [{"role": "system", "content": system_prompt(tools=tools, protocol=protocol, search=search)},
            {"role": "user", "content": user}]


def parse_text_calls(text: str | None) -> list[dict[str, Any]]:
    """``CALL <tool> <identifier>`` lines -> OpenAI-style tool calls (``arguments`` as a JSON string)."""
    calls = []
    for match in _CALL_LINE.finditer(text or ""):
        args = {"bibcode": match[2]} if match[2] else {}
        calls.append({"id": f"text_{len(calls)}", "type": "function",
                      "function": {"name": match[1], "arguments": json.dumps(args)}})
    return calls


# ---------------------------------------------------------------- the loop

@dataclass
class AgentConfig:
    protocol: str = "native"  # native | text
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS
    search: bool = False
    tools: bool = True
    tool_workers: int = 8
    result_chars: int | None = None  # truncate each tool result sent back (None: whole)


@dataclass
class _Item:
    row: Mapping[str, Any]
    messages: list[dict[str, Any]]
    first: Completion | None = None
    final: Completion | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    outcomes: list[ToolOutcome] = field(default_factory=list)
    executed: list[bool] = field(default_factory=list)
    protocol_error: str | None = None
    late_tool_calls: int = 0


def _round_params(params: Mapping[str, Any], cfg: AgentConfig, final: bool) -> dict[str, Any]:
    out = dict(params)
    if cfg.tools and cfg.protocol == "native":
        out["tools"] = tool_schemas()
        out["tool_choice"] = "none" if final else "auto"
    if cfg.search:
        out["web_search_options"] = dict(WEB_SEARCH_OPTIONS)
    return out


def _execute_all(items: Sequence[_Item], backend: ToolBackend, cfg: AgentConfig) -> None:
    jobs: list[tuple[_Item, int, dict]] = []
    for item in items:
        for k, call in enumerate(item.calls):
            item.executed.append(k < cfg.max_tool_calls)
            if k < cfg.max_tool_calls:
                jobs.append((item, k, call))
        item.outcomes = [None] * len(item.calls)  # type: ignore[list-item]
        for k, call in enumerate(item.calls[cfg.max_tool_calls:], start=cfg.max_tool_calls):
            fn = call.get("function") or {}
            item.outcomes[k] = ToolOutcome(str(call.get("id")), str(fn.get("name")), str(fn.get("arguments")), None,
                                           False, None, f"tool-call cap ({cfg.max_tool_calls}) reached: not executed",
                                           backend.name)

    def run(job: tuple[_Item, int, dict]) -> None:
        item, k, call = job
        fn = call.get("function") or {}
        item.outcomes[k] = execute(backend, str(call.get("id")), str(fn.get("name")), fn.get("arguments") or "")

    if jobs:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=max(1, cfg.tool_workers), thread_name_prefix="scitaste-tools") as pool:
            list(pool.map(run, jobs))


def _second_messages(item: _Item, cfg: AgentConfig) -> list[dict[str, Any]]:
    first = item.first
    assert first is not None
    if cfg.protocol == "native":
        assistant = {"role": "assistant", "content": first.text, "tool_calls": item.calls}
        tool_msgs = [{"role": "tool", "tool_call_id": o.call_id, "name": o.name,
                      "content": o.content(cfg.result_chars)} for o in item.outcomes]
        return [*item.messages, assistant, *tool_msgs, {"role": "user", "content": FINAL_REQUEST}]
    assistant = {"role": "assistant", "content": first.text or ""}
    if not item.outcomes:
        return [*item.messages, assistant, {"role": "user", "content": NO_EVIDENCE}]
    results = "\n".join(f"[{o.name} {o.bibcode or ''}] {o.content(cfg.result_chars)}" for o in item.outcomes)
    return [*item.messages, assistant, {"role": "user", "content": f"Tool results:\n{results}\n\n{FINAL_REQUEST}"}]


def run_agent(rows: Sequence[Mapping[str, Any]], client: Any, params: Mapping[str, Any], backend: ToolBackend | None,
              cfg: AgentConfig, *, desc: str = "scitaste", dry_run: bool = False,
              ) -> tuple[list[dict[str, Any]], str, int]:
    """Run the loop over ``rows``; returns (per-sample records, prompt hash, number of model requests).

    Rounds are batched across papers: all round-1 requests, then all tool calls, then all round-2 requests.
    ``dry_run`` (the planner, ``sciprobe.run.plan``): no tool runs; every paper is assumed to call each tool once,
    with placeholder results, so the plan counts both rounds.
    """
    from sciprobe.benchmarks.scitaste.source import gold
    from sciprobe.llm.types import Request, canonical_json, sha256_hex

    if cfg.tools and backend is None:
        raise SciprobeError("the dimagent modes need a tool backend")
    items = [_Item(row, first_messages(row, tools=cfg.tools, protocol=cfg.protocol, search=cfg.search))
             for row in rows]
    first_reqs = [Request.of(i.messages, _round_params(params, cfg, final=False), item_id=str(i.row["id"]))
                  for i in items]
    phash = sha256_hex(canonical_json([[list(r.messages) for r in first_reqs],
                                       tool_schemas() if cfg.tools else None]))
    for item, completion in zip(items, client.complete_many(first_reqs, desc=f"{desc} round 1")):
        item.first = completion
        if not (cfg.tools and completion.ok):
            continue
        if dry_run:
            item.calls = [{"id": f"plan_{k}", "type": "function", "function": {
                "name": name, "arguments": json.dumps({"bibcode": str(item.row.get("bibcode", item.row["id"]))})}}
                for k, name in enumerate(TOOL_NAMES)]
        elif cfg.protocol == "native":
            item.calls = list(completion.tool_calls or [])
        else:
            item.calls = parse_text_calls(completion.text)
            if not item.calls:
                item.protocol_error = "no 'CALL <tool> <identifier>' line in the round-1 reply"
    second = [i for i in items if i.first is not None and i.first.ok and cfg.tools
              and (i.calls or cfg.protocol == "text")]
    if second:
        _execute_all(second, _PlannedTools() if dry_run else backend, cfg)
    second_reqs = [Request.of(_second_messages(i, cfg), _round_params(params, cfg, final=True),
                              item_id=str(i.row["id"])) for i in second]
    if second_reqs:
        for item, completion in zip(second, client.complete_many(second_reqs, desc=f"{desc} round 2")):
            item.final = completion
            item.late_tool_calls = len(completion.tool_calls or [])
    records = [_record(i, gold, cfg) for i in items]
    return records, phash, len(first_reqs) + len(second_reqs)


def _record(item: _Item, gold: Any, cfg: AgentConfig) -> dict[str, Any]:
    first = item.first
    assert first is not None
    final = item.final or first
    if not final.ok:
        parsed = unanswered(final)  # no answer from the provider (sciprobe.results.evidence), or an empty one
    elif final.text is None:  # only tool calls, never an answer
        parsed = Parsed(None, "failed:no_answer", {"official": None, "reason": "no_answer"})
    else:
        parsed = parse_answer(final.text)
    rounds = [c for c in (first, item.final) if c is not None]
    tool_records = [{**o.as_record(), "executed": ex} for o, ex in zip(item.outcomes, item.executed)]
    return {
        "id": str(item.row["id"]),
        "bibcode": str(item.row.get("bibcode", item.row["id"])),
        "gold": gold(item.row),
        "prediction": parsed.value,
        "official": parsed.extra.get("official"),
        "parse_path": parsed.path,
        "parsed_extra": json.dumps(parsed.extra, ensure_ascii=False, sort_keys=True),
        "response": final.text,
        "error": final.error,
        "rounds": len(rounds),
        "tool_protocol": cfg.protocol if cfg.tools else None,
        "round1_response": first.text,
        "round1_error": first.error,
        "protocol_error": item.protocol_error,
        "tool_calls": json.dumps(tool_records, ensure_ascii=False, sort_keys=True),
        "n_tool_calls": len(item.calls),
        "n_tool_calls_executed": sum(item.executed),
        "n_tool_errors": sum(1 for o in item.outcomes if not o.ok),
        "late_tool_calls": item.late_tool_calls,
        "cached": all(c.cached for c in rounds),
        "prompt_tokens": sum(c.prompt_tokens for c in rounds),
        "completion_tokens": sum(c.completion_tokens for c in rounds),
        "request_hash": final.request_hash,
    }


class _PlannedTools:
    """The planner's stand-in backend: answers every call with a fixed placeholder, touches nothing."""

    name = "planned"

    def call(self, tool: str, bibcode: str) -> dict[str, Any]:
        return {"planned": "placeholder tool result (no tool ran)"}

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name}


# ---------------------------------------------------------------- the runner

def _option(options: Mapping[str, Any], key: str, env: str, default: Any) -> Any:
    value = options.get(key)
    return value if value is not None else os.environ.get(env, default)


def web_search_supported(model: str) -> bool:
    from sciprobe.llm.backends import import_litellm

    try:
        return bool(import_litellm().supports_web_search(model=model))
    except Exception:  # noqa: BLE001 - unknown to litellm's map: not supported as far as we can tell
        return False


def auto_protocol(model: str, is_local: bool) -> tuple[str, str]:
    """``tool_protocol=auto``: the text protocol for the bundled model and for models litellm's bundled table
    marks as without function calling (e.g. ``deepseek-reasoner``); native otherwise, including models the
    table does not know (self-hosted servers usually do support ``tools``). Returns (protocol, why)."""
    if is_local:
        return "text", "local model: no function calling"
    from sciprobe.llm.backends import import_litellm

    table = import_litellm().model_cost
    bare = model.split("/", 1)[1] if "/" in model else model
    entry = table.get(model) or table.get(bare) or {}
    if entry.get("supports_function_calling") is False:
        return "text", f"{model}: no function calling in litellm's model table"
    if entry.get("supports_function_calling"):
        return "native", "function calling"
    return "native", "not in litellm's table: assumed"


def run_agent_task(ctx: Any) -> list[Any]:
    """The ``scitaste_agent`` runner: ``dimagent_v3``, ``native_search``, ``dimagent_v3_native``."""

    name = ctx.task.name
    tools = name.startswith("dimagent")
    search = name.endswith("native") or name == "native_search"
    opts = ctx.options
    spec = getattr(ctx.client, "spec", None)
    is_local = bool(getattr(spec, "is_local", False))
    if search:
        forced = str(_option(opts, "native_search", "SCIPROBE_SCITASTE_NATIVE_SEARCH", "auto")).lower() == "force"
        if is_local or not (forced or web_search_supported(getattr(spec, "name", ctx.client.model_id))):
            message = (f"skipped {ctx.ref}: {ctx.client.model_id} has no built-in web search through litellm "
                       "(provider-dependent; set native_search=force / SCIPROBE_SCITASTE_NATIVE_SEARCH=force for a "
                       "gateway that provides it)")
            import logging

            logging.getLogger(__name__).warning(message)
            print(f"sciprobe: {message}", file=sys.stderr)
            return []
    protocol = str(_option(opts, "tool_protocol", "SCIPROBE_SCITASTE_TOOL_PROTOCOL", "auto")).lower()
    protocol_reason = "requested"
    if protocol == "auto":
        protocol, protocol_reason = auto_protocol(getattr(spec, "name", ctx.client.model_id), is_local)
    if protocol not in ("native", "text"):
        raise SciprobeError(f"unknown tool_protocol {protocol!r} (auto, native, text)")
    if protocol == "text" and search:
        raise SciprobeError(f"{ctx.ref}: native search needs the native protocol")
    cfg = AgentConfig(protocol=protocol, search=search, tools=tools,
                      max_tool_calls=int(_option(opts, "max_tool_calls", "SCIPROBE_SCITASTE_MAX_TOOL_CALLS",
                                                 DEFAULT_MAX_TOOL_CALLS)),
                      tool_workers=int(opts.get("tool_workers", 8)),
                      result_chars=opts.get("tool_result_chars", TEXT_RESULT_CHARS if protocol == "text" else None))
    if cfg.max_tool_calls < 0:
        raise SciprobeError("max_tool_calls must be >= 0")
    from sciprobe.benchmarks.scitaste.live_tools import make_backend  # the live clients import urllib

    backend = make_backend(opts, ctx.data.rows, bundled_sample=ctx.request.data is None) if tools else None
    record_to = _option(opts, "record_snapshot", "SCIPROBE_SCITASTE_RECORD", None) if tools else None
    if record_to:  # freeze what a live run saw, to replay it offline later
        backend = RecordingBackend(backend)
    dry_run = bool(getattr(ctx, "dry_run", False))
    records, phash, n_calls = run_agent(ctx.data.rows, ctx.client, ctx.params, backend, cfg, desc=name,
                                        dry_run=dry_run)
    extra = {"prompt_version": f"scitaste-{name}-{PROMPT_REVISION}", "tool_protocol": cfg.protocol if tools else None,
             "tool_protocol_reason": protocol_reason if tools else None,
             "max_tool_calls": cfg.max_tool_calls if tools else None, "native_search": search,
             "tool_backend": backend.describe() if backend is not None else None,
             "tool_names": list(TOOL_NAMES) if tools else []}
    if record_to and not dry_run:
        import datetime as dt

        frozen = backend.snapshot(collected_on=dt.date.today().isoformat())
        extra["recorded_snapshot"] = str(frozen.dump(record_to))
    if dry_run and tools:
        extra["plan_notes"] = [f"{name}: two rounds per paper assumed (all nine tools called, placeholder results)"]
    return [ctx.result(records, phash, n_calls, **extra)]


class AgentRunner(Runner):
    """The tool and search modes (DimAgent-v3 loop, native web search); a mode the model cannot run is skipped
    with a message (no result)."""

    name = "scitaste_agent"
    kind = "tool agent"
    replay_refusal = "runs a tool-using agent loop (several model turns per item)"

    def run(self, ctx: Any) -> list[Any]:
        return run_agent_task(ctx)


AGENT = AgentRunner()
