"""A replica that answers 200 with no chat completion in it (issue 22.3): the whole IDRBench IPI sample (16 items)
through ``sciprobe evaluate`` with two loopback replicas, once per transport.

A body without message content is a failed call of that server (``MalformedResponse``), retried on the other
replica like a 5xx: the run ends complete with every answer from the good replica, and with no good replica it
ends incomplete (exit 3, no model-index), never with the missing answers scored as wrong ones. The shapes one by
one (what is an empty answer, what is malformed) are cases in tests/cases/llm_hostile_responses.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from sciprobe.cli.commands import EXIT_INCOMPLETE, main
from sciprobe.testing.stub_bodies import RawReply, raw_completion
from sciprobe.testing.stub_server import StubServer

KEY = "idrbench:ipi|0"
N_ITEMS = 16  # idrbench:ipi in the bundled sample
NO_CONTENT = "no_content"  # the stub's fault kind: a chat completion whose message has no content
CONTENT_IS_A_NUMBER = RawReply(raw_completion(choices=json.dumps(
    [{"index": 0, "message": {"role": "assistant", "content": 0}, "finish_reason": "stop"}])))


def verdict(body: dict) -> str:
    return 'Your verdict: Yes\nConfidence score: 80\nSubject: ["Physics"]'


def run(tmp_path: Path, urls: list[str], transport: str, extra: str = "") -> tuple[int, dict[str, Any], list[dict]]:
    model = f"openai/stub-model,base_url={'|'.join(urls)},api_key=sk-test,transport={transport}{extra}"
    out = tmp_path / "out"
    code = main(["evaluate", "idrbench:ipi", "--model", model, "--output-dir", str(out), "--no-cache"])
    [path] = (out / "results").rglob("results_*.json")
    results = json.loads(path.read_text())
    details = pq.read_table(out / results["sciprobe"]["tasks"][KEY]["details"]).to_pylist()
    return code, results, details


@pytest.mark.parametrize("transport", ["http", "litellm"])
@pytest.mark.parametrize("bad_body", [NO_CONTENT, CONTENT_IS_A_NUMBER], ids=["no_content", "content_is_a_number"])
def test_one_replica_without_content_the_run_is_complete_from_the_other(tmp_path, transport, bad_body):
    with StubServer(status_script=lambda body, index: bad_body) as bad, StubServer(reply=verdict) as good:
        code, results, details = run(tmp_path, [bad.base_url, good.base_url], transport)
        sent_to_good, sent_to_bad = good.count, bad.count
    assert code == 0
    assert results["sciprobe"]["incomplete"] is None
    assert len(details) == N_ITEMS and all(d["error"] is None and d["response"] for d in details)
    strict = results["sciprobe"]["tasks"][KEY]["scores"]["strict"]["coverage"]
    assert strict["n_items"] == N_ITEMS and strict["n_failed"] == 0  # no answer scored as an unreadable one
    replicas = results["sciprobe"]["usage"]["replicas"]
    assert replicas[good.base_url]["answered"] == N_ITEMS == sent_to_good  # every answer from the good one
    assert replicas[bad.base_url]["answered"] == 0 and replicas[bad.base_url]["failed"] == sent_to_bad >= 1
    assert list((tmp_path / "out").rglob("*.model-index.yaml"))


@pytest.mark.parametrize("transport", ["http", "litellm"])
def test_no_replica_with_content_the_run_is_incomplete_not_scored(tmp_path, transport, capsys):
    with StubServer(status_script=lambda body, index: NO_CONTENT) as first, \
            StubServer(status_script=lambda body, index: NO_CONTENT) as second:
        code, results, details = run(tmp_path, [first.base_url, second.base_url], transport, ",max_retries=1")
    assert code == EXIT_INCOMPLETE
    failures = results["sciprobe"]["incomplete"]["call_failures"][KEY]
    assert failures["n"] == N_ITEMS and failures["kinds"] == {"MalformedResponse": N_ITEMS}
    assert all(d["parse_path"] == "error" and d["error"].startswith("MalformedResponse: ") for d in details)
    assert not list((tmp_path / "out").rglob("*.model-index.yaml"))
    err = capsys.readouterr().err
    assert "INCOMPLETE" in err and "MalformedResponse: 16" in err
