"""Replicas: one model spec naming several OpenAI-compatible servers (``base_url=URL1|URL2|...``).

Calls are spread over the servers, a failing or unreachable one is taken out for a while (on an injected clock)
and its calls go to the others, and the cache, the budget and the results are those of one logical model. The
client tests run against real loopback StubServers, once per transport (litellm and the direct HTTP one).
Requests arrive out of order under concurrency, so the checks count, never look at order.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from sciprobe.cli.commands import main
from sciprobe.core.errors import SciprobeError
from sciprobe.llm.cache import ResponseCache
from sciprobe.llm.client import LLMClient
from sciprobe.llm.ledger import Budget, RunLedger
from sciprobe.llm.pacing import Pacer
from sciprobe.llm.replicas import (COOLDOWN_AFTER_FAILURES, COOLDOWN_S, MAX_COOLDOWN_S, ReplicaGate, ReplicaPool,
                                   could_not_connect)
from sciprobe.llm.spec import ModelSpec
from sciprobe.testing.stub_server import StubServer
from sciprobe.llm.types import Request, UsageStats

from golden import REPO


class Clock:
    """The pool's clock, moved by hand."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def requests(n: int, tag: str = "q") -> list[Request]:
    return [Request.of([{"role": "user", "content": f"{tag} {i}"}]) for i in range(n)]


def echo(body: dict) -> str:
    return "echo: " + body["messages"][-1]["content"]


@pytest.fixture(params=["litellm", "http"])
def transport(request) -> str:
    return request.param


def client_for(urls: list[str], transport: str, extra: str = "", **kw) -> LLMClient:
    spec = f"openai/gpt-4o-mini,base_url={'|'.join(urls)},api_key=sk-test,transport={transport}{extra}"
    return LLMClient(spec, backoff_base_s=0.001, **kw)


def with_clock(client: LLMClient) -> Clock:
    clock = Clock()
    client._backend.replicas.clock = clock
    return clock


