"""``sciprobe tasks``: every registered task with its metric, modes, kind, whether it needs a judge, its prompt
sets (``--prompts``), what a predictions file holds for it, and its default data (like ``lighteval tasks list``).
Read from the declarations only: nothing is built or loaded."""

from __future__ import annotations

from collections.abc import Sequence
TYPE_CHECKING = False  # typing's flag without importing typing: these modules are on the CLI's start-up path
if TYPE_CHECKING:
    from typing import Any

#: A task row's fields and what each holds ("str"; "strs": a list of str; "strs?": a list of str or None):
#: :mod:`sciprobe.cli.index` checks every cached row against it.
ROW_FIELDS = {"task": "str", "metric": "str", "headline": "str", "aliases": "strs", "modes": "strs",
              "kind": "str", "judge": "str", "predictions": "strs?", "data": "str", "prompt_sets": "strs",
              "description": "str"}


def task_rows(benchmarks: Sequence[str] | None = None) -> list[dict[str, Any]]:
    from sciprobe.core.registry import benchmark_names, get_benchmark
    from sciprobe.run.runners.single_call import runner_of

    rows = []
    for name in benchmarks or benchmark_names():
        benchmark = get_benchmark(name)
        for task in benchmark.tasks.values():
            runner = runner_of(task)
            rows.append({
                "task": f"{name}:{task.name}", "metric": task.metric, "headline": task.headline,
                "aliases": [f"{name}:{a}" for a, t in benchmark.aliases.items() if t == task.name],
                "modes": list(task.modes), "kind": runner.kind, "judge": runner.judge,
                "predictions": None if runner.replay_refusal else list(runner.prediction_fields(task)),
                "data": "bundled sample" if benchmark.sample_source else "--data DIR (no bundled sample)",
                "prompt_sets": ["sciprobe", "upstream"] if task.upstream_prompt else ["sciprobe"],
                "description": task.description,
            })
    return rows


def format_tasks(rows: Sequence[dict[str, Any]]) -> str:
    from sciprobe.results.summary import format_table

    return format_table([{
        "task": r["task"] + "".join(f" (= {a.split(':', 1)[1]})" for a in r.get("aliases", ())),
        "metric": f"{r['metric']}:{r['headline']}", "modes": ",".join(r["modes"]),
        "kind": r["kind"], "judge": r["judge"], "prompts": ",".join(r["prompt_sets"]),
        "predictions file": ",".join(r["predictions"]) if r["predictions"] else "no (run it with evaluate)",
        "data": r["data"]} for r in rows])
