"""Missing or bad credentials (issue 23.3): with no ``OPENAI_API_KEY`` an ``evaluate --model openai/...`` run used to
retry litellm's "Missing credentials" InternalServerError for hours, in silence.

- A spec whose provider needs a key that is not set is a user error before any call: one ``error:`` line, exit 2,
  nothing written, nothing contacted (the provider's endpoint is a loopback stub through ``OPENAI_BASE_URL``,
  litellm's own setting, so the same command with a key does reach it). ``api_key_env=`` names another variable.
- Authentication failures are final on both transports, whatever status they come with.
- A run whose calls fail says so on stderr at the first failure, with the retry plan (the backoff's waits are
  recorded on a virtual clock, not waited: the line comes before the first wait).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciprobe.cli.commands import main
from sciprobe.core.errors import SciprobeError
from sciprobe.llm.client import LLMClient
from sciprobe.testing.stub_bodies import RawReply
from sciprobe.testing.stub_server import StubServer
from sciprobe.llm.types import Request

from clock_support import VirtualClock


def verdict(body: dict) -> str:
    return 'Your verdict: Yes\nConfidence score: 80\nSubject: ["Physics"]'


@pytest.fixture
def provider(monkeypatch):
    """A stub standing in for the provider's own endpoint of ``openai/...`` specs without a base_url."""
    with StubServer(reply=verdict) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.delenv("OPENAI_API_BASE", raising=False)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        yield stub


def evaluate_cli(out: Path, model: str, *extra: str) -> int:
    return main(["evaluate", "idrbench:ipi", "--model", model, "--limit", "2", "--no-cache",
                 "--output-dir", str(out), *extra])


def test_a_missing_key_is_one_error_line_before_any_call(provider, tmp_path, capsys, monkeypatch):
    assert evaluate_cli(tmp_path / "no-key", "openai/gpt-4o-mini") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "OPENAI_API_KEY" in err and "api_key_env" in err
    assert provider.count == 0 and not (tmp_path / "no-key").exists()

    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")  # the same command with the key reaches it
    assert evaluate_cli(tmp_path / "with-key", "openai/gpt-4o-mini") == 0
    assert provider.count == 2
    assert {h["authorization"] for h in provider.request_headers} == {"Bearer sk-from-the-environment"}


def test_api_key_env_names_the_variable_instead(provider, tmp_path, capsys, monkeypatch):
    assert evaluate_cli(tmp_path / "unset", "openai/gpt-4o-mini,api_key_env=MY_OPENAI_KEY") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "MY_OPENAI_KEY" in err and provider.count == 0
    monkeypatch.setenv("MY_OPENAI_KEY", "sk-mine")
    assert evaluate_cli(tmp_path / "set", "openai/gpt-4o-mini,api_key_env=MY_OPENAI_KEY") == 0
    assert {h["authorization"] for h in provider.request_headers} == {"Bearer sk-mine"}


def test_a_judge_without_its_key_stops_the_run_before_the_model_is_called(provider, tmp_path, capsys):
    with StubServer(reply=verdict) as model:
        spec = f"openai/stub-model,base_url={model.base_url},api_key=sk-test"
        assert evaluate_cli(tmp_path / "o", spec, "--judge", "anthropic/claude-3-5-haiku-latest") == 2
        assert model.count == 0
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "ANTHROPIC_API_KEY" in err


def test_a_server_of_its_own_needs_no_key(provider, tmp_path):
    with StubServer(reply=verdict) as server:  # a vLLM or proxy base_url: a placeholder key is sent
        assert evaluate_cli(tmp_path / "o", f"openai/stub-model,base_url={server.base_url}") == 0
        assert server.count == 2


def test_litellms_missing_credentials_error_is_final(provider, monkeypatch):
    """An empty OPENAI_API_KEY passes litellm's environment check; its first call then fails "Missing credentials"
    (an InternalServerError, formerly retried): final, and nothing reached the server."""
    monkeypatch.setenv("OPENAI_API_KEY", "")
    client = LLMClient("openai/gpt-4o-mini,max_retries=5,concurrency=1", backoff_base_s=0.001)
    client._backend.sleep = VirtualClock().sleep
    with pytest.raises(SciprobeError, match="authentication failed .*Missing credentials"):
        client.complete_many([Request.of([{"role": "user", "content": f"q{i}"}]) for i in range(4)])
    assert provider.count == 0


AUTH_ANSWERS = [
    (500, "Missing credentials. Please pass an `api_key`."),
    (400, "Incorrect API key provided: sk-te****. You can find your API key at the provider."),
    (400, "API key not valid. Please pass a valid API key."),
]


@pytest.mark.parametrize("transport", ["litellm", "http"])
@pytest.mark.parametrize("status, message", AUTH_ANSWERS, ids=["500-missing", "400-incorrect", "400-not-valid"])
def test_authentication_failures_are_final_whatever_their_status(transport, status, message):
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode()
    with StubServer(status_script=lambda b, i: RawReply(body, status=status)) as server:
        client = LLMClient(f"openai/gpt-4o-mini,base_url={server.base_url},api_key=sk-test,transport={transport},"
                           "concurrency=1,max_retries=5", backoff_base_s=0.001)
        client._backend.sleep = VirtualClock().sleep
        with pytest.raises(SciprobeError, match="authentication failed for openai/gpt-4o-mini"):
            client.complete_many([Request.of([{"role": "user", "content": f"q{i}"}]) for i in range(6)])
        assert server.count <= 2  # not retried; at most the one call admitted behind it


class Events:
    """The stream of the backend's announcements and the backoff's waits, in the order they happened."""

    def __init__(self) -> None:
        self.log: list[tuple[str, object]] = []
        self.clock = VirtualClock()

    def write(self, text: str) -> int:
        if text.strip():
            self.log.append(("line", text))
        return len(text)

    def flush(self) -> None:
        return

    async def sleep(self, seconds: float) -> None:
        self.log.append(("sleep", seconds))
        await self.clock.sleep(seconds)


@pytest.mark.parametrize("transport", ["litellm", "http"])
def test_the_first_failure_is_announced_before_any_wait_with_the_retry_plan(transport):
    events = Events()
    with StubServer(status_script=lambda body, index: 503) as server:
        client = LLMClient(f"openai/gpt-4o-mini,base_url={server.base_url},api_key=sk-test,transport={transport},"
                           "concurrency=1,max_retries=3")
        client._backend.sleep, client._backend.stream = events.sleep, events
        out = client.complete_many([Request.of([{"role": "user", "content": f"q{i}"}]) for i in range(2)])
    assert all(not c.ok and c.error.startswith("ServiceUnavailableError: ") for c in out)
    lines = [text for kind, text in events.log if kind == "line"]
    assert len(lines) == 1 and events.log[0][0] == "line"  # said once, and at once: before the first wait
    assert lines[0].startswith("warning: openai/gpt-4o-mini: a call failed (ServiceUnavailableError: ")
    assert "retrying each call up to 3 times" in lines[0]
    assert sum(kind == "sleep" for kind, _ in events.log) == 6  # the retries still happen (3 per call)
