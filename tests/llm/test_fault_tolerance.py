"""Acceptance tests of "Run economics and resilience" (fault tolerance): a whole evaluation against a provider
that misbehaves (30% injected faults), and a run killed with SIGKILL then resumed from the response cache.

What must hold: every item ends scored or recorded as a failure with its reason, none is lost or duplicated,
the cache holds exactly one entry per successful unique request, and nothing that was answered and cached is
ever asked again.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from sciprobe.run.evaluation import EvaluationRequest, evaluate
from sciprobe.llm.cache import ResponseCache, request_key
from sciprobe.llm.client import LLMClient
from sciprobe.testing.stub_server import StubServer
from sciprobe.llm.types import Request

TASK, KEY = "idrbench:ipi", "idrbench:ipi|0"
N_ITEMS = 16  # idrbench:ipi in the bundled sample
MODEL = "openai/stub-model"
#: exception names a failed item may record (litellm's mapping of what the stub does)
FAILURE_NAMES = ("RateLimitError", "InternalServerError", "BadGatewayError", "ServiceUnavailableError", "Timeout",
                 "APIConnectionError", "APIError", "MalformedResponse")


def verdict_reply(body: dict) -> str:
    return 'Your verdict: Yes\nConfidence score: 80\nSubject: ["Physics"]'


def body_key(body: dict[str, Any], base_url: str) -> str:
    """The client's cache key of the request that produced ``body`` (what was sent = the effective params)."""
    params = {k: v for k, v in body.items() if k not in ("model", "messages")}
    return request_key(MODEL, base_url, Request.of(body["messages"], params))


def cache_keys(path: Path) -> set[str]:
    if not path.exists():
        return set()
    conn = sqlite3.connect(str(path), timeout=30)
    try:
        return {row[0] for row in conn.execute("SELECT key FROM responses")}
    except sqlite3.OperationalError:  # the table is not created yet
        return set()
    finally:
        conn.close()


