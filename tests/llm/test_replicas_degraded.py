"""Replicas, degraded (issue 22): one replica's failure that is the server's, not the request's, is retried on
another replica; a redirect is never followed; every answer is credited to the server that gave it.

- an answer over ``max_response_mb`` or a redirect: the same server would send it again, so the request goes to
  a replica not asked yet (never back to the same one; with one server it is a recorded failure at once);
- a 400-class answer (the request's fault, if every server says so) is asked once of another replica: when that
  one answers, the first replica was at fault (counted failed); when it says the same, the request was, and
  neither replica is blamed;
- a 307 to a server outside the spec is a failed call of the replica that sent it; the unlisted server is
  never contacted.

Real loopback StubServers, once per transport.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sciprobe.llm.client import LLMClient
from sciprobe.testing.stub_bodies import RawReply, raw_completion
from sciprobe.testing.stub_server import StubServer
from sciprobe.llm.types import Request

N = 12
OVERSIZED = RawReply(raw_completion("padded"), pad_bytes=2 << 20)  # 2 MB: over the spec's max_response_mb=1


@pytest.fixture(params=["litellm", "http"])
def transport(request) -> str:
    return request.param


@pytest.fixture
def good() -> Iterator[StubServer]:
    with StubServer(reply=lambda body: "fine: " + body["messages"][-1]["content"]) as server:
        yield server


def requests(n: int = N) -> list[Request]:
    return [Request.of([{"role": "user", "content": f"q{i}"}]) for i in range(n)]


def client_for(urls: list[str], transport: str, extra: str = "") -> LLMClient:
    spec = (f"openai/gpt-4o-mini,base_url={'|'.join(urls)},api_key=sk-test,transport={transport},"
            f"max_response_mb=1,concurrency=2{extra}")
    return LLMClient(spec, backoff_base_s=0.001)


def assert_all_from(out, server: StubServer) -> None:
    assert [c.text for c in out] == [f"fine: q{i}" for i in range(len(out))]
    assert server.count == len(out)


def test_an_oversized_answer_is_asked_of_the_other_replica(transport, good):
    with StubServer(status_script=lambda body, index: OVERSIZED) as bloated:
        client = client_for([bloated.base_url, good.base_url], transport)
        out = client.complete_many(requests())
        sent_to_bloated = bloated.count
    assert_all_from(out, good)
    report = client.stats.replicas
    assert report[good.base_url]["answered"] == N
    assert report[bloated.base_url]["answered"] == 0 and report[bloated.base_url]["failed"] == sent_to_bloated >= 1


def test_an_oversized_answer_from_every_replica_is_a_failure_asking_each_once(transport):
    with StubServer(status_script=lambda body, index: OVERSIZED) as a, \
            StubServer(status_script=lambda body, index: OVERSIZED) as b:
        client = client_for([a.base_url, b.base_url], transport, ",max_retries=5")
        [out] = client.complete_many(requests(1))
        counts = a.count, b.count
    assert not out.ok and out.error.startswith("ResponseTooLarge: ")
    assert out.attempts == 2 and counts == (1, 1)  # each server once: asking one again gets the same body


def test_a_400_from_one_replica_is_its_fault_when_the_other_answers(transport, good):
    with StubServer(status_script=lambda body, index: 400) as refusing:
        client = client_for([refusing.base_url, good.base_url], transport)
        out = client.complete_many(requests())
        refused = refusing.count
    assert_all_from(out, good)
    report = client.stats.replicas
    assert report[good.base_url]["answered"] == N
    assert refused >= 1 and report[refusing.base_url]["failed"] == refused  # its 400s were the server's fault
    assert all(c.attempts <= 2 for c in out)


def test_a_400_from_every_replica_is_the_requests_fault_and_blames_no_server(transport):
    with StubServer(status_script=lambda body, index: 400) as a, \
            StubServer(status_script=lambda body, index: 400) as b:
        client = client_for([a.base_url, b.base_url], transport, ",max_retries=5")
        out = client.complete_many(requests(4))
        sent = a.count + b.count
    assert all(not c.ok and c.error.startswith("BadRequestError: ") for c in out)
    assert all(c.attempts == 2 for c in out) and sent == 8  # a second opinion each, no more
    report = client.stats.replicas
    assert all(r["failed"] == 0 and r["cooldowns"] == 0 for r in report.values()), report


def test_a_400_from_a_single_server_is_not_retried(transport):
    with StubServer(status_script=lambda body, index: 400) as only:
        client = client_for([only.base_url], transport, ",max_retries=5")
        [out] = client.complete_many(requests(1))
        assert only.count == 1
    assert not out.ok and out.error.startswith("BadRequestError: ") and out.attempts == 1


def test_a_redirect_to_an_unlisted_server_is_not_followed(transport, good):
    with StubServer(reply=lambda body: "from the unlisted server") as unlisted:
        moved = RawReply(b"", status=307, headers={"Location": unlisted.base_url + "/chat/completions"})
        with StubServer(status_script=lambda body, index: moved) as redirecting:
            client = client_for([redirecting.base_url, good.base_url], transport)
            out = client.complete_many(requests())
            redirected = redirecting.count
        assert unlisted.count == 0  # never contacted
    assert_all_from(out, good)
    report = client.stats.replicas
    assert report[good.base_url]["answered"] == N
    assert report[redirecting.base_url]["answered"] == 0 and report[redirecting.base_url]["failed"] == redirected >= 1


def test_a_redirecting_single_server_is_a_recorded_failure(transport):
    with StubServer(reply=lambda body: "from the unlisted server") as unlisted:
        moved = RawReply(b"", status=308, headers={"Location": unlisted.base_url + "/chat/completions"})
        with StubServer(status_script=lambda body, index: moved) as only:
            client = client_for([only.base_url], transport, ",max_retries=5")
            [out] = client.complete_many(requests(1))
            assert only.count == 1
        assert unlisted.count == 0
    assert not out.ok and out.error.startswith("Redirected: HTTP 308 redirect to ") and out.attempts == 1
    assert unlisted.base_url in out.error
