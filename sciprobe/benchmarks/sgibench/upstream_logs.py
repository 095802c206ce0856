"""Reading SGI-Bench's per-task logs (``sciprobe import-upstream sgibench --logs evaluation/``; upstream
``evaluation/task_*/step_*.py`` at the pinned commit, spec ``sgibench.md`` §3, §7).

Upstream writes one JSON list per task, model and discipline filter: ``task_<k>_<name>/logs/<model><disciplines>.json``
(``<model>`` with ``/`` as ``_``, ``<disciplines>`` e.g. ``['all']``). Each entry is the dataset item (``idx``,
``question``, ``answer``, ...) plus what the steps added; the task is recognised by the entry's keys:

- deep research: ``model_answer_with_thinking`` (the raw reply; ``[Error][...]`` for a failed call, ``None`` for an
  empty one), ``model_answer_after_llm_paser`` (the answer parser's candidate), and after ``step_2_score.py`` the
  step judge's list (``llm_judge`` at the pinned commit, ``step_llm_judge`` later) and, from SGI-Bench@5d562f6,
  the answer-level ``llm_judge`` (0/1) with ``llm_judge_reason``;
- idea generation: ``generated_idea_text`` (``*_evaluation.json`` / ``*_meta_evaluation.json`` hold upstream's
  scores, not the judges' votes, and are not read);
- dry experiment: ``model_answer_with_thinking`` and, after ``step_3_run_code.py`` / ``step_4_score.py``, the
  five ``unit_test`` runs (combined output, exit status, runtime) and the output judge's verdicts;
- wet experiment: ``model_answer_with_thinking`` next to ``action_pool``;
- experimental reasoning: ``model_answer`` next to ``options``, and after ``step_2_score.py`` the judge's ``RV``.

The replies are re-scored in every mode; upstream's judges are replayed from what the logs keep (judge id
``upstream:o4-mini``): the step judge's list, the answer judge's 0/1 and reason, the dry output judge's verdict
dict, and RV as a number (its reply text is not kept: the number is replayed as the verdict). The idea panel's
votes are not in the logs, so only the objective terms of idea generation are re-scored (``final`` is None).
Items missing from the logs were not run (e.g. another discipline filter) and are not scored; every logged item
must be in the dataset.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sciprobe.core.errors import SciprobeError
from sciprobe.run.upstream_import import ImportedTask, json_files, match_items, read_json, records_list

UPSTREAM_JUDGE = "upstream:o4-mini"          # the step, answer, dry-output and RV judge upstream hard-codes
UPSTREAM_PARSER = "upstream:gpt-4.1-mini"    # upstream's answer re-formatting parser
_NAME = re.compile(r"^(?P<model>.*?)(?P<disciplines>\[.*\])?(?P<suffix>_evaluation|_meta_evaluation)?$")
_FAILED_CALL = "[Error]"


def task_of(entry: Mapping[str, Any]) -> str | None:
    """The task a log entry belongs to, from its keys."""
    if "unit_test" in entry or "incomplete_functions" in entry:
        return "dry_experiment"
    if "options" in entry:
        return "experimental_reasoning"
    if "action_pool" in entry:
        return "wet_experiment"
    if "generated_idea_text" in entry:
        return "idea_generation"
    if "model_answer_with_thinking" in entry and "steps" in entry:
        return "deep_research"
    return None


def model_of(file: Path) -> tuple[str, str | None]:
    """``gpt-4.1['all'].json`` -> (``gpt-4.1``, ``['all']``)."""
    match = _NAME.match(file.stem)
    assert match is not None
    return match["model"], match["disciplines"]


def _reply(value: Any) -> tuple[str | None, str | None]:
    """(response, error): upstream's ``[Error][...]`` marks a failed call."""
    if value is None:
        return None, "no reply in the upstream log"
    text = str(value)
    if text.startswith(_FAILED_CALL):
        return None, text
    return text, None


