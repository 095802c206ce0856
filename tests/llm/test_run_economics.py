"""Run economics over real HTTP (loopback stub): the dry-run plan against the calls a run really makes,
hard caps that stop a run within one batch and resume from the cache, pacing, quota errors, the meter."""

import asyncio
import http.server
import threading
import io
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sciprobe.cli.commands import EXIT_INCOMPLETE, main
from sciprobe.core.errors import SciprobeError
from sciprobe.run.evaluation import EvaluationRequest, evaluate
from sciprobe.llm.client import LLMClient
from sciprobe.llm.ledger import Budget, RunLedger
from sciprobe.llm import pacing
from sciprobe.llm.pacing import Pacer
from sciprobe.testing.stub_server import StubServer
from sciprobe.llm.types import Completion, Request
from sciprobe.run.plan import plan_run

from clock_support import VirtualClock

IDR_TASKS = ["idrbench:ipi", "idrbench:i3_set1", "idrbench:i2r"]


def verdict_reply(body: dict) -> str:
    prompt = body["messages"][-1]["content"]
    if "Your choice:" in prompt:
        return "Your choice: Paper 1\nConfidence score: 60"
    if "Your reason:" in prompt:
        return "Your verdict: No\nYour reason: Unrelated problems.\nConfidence score: 70"
    return "Your verdict: Yes\nConfidence score: 80"


def _request(stub: StubServer, tmp_path: Path, **kw) -> EvaluationRequest:
    model = kw.pop("model", f"openai/stub-model,base_url={stub.base_url},api_key=sk-test,concurrency=4")
    return EvaluationRequest(tasks=kw.pop("tasks", IDR_TASKS), model=model, output_dir=tmp_path / "out", **kw)


def _results(path: Path) -> dict:
    return json.loads(path.read_text())


def test_dry_run_plan_matches_the_calls_made_and_then_counts_them_cached(tmp_path):
    # The default stub reply never names a paper, like the planner's placeholder, so even the tournament's
    # late rounds pair the same players: the plan must be exact.
    with StubServer() as stub:
        request = _request(stub, tmp_path)
        plan = plan_run(request)
        assert stub.count == 0, "planning must not call the model"
        assert [t.task for t in plan.tasks] == IDR_TASKS
        assert plan.tasks[0].items == 16 and plan.tasks[0].calls == 16
        evaluate(request)
        assert stub.count == plan.calls
        replanned = plan_run(request)
        assert replanned.calls == 0
        assert sum(t["cached"] for t in replanned.totals()) == sum(t["cached"] + t["calls"] for t in plan.totals())


def test_dry_run_counts_cached_only_what_the_response_cache_holds(tmp_path):
    """Issue 23.8: on an empty cache the tournament's repeated pairings were shown as cached (``calls 51 cached
    51``), which read as free. Cached means found in the response cache: 0 on an empty cache, every call after a
    run (then nothing left to pay)."""
    from sciprobe.run.plan import format_plan

    with StubServer() as stub:
        model = f"openai/gpt-4o-mini,base_url={stub.base_url},api_key=sk-test,concurrency=4"
        request = _request(stub, tmp_path, model=model)
        plan = plan_run(request)
        assert [t.cached for task in plan.tasks for t in task.tallies] == [0, 0, 0]
        [row] = plan.totals()
        assert row["cached"] == 0 and row["calls"] == plan.calls > 0 and row["cost_usd"] > 0
        i2r = plan.tasks[-1].tallies[0]
        assert i2r.repeats > 0  # same pairings in later rounds: free, but not "cached"
        assert "calls     " + str(plan.calls) + "  cached      0" in format_plan(plan)
        evaluate(request)
        replanned = plan_run(request)
        [again] = replanned.totals()
        assert again["calls"] == 0 and again["cost_usd"] == 0.0 and again["cached"] == stub.count == plan.calls


def test_dry_run_estimate_for_a_parsing_model_stays_within_the_tournament_tolerance(tmp_path):
    with StubServer(reply=verdict_reply) as stub:
        request = _request(stub, tmp_path)
        plan = plan_run(request)
        evaluate(request)
        i2r_planned = next(t.calls for t in plan.tasks if t.task == "idrbench:i2r")
        others = plan.calls - i2r_planned
        # ipi and i3 are exact; the tournament's late rounds depend on who wins
        assert others + 0.8 * i2r_planned <= stub.count <= others + 1.2 * i2r_planned


