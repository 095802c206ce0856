"""A loopback OpenAI-compatible chat server for tests and benches (stdlib only, no model).

Why a real HTTP server rather than mocking litellm: the client's retry, timeout, concurrency and error
mapping all live in litellm + the OpenAI SDK + the HTTP transport; only a real socket exercises them.

    with StubServer(latency_s=0.05, status_script=[503, 503]) as stub:
        LLMClient(f"openai/judge,base_url={stub.base_url},api_key=x").complete_many(requests)
        assert stub.count == 3

Besides scripted statuses it can misbehave like a real provider or proxy:

- fault injection: ``StubServer(fault_rate=0.3, fault_kinds=("429", "503", "timeout"), fault_seed=0)``
  answers a deterministic (seed + request index) 30% of chat requests with one of :data:`FAULT_KINDS`;
  a ``status_script`` entry may also name a fault kind (``status_script=["truncated", "non_json"]``);
- rate limits: ``StubServer(rpm=600, burst=2)`` (and/or ``tpm=``) enforces token buckets and answers
  over-limit requests with 429 + Retry-After, counted in :attr:`StubServer.count_429`;
- tool calls: a reply function may return a whole assistant message (``{"role": "assistant", "content":
  None, "tool_calls": [...]}``) instead of text;
- ``"stream": true`` requests are answered with server-sent events;
- hand-made answers: a script entry may be a :class:`~sciprobe.testing.stub_bodies.RawReply` (any status,
  headers and bytes: hostile usage fields, gzip bombs, endless or lying bodies).

:attr:`StubServer.log` records every chat request (index, sha256 of its canonical body, outcome, status).

Manual use: ``python -m sciprobe.testing.stub_server --port 8765 --latency 0.05 --fault-rate 0.1 --rpm 600``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from sciprobe.testing.stub_bodies import RawReply
from sciprobe.llm.types import canonical_json, sha256_hex

#: A reply is the answer text, or a whole assistant message (e.g. with ``tool_calls``).
ReplyFn = Callable[[dict[str, Any]], "str | dict[str, Any]"]
#: A status code, a status with extra headers, the name of a fault kind (see :data:`FAULT_KINDS`), or a
#: hand-made answer.
ScriptEntry = int | tuple[int, dict[str, str]] | str | RawReply
StatusFn = Callable[[dict[str, Any], int], ScriptEntry | None]

#: What fault injection can do to a chat request:
#: ``429`` rate limited with a short retry-after-ms / Retry-After hint; ``429_bare`` the same without any hint;
#: ``500`` / ``502`` / ``503`` server errors; ``timeout`` hold the request ``fault_hang_s`` then drop the
#: connection without an answer; ``truncated`` 200 whose Content-Length promises more than is sent before the
#: connection closes; ``non_json`` 200 with an HTML page; ``slow_stream`` a correct answer dripped out over
#: ``fault_slow_s`` (as slow SSE chunks when the request streams); ``no_content`` 200 with a chat completion whose
#: message has no ``content`` (a broken replica: a failed call, not an empty answer).
FAULT_KINDS: tuple[str, ...] = (
    "429", "429_bare", "500", "502", "503", "timeout", "truncated", "non_json", "slow_stream", "no_content",
)

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}

_HTML_PAGE = (
    b"<html><head><title>Gateway</title></head><body><h1>Upstream temporarily unavailable</h1>"
    b"<p>The proxy could not reach the model server. (sciprobe stub fault: non_json)</p></body></html>"
)


def default_reply(body: dict[str, Any]) -> str:
    """Deterministic rule-based reply: a verdict derived from the hash of the messages.

    Same messages -> same verdict, so replays and cache checks can compare texts exactly.
    """
    digest = sha256_hex(canonical_json(body.get("messages", [])))
    verdict = "Yes" if int(digest[:8], 16) % 2 == 0 else "No"
    return f"Reasoning: stub judgement {digest[:8]}.\nVerdict: {verdict}"


def score_reply(body: dict[str, Any]) -> str:
    """Deterministic judge-like reply: ``Score: n`` (1-10) from the hash of the messages (LACER-style judges
    parse it; a stand-in for demos and tests, never a judgement)."""
    digest = sha256_hex(canonical_json(body.get("messages", [])))
    return f"Reasoning: stub judgement {digest[:8]}.\nScore: {1 + int(digest[:8], 16) % 10}"


REPLIES: dict[str, ReplyFn] = {"verdict": default_reply, "score": score_reply}


def body_sha256(body: dict[str, Any]) -> str:
    """The request fingerprint used in :attr:`StubServer.log`: sha256 of the canonical JSON body."""
    return sha256_hex(canonical_json(body))


def _count_tokens(text: str) -> int:
    """Whitespace tokens: crude, but deterministic and > 0 for any non-empty text."""
    return len(text.split())


def _prompt_text(body: dict[str, Any]) -> str:
    return " ".join(str(m.get("content") or "") for m in body.get("messages", []))


def _retry_headers(wait_s: float) -> dict[str, str]:
    """Both hints real providers send: exact milliseconds, and whole seconds (HTTP allows no fraction)."""
    return {"retry-after-ms": str(max(1, math.ceil(wait_s * 1000.0))), "Retry-After": str(max(1, math.ceil(wait_s)))}


class TokenBucket:
    """``rate_per_s`` tokens per second refill a bucket holding at most ``capacity`` (not thread-safe:
    :class:`StubServer` calls it under its lock).

    A request costing more than the capacity is admitted once the bucket is full and drives it negative, so
    an oversized request is slow but never refused forever.
    """

    def __init__(self, rate_per_s: float, capacity: float, clock: Callable[[], float] = time.monotonic) -> None:
        if rate_per_s <= 0 or capacity <= 0:
            raise ValueError("token bucket rate and capacity must be > 0")
        self.rate = float(rate_per_s)
        self.capacity = float(capacity)
        self._clock = clock
        self.tokens = float(capacity)
        self._stamp = clock()

    def _refill(self) -> None:
        now = self._clock()
        self.tokens = min(self.capacity, self.tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    def take(self, cost: float = 1.0) -> float:
        """Admit (returns 0.0, tokens spent) or refuse (returns the seconds until it would be admitted)."""
        self._refill()
        need = min(float(cost), self.capacity)
        if self.tokens >= need:
            self.tokens -= cost
            return 0.0
        return (need - self.tokens) / self.rate

    def give_back(self, cost: float = 1.0) -> None:
        self.tokens = min(self.capacity, self.tokens + cost)


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

    def _send_bytes(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None,
                    content_length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data) if content_length is None else content_length))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode("utf-8"), "application/json", headers)

    def _drip(self, chunks: list[bytes], total_s: float) -> None:
        """Write ``chunks`` one by one, flushed, spread over ``total_s`` seconds."""
        pause = total_s / max(1, len(chunks))
        for chunk in chunks:
            time.sleep(pause)
            self.wfile.write(chunk)
            self.wfile.flush()

    def _send_sse(self, events: list[dict[str, Any]], total_s: float = 0.0) -> None:
        """Server-sent events in chunked transfer encoding, ending with ``data: [DONE]``."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        frames = [f"data: {json.dumps(e)}\n\n".encode() for e in events] + [b"data: [DONE]\n\n"]
        chunks = [b"%x\r\n%s\r\n" % (len(f), f) for f in frames] + [b"0\r\n\r\n"]
        if total_s > 0:
            self.wfile.flush()  # the headers now, then the events one by one
            self._drip(chunks, total_s)
        else:
            self.wfile.write(b"".join(chunks))

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
        self.server.stub._serve(self, body)