def _deep_research(entry: Mapping[str, Any], row: Mapping[str, Any]) -> dict[str, Any]:
    response, error = _reply(entry.get("model_answer_with_thinking"))
    record: dict[str, Any] = {"id": str(row["id"]), "gold": str(entry.get("answer", row["answer"])),
                              "response": response, "error": error}
    if "model_answer_after_llm_paser" in entry:
        parsed = entry["model_answer_after_llm_paser"]
        record.update(parsed_answer=None if parsed is None else str(parsed), parser_id=UPSTREAM_PARSER)
    if "step_llm_judge" in entry:  # SGI-Bench@5d562f6 and later
        steps = entry["step_llm_judge"]
    else:  # the pinned commit: llm_judge is the step judge's list (None when the judge failed)
        steps = entry.get("llm_judge") if isinstance(entry.get("llm_judge"), list) else None
    if "step_level_acc" in entry or "step_llm_judge" in entry:
        record["judge_ids"] = [UPSTREAM_JUDGE]
        record["sla_replies"] = json.dumps({UPSTREAM_JUDGE: json.dumps(steps, ensure_ascii=False)
                                            if isinstance(steps, list) else None}, ensure_ascii=False)
    verdict = entry.get("llm_judge")
    if isinstance(verdict, int) and not isinstance(verdict, bool):
        reason = str(entry.get("llm_judge_reason") or "")
        # "Exact match." = no judge call (EM was 1); "Judge error: ..." = a failed judge call (upstream scores 0)
        reply = None if reason == "Exact match." or reason.startswith("Judge error") else \
            json.dumps({"judge": verdict, "reason": reason}, ensure_ascii=False)
        record["judge_ids"] = [UPSTREAM_JUDGE]
        record["answer_judge_replies"] = json.dumps({UPSTREAM_JUDGE: reply}, ensure_ascii=False)
    return record


def _wet(entry: Mapping[str, Any], row: Mapping[str, Any], parse: Callable) -> dict[str, Any]:
    response, error = _reply(entry.get("model_answer_with_thinking"))
    parsed = parse(response) if response is not None else None
    return {"id": str(row["id"]), "gold": str(entry.get("answer", row["answer"])), "response": response,
            "error": error, "prediction": parsed.value if parsed else None,
            "parse_path": parsed.path if parsed else "error"}


def _reasoning(entry: Mapping[str, Any], row: Mapping[str, Any]) -> dict[str, Any]:
    response, error = _reply(entry.get("model_answer"))
    record: dict[str, Any] = {"id": str(row["id"]), "gold": int(entry.get("answer", row["answer"])),
                              "response": response, "error": error}
    if "RV" in entry:
        try:
            verdict = str(round(float(entry["RV"]) * 10))
        except (TypeError, ValueError):
            verdict = None
        record.update(judge_ids=[UPSTREAM_JUDGE], rv_replies=json.dumps({UPSTREAM_JUDGE: verdict}))
    return record


def _idea(entry: Mapping[str, Any], row: Mapping[str, Any]) -> dict[str, Any]:
    response, error = _reply(entry.get("generated_idea_text"))
    return {"id": str(row["id"]), "row": dict(row), "response": response, "error": error, "votes": None,
            "judge_ids": []}


def _dry(entry: Mapping[str, Any], row: Mapping[str, Any]) -> dict[str, Any]:
    from sciprobe.benchmarks.sgibench.dry_runner import judge_key
    from sciprobe.benchmarks.sgibench.scoring.dry_experiment import N_TESTS, equivalence_judge_messages

    response, error = _reply(entry.get("model_answer_with_thinking"))
    gold = [str(entry.get(f"unit_test_{t}_output", row[f"unit_test_{t}_output"])) for t in range(N_TESTS)]
    record: dict[str, Any] = {"id": str(row["id"]), "gold": gold, "response": response, "error": error,
                              "runs": None, "runs_paper": None}
    tests = entry.get("unit_test")
    if not isinstance(tests, list) or len(tests) != N_TESTS:
        return record
    runs, replies = [], {}
    for t, test in enumerate(tests):
        if not isinstance(test, Mapping):
            raise SciprobeError(f"dry item {row['id']!r}: unit_test[{t}] is not an object")
        output = str(test.get("model_code_output") or "")
        message = str(test.get("model_error") or "")
        runs.append({"stdout": output, "stderr": "", "returncode": int(test.get("model_returncode") or 0),
                     "wall_time": float(test.get("model_runtime") or 0.0),
                     "timed_out": message.startswith("[WRONG]Execution timed out")})
        verdict = test.get("llm_judge", "absent")
        asked = (verdict != "absent" and not test.get("exact_match") and int(test.get("model_returncode") or 0) == 0
                 and not message.startswith("[WRONG]"))
        if asked:
            key = judge_key(equivalence_judge_messages(gold[t], output.strip()))
            replies[key] = json.dumps(verdict, ensure_ascii=False) if isinstance(verdict, Mapping) else None
    record["runs"] = runs
    if any("llm_judge" in t for t in tests if isinstance(t, Mapping)):
        record.update(judge_id=UPSTREAM_JUDGE, judge_replies=json.dumps(replies, ensure_ascii=False))
    return record


