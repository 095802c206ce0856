"""The generic runner for single-call tasks: one prompt per item, one answer, parsed and kept per sample."""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from sciprobe.declaration import Parsed, TaskSpec
from sciprobe.llm.types import Completion, Request, canonical_json, sha256_hex


def build_requests(task: TaskSpec, rows: Sequence[Mapping], fewshot: Sequence[Mapping],
                   params: Mapping[str, Any]) -> list[Request]:
    if task.build_messages is None:
        raise ValueError(f"task {task.name} is not a single-call task")
    examples = list(fewshot)[: task.num_fewshot] if task.num_fewshot else []
    return [Request.of(task.build_messages(row, examples), dict(params), item_id=str(row["id"])) for row in rows]


def prompt_hash(requests: Sequence[Request]) -> str:
    """sha256 over every rendered prompt sent, in item order: identifies exactly what the model saw."""
    return sha256_hex(canonical_json([list(r.messages) for r in requests]))


def sample_record(task: TaskSpec, row: Mapping, completion: Completion) -> dict[str, Any]:
    if completion.ok:
        parsed = task.parse(completion.text)
    else:
        parsed = Parsed(None, "error", {"official": None})
    return {
        "id": str(row["id"]),
        "pa_id": row.get("pa_id"),
        "gold": task.gold(row) if task.gold else None,
        "prediction": parsed.value,
        "official": parsed.extra.get("official"),
        "parse_path": parsed.path,
        "parsed_extra": json.dumps(parsed.extra, ensure_ascii=False, sort_keys=True),
        "response": completion.text,
        "error": completion.error,
        "cached": completion.cached,
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "request_hash": completion.request_hash,
    }


def run_single_call(task: TaskSpec, rows: Sequence[Mapping], fewshot: Sequence[Mapping], client: Any,
                    params: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str, int]:
    """Ask the model once per row; returns (per-sample records, prompt hash, number of requests)."""
    requests = build_requests(task, rows, fewshot, params)
    completions = client.complete_many(requests, desc=task.name)
    return [sample_record(task, row, c) for row, c in zip(rows, completions)], prompt_hash(requests), len(requests)