def test_dry_run_cli_prints_tokens_and_prices_unknown_models_as_unknown(tmp_path, capsys):
    with StubServer() as stub:
        model = f"openai/stub-model,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", "idrbench:ipi", "--model", model, "--dry-run"]) == 0
        text = capsys.readouterr().out
        assert "idrbench:ipi" in text and "unknown" in text
        assert main(["evaluate", "idrbench:ipi", "--model", "openai/gpt-4o-mini", "--dry-run", "--json"]) == 0
        plan = json.loads(capsys.readouterr().out)
        row = plan["totals"][0]
        assert row["calls"] == 16 and row["prompt_tokens"] > 16 * 100 and 0 < row["cost_usd"] < 1
        assert stub.count == 0


def test_max_calls_stops_within_the_limit_writes_partial_results_and_resumes(tmp_path, capsys):
    with StubServer(latency_s=0.01) as stub:
        model = f"openai/stub-model,base_url={stub.base_url},api_key=sk-test,concurrency=3"
        out = tmp_path / "capped"
        code = main(["evaluate", *IDR_TASKS, "--model", model, "--max-calls", "20", "--output-dir", str(out)])
        assert code == EXIT_INCOMPLETE
        assert stub.count == 20
        assert "INCOMPLETE: max_calls=20 reached" in capsys.readouterr().err
        results = _results(sorted((out / "results").rglob("*.json"))[-1])
        incomplete = results["sciprobe"]["incomplete"]
        assert incomplete["tasks_not_run"] == ["idrbench:i2r"]
        assert incomplete["tasks_partial"] == ["idrbench:i3_set1|0"]
        i3 = results["sciprobe"]["tasks"]["idrbench:i3_set1|0"]
        assert i3["provenance"]["incomplete"] == "max_calls=20 reached"
        details = pq.read_table(out / i3["details"]).to_pylist()
        refused = [d for d in details if (d.get("error") or "").startswith("BudgetExhausted: max_calls=20")]
        assert len(refused) == incomplete["skipped_calls"] > 0  # recorded with the reason, not lost
        # an item whose call was never sent is no wrong answer: every score stands on the answered items only
        assert all(d["parse_path"] == "error" for d in refused)
        assert len(details) - len(refused) == results["results"]["idrbench:i3_set1|0"]["n_items"]
        assert i3["provenance"]["call_failures"]["kinds"] == {"BudgetExhausted": len(refused)}
        assert results["sciprobe"]["ledger"]["sent"] == 20
        first = stub.count
        assert main(["evaluate", *IDR_TASKS, "--model", model, "--output-dir", str(tmp_path / "full")]) == 0
        full = _results(sorted((tmp_path / "full" / "results").rglob("*.json"))[-1])
        assert full["sciprobe"]["incomplete"] is None
        # a complete run gets its model-card evaluation results alongside; a capped one does not
        assert not list(out.rglob("*.model-index.yaml"))
        [card] = (tmp_path / "full" / "results").rglob("*.model-index.yaml")
        import yaml

        index = yaml.safe_load(card.read_text())["model-index"][0]
        assert index["name"] == "openai/stub-model" and len(index["results"]) >= 3
        assert full["sciprobe"]["ledger"]["cached"] >= first  # the capped run's answers were kept
        assert stub.count - first == full["sciprobe"]["ledger"]["sent"]


def test_max_cost_stops_within_one_batch_of_the_cap(tmp_path):
    # gpt-4o-mini is in litellm's bundled price table; the stub answers under that name.
    with StubServer(latency_s=0.01) as stub:
        request = _request(stub, tmp_path, tasks=["idrbench:ipi", "idrbench:i3_set1"], max_cost=0.0002,
                           model=f"openai/gpt-4o-mini,base_url={stub.base_url},api_key=sk-test,concurrency=2")
        path, _ = evaluate(request)
        ledger = _results(path)["sciprobe"]["ledger"]
        assert _results(path)["sciprobe"]["incomplete"]["reason"].startswith("max_cost=$0.0002 reached")
        per_call = ledger["cost_usd"] / ledger["answered"]
        # over by at most the calls already in flight: concurrency 2, admitted x2 into litellm (backends.py)
        assert 0.0002 <= ledger["cost_usd"] <= 0.0002 + 4 * per_call
        assert stub.count == ledger["sent"] < 32


