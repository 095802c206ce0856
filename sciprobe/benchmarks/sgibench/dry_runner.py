"""SGI-Bench dry-experiment runner: ask the model for the masked functions, transplant them into the item's
program, run the five unit tests in the sandbox, and judge non-identical outputs
(shared/spec/sgibench.md §1.3, §3.3, §4.4, §8 "Dry experiment").

Steps (upstream ``task_3_dry_experiment/step_*``):

1. one model call per item (``task.build_messages``); a failed call leaves the item without runs (scored as
   failed, as upstream skips writing its program);
2. :func:`sciprobe.benchmarks.sgibench.scoring.dry_experiment.assemble_program` per scoring mode (official: same-named
top-level
   ``def`` s only; paper: also the answer's imports and helpers); the paper program is run only when it differs;
3. data generation once per (unit-test data script, interpreter, external files): ``data_en.py`` runs in the
   sandbox with the 10-minute limit and its files are kept under ``$SCIPROBE_HOME/sgi_dry_data/<key>``;
4. every (item, program, test) runs in the sandbox through :func:`sciprobe.sandbox.runner.run_many` (all cores),
   with the generated files (and the item's external files, spec §7) bound read-only into ``data/``;
5. outputs that are not an exact match (or fail the paper-mode ``[Final Output]`` comparison) of a run that
   exited 0 go to the optional output-equivalence judge through an :class:`~sciprobe.llm.client.LLMClient`
   (cached); the replies are stored with the record and replayed by the scorer (:func:`replay_judge`), which
   stays a pure function of the records.

Interpreter: the pinned ``dryexp`` venv named by ``$SCIPROBE_DRYEXP_ENV`` (its folder or its python), else the
current interpreter with a warning in the provenance (printed digits depend on numpy/scipy versions, §8).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciprobe.core.declaration import Runner
from sciprobe.core.errors import SciprobeError
from sciprobe.results.evidence import call_failed, error_is_call_failure, mark_call_failure, unanswered

# the declaration imports this module for SANDBOX: the LLM types and the sandbox load when it runs
if TYPE_CHECKING:
    from sciprobe.llm.types import Request
    from sciprobe.results.write import TaskResult
    from sciprobe.run.task_runner import RunContext

ENV_VAR = "SCIPROBE_DRYEXP_ENV"
N_TESTS = 5
DATA_SCRIPT = "data_en.py"
MAIN_SCRIPT = "main_en.py"
JUDGE_PARAMS: dict[str, Any] = {"temperature": 0.0}  # upstream sends temperature 0 to o4-mini (spec §8)
_MAX_FILE_BINDS = 256


# ------------------------------------------------------------------ interpreter

def dryexp_interpreter() -> tuple[str, list[str], dict[str, Any]]:
    """(python, warnings, info): ``$SCIPROBE_DRYEXP_ENV`` (venv folder or interpreter) else this interpreter."""
    from sciprobe.sandbox.env import STAMP, env_python

    value = os.environ.get(ENV_VAR)
    if not value:
        warning = (f"{ENV_VAR} is not set: ran with sciprobe's own interpreter (Python {sys.version.split()[0]}), "
                   "not the pinned dryexp environment; printed digits depend on library versions, so exact-match "
                   "scores may differ from upstream's")
        return sys.executable, [warning], {"pinned": False}
    path = Path(value).expanduser()
    python = env_python(path) if path.is_dir() else path
    if not (python.is_file() and os.access(python, os.X_OK)):
        raise SciprobeError(f"{ENV_VAR}={value}: no executable python there (create it with "
                            "`sciprobe sandbox create-env --path DIR`)")
    info: dict[str, Any] = {"pinned": True}
    stamp = (path if path.is_dir() else python.parent.parent) / STAMP
    if stamp.is_file():
        try:
            data = json.loads(stamp.read_text())
            info.update(python_version=data.get("python"), requirements=data.get("requirements"))
        except ValueError:
            pass
    return str(python), [], info


# ------------------------------------------------------------------ sandbox results <-> scorer records

def run_record(result: Any) -> dict[str, Any]:
    """A sandbox :class:`~sciprobe.sandbox.runner.RunResult` as the scorer reads it (``returncode`` -1 on a
    timeout, as upstream)."""
    return {"stdout": result.stdout, "stderr": result.stderr,
            "returncode": -1 if result.timed_out else int(result.exit_code), "wall_time": float(result.wall_s),
            "timed_out": bool(result.timed_out), "limit_hit": result.limit_hit, "sandboxed": bool(result.sandboxed),
            "truncated": bool(result.stdout_truncated or result.stderr_truncated)}


def _failed_run(message: str) -> dict[str, Any]:
    return {"stdout": "", "stderr": message, "returncode": 1, "wall_time": 0.0, "timed_out": False,
            "limit_hit": None, "sandboxed": False, "truncated": False}


def judge_key(messages: Sequence[Mapping[str, Any]]) -> str:
    from sciprobe.llm.types import canonical_json, sha256_hex

    return sha256_hex(canonical_json([dict(m) for m in messages]))


def replay_judge(records: Sequence[Mapping[str, Any]]) -> Callable | None:
    """The output-equivalence judge as the scorer calls it, answering from the replies stored in the records
    (None when the run had no judge: those tests then count as ``no_judge``). A request the runner did not
    ask yields None, i.e. a judge failure, never a new call."""
    if not any(r.get("judge_id") for r in records):
        return None
    replies: dict[str, str | None] = {}
    for record in records:
        stored = record.get("judge_replies")
        if stored:
            replies.update(json.loads(stored) if isinstance(stored, str) else stored)

    def judge(messages: Sequence[Mapping[str, Any]]) -> str | None:
        return replies.get(judge_key(messages))

    return judge


# ------------------------------------------------------------------ data generation

def _external_inputs(row: Mapping[str, Any]) -> tuple[dict[str, Path], list[str]]:
    from sciprobe.benchmarks.sgibench.external import TARGET_DIRS, locate

    inputs, problems = {}, []
    target = TARGET_DIRS.get(str(row.get("idx")), "data")
    for f in locate(str(row.get("idx")), verify=False):
        if f.usable and f.path is not None:
            inputs[f"{target}/{Path(f.relative).name}"] = f.path
        else:
            problems.append(f"{f.relative}: {f.status}")
    return inputs, problems


def _data_key(code: str, python: str, inputs: Mapping[str, Path]) -> str:
    from sciprobe.llm.types import canonical_json, sha256_hex

    return sha256_hex(canonical_json({"code": code, "python": python,
                                      "inputs": sorted((k, str(v)) for k, v in inputs.items())}))[:24]


def _file_inputs(folder: Path) -> dict[str, Path]:
    """Files a data script left, to bind read-only (directories stay writable); whole top-level entries when
    there are too many files for one bind each."""
    files = [p for p in sorted(folder.rglob("*")) if p.is_file() and p.name != DATA_SCRIPT]
    if len(files) <= _MAX_FILE_BINDS:
        return {str(p.relative_to(folder)): p for p in files}
    return {p.name: p for p in sorted(folder.iterdir()) if p.name != DATA_SCRIPT}


def generate_data(jobs: Sequence[tuple[str, dict[str, Path]]], python: str, *, allow_unsandboxed: bool,
                  workers: int | None, limits: Any = None, executor: Any = None) -> list[tuple[Path, dict[str, Any]]]:
    """Run each unit-test data script once (cached by content, kept on this machine); returns (folder, status)
    per job. ``executor``: where the scripts run (see :func:`sciprobe.sandbox.runner.run_many`)."""
    import shutil

    from sciprobe.core.paths import sciprobe_home
    from sciprobe.sandbox.runner import RunSpec, SandboxLimits, run_many

    root = sciprobe_home() / "sgi_dry_data"
    out: list[tuple[Path, dict[str, Any]] | None] = [None] * len(jobs)
    todo: dict[str, list[int]] = {}
    for k, (code, inputs) in enumerate(jobs):
        folder = root / _data_key(code, python, inputs)
        status = folder / "status.json"
        if status.is_file():
            out[k] = (folder / "files", json.loads(status.read_text()))
        else:
            todo.setdefault(str(folder), []).append(k)
    if todo:
        limits = limits or SandboxLimits.data_generation()
        specs, staging = [], []
        for folder in todo:
            k = todo[folder][0]
            stage = Path(folder + f".tmp{os.getpid()}")
            shutil.rmtree(stage, ignore_errors=True)
            stage.mkdir(parents=True)
            staging.append(stage)
            specs.append(RunSpec(code=jobs[k][0], inputs=jobs[k][1], limits=limits, python=python,
                                 filename=DATA_SCRIPT, output_dir=stage / "files"))
        results = run_many(specs, workers=workers, allow_unsandboxed=allow_unsandboxed, executor=executor)
        for (folder, positions), stage, result in zip(todo.items(), staging, results):
            status = {"ok": result.ok, "exit_code": result.exit_code, "limit_hit": result.limit_hit,
                      "stderr_tail": result.stderr[-500:]}
            (stage / "files").mkdir(exist_ok=True)
            (stage / "status.json").write_text(json.dumps(status))
            shutil.rmtree(folder, ignore_errors=True)
            os.replace(stage, folder)
            for k in positions:
                out[k] = (Path(folder) / "files", status)
    return [o for o in out if o is not None]


# ------------------------------------------------------------------ the runner

def run_sgi_dry(rows: Sequence[Mapping[str, Any]], client: Any, params: Mapping[str, Any], *,
                build_messages: Callable, modes: Sequence[str] = ("official",), judge_client: Any = None,
                allow_unsandboxed: bool = False, limits: Any = None, workers: int | None = None,
                plan_only: bool = False,
                executor: Any = None) -> tuple[list[dict[str, Any]], str, int, dict[str, Any]]:
    """Returns (records for ``score_dry``, prompt hash, number of model calls, provenance extras).

    ``executor`` (:mod:`sciprobe.core.executors`): where the sandboxed runs happen (default: threads here); the
    records are the same whichever it is.

    ``plan_only`` (``sciprobe evaluate --dry-run``): ask the model (a planning client answers with
    placeholders) and execute nothing; the judge, asked only where exact comparison fails, is not planned."""
    from sciprobe.llm.types import Request, canonical_json, sha256_hex
    from sciprobe.sandbox.runner import RunSpec, SandboxLimits, _refuse_message, run_many, sandbox_status
    from sciprobe.benchmarks.sgibench.scoring.dry_experiment import (
        assemble_program,
        equivalence_judge_messages,
        final_outputs_match,
    )

    ok, reason = sandbox_status(executor)
    if not ok and not allow_unsandboxed and not plan_only:  # refuse before paying for any model call
        raise SciprobeError(_refuse_message(reason))
    python, warnings, interp_info = dryexp_interpreter()
    if not ok:
        warnings.append(f"UNSANDBOXED execution (explicitly allowed): {reason}")
    requests = [Request.of(build_messages(row, []), dict(params), item_id=str(row["id"])) for row in rows]
    completions = client.complete_many(requests, desc="sgi dry experiment") if requests else []

    # programs: official always; paper only when it differs from the official one
    programs: list[dict[str, str]] = []
    assembly: list[dict[str, Any]] = []
    for row, completion in zip(rows, completions):
        text = completion.text if completion.ok else None
        progs, reports = {}, {}
        if text is not None:
            for mode in ("official", *(m for m in modes if m == "paper")):
                program, report = assemble_program(row["incomplete_main_code"], text,
                                                   list(row["incomplete_functions"]), mode=mode)
                if mode == "official" or program != progs["official"]:
                    progs[mode] = program
                reports[mode] = report
        programs.append({} if plan_only else progs)
        assembly.append(reports)

    # data generation (only for items that will run)
    data_jobs, data_index = [], {}
    ext: list[tuple[dict[str, Path], list[str]]] = []
    for i, row in enumerate(rows):
        ext.append(_external_inputs(row))
        if not programs[i]:
            continue
        for t in range(N_TESTS):
            data_index[(i, t)] = len(data_jobs)
            data_jobs.append((row[f"unit_test_{t}_data"], ext[i][0]))
    data = generate_data(data_jobs, python, allow_unsandboxed=allow_unsandboxed, workers=workers,
                         executor=executor) if data_jobs else []

    # main runs
    limits = limits or SandboxLimits()
    specs, where = [], []
    for i, progs in enumerate(programs):
        for mode, program in progs.items():
            for t in range(N_TESTS):
                folder, _status = data[data_index[(i, t)]]
                inputs = {**_file_inputs(folder), **ext[i][0]}
                specs.append(RunSpec(code=program, inputs=inputs, limits=limits, python=python,
                                     filename=MAIN_SCRIPT))
                where.append((i, mode, t))
    runs: list[dict[str, list]] = [{m: [None] * N_TESTS for m in progs} for progs in programs]
    if specs:
        results = run_many(specs, workers=workers, allow_unsandboxed=allow_unsandboxed, executor=executor)
        for (i, mode, t), result in zip(where, results):
            runs[i][mode][t] = run_record(result)

    # output-equivalence judge (only where the scorer would ask it)
    judge_requests: dict[str, Request] = {}
    per_item_keys: list[list[str]] = [[] for _ in rows]
    if judge_client is not None:
        for i, row in enumerate(rows):
            for mode_runs in runs[i].values():
                for t, run in enumerate(mode_runs):
                    if run is None or run["returncode"] != 0 or run["timed_out"]:
                        continue
                    reference = row[f"unit_test_{t}_output"]
                    output = f"{run['stderr']}\n{run['stdout']}".strip()
                    if output == reference.strip() and final_outputs_match(reference, run["stdout"]):
                        continue
                    messages = equivalence_judge_messages(reference, output)
                    key = judge_key(messages)
                    per_item_keys[i].append(key)
                    judge_requests.setdefault(key, Request.of(messages, dict(JUDGE_PARAMS), item_id=str(row["id"])))
    replies: dict[str, str | None] = {}
    judge_errors: dict[str, str] = {}
    if judge_requests:
        keys = list(judge_requests)
        done = judge_client.complete_many([judge_requests[k] for k in keys], desc="sgi dry judge")
        for key, completion in zip(keys, done):
            replies[key] = completion.text if completion.ok else None
            if not completion.ok:
                judge_errors[key] = completion.error or "judge call failed"

    judge_id = getattr(judge_client, "model_id", None) if judge_client is not None else None
    records = []
    for i, (row, completion) in enumerate(zip(rows, completions)):
        item_runs = runs[i]
        data_status = [data[data_index[(i, t)]][1] for t in range(N_TESTS)] if programs[i] else []
        records.append({
            "id": str(row["id"]),
            "gold": [row[f"unit_test_{t}_output"] for t in range(N_TESTS)],
            "runs": item_runs.get("official"),
            "runs_paper": item_runs.get("paper"),
            "response": completion.text,
            "error": completion.error,
            "cached": completion.cached,
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
            "request_hash": completion.request_hash,
            "assembly": json.dumps(assembly[i], ensure_ascii=False, sort_keys=True),
            "data_generation": json.dumps(data_status, ensure_ascii=False),
            "external_files_missing": ext[i][1],
            "judge_id": judge_id,
            "judge_replies": json.dumps({k: replies.get(k) for k in per_item_keys[i]}, ensure_ascii=False),
            "judge_errors": json.dumps({k: judge_errors[k] for k in per_item_keys[i] if k in judge_errors}),
            # a program the model never sent is not a failing program (sciprobe.results.evidence)
            "parse_path": unanswered(completion).path if call_failed(completion) else "answered",
        })
        judge_failed = next((judge_errors[k] for k in per_item_keys[i]
                             if error_is_call_failure(judge_errors.get(k))), None)
        if judge_failed is not None:
            mark_call_failure(records[-1], judge_failed, f"judge {judge_id}")
    provenance = {
        # results never carry a local path: the interpreter by name (its version is in interpreter_info)
        "interpreter": Path(python).name, "interpreter_info": interp_info, "sandboxed": ok, "sandbox": reason,
        "limits": {"wall_s": limits.wall_s, "cpu_s": limits.cpu_s, "memory_mb": limits.memory_mb,
                   "max_procs": limits.max_procs},
        "warnings": warnings, "n_runs": len(specs), "n_data_generations": len(data_jobs),
        "dry_judge_id": judge_id, "n_judge_calls": len(judge_requests),
    }
    return records, sha256_hex(canonical_json([list(r.messages) for r in requests])), len(requests), provenance


class SandboxRunner(Runner):
    """``sgibench:dry_experiment``: generate, transplant, run the unit tests in the sandbox, judge near misses.
    Options (``per_task``): ``timeout_s`` (per run), ``workers``, ``judges`` (the first judge of a panel is used)."""

    name = "sandbox"
    kind = "sandbox"
    judge = "optional"

    def run(self, ctx: RunContext) -> list[TaskResult]:
        from sciprobe.sandbox.runner import SandboxLimits

        opts = ctx.options
        specs = ctx.judge_specs()  # one output-equivalence judge: the first of a panel
        judge = ctx.judge_client(specs[0]) if specs else None
        timeout = float(opts.get("timeout_s", SandboxLimits().wall_s))
        records, phash, n_calls, extra = run_sgi_dry(
            ctx.data.rows, ctx.client, ctx.params, build_messages=ctx.task.build_messages, modes=ctx.modes,
            judge_client=judge, allow_unsandboxed=ctx.request.allow_unsandboxed,
            limits=SandboxLimits(wall_s=timeout, cpu_s=timeout), workers=opts.get("workers"), plan_only=ctx.dry_run,
            executor=ctx.executor)
        if ctx.dry_run and judge is not None:
            extra["plan_notes"] = ["dry-experiment judge: asked only where exact comparison fails (at most "
                                   "5 per item and mode); not counted"]
        if len(specs) > 1:
            extra.setdefault("notes", []).append(f"dry experiment uses one judge: {specs[0]} (of {len(specs)})")
        if judge is not None:
            extra["judge_usage"] = judge.stats.as_dict()
            extra["judge_param_adjustments"] = list(judge.param_adjustments)
        return [ctx.result(records, phash, n_calls, **extra)]


SANDBOX = SandboxRunner()