def closed_port_url() -> str:
    """A loopback URL nothing listens on: connections are refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# -- the spec ---------------------------------------------------------------------------------------------------


def test_spec_lists_replicas_and_keys_the_logical_model():
    spec = ModelSpec.parse("hosted_vllm/m, base_url = http://a:8000/v1 | http://b:8000/v1 ,concurrency=4")
    assert spec.base_urls == ("http://a:8000/v1", "http://b:8000/v1")
    assert spec.resolved_transport == "http"
    reordered = ModelSpec.parse("hosted_vllm/m,base_url=http://b:8000/v1|http://a:8000/v1")
    assert spec.cache_base_url == reordered.cache_base_url == "http://a:8000/v1|http://b:8000/v1"
    single = ModelSpec.parse("openai/m,base_url=http://a:8000/v1/")
    assert single.base_urls == ("http://a:8000/v1/",) and single.cache_base_url == "http://a:8000/v1/"
    assert ModelSpec.parse("openai/m").base_urls == () and ModelSpec.parse("openai/m").cache_base_url is None


@pytest.mark.parametrize("text, fragment", [
    ("openai/m,base_url=http://a/v1||http://b/v1", "base_url has an empty URL"),
    ("openai/m,base_url=http://a/v1|", "base_url has an empty URL"),
    ("openai/m,base_url=|", "base_url has an empty URL"),
    ("openai/m,base_url=http://a/v1|http://a/v1", "lists a URL twice"),
    ("openai/m,base_url=http://a/v1,api_key=sk-a|sk-b", "only base_url lists several values"),
    ("openai/m,base_url=http://a/v1,concurrency=4|8", "only base_url lists several values"),
    ("openai/m,transport=http|litellm,base_url=http://a/v1", "only base_url lists several values"),
    ("openai/m|n,base_url=http://a/v1", "invalid model name"),
    ("openai/m,base_url=http://a/v1|http://user:pw@b/v1", "must not carry user:password"),
])
def test_bad_replica_lists_are_one_line_errors(text, fragment):
    with pytest.raises(SciprobeError) as info:
        ModelSpec.parse(text)
    assert fragment in str(info.value) and "\n" not in str(info.value)
    assert "sk-a" not in str(info.value)  # an api_key is never echoed


def test_cli_says_one_line_for_a_bad_replica_list(tmp_path, capsys):
    code = main(["evaluate", "idrbench:ipi", "--model", "openai/m,base_url=http://a/v1||http://b/v1",
                 "--output-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "empty URL" in err


# -- the balancer on its own: choice, cool-down, probing ---------------------------------------------------------


def pool_of(n: int, clock: Clock) -> ReplicaPool:
    return ReplicaPool([f"http://r{i}/v1" for i in range(n)], [Pacer() for _ in range(n)], clock=clock)


def test_gate_spreads_over_the_least_busy_and_respects_per_replica_slots():
    async def go() -> None:
        pool = pool_of(3, Clock())
        gate = ReplicaGate(pool, slots=2)
        taken = [await gate.acquire() for _ in range(6)]
        assert sorted(r.url for r in taken) == sorted(f"http://r{i}/v1" for i in range(3) for _ in range(2))
        waiter = asyncio.ensure_future(gate.acquire())  # all 6 slots taken: it waits
        await asyncio.sleep(0)
        assert not waiter.done()
        gate.release(taken[4])
        assert (await waiter) is taken[4]

    asyncio.run(asyncio.wait_for(go(), 60))


def test_a_retry_waits_for_another_replica_rather_than_go_back_to_the_failing_one():
    async def go() -> None:
        pool = pool_of(2, Clock())
        gate = ReplicaGate(pool, slots=1)
        failing = await gate.acquire()
        other = await gate.acquire()
        assert {failing, other} == set(pool.replicas)
        gate.release(failing)  # its attempt failed: the retry avoids it
        fresh_waiter = asyncio.ensure_future(gate.acquire(avoid=failing))
        await asyncio.sleep(0)
        assert not fresh_waiter.done()  # the failing replica has room, but the retry waits for the other
        newcomer = await gate.acquire()  # a first attempt may take the free slot
        assert newcomer is failing
        gate.release(other)
        assert (await fresh_waiter) is other
        # with one replica there is nothing else to go to
        single = ReplicaGate(pool_of(1, Clock()), slots=1)
        only = await single.acquire()
        single.release(only)
        assert (await single.acquire(avoid=only)) is only

    asyncio.run(asyncio.wait_for(go(), 60))


def test_failures_take_a_replica_out_until_the_injected_clock_says_so():
    clock = Clock()
    pool = pool_of(2, clock)
    bad, good = pool.replicas
    boom = RuntimeError("500")
    for _ in range(COOLDOWN_AFTER_FAILURES - 1):
        pool.failed(bad, boom)
    assert pool.candidates() == ([bad, good], False)
    pool.failed(bad, boom)
    assert pool.candidates() == ([good], False) and pool.has_other_in_service(good) is False
    assert pool.has_other_in_service(bad) is True
    pool.failed(bad, boom)  # a request sent before it went out: the same episode, no longer cool-down
    clock.t += COOLDOWN_S - 0.001
    assert pool.candidates() == ([good], False)
    clock.t += 0.001
    assert pool.candidates() == ([bad, good], False) and bad.probing
    pool.failed(bad, boom)  # the probe fails: out again, twice as long
    clock.t += COOLDOWN_S * 2 - 0.001
    assert pool.candidates() == ([good], False)
    clock.t += 0.001
    pool.answered(bad)  # the probe succeeds: back in full service, the schedule forgotten
    assert not bad.probing and bad.failures_in_a_row == 0 and bad.cooldowns_in_a_row == 0
    assert pool.report()["http://r0/v1"] == {"answered": 1, "failed": 5, "cooldowns": 2}


def test_cooldowns_grow_to_a_ceiling_and_an_unreachable_replica_goes_out_at_once():
    clock = Clock()
    pool = pool_of(2, clock)
    dead = pool.replicas[0]
    refused = OSError("Cannot connect")
    refused.__cause__ = ConnectionRefusedError(111, "Connection refused")
    assert could_not_connect(refused) and not could_not_connect(RuntimeError("500"))
    waits = []
    for _ in range(8):
        pool.failed(dead, refused)
        assert dead.out_until is not None
        waits.append(dead.out_until - clock.t)
        clock.t = dead.out_until
    assert waits == [min(MAX_COOLDOWN_S, COOLDOWN_S * 2 ** k) for k in range(8)]
    assert waits[-1] == MAX_COOLDOWN_S


def test_a_probing_replica_gets_one_request_at_a_time_and_all_out_means_all_tried():
    async def go() -> None:
        clock = Clock()
        pool = pool_of(2, clock)
        gate = ReplicaGate(pool, slots=4)
        a, b = pool.replicas
        for _ in range(COOLDOWN_AFTER_FAILURES):
            pool.failed(a, RuntimeError("503"))
        assert {(await gate.acquire()) for _ in range(4)} == {b}  # a is out
        clock.t += COOLDOWN_S
        assert (await gate.acquire()) is a  # probing: one slot
        waiter = asyncio.ensure_future(gate.acquire())
        await asyncio.sleep(0)
        assert not waiter.done()  # b full, a probing with its one request in flight
        pool.answered(a)
        gate.release(a)
        assert (await waiter) is a
        assert (await gate.acquire()) is a  # full service again: more than one in flight
        # every replica out: both are tried again rather than nothing at all
        for replica in (a, b):
            pool.failed(replica, ConnectionRefusedError())
        assert pool.candidates() == ([a, b], True)

    asyncio.run(asyncio.wait_for(go(), 60))


def test_a_429_sends_calls_elsewhere_for_the_pause_it_asked_for():
    clock = Clock()
    pool = pool_of(2, clock)
    limited, other = pool.replicas
    pool.rate_limited(limited, 2.0)
    assert pool.candidates() == ([other], False) and not limited.probing
    clock.t += 2.0
    assert pool.candidates() == ([limited, other], False)
    assert pool.report()["http://r0/v1"] == {"answered": 0, "failed": 1, "cooldowns": 1}


def test_one_server_keeps_the_single_server_behaviour():
    pool = pool_of(1, Clock())
    only = pool.replicas[0]
    for _ in range(10):
        pool.failed(only, ConnectionRefusedError())
    assert only.out_until is None and pool.candidates() == ([only], False) and pool.report() == {}


def test_usage_stats_merge_adds_replica_counts():
    one, two = UsageStats(calls=2), UsageStats(calls=3, replicas={"http://a/v1": {"answered": 3, "failed": 1}})
    one.merge(two)
    assert one.calls == 5 and one.replicas == {"http://a/v1": {"answered": 3, "failed": 1}}
    assert "replicas" not in UsageStats().as_dict()


# -- the client against real servers, both transports ---------------------------------------------------------


@pytest.fixture
def stubs() -> Iterator[list[StubServer]]:
    servers = [StubServer(reply=echo, latency_s=0.01).start() for _ in range(3)]
    try:
        yield servers
    finally:
        for server in servers:
            server.stop()


@pytest.mark.parametrize("n_servers", [2, 3])
def test_calls_are_split_over_every_replica(stubs, transport, n_servers):
    servers = stubs[:n_servers]
    client = client_for([s.base_url for s in servers], transport, ",concurrency=2")
    out = client.complete_many(requests(30))
    assert [c.text for c in out] == [f"echo: q {i}" for i in range(30)]  # input order, whoever answered
    counts = [s.count for s in servers]
    assert sum(counts) == 30 and all(n >= 1 for n in counts), counts
    assert all(s.max_in_flight <= 2 for s in servers)  # concurrency is per replica
    replicas = client.stats.as_dict()["replicas"]
    assert {label: r["answered"] for label, r in replicas.items()} == {s.base_url: s.count for s in servers}
    assert client.stats.calls == 30 and client.stats.failed == 0


def test_a_replica_answering_500s_is_cooled_down_and_returns_on_the_clock(stubs, transport):
    failing = {"on": True}
    bad = StubServer(reply=echo, status_script=lambda body, i: 500 if failing["on"] else None).start()
    try:
        good = stubs[0]
        client = client_for([bad.base_url, good.base_url], transport, ",concurrency=1,max_retries=1")
        clock = with_clock(client)
        out = client.complete_many(requests(12, "first"))
        assert all(c.ok for c in out)  # every item answered, by the good replica
        slots = client._backend.ADMISSION_FACTOR  # requests one replica may have in flight at concurrency=1
        assert COOLDOWN_AFTER_FAILURES <= bad.count <= COOLDOWN_AFTER_FAILURES + slots, bad.count
        assert good.count == 12
        report = client.stats.replicas[bad.base_url]
        assert report["answered"] == 0 and report["cooldowns"] == 1 and report["failed"] == bad.count
        sent_while_failing = bad.count

        out = client.complete_many(requests(6, "second"))  # the clock has not moved: still out
        assert all(c.ok for c in out) and bad.count == sent_while_failing

        failing["on"] = False
        clock.t += COOLDOWN_S  # the cool-down ends: a probe, then full service
        out = client.complete_many(requests(10, "third"))
        assert all(c.ok for c in out)
        assert bad.count > sent_while_failing
        assert client.stats.replicas[bad.base_url]["answered"] == bad.count - sent_while_failing
    finally:
        bad.stop()


def test_a_replica_refusing_connections_is_taken_out_at_once(stubs, transport):
    dead, good = closed_port_url(), stubs[0]
    client = client_for([dead, good.base_url], transport, ",concurrency=1")
    with_clock(client)
    out = client.complete_many(requests(10))
    assert all(c.ok for c in out) and good.count == 10
    report = client.stats.replicas[dead]
    assert report["answered"] == 0 and report["cooldowns"] == 1
    assert 1 <= report["failed"] <= client._backend.ADMISSION_FACTOR  # only what was in flight when it failed
    assert client.stats.retries == report["failed"]


def test_all_replicas_down_ends_in_recorded_failures_not_a_hang(transport):
    client = client_for([closed_port_url(), closed_port_url()], transport, ",concurrency=2,max_retries=2")
    out = client.complete_many(requests(4))
    assert all(not c.ok and c.attempts == 3 for c in out)
    assert sum(r["failed"] for r in client.stats.replicas.values()) == 12


def test_the_cache_hits_whichever_replica_answered(stubs, transport, tmp_path):
    a, b = stubs[0], stubs[1]
    with ResponseCache(tmp_path / "responses.sqlite") as cache:
        first = client_for([a.base_url, b.base_url], transport, ",concurrency=2", cache=cache)
        out1 = first.complete_many(requests(12))
        assert a.count >= 1 and b.count >= 1 and a.count + b.count == 12
        # the same servers listed the other way round: one logical model, every answer from the cache
        again = client_for([b.base_url, a.base_url], transport, ",concurrency=2", cache=cache)
        out2 = again.complete_many(requests(12))
        assert a.count + b.count == 12 and all(c.cached for c in out2)
        assert [c.text for c in out2] == [c.text for c in out1]
        assert "replicas" not in again.stats.as_dict() or all(
            r["answered"] == 0 for r in again.stats.replicas.values())


def test_budget_caps_and_the_ledger_count_over_the_logical_model(stubs, transport):
    a, b = stubs[0], stubs[1]
    ledger = RunLedger(Budget(max_calls=7))
    client = client_for([a.base_url, b.base_url], transport, ",concurrency=2", ledger=ledger)
    out = client.complete_many(requests(20))
    assert a.count + b.count == 7 == ledger.sent == sum(c.ok for c in out)
    assert sum(c.skipped for c in out) == 13 == ledger.skipped
    assert sum(r["answered"] for r in client.stats.replicas.values()) == 7


def _stub_process() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "sciprobe.testing.stub_server", "--port", "0", "--latency", "0.02"],
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def test_a_replica_killed_mid_run_leaves_every_item_answered(transport):
    """One of two servers is killed (SIGKILL, its own process) when the other has seen 6 requests."""
    proc, url = _stub_process()
    killed = threading.Event()

    def kill_the_other_at_six(body: dict, index: int) -> None:
        if index == 5 and not killed.is_set():
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            killed.set()
        return None

    try:
        with StubServer(reply=echo, latency_s=0.02, status_script=kill_the_other_at_six) as survivor:
            client = client_for([url, survivor.base_url], transport, ",concurrency=2,timeout=60")
            with_clock(client)
            out = client.complete_many(requests(40))
            assert killed.is_set()
            assert sum(c.ok for c in out) == 40  # answered / total
            report = client.stats.replicas
            assert report[url]["cooldowns"] >= 1 and report[url]["failed"] >= 1
            assert report[url]["answered"] + report[survivor.base_url]["answered"] == 40
            assert report[survivor.base_url]["answered"] == survivor.count
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def test_results_record_the_replicas_and_what_each_answered(stubs, tmp_path):
    from sciprobe.run.evaluation import EvaluationRequest, evaluate

    a, b = stubs[0], stubs[1]
    model = f"openai/stub-model,base_url={a.base_url}|{b.base_url},api_key=sk-secret,concurrency=2"
    path, _ = evaluate(EvaluationRequest(tasks=["idrbench:ipi"], model=model, output_dir=tmp_path, use_cache=False))
    text = path.read_text()
    assert "sk-secret" not in text
    usage = json.loads(text)["sciprobe"]["usage"]
    assert set(usage["replicas"]) == {a.base_url, b.base_url}
    assert {u: r["answered"] for u, r in usage["replicas"].items()} == {a.base_url: a.count, b.base_url: b.count}
    assert a.count >= 1 and b.count >= 1 and usage["calls"] == a.count + b.count