def read_run(results_json: Path, out_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the task's score block, its per-sample details rows) from a results file."""
    results = json.loads(results_json.read_text())
    details = pq.read_table(out_dir / results["sciprobe"]["tasks"][KEY]["details"]).to_pylist()
    return results["results"][KEY], details


def assert_no_item_lost_or_duplicated(scores: dict[str, Any], details: list[dict[str, Any]]) -> None:
    """Every item is in the details once: answered, or a call that got no answer, recorded with its reason and
    left out of the score (a failed call is not a wrong answer: sciprobe.results.evidence)."""
    ids = [d["id"] for d in details]
    assert len(ids) == N_ITEMS == scores["n_items"] + sum(d["error"] is not None for d in details)
    assert len(set(ids)) == N_ITEMS
    for d in details:
        if d["error"] is None:  # scored
            assert d["response"] is not None and d["parse_path"] != "error", d
        else:  # a recorded failure, with its reason
            assert d["response"] is None and d["parse_path"] == "error", d
            assert d["error"].split(":")[0] in FAILURE_NAMES and len(d["error"]) > 20, d["error"]
    assert scores["n_failed"] == 0  # the stub's answers all parse; the unanswered items are not in the score


def _warm_up_litellm() -> None:
    """One call against a fault-free stub: litellm's first call in a process does seconds of one-off work on
    the event loop, during which the short timeouts below would fire for requests not even sent yet."""
    with StubServer() as warm:
        LLMClient(f"{MODEL},base_url={warm.base_url},api_key=x").complete_many([Request.of([{"role": "user",
                                                                                            "content": "warm"}])])


def test_evaluation_under_30_percent_faults_loses_nothing_and_reruns_only_failures(tmp_path):
    doomed: list[str] = []  # the messages of one item the provider always refuses (a guaranteed failure)
    lock = threading.Lock()

    def refuse_one_item(body: dict, index: int):
        messages = json.dumps(body["messages"])
        with lock:
            if not doomed:
                doomed.append(messages)
        return 503 if messages == doomed[0] else None  # None: the random fault draw decides

    stub = StubServer(reply=verdict_reply, status_script=refuse_one_item, fault_rate=0.3, fault_seed=1,
                      fault_hang_s=5.0, fault_slow_s=0.2)
    # the faults of the first 16 requests (which surely happen) mix kinds, timeouts included
    drawn = [stub.fault_for(i) for i in range(N_ITEMS)]
    assert sum(k is not None for k in drawn) >= 6 and {"timeout", "truncated", "non_json", "503"} <= set(drawn)
    cache_path = tmp_path / "responses.sqlite"
    _warm_up_litellm()
    with stub, ResponseCache(cache_path) as cache:
        # timeout 2 s: well under the 5 s hang of a timeout fault, well over a loaded machine's slowest answer
        spec = f"{MODEL},base_url={stub.base_url},api_key=x,max_retries=2,timeout=2,concurrency=4"
        client = LLMClient(spec, cache=cache, backoff_base_s=0.01)
        out1 = tmp_path / "run1"
        path1, _ = evaluate(EvaluationRequest(tasks=[TASK], model=spec, output_dir=out1), client=client)
        scores1, details1 = read_run(path1, out1)
        bodies1, log1 = stub.requests, stub.log

        assert_no_item_lost_or_duplicated(scores1, details1)
        injected = [e["outcome"] for e in log1 if e["outcome"] not in ("ok", "scripted")]
        assert len(injected) >= 4 and client.stats.retries > 0
        # the doomed item: refused on every attempt, recorded with the provider's reason
        doomed_bodies = [b for b in bodies1 if json.dumps(b["messages"]) == doomed[0]]
        # 1 + max_retries attempts (fewer can reach the stub only when a loaded machine stalls the client's
        # event loop past the timeout before a request is even sent: that attempt fails as a Timeout)
        assert 1 <= len(doomed_bodies) <= 3
        doomed_key = body_key(doomed_bodies[0], stub.base_url)
        [doomed_row] = [d for d in details1 if d["request_hash"] == doomed_key]
        assert doomed_row["error"].startswith(("ServiceUnavailableError: ", "Timeout: ")), doomed_row["error"]
        if len(doomed_bodies) == 3:
            assert "scripted status 503" in doomed_row["error"]
        ok1 = {d["request_hash"] for d in details1 if d["error"] is None}
        failed1 = {d["request_hash"] for d in details1 if d["error"] is not None}
        assert ok1 and doomed_key in failed1
        # what was sent is what is keyed: every answered item's key is the key of a body the stub received
        sent_keys = {body_key(b, stub.base_url) for b in bodies1}
        assert ok1 | failed1 <= sent_keys
        # the cache: exactly one entry per successful unique request, none for failures
        assert cache_keys(cache_path) == ok1 and len(cache) == len(ok1)

        # Rerun (the provider has recovered, except for the doomed item): only failures are asked again.
        stub.fault_rate = 0.0
        before = stub.count
        # a longer timeout (not part of the cache key) so that a loaded machine cannot add a spurious retry
        client2 = LLMClient(spec.replace("timeout=2", "timeout=10"), cache=cache, backoff_base_s=0.01)
        out2 = tmp_path / "run2"
        path2, _ = evaluate(EvaluationRequest(tasks=[TASK], model=spec, output_dir=out2), client=client2)
        scores2, details2 = read_run(path2, out2)
        bodies2 = stub.requests[before:]

    keys2 = [body_key(b, stub.base_url) for b in bodies2]
    assert not set(keys2) & ok1  # no call for an item that had succeeded
    assert set(keys2) == failed1  # every failure was retried
    calls = Counter(keys2)
    assert all(n == 1 for key, n in calls.items() if key != doomed_key)  # once each
    assert calls[doomed_key] == 3  # 1 + max_retries, all refused
    assert_no_item_lost_or_duplicated(scores2, details2)
    by_id1 = {d["id"]: d for d in details1}
    for d in details2:
        before_row = by_id1[d["id"]]
        if before_row["error"] is None:  # replayed from the cache, identical
            assert d["cached"] and d["response"] == before_row["response"]
        elif d["request_hash"] == doomed_key:
            assert d["error"].startswith("ServiceUnavailableError: ")
        else:
            assert d["error"] is None and not d["cached"]
    assert scores2["n_items"] == N_ITEMS - 1 and json.loads(path2.read_text())["sciprobe"]["incomplete"]


def _sciprobe_command() -> list[str]:
    script = Path(sys.executable).parent / "sciprobe"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from sciprobe.cli.commands import main; sys.exit(main(sys.argv[1:]))"]


class _Gate:
    """A reply function that answers the first ``open_for`` requests, then holds every further one until
    released: the run to be killed is then frozen at a known point (exactly ``open_for`` answers given)."""

    def __init__(self, open_for: int) -> None:
        self.left = open_for
        self.lock = threading.Lock()
        self.released = threading.Event()

    def __call__(self, body: dict) -> str:
        with self.lock:
            self.left -= 1
            admitted = self.left >= 0
        if not admitted:
            self.released.wait(60)
        return verdict_reply(body)


def test_kill_9_mid_run_then_rerun_repeats_no_cached_call(tmp_path):
    answered_before_kill = 5
    home = tmp_path / "home"  # the same SCIPROBE_HOME (hence response cache) for both runs
    env = {**os.environ, "SCIPROBE_HOME": str(home)}
    cache_path = home / "cache" / "responses.sqlite"
    gate = _Gate(answered_before_kill)
    with StubServer(reply=gate, latency_s=0.05) as stub:
        # a long timeout: the held requests stay in flight until the kill instead of failing
        # Each run sends its own api key (not part of the cache key): the stub tells the runs' requests apart
        # exactly, even one the killed process sent just before dying.
        spec = f"{MODEL},base_url={stub.base_url},concurrency=2,timeout=60,max_retries=0,api_key=kill-run-"
        command = [*_sciprobe_command(), "evaluate", TASK, "--model"]
        try:
            with open(tmp_path / "run1.log", "w") as log:
                run1 = subprocess.Popen([*command, spec + "1", "--output-dir", str(tmp_path / "run1")], env=env,
                                        stdout=log, stderr=subprocess.STDOUT)
                deadline = time.monotonic() + 90
                try:
                    while time.monotonic() < deadline and run1.poll() is None:
                        answered = [e for e in stub.log if e["outcome"] == "ok" and e["delivered"]]
                        stored = cache_keys(cache_path)
                        if len(answered) >= answered_before_kill and len(stored) >= answered_before_kill:
                            break
                        time.sleep(0.05)
                    assert run1.poll() is None, (tmp_path / "run1.log").read_text()[-2000:]
                    run1.send_signal(signal.SIGKILL)
                finally:
                    if run1.poll() is None:
                        run1.kill()
                    run1.wait(timeout=30)
            assert run1.returncode == -signal.SIGKILL
        finally:
            gate.released.set()  # the held handlers now answer a dead socket; every later request passes
        cached_after_kill = cache_keys(cache_path)
        assert len(cached_after_kill) == answered_before_kill  # the run was frozen: exactly these were stored
        assert not (tmp_path / "run1" / "results").exists()  # killed mid-way: it wrote nothing

        run2 = subprocess.run([*command, spec + "2", "--output-dir", str(tmp_path / "run2")], env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert run2.returncode == 0, run2.stdout[-2000:] + run2.stderr[-2000:]
        runs = [h["authorization"] for h in stub.request_headers]
        bodies2 = [b for b, run in zip(stub.requests, runs) if run == "Bearer kill-run-2"]
        base_url = stub.base_url
    assert answered_before_kill <= runs.count("Bearer kill-run-1") < N_ITEMS

    keys2 = [body_key(b, base_url) for b in bodies2]
    assert not set(keys2) & cached_after_kill  # no call whose completion had been stored is repeated
    assert len(keys2) == len(set(keys2)) == N_ITEMS - answered_before_kill  # every other item asked once
    assert len(cached_after_kill | set(keys2)) == N_ITEMS
    assert cache_keys(cache_path) == cached_after_kill | set(keys2)
    [results_json] = (tmp_path / "run2" / "results").rglob("results_*.json")
    scores, details = read_run(results_json, tmp_path / "run2")
    assert_no_item_lost_or_duplicated(scores, details)
    assert scores["n_failed"] == 0
    assert {d["request_hash"] for d in details if d["cached"]} == cached_after_kill
    assert {d["request_hash"] for d in details if not d["cached"]} == set(keys2)
