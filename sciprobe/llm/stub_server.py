"""A loopback OpenAI-compatible chat server for tests and benches (stdlib only, no model).

Why a real HTTP server rather than mocking litellm: the client's retry, timeout, concurrency and error
mapping all live in litellm + the OpenAI SDK + the HTTP transport; only a real socket exercises them.

    with StubServer(latency_s=0.05, status_script=[503, 503]) as stub:
        LLMClient(f"openai/judge,base_url={stub.base_url},api_key=x").complete_many(requests)
        assert stub.count == 3

Manual use: ``python -m sciprobe.llm.stub_server --port 8765 --latency 0.05``.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from sciprobe.llm.types import canonical_json, sha256_hex

ReplyFn = Callable[[dict[str, Any]], str]
ScriptEntry = int | tuple[int, dict[str, str]]
StatusFn = Callable[[dict[str, Any], int], ScriptEntry | None]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


def default_reply(body: dict[str, Any]) -> str:
    """Deterministic rule-based reply: a verdict derived from the hash of the messages.

    Same messages -> same verdict, so replays and cache checks can compare texts exactly.
    """
    digest = sha256_hex(canonical_json(body.get("messages", [])))
    verdict = "Yes" if int(digest[:8], 16) % 2 == 0 else "No"
    return f"Reasoning: stub judgement {digest[:8]}.\nVerdict: {verdict}"


def _count_tokens(text: str) -> int:
    """Whitespace tokens: crude, but deterministic and > 0 for any non-empty text."""
    return len(text.split())


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog is 5: a burst of 32 new connections then waits on SYN retransmits
    # (~1 s each), which would make any concurrency bench measure the kernel, not the client.
    request_queue_size = 256
    stub: StubServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up mid-request (cancelled calls, timeouts) are normal here: no traceback spam."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 keeps connections alive, as real providers do; the client's connection pool is then measured.
    protocol_version = "HTTP/1.1"
    # Unbuffered (the default), headers and body leave in two writes, and with Nagle on the body waits for
    # the client's delayed ACK: ~40 ms per request on Linux, which capped a raw aiohttp client at 0.69 of
    # the concurrency bound. Buffered + TCP_NODELAY: one segment per response, flushed by the stdlib after
    # each request (raw client: 0.97 of the bound).
    disable_nagle_algorithm = True
    wbufsize = 1 << 16
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            model = {"id": self.server.stub.model, "object": "model", "created": 0, "owned_by": "sciprobe-stub"}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found_error"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found_error"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            self._send_json(400, {"error": {"message": f"invalid JSON: {exc}", "type": "invalid_request_error"}})
            return
        status, payload, headers = self.server.stub._handle(body, dict(self.headers.items()))
        self._send_json(status, payload, headers)


class StubServer:
    """OpenAI-compatible ``/v1/chat/completions`` + ``/v1/models`` on a loopback port, in a daemon thread.

    ``reply(body) -> str`` makes the answer text (default :func:`default_reply`). ``status_script`` scripts
    failures for retry tests: a list consumed one entry per chat request (``503`` or ``(429, {"Retry-After":
    "1"})``; when exhausted every request succeeds) or a callable ``(body, index) -> entry | None``.
    ``latency_s`` sleeps in each request (in its own thread, so concurrent requests overlap like a real API).
    ``requests``/``count``/``max_in_flight`` let tests assert exactly what the client sent and how.
    """

    def __init__(
        self,
        reply: ReplyFn | None = None,
        latency_s: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        status_script: Iterable[ScriptEntry] | StatusFn | None = None,
        model: str = "stub-model",
    ) -> None:
        self.reply: ReplyFn = reply or default_reply
        self.latency_s = latency_s
        self.host = host
        self.port = port
        self.model = model
        self._script: StatusFn | list[ScriptEntry] | None = (
            status_script if status_script is None or callable(status_script) else list(status_script)
        )
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> Self:
        if self._httpd is not None:
            return self
        httpd = _Server((self.host, self.port), _Handler)
        httpd.stub = self
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- observation -------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """A copy of the chat request bodies received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """HTTP headers of each chat request (same order as :attr:`requests`), e.g. to check Authorization."""
        with self._lock:
            return list(self._headers)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._requests)

    @property
    def max_in_flight(self) -> int:
        """Most chat requests being handled at the same moment (the client's effective concurrency)."""
        with self._lock:
            return self._max_in_flight

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
            self._headers.clear()
            self._max_in_flight = self._in_flight

    # -- request handling --------------------------------------------------------------------------
    def _next_status(self, body: dict[str, Any], index: int) -> tuple[int, dict[str, str]]:
        entry: ScriptEntry | None
        if self._script is None:
            entry = None
        elif callable(self._script):
            entry = self._script(body, index)
        else:
            with self._lock:
                entry = self._script.pop(0) if self._script else None
        if entry is None:
            return 200, {}
        if isinstance(entry, tuple):
            return int(entry[0]), dict(entry[1])
        return int(entry), {}

    def _handle(
        self, body: dict[str, Any], http_headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self._lock:
            index = len(self._requests)
            self._requests.append(body)
            self._headers.append({k.lower(): v for k, v in (http_headers or {}).items()})
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        try:
            if self.latency_s > 0:
                time.sleep(self.latency_s)
            status, headers = self._next_status(body, index)
            if status != 200:
                kind = _ERROR_TYPES.get(status, "server_error")
                error = {"message": f"stub scripted status {status}", "type": kind, "code": str(status)}
                return status, {"error": error}, headers
            try:
                return 200, self._completion(body), headers
            except Exception as exc:  # noqa: BLE001 - a broken reply callable becomes a visible 500
                error = {"message": f"stub reply failed: {type(exc).__name__}: {exc}", "type": "server_error"}
                return 500, {"error": error}, {}
        finally:
            with self._lock:
                self._in_flight -= 1

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        text = self.reply(body)
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        prompt_tokens, completion_tokens = _count_tokens(prompt), _count_tokens(text)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def main(argv: list[str] | None = None) -> None:
    """Serve until interrupted; prints the base URL first (benches read that line)."""
    parser = argparse.ArgumentParser(prog="python -m sciprobe.llm.stub_server", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds slept per request")
    args = parser.parse_args(argv)
    stub = StubServer(latency_s=args.latency, host=args.host, port=args.port).start()
    print(stub.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        stub.stop()


if __name__ == "__main__":
    main()