class StubServer:
    """OpenAI-compatible ``/v1/chat/completions`` + ``/v1/models`` on a loopback port, in a daemon thread.

    ``reply(body) -> str | dict`` makes the answer (default :func:`default_reply`); a dict is a whole assistant
    message, passed through as the choice's message (``finish_reason`` "tool_calls" when it has tool calls,
    unless it carries its own ``finish_reason``; dict ``arguments`` are JSON-encoded, missing call ids and
    ``type`` filled in). ``status_script`` scripts failures for retry tests: a list consumed one entry per
    chat request (``503``, ``(429, {"Retry-After": "1"})`` or a fault kind such as ``"truncated"``; when
    exhausted every request succeeds) or a callable ``(body, index) -> entry | None``.
    ``latency_s`` sleeps in each request (in its own thread, so concurrent requests overlap like a real API).
    ``requests``/``count``/``max_in_flight``/``log`` let tests assert exactly what the client sent and how.

    Fault injection (applies to requests the script leaves alone): request ``index`` gets a fault when
    ``u(fault_seed, index) < fault_rate``, the kind drawn from ``fault_kinds``, both from a hash of seed and
    index: the same seed and request order give the same faults, whatever the threads do. ``fault_hang_s``
    is how long a ``timeout`` fault holds the request before dropping it (make it longer than the client's
    timeout), ``fault_slow_s`` how long a ``slow_stream`` answer takes, ``fault_retry_after_s`` the hint a
    ``429`` fault sends. ``fault_rate``, ``fault_kinds`` and ``fault_seed`` are plain attributes: a test may
    change them between two runs (e.g. ``stub.fault_rate = 0`` for a clean rerun).

    Rate limits: ``rpm`` requests per minute with a bucket of ``burst`` requests, ``tpm`` tokens per minute
    (prompt whitespace tokens + ``max_tokens``) with a bucket of ``tpm_burst`` tokens (default: one second's
    worth, ``tpm / 60``; a larger request waits for a full bucket). Checked on arrival, before
    ``latency_s`` and faults; a refused request gets 429 with the wait the bucket needs and counts in
    :attr:`count_429`.
    """

    def __init__(
        self,
        reply: ReplyFn | None = None,
        latency_s: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        status_script: Iterable[ScriptEntry] | StatusFn | None = None,
        model: str = "stub-model",
        *,
        fault_rate: float = 0.0,
        fault_kinds: Iterable[str] = FAULT_KINDS,
        fault_seed: int = 0,
        fault_hang_s: float = 2.0,
        fault_slow_s: float = 0.3,
        fault_retry_after_s: float = 0.05,
        rpm: float | None = None,
        tpm: float | None = None,
        burst: float = 2,
        tpm_burst: float | None = None,
    ) -> None:
        self.reply: ReplyFn = reply or default_reply
        self.latency_s = latency_s
        self.host = host
        self.port = port
        self.model = model
        self._script: StatusFn | list[ScriptEntry] | None = (
            status_script if status_script is None or callable(status_script) else list(status_script)
        )
        if not callable(self._script):
            for entry in self._script or []:
                _check_kind(entry)
        if not 0.0 <= fault_rate <= 1.0:
            raise ValueError(f"fault_rate must be in [0, 1], got {fault_rate}")
        self.fault_rate = float(fault_rate)
        self.fault_kinds: tuple[str, ...] = tuple(str(k) for k in fault_kinds)
        for kind in self.fault_kinds:
            _check_kind(kind)
        if self.fault_rate > 0 and not self.fault_kinds:
            raise ValueError("fault_rate > 0 needs at least one fault kind")
        self.fault_seed = fault_seed
        self.fault_hang_s = fault_hang_s
        self.fault_slow_s = fault_slow_s
        self.fault_retry_after_s = fault_retry_after_s
        self.rpm, self.tpm = rpm, tpm
        self._rpm_bucket = TokenBucket(rpm / 60.0, burst) if rpm else None
        self._tpm_bucket = TokenBucket(tpm / 60.0, tpm_burst or tpm / 60.0) if tpm else None
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._headers: list[dict[str, str]] = []
        self._log: list[dict[str, Any]] = []
        self._count_429 = 0
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

    @property
    def log(self) -> list[dict[str, Any]]:
        """One dict per chat request, in arrival order (same order as :attr:`requests`):

        ``index``, ``sha256`` (:func:`body_sha256` of the body), ``outcome`` ("ok", a fault kind,
        "rate_limited", "scripted" for a scripted status, "raw" for a RawReply, "reply_error" when the reply
        function raised),
        ``status`` (HTTP status sent, None when the connection was dropped without one), ``arrived``
        (``time.monotonic()``), ``delivered`` (True once the whole response was written, False if it was
        cut or the client hung up, None while the request is being handled) and ``peer`` (the client's port:
        requests with the same peer came over one kept-alive connection).
        """
        with self._lock:
            return [{k: v for k, v in entry.items() if k != "_token"} for entry in self._log]

    @property
    def count_429(self) -> int:
        """Requests refused by the ``rpm``/``tpm`` limits (injected ``429`` faults are not counted here)."""
        with self._lock:
            return self._count_429

    def outcomes(self) -> dict[str, int]:
        """How many chat requests ended in each outcome, e.g. ``{"ok": 12, "503": 2, "timeout": 1}``."""
        counts: dict[str, int] = {}
        for entry in self.log:
            counts[entry["outcome"]] = counts.get(entry["outcome"], 0) + 1
        return counts

    def fault_for(self, index: int) -> str | None:
        """The fault injected into request ``index`` (when no script entry overrides it), or None."""
        if self.fault_rate <= 0 or not self.fault_kinds:
            return None
        digest = hashlib.sha256(f"sciprobe-stub-fault:{self.fault_seed}:{index}".encode()).digest()
        if int.from_bytes(digest[:8], "big") / 2.0**64 >= self.fault_rate:
            return None
        return self.fault_kinds[int.from_bytes(digest[8:16], "big") % len(self.fault_kinds)]

    def reset(self) -> None:
        """Forget what was observed (requests, log, counters); indices, hence injected faults, restart at 0.
        Rate-limit buckets keep their state (the provider does not forget)."""
        with self._lock:
            self._requests.clear()
            self._headers.clear()
            self._log.clear()
            self._count_429 = 0
            self._max_in_flight = self._in_flight

    # -- request handling --------------------------------------------------------------------------
    def _next_entry(self, body: dict[str, Any], index: int) -> ScriptEntry | None:
        if self._script is None:
            return None
        if callable(self._script):
            entry = self._script(body, index)
            if entry is not None:
                _check_kind(entry)
            return entry
        with self._lock:
            return self._script.pop(0) if self._script else None

    def _limit_wait(self, body: dict[str, Any]) -> float:
        """0.0 when the request is within the rate limits (its tokens are then spent), else the wait."""
        wait = 0.0
        if self._rpm_bucket is not None:
            wait = self._rpm_bucket.take(1.0)
            if wait > 0:
                return wait
        if self._tpm_bucket is not None:
            budget = body.get("max_tokens") or body.get("max_completion_tokens") or 0
            cost = _count_tokens(_prompt_text(body)) + int(budget)
            wait = self._tpm_bucket.take(max(1, cost))
            if wait > 0 and self._rpm_bucket is not None:
                self._rpm_bucket.give_back(1.0)  # refused: the request slot was not used
        return wait

    def _set(self, index_in_log: int, **values: Any) -> None:
        with self._lock:
            if index_in_log < len(self._log) and self._log[index_in_log]["_token"] is values.get("_token"):
                self._log[index_in_log].update({k: v for k, v in values.items() if k != "_token"})

    def _serve(self, handler: _Handler, body: dict[str, Any]) -> None:
        token = object()  # identifies this request's log entry even if reset() clears the log meanwhile
        with self._lock:
            index = len(self._requests)
            self._requests.append(body)
            self._headers.append({k.lower(): v for k, v in handler.headers.items()})
            self._log.append({"index": index, "sha256": body_sha256(body), "outcome": None, "status": None,
                              "arrived": time.monotonic(), "delivered": None, "peer": handler.client_address[1],
                              "_token": token})
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            wait = self._limit_wait(body) if (self._rpm_bucket or self._tpm_bucket) else 0.0
            if wait > 0:
                self._count_429 += 1

        def mark(**values: Any) -> None:
            self._set(index, _token=token, **values)

        try:
            if wait > 0:
                mark(outcome="rate_limited", status=429)
                error = {"message": "stub rate limit exceeded (rpm/tpm)", "type": "rate_limit_error", "code": "429"}
                self._write(handler, mark, lambda: handler._send_json(429, {"error": error}, _retry_headers(wait)))
                return
            if self.latency_s > 0:
                time.sleep(self.latency_s)
            entry = self._next_entry(body, index)
            if entry is None:
                entry = self.fault_for(index)
            if isinstance(entry, str):
                self._fault(handler, body, entry, mark)
                return
            if isinstance(entry, RawReply):
                self._raw(handler, entry, mark)
                return
            if entry is not None:
                status, headers = (int(entry[0]), dict(entry[1])) if isinstance(entry, tuple) else (int(entry), {})
                if status != 200:
                    mark(outcome="scripted", status=status)
                    kind = _ERROR_TYPES.get(status, "server_error")
                    error = {"message": f"stub scripted status {status}", "type": kind, "code": str(status)}
                    self._write(handler, mark, lambda: handler._send_json(status, {"error": error}, headers))
                    return
            else:
                headers = {}
            self._answer(handler, body, mark, headers)
        finally:
            with self._lock:
                self._in_flight -= 1

    @staticmethod
    def _write(handler: _Handler, mark: Callable[..., None], send: Callable[[], None]) -> None:
        try:
            send()
            handler.wfile.flush()
        except OSError:  # the client hung up (timeout, cancellation, killed process)
            handler.close_connection = True
            mark(delivered=False)
            return
        mark(delivered=True)

    def _answer(self, handler: _Handler, body: dict[str, Any], mark: Callable[..., None],
                headers: dict[str, str], slow_s: float = 0.0, outcome: str = "ok") -> None:
        try:
            completion = self._completion(body)
        except Exception as exc:  # noqa: BLE001 - a broken reply callable becomes a visible 500
            mark(outcome="reply_error", status=500)
            error = {"message": f"stub reply failed: {type(exc).__name__}: {exc}", "type": "server_error"}
            self._write(handler, mark, lambda: handler._send_json(500, {"error": error}))
            return
        mark(outcome=outcome, status=200)
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = _stream_events(completion, include_usage)
            self._write(handler, mark, lambda: handler._send_sse(events, slow_s))
            return
        if slow_s <= 0:
            self._write(handler, mark, lambda: handler._send_json(200, completion, headers))
            return
        data = json.dumps(completion).encode("utf-8")

        def drip() -> None:
            handler._send_bytes(200, b"", "application/json", headers, content_length=len(data))
            handler.wfile.flush()
            step = max(1, math.ceil(len(data) / 8))
            handler._drip([data[i:i + step] for i in range(0, len(data), step)], slow_s)

        self._write(handler, mark, drip)

    def _raw(self, handler: _Handler, reply: RawReply, mark: Callable[..., None]) -> None:
        """Send a hand-made answer; a client hanging up mid-way (a size cap) ends it as not delivered."""
        mark(outcome="raw", status=reply.status)

        def send() -> None:
            handler.send_response(reply.status)
            handler.send_header("Content-Type", reply.content_type)
            if reply.encoding:
                handler.send_header("Content-Encoding", reply.encoding)
            for key, value in reply.headers.items():
                handler.send_header(key, value)
            if reply.chunked or reply.endless:
                handler.send_header("Transfer-Encoding", "chunked")
                handler.end_headers()
                for piece in reply.pieces():
                    handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                handler.wfile.write(b"0\r\n\r\n")
                return
            data = reply.payload()
            handler.send_header("Content-Length", str(len(data) if reply.content_length is None
                                                      else reply.content_length))
            handler.end_headers()
            handler.wfile.write(data)
            if reply.content_length is not None and reply.content_length != len(data):
                handler.close_connection = True  # the declared length was a lie: nothing else can follow

        self._write(handler, mark, send)

    def _fault(self, handler: _Handler, body: dict[str, Any], kind: str, mark: Callable[..., None]) -> None:
        if kind == "slow_stream":
            self._answer(handler, body, mark, {}, slow_s=self.fault_slow_s, outcome="slow_stream")
            return
        if kind == "timeout":
            mark(outcome="timeout", status=None)
            time.sleep(self.fault_hang_s)
            handler.close_connection = True  # no response at all: the server closes the socket
            mark(delivered=False)
            return
        if kind == "truncated":
            mark(outcome="truncated", status=200)
            try:
                data = json.dumps(self._completion(body)).encode("utf-8")
            except Exception:  # noqa: BLE001 - cut short anyway: any JSON will do
                data = json.dumps({"error": {"message": "stub reply failed", "type": "server_error"}}).encode()

            def cut() -> None:
                handler._send_bytes(200, data[: len(data) // 2], "application/json", content_length=len(data) + 64)
                handler.wfile.flush()

            self._write(handler, mark, cut)
            handler.close_connection = True
            mark(delivered=False)
            return
        if kind == "no_content":
            mark(outcome="no_content", status=200)
            prompt_tokens = _count_tokens(_prompt_text(body))
            broken = {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": 0,
                      "model": body.get("model", self.model),
                      "choices": [{"index": 0, "message": {"role": "assistant"}, "finish_reason": "stop"}],
                      "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 0, "total_tokens": prompt_tokens}}
            self._write(handler, mark, lambda: handler._send_json(200, broken))
            return
        if kind == "non_json":
            mark(outcome="non_json", status=200)
            self._write(handler, mark, lambda: handler._send_bytes(200, _HTML_PAGE, "text/html; charset=utf-8"))
            return
        status = int(kind.split("_")[0])
        headers = _retry_headers(self.fault_retry_after_s) if kind == "429" else {}
        mark(outcome=kind, status=status)
        error = {"message": f"stub injected fault {kind}", "type": _ERROR_TYPES.get(status, "server_error"),
                 "code": str(status)}
        self._write(handler, mark, lambda: handler._send_json(status, {"error": error}, headers))

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = self.reply(body)
        if isinstance(reply, dict):
            message, finish_reason = _assistant_message(reply)
            answer_text = str(message.get("content") or "") + " " + " ".join(
                str(call.get("function", {}).get("arguments", "")) for call in message.get("tool_calls") or [])
        else:
            text = str(reply)
            message, finish_reason, answer_text = {"role": "assistant", "content": text}, "stop", text
        prompt_tokens, completion_tokens = _count_tokens(_prompt_text(body)), _count_tokens(answer_text)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def _check_kind(entry: Any) -> None:
    if isinstance(entry, str) and entry not in FAULT_KINDS:
        raise ValueError(f"unknown stub fault kind {entry!r}; known: {', '.join(FAULT_KINDS)}")


def _assistant_message(reply: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A reply dict as an OpenAI assistant message plus its finish_reason."""
    message = {"role": "assistant", "content": None, **reply}
    finish_reason = message.pop("finish_reason", None)
    calls = []
    for n, call in enumerate(message.get("tool_calls") or []):
        call = dict(call)
        function = dict(call.get("function") or {})
        if not isinstance(function.get("arguments", ""), str):
            function["arguments"] = json.dumps(function["arguments"])
        function.setdefault("arguments", "{}")
        call["function"] = function
        call.setdefault("id", f"call_{n}_{uuid.uuid4().hex[:12]}")
        call.setdefault("type", "function")
        calls.append(call)
    if calls:
        message["tool_calls"] = calls
    else:
        message.pop("tool_calls", None)
    return message, finish_reason or ("tool_calls" if calls else "stop")


def _stream_events(completion: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """A completion as ``chat.completion.chunk`` events: role, content pieces, tool calls, finish, usage."""
    choice = completion["choices"][0]
    message = choice["message"]
    base = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    events = [chunk({"role": "assistant", "content": ""})]
    text = message.get("content") or ""
    pieces = [text[i:i + 16] for i in range(0, len(text), 16)]
    events += [chunk({"content": piece}) for piece in pieces]
    if message.get("tool_calls"):
        events.append(chunk({"tool_calls": [{"index": n, **call} for n, call in enumerate(message["tool_calls"])]}))
    events.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        events.append(base | {"choices": [], "usage": completion["usage"]})
    return events


def main(argv: list[str] | None = None) -> None:
    """Serve until interrupted; prints the base URL first (benches read that line)."""
    parser = argparse.ArgumentParser(prog="python -m sciprobe.testing.stub_server",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds slept per request")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of chat requests given a fault (0-1)")
    parser.add_argument("--fault-kinds", default=",".join(FAULT_KINDS),
                        help=f"comma-separated fault kinds to draw from (default: all of {','.join(FAULT_KINDS)})")
    parser.add_argument("--fault-seed", type=int, default=0, help="seed of the fault draws (per request index)")
    parser.add_argument("--fault-hang", type=float, default=2.0, help="seconds a 'timeout' fault holds the request")
    parser.add_argument("--fault-slow", type=float, default=0.3, help="seconds a 'slow_stream' answer takes")
    parser.add_argument("--rpm", type=float, default=None, help="enforce this many requests per minute (429 above)")
    parser.add_argument("--tpm", type=float, default=None, help="enforce this many tokens per minute (429 above)")
    parser.add_argument("--burst", type=float, default=2, help="request bucket size of --rpm")
    parser.add_argument("--reply", default="verdict", choices=sorted(REPLIES),
                        help="verdict: 'Verdict: Yes/No' (default); score: 'Score: 1-10' (a LACER-style judge)")
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.fault_kinds.split(",") if k.strip()]
    try:
        stub = StubServer(reply=REPLIES[args.reply], latency_s=args.latency, host=args.host, port=args.port,
                          fault_rate=args.fault_rate,
                          fault_kinds=kinds, fault_seed=args.fault_seed, fault_hang_s=args.fault_hang,
                          fault_slow_s=args.fault_slow, rpm=args.rpm, tpm=args.tpm, burst=args.burst).start()
    except ValueError as exc:
        parser.error(str(exc))
    print(stub.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        stub.stop()
        if args.rpm or args.tpm:
            print(f"rate-limited requests: {stub.count_429}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