_NOTES = {
    "idea_generation": "the logs keep no judge votes (upstream's evaluation file stores only each dimension's "
                       "win/loss): only the objective terms are re-scored, final is None",
    "dry_experiment": "upstream logs keep each run's stderr and stdout combined: paper mode reads the [Final "
                      "Output] section from that combined text",
    "experimental_reasoning": "upstream logs keep RV as a number, not the judge's reply: the number is replayed as "
                              "the verdict, and a failed judge call (scored 0 upstream) cannot be told apart",
}


def read_logs(path: Path, rows_of: Callable[[str], Sequence[Mapping[str, Any]]]) -> list[ImportedTask]:
    """Every SGI-Bench task log under ``path`` -> one :class:`ImportedTask` per task."""
    from sciprobe.benchmarks.sgibench import parse_wet

    found: dict[str, list[tuple[Path, list[dict[str, Any]]]]] = {}
    skipped = []
    for file in json_files(path):
        if file.stem.endswith("_evaluation"):
            skipped.append(file.name)
            continue
        data = read_json(file)
        if not isinstance(data, list) or not data or not isinstance(data[0], Mapping):
            skipped.append(file.name)
            continue
        task = task_of(data[0])
        if task is None:
            skipped.append(file.name)
            continue
        found.setdefault(task, []).append((file, records_list(data, file)))
    out = []
    for task, entries in found.items():
        if len(entries) > 1:
            raise SciprobeError(f"{task} is in several logs ({', '.join(f.name for f, _ in entries)}): point --logs "
                                "at one model's run (one discipline filter)")
        file, items = entries[0]
        logged: dict[str, dict[str, Any]] = {}
        for entry in items:
            if task_of(entry) != task or "idx" not in entry:
                raise SciprobeError(f"{file.name}: an entry is not a {task} log entry (no idx or other keys)")
            if str(entry["idx"]) in logged:
                raise SciprobeError(f"{file.name}: item {entry['idx']!r} appears twice")
            logged[str(entry["idx"])] = entry
        rows = rows_of(task)
        records = []
        for row, entry in match_items(rows, logged, where=file.name):
            if entry is None:
                continue
            if task == "deep_research":
                records.append(_deep_research(entry, row))
            elif task == "wet_experiment":
                records.append(_wet(entry, row, parse_wet))
            elif task == "experimental_reasoning":
                records.append(_reasoning(entry, row))
            elif task == "idea_generation":
                records.append(_idea(entry, row))
            else:
                records.append(_dry(entry, row))
        model, disciplines = model_of(file)
        notes = [_NOTES[task]] if task in _NOTES else []
        if len(records) < len(rows):
            notes.append(f"{len(rows) - len(records)} dataset item(s) are not in the log (not run, e.g. another "
                         f"discipline filter than {disciplines or 'the whole set'}); they are not scored")
        judged = any(r.get("judge_ids") or r.get("judge_id") for r in records)
        provenance: dict[str, Any] = {"upstream_disciplines": disciplines,
                                      "judge_ids": [UPSTREAM_JUDGE] if judged else []}
        if skipped:
            provenance["upstream_files_skipped"] = sorted(skipped)
        out.append(ImportedTask(task, records, [file], model_name=model, notes=notes, provenance=provenance))
    return out
