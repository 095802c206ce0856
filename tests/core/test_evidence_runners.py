"""Every runner of every registered benchmark records a call that got no answer the same way (``parse_path`` =
``"error"``, the reason in ``error``), and :func:`sciprobe.run.task_runner.run_task` leaves such items out of every
mode's score and marks the result incomplete. Registry-driven: a new runner is checked without a new test."""

from __future__ import annotations

import pytest

from sciprobe.llm.types import Completion, UsageStats

REFUSED = "APIConnectionError: Connection refused"


class RefusingClient:
    """A provider that never answers: every request is a failed call (as LLMClient returns one)."""

    def __init__(self, model_id: str = "openai/refused") -> None:
        self.model_id = model_id
        self.stats = UsageStats()
        self.param_adjustments: list[str] = []
        self.cache = None
        self.ledger = None
        self.asked = 0

    def complete_many(self, requests, desc=None):
        self.asked += len(requests)
        out = [Completion(None, REFUSED, attempts=3, model=self.model_id) for _ in requests]
        for completion in out:
            self.stats.add(completion)
        return out

    async def acomplete_many(self, requests, desc=None):
        return self.complete_many(requests, desc)

    def complete(self, request):
        return self.complete_many([request])[0]

    async def acomplete(self, request):
        return self.complete(request)


def _tasks() -> list[str]:
    from sciprobe.core.registry import benchmark_names, get_benchmark

    return [f"{b}:{t}" for b in benchmark_names() for t in get_benchmark(b).tasks]


@pytest.fixture(scope="module")
def sgi_data(tmp_path_factory) -> str:
    """SGI-Bench has no bundled sample: its synthetic release, built."""
    from sciprobe.core.registry import get_benchmark
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.data.build import build_benchmark

    root = tmp_path_factory.mktemp("sgi")
    build_benchmark(get_benchmark("sgibench"), write_synthetic_source(root / "src", n=2), root / "built")
    return str(root / "built")


@pytest.mark.parametrize("ref", _tasks())
def test_every_runner_records_a_call_without_an_answer_and_scores_nothing_for_it(ref, sgi_data, tmp_path,
                                                                                 monkeypatch):
    from sciprobe.core.registry import get_benchmark, resolve_task
    from sciprobe.benchmarks.prescience import lacer_judge as lr
    from sciprobe.run.task_runner import EvaluationRequest, run_task, runner_of

    benchmark, task = resolve_task(ref)
    if task.runner is None and task.build_messages is None:
        pytest.skip(f"{ref} asks no model (a baseline task: scored from predictions only)")
    data = sgi_data if benchmark.sample_source is None else None
    if benchmark.sample_source is None and benchmark.name != "sgibench":
        pytest.skip(f"{benchmark.name} has no bundled sample")
    template = tmp_path / "lattice.json"  # the LACER judge prompt, offline
    lr.write_lattices(template, [lr.toy_lattice("matching")], {"note": "test lattice"})
    monkeypatch.setenv(lr.TEMPLATE_ENV, str(template))
    judges: list[RefusingClient] = []

    def judge_factory(spec: str) -> RefusingClient:
        judges.append(RefusingClient(spec.split(",")[0]))
        return judges[-1]

    request = EvaluationRequest(tasks=[ref], model="openai/refused", data=data, limit=2, judge="openai/judge",
                                output_dir=tmp_path, allow_unsandboxed=True)
    client = RefusingClient()
    results = run_task(ref, request, client, judge_factory=judge_factory)
    if not results:  # a mode this model cannot run (e.g. a provider's own web search) is skipped with a message
        assert runner_of(task).kind == "tool agent"
        return
    assert client.asked > 0
    for result in results:
        assert result.records, ref
        for record in result.records:
            assert record["parse_path"] == "error" and record["error"], (ref, record.get("parse_path"))
        failures = result.provenance["call_failures"]
        assert failures["n"] == failures["n_items"] == len(result.records)
        assert failures["kinds"] == {"APIConnectionError": len(result.records)}
        assert result.provenance["incomplete"]
        for mode, report in result.scores.items():  # nothing answered: nothing scored, nothing counted wrong
            assert report.coverage.n_items == 0 and report.coverage.n_failed == 0, (ref, mode)
    assert get_benchmark(benchmark.name)  # the registry still resolves after the run
