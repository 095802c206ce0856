"""The generic runner for single-call tasks: one prompt per item, one answer, parsed and kept per sample."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sciprobe.core.declaration import ItemRecord, Parsed, Runner, TaskSpec
from sciprobe.core.errors import SciprobeError
from sciprobe.results.evidence import unanswered
from sciprobe.data.predictions import check_fields

if TYPE_CHECKING:  # `sciprobe tasks` reads SINGLE_CALL: the LLM types load when a task runs
    from sciprobe.llm.types import Completion, Request
    from sciprobe.results.write import TaskResult
    from sciprobe.run.task_runner import RunContext


def build_requests(task: TaskSpec, rows: Sequence[Mapping], fewshot: Sequence[Mapping],
                   params: Mapping[str, Any]) -> list[Request]:
    from sciprobe.llm.types import Request

    if task.build_messages is None:
        raise SciprobeError(f"task {task.name} has no prompt of its own: it is run by its runner, not one call per "
                            "item")
    examples = list(fewshot)[: task.num_fewshot] if task.num_fewshot else []
    return [Request.of(task.build_messages(row, examples), dict(params), item_id=str(row["id"])) for row in rows]


def prompt_hash(requests: Sequence[Request]) -> str:
    """sha256 over every rendered prompt sent, in item order: identifies exactly what the model saw."""
    from sciprobe.llm.types import canonical_json, sha256_hex

    return sha256_hex(canonical_json([list(r.messages) for r in requests]))


def base_record(task: TaskSpec, row: Mapping) -> ItemRecord:
    """``id``, the task's declared row fields, ``gold``: the part of a record that comes from the row."""
    record: ItemRecord = {"id": str(row["id"])}
    record.update({name: row.get(name) for name in task.record_fields})  # type: ignore[typeddict-item]
    record["gold"] = task.gold(row) if task.gold else None
    return record


def sample_record(task: TaskSpec, row: Mapping, completion: Completion) -> ItemRecord:
    parsed = task.parse(completion.text) if completion.ok else unanswered(completion)
    return {
        **base_record(task, row),
        "prediction": parsed.value,
        "official": parsed.official,
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
                    params: Mapping[str, Any]) -> tuple[list[ItemRecord], str, int]:
    """Ask the model once per row; returns (per-sample records, prompt hash, number of requests)."""
    requests = build_requests(task, rows, fewshot, params)
    completions = client.complete_many(requests, desc=task.name)
    return [sample_record(task, row, c) for row, c in zip(rows, completions)], prompt_hash(requests), len(requests)


def _label(task: TaskSpec, value: Any, where: str) -> Any:
    """A submitted label (``prediction``) in the task's own spelling; bools and 1/0 count as yes/no."""
    if value is None:
        return None
    key = str(value).strip().lower()
    key = {"true": "yes", "false": "no", "1": "yes", "0": "no"}.get(key, key)
    if key not in task.prediction_labels:
        raise SciprobeError(f"{where}: prediction must be {'/'.join(task.prediction_labels)}/null, got {value!r}")
    return key


class SingleCall(Runner):
    """One call per item (:func:`run_single_call`), scored in every mode."""

    name = "single_call"
    kind = "single call"
    reads_predictions = True

    def run(self, ctx: RunContext) -> list[TaskResult]:
        records, phash, n_calls = run_single_call(ctx.task, ctx.data.rows, ctx.data.fewshot, ctx.client, ctx.params)
        return [ctx.result(records, phash, n_calls)]

    def records_from_predictions(self, task: TaskSpec, rows: Sequence[Mapping],
                                 predictions: Mapping[str, Mapping[str, Any]]) -> list[ItemRecord]:
        """``{"id", "response"}`` lines are parsed as the model's answers; ``{"id", "prediction"}`` lines (tasks
        with ``prediction_labels``) are taken as parsed by both parsers; items without a line are missing."""
        fields = self.prediction_fields(task)
        records: list[ItemRecord] = []
        for row in rows:
            item = predictions.get(str(row["id"]))
            base = base_record(task, row)
            where = f"prediction for id {row['id']!r}"
            if item is None:
                records.append({**base, "prediction": None, "official": None, "parse_path": "missing",
                                "response": None, "error": "no prediction submitted"})
            elif check_fields(item, fields, where) == "response":
                response = item["response"]
                parsed = task.parse(str(response)) if response is not None else Parsed(None, "failed")
                records.append({**base, "prediction": parsed.value, "official": parsed.official,
                                "parse_path": parsed.path, "response": response, "error": None})
            else:
                label = _label(task, item["prediction"], where)
                records.append({**base, "prediction": label, "official": label,
                                "parse_path": "submitted" if label else "failed", "response": None, "error": None})
        return records

    def prediction_fields(self, task: TaskSpec) -> tuple[str, ...]:
        return ("response", "prediction") if task.prediction_labels else ("response",)


SINGLE_CALL = SingleCall()


def runner_of(task: TaskSpec) -> Runner:
    """The task's runner; the generic single-call runner when the declaration names none."""
    return task.runner if task.runner is not None else SINGLE_CALL