def test_max_cost_refuses_an_unpriced_model_before_any_call(tmp_path):
    with StubServer() as stub:
        with pytest.raises(SciprobeError, match="no price for openai/stub-model"):
            evaluate(_request(stub, tmp_path, max_cost=1.0))
        assert stub.count == 0


def test_ledger_caps_and_meter_line():
    stream = io.StringIO()
    ledger = RunLedger(Budget(max_calls=3), planned_calls=4, meter=True, stream=stream, meter_interval_s=0)
    assert ledger.admit() is None and ledger.admit() is None
    ledger.record(Completion(text="a", prompt_tokens=10, completion_tokens=5, cost_usd=0.01))
    ledger.record(Completion(text=None, error="InternalServerError: boom"))
    ledger.record(Completion(text="b", cached=True))  # a cache hit is not a planned call
    line = ledger.meter_line()
    assert line.startswith("2/4 planned calls | calls 2 answered, 1 cached, 1 failed")
    assert "15 tokens" in line and "$0.0100" in line and "ETA" in line
    assert "[sciprobe] 1/4 planned calls" in stream.getvalue()
    assert ledger.admit() is None and ledger.admit() == "max_calls=3 reached" and ledger.exhausted
    assert "ETA" not in ledger.meter_line()  # a stopped run has no ETA
    with pytest.raises(SciprobeError):
        Budget(max_calls=-1)


class RecordingPacer(Pacer):
    """A pacer on a virtual clock that records when each request was let start."""

    def __init__(self, clock: VirtualClock, **limits) -> None:
        super().__init__(clock=clock.now, sleep=clock.sleep, **limits)
        self.starts: list[float] = []

    async def acquire(self, tokens: int = 0) -> None:
        await super().acquire(tokens)
        self.starts.append(self._clock())


def test_pacer_spaces_starts_and_pauses_the_deployment_on_429():
    clock = VirtualClock()
    pacer = RecordingPacer(clock, rpm=600)  # one start every 100 ms

    async def starts(n: int) -> None:
        for _ in range(n):
            await pacer.acquire()

    asyncio.run(starts(5))
    # half an interval of tolerance (catching up a late start), then one start per interval
    assert pacer.starts == pytest.approx([0.0, 0.05, 0.15, 0.25, 0.35])
    pacer.on_rate_limited(0.3)  # at 0.35: every start waits until 0.65
    assert pacer.interval == pytest.approx(0.125)
    asyncio.run(starts(1))
    assert pacer.starts[-1] == pytest.approx(0.65)
    for _ in range(50):
        pacer.on_success()
    assert pacer.interval == pytest.approx(0.1)


def test_token_pacing_waits_for_the_token_budget():
    clock = VirtualClock()
    pacer = RecordingPacer(clock, tpm=60_000)  # 1,000 tokens a second

    async def go() -> None:
        for tokens in (500, 500, 10):
            await pacer.acquire(tokens)

    asyncio.run(go())
    # 1,010 tokens: one second's worth, less the half-second tolerance, before the third may start
    assert pacer.starts == pytest.approx([0.0, 0.0, 0.5])


def test_client_rpm_paces_real_requests(tmp_path):
    clock = VirtualClock()
    with StubServer() as stub:
        spec = f"openai/paced,base_url={stub.base_url},api_key=x,concurrency=8,rpm=1200"
        pacer = RecordingPacer(clock, rpm=1200)
        pacing._PACERS[("openai/paced", stub.base_url)] = pacer  # the deployment's pacer, on the virtual clock
        try:
            client = LLMClient(spec)
            assert client._backend.pacer is pacer
            out = client.complete_many([Request.of([{"role": "user", "content": f"q{i}"}]) for i in range(11)])
        finally:
            del pacing._PACERS[("openai/paced", stub.base_url)]
        assert all(c.ok for c in out) and stub.count == 11
    # eleven starts 50 ms apart, the first late one catching up half an interval
    assert pacer.starts == pytest.approx([0.0] + [0.025 + 0.05 * k for k in range(10)])


