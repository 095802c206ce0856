"""Every registered benchmark, whatever it is: its declaration holds together, its bundled sample builds and
loads, its single-call tasks go prompt -> parse -> score on sample rows in every mode, and the lighteval card
lists exactly its tasks. A new benchmark is tested here without writing a test."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciprobe.core.registry import benchmark_names, get_benchmark
from sciprobe.core.declaration import Parsed, Runner
from sciprobe.scoring.score_report import ScoreReport
from sciprobe.data.task_data import load_task_data, sample_dataset_dir
from sciprobe.run.task_runner import runner_of

from task_card_support import load_card

NAMES = benchmark_names()
KINDS = {"single call", "judged", "tournament", "tool agent", "sandbox", "two-step"}


def _sample(name: str) -> Path:
    benchmark = get_benchmark(name)
    if benchmark.sample_source is None:
        pytest.skip(f"{name} has no bundled sample")
    return sample_dataset_dir(benchmark)


def test_the_four_published_benchmarks_are_registered() -> None:
    assert {"idrbench", "prescience", "scitaste", "sgibench"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_declaration_holds_together(name: str) -> None:
    benchmark = get_benchmark(name)
    assert benchmark.name == name and benchmark.title and benchmark.version and benchmark.citation.strip()
    for config in benchmark.configs.values():
        assert config.splits and config.id_field in config.features(), (config.name, config.id_field)
    for task in benchmark.tasks.values():
        assert task.config in benchmark.configs and task.modes and task.headline and task.metric
        runner = runner_of(task)
        assert isinstance(runner, Runner) and runner.kind in KINDS and runner.judge in ("no", "optional", "required")
        assert runner.replay_refusal or runner.prediction_fields(task)
        assert task.runner is not None or task.build_messages is not None or not task.parse, task.name
    for command in benchmark.commands:
        assert command.name and command.help and command.module.startswith(f"sciprobe.benchmarks.{name}")
    for task_name in benchmark.demo:
        assert task_name in benchmark.tasks


@pytest.mark.parametrize("name", NAMES)
def test_sample_builds_and_loads(name: str) -> None:
    import datasets

    folder = _sample(name)
    benchmark = get_benchmark(name)
    card = (folder / "README.md").read_text("utf-8")
    assert benchmark.title in card and "configs:" in card
    built = [p.name for p in folder.iterdir() if p.is_dir() and p.name in benchmark.configs]
    assert built
    for config in built:
        splits = datasets.load_dataset(str(folder), config)
        assert set(splits) <= set(benchmark.config(config).splits) and sum(len(s) for s in splits.values()) > 0


@pytest.mark.parametrize("name", NAMES)
def test_single_call_tasks_prompt_parse_score(name: str) -> None:
    from sciprobe.run.runners.single_call import SINGLE_CALL, build_requests

    folder = _sample(name)
    benchmark = get_benchmark(name)
    tasks = [t for t in benchmark.tasks.values() if t.build_messages is not None and t.parse is not None]
    if not tasks:
        pytest.skip(f"{name} has no single-call task")
    for task in tasks:
        data = load_task_data(benchmark, task, str(folder), limit=3)
        requests = build_requests(task, data.rows, data.fewshot, task.generation)
        assert len(requests) == len(data.rows)
        for request in requests:
            assert request.messages and all({"role", "content"} <= set(m) for m in request.messages)
        assert isinstance(task.parse(""), Parsed) and isinstance(task.parse("yes"), Parsed)
        id_field = benchmark.config(task.config).id_field
        predictions = {str(r[id_field]): {"response": "yes"} for r in data.rows}
        records = SINGLE_CALL.records_from_predictions(task, data.rows, predictions)
        for mode in task.modes:
            report = task.score(records, mode)
            assert isinstance(report, ScoreReport) and report.coverage.n_items == len(data.rows), (task.name, mode)


@pytest.mark.parametrize("name", NAMES)
def test_the_card_lists_the_declared_tasks(name: str) -> None:
    benchmark = get_benchmark(name)
    listed = [t.name for t in load_card(name).TASKS_TABLE]
    assert listed and all(ref.split(":", 1)[1] in {**benchmark.tasks, **benchmark.aliases} for ref in listed)
    if benchmark.lighteval_tasks is None:  # the generic adapter: exactly the single-call tasks
        assert listed == [f"{name}:{t.name}" for t in benchmark.tasks.values() if t.build_messages is not None]