@pytest.mark.parametrize("transport", ["litellm", "http"])
def test_429_pauses_and_retries_then_succeeds(transport):
    with StubServer(status_script=[429]) as stub:
        spec = f"openai/limited-{transport},base_url={stub.base_url},api_key=x,rpm=6000,transport={transport}"
        client = LLMClient(spec, backoff_base_s=0.01)
        [completion] = client.complete_many([Request.of([{"role": "user", "content": "hi"}])])
        assert completion.ok and completion.attempts == 2
        assert client._backend.pacer.pauses == 1


class _QuotaHandler(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).hits += 1
        body = json.dumps({"error": {"message": "You exceeded your current quota, please check your plan and "
                                                "billing details.", "type": "insufficient_quota",
                                     "code": "insufficient_quota"}}).encode()
        self.send_response(429)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        return


@pytest.mark.parametrize("transport", ["litellm", "http"])
def test_quota_exhaustion_fails_fast_with_one_clear_error(transport):
    _QuotaHandler.hits = 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _QuotaHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        client = LLMClient(f"openai/broke,base_url={url},api_key=x,concurrency=1,max_retries=5,transport={transport}",
                           backoff_base_s=0.01)
        with pytest.raises(SciprobeError, match="quota exhausted for openai/broke"):
            client.complete_many([Request.of([{"role": "user", "content": f"q{i}"}]) for i in range(5)])
        assert _QuotaHandler.hits == 1  # no retry, no further call: waiting cannot cure an empty account
    finally:
        server.shutdown()
        server.server_close()


def test_a_capped_runs_partial_task_never_reaches_the_leaderboard(tmp_path):
    from sciprobe.leaderboard.importer import import_results_file
    from sciprobe.leaderboard.store import SQLiteStore

    with StubServer() as stub:
        path, _ = evaluate(_request(stub, tmp_path, tasks=["idrbench:ipi", "idrbench:i3_set1"], max_calls=20))
    store = SQLiteStore(tmp_path / "board")
    ids = import_results_file(store, path)
    assert len(ids) == 1  # ipi finished inside the cap; i3_set1 was cut short
    assert [r.task for r in store.list_results()] == ["idrbench:ipi"]


def test_dry_run_plans_judge_panels_and_executes_no_model_code(tmp_path):
    from sciprobe.core.registry import get_benchmark
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.data.build import build_benchmark

    built = tmp_path / "sgi"
    build_benchmark(get_benchmark("sgibench"), write_synthetic_source(tmp_path / "src", n=3), built)
    with StubServer() as stub:
        spec = f"openai/stub-model,base_url={stub.base_url},api_key=sk-test"
        judges = (f"openai/judge-a,base_url={stub.base_url},api_key=sk-test;"
                  f"openai/judge-b,base_url={stub.base_url},api_key=sk-test")
        request = _request(stub, tmp_path, model=spec, tasks=["sgibench:dry_experiment", "sgibench:idea_generation"],
                           judge=judges, limit=2, data=str(built))
        plan = plan_run(request)
        assert stub.count == 0
    dry, idea = plan.tasks
    assert dry.items == 2 and [t.role for t in dry.tallies] == ["model", "judge"]
    model, judge = dry.tallies
    assert model.calls + model.cached + model.repeats == 2 and judge.calls == 0  # (identical prompts: sent once)
    assert any("not counted" in note for note in dry.notes)
    assert [(t.role, t.model) for t in idea.tallies] == [("model", "openai/stub-model"), ("judge", "openai/judge-a"),
                                                         ("judge", "openai/judge-b")]
    # two position-swapped votes per judge per item, asked up to 5 times while unparsable (the placeholder
    # never parses): every vote of every attempt is counted once, as a call, a cache hit, a repeat or a re-ask
    for judge in idea.tallies[1:]:
        assert judge.calls + judge.cached + judge.repeats + judge.reasks == 2 * 2 * 5
        assert judge.reasks == 4 * judge.calls > 0
