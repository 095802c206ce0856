"""Hand-made answers for :class:`~sciprobe.testing.stub_server.StubServer`: any status, headers and body bytes,
to test what the client does with hostile or broken servers (usage that is a string or ``1e400``, choices of
the wrong type, gzip bombs, bodies that never end, a Content-Length that lies).

    bomb = RawReply(raw_completion("hi"), encoding="gzip", pad_bytes=200 << 20)   # 200 MB once decoded
    with StubServer(status_script=lambda body, index: bomb) as stub: ...

A ``RawReply`` is a ``status_script`` entry (a list item or what a script callable returns). The padding is
JSON whitespace after the body, so a client that read it all would find a *valid* answer: only a size cap
can refuse it. Large padded bodies are generated piecewise and compressed once per process.
"""

from __future__ import annotations

import functools
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

#: What :func:`raw_completion` puts in ``usage`` unless told otherwise (as JSON text).
DEFAULT_USAGE = '{"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}'
ENCODINGS = ("gzip", "deflate", "br")
_PIECE = 1 << 20


def raw_completion(content: str = "ok", *, usage: str | None = DEFAULT_USAGE, choices: str | None = None,
                   model: str = "stub-model") -> bytes:
    """A chat completion as JSON text, with ``usage`` / ``choices`` spliced in as *raw JSON text* (so they may
    be anything JSON allows, e.g. ``1e400``, ``NaN`` or a 5,000-digit integer); ``usage=None`` leaves it out."""
    if choices is None:
        choices = json.dumps([{"index": 0, "message": {"role": "assistant", "content": content},
                               "finish_reason": "stop"}])
    parts = [f'"id": "chatcmpl-raw", "object": "chat.completion", "created": 0, "model": {json.dumps(model)}',
             f'"choices": {choices}']
    if usage is not None:
        parts.append(f'"usage": {usage}')
    return ("{" + ", ".join(parts) + "}").encode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class RawReply:
    """One hand-made HTTP answer.

    ``body`` is sent as is, followed by ``pad_bytes`` spaces; ``encoding`` (gzip, deflate, br) compresses
    both and sets Content-Encoding; ``content_length`` declares a length other than the true one (the
    connection closes after the real bytes); ``chunked`` sends chunked transfer encoding, and ``endless``
    keeps sending padding chunks until the client hangs up.
    """

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    encoding: str | None = None
    pad_bytes: int = 0
    content_length: int | None = None
    chunked: bool = False
    endless: bool = False

    def __post_init__(self) -> None:
        if self.encoding is not None and self.encoding not in ENCODINGS:
            raise ValueError(f"unknown encoding {self.encoding!r}; known: {', '.join(ENCODINGS)}")
        if self.endless and self.encoding is not None:
            raise ValueError("an endless body is sent uncompressed")

    def payload(self) -> bytes:
        """The bytes on the wire (compressed when ``encoding`` is set); not for ``endless`` replies."""
        return _payload(self.body, self.encoding, self.pad_bytes)

    def pieces(self) -> Iterator[bytes]:
        """The wire bytes in pieces of at most 1 MB; for ever when ``endless``."""
        if not self.endless:
            data = self.payload()
            for start in range(0, len(data), _PIECE):
                yield data[start:start + _PIECE]
            return
        yield self.body
        pad = b" " * (64 << 10)
        while True:
            yield pad


@functools.lru_cache(maxsize=16)
def _payload(body: bytes, encoding: str | None, pad_bytes: int) -> bytes:
    if encoding is None:
        return body + b" " * pad_bytes
    if encoding == "br":
        import brotli

        compressor = brotli.Compressor(quality=1)
        out = [compressor.process(body)]
        out += [compressor.process(piece) for piece in _padding(pad_bytes)]
        out.append(compressor.finish())
        return b"".join(out)
    z = zlib.compressobj(6, zlib.DEFLATED, 31 if encoding == "gzip" else zlib.MAX_WBITS)
    out = [z.compress(body)] + [z.compress(piece) for piece in _padding(pad_bytes)] + [z.flush()]
    return b"".join(out)


def _padding(n: int) -> Iterator[bytes]:
    piece = b" " * _PIECE
    while n > 0:
        yield piece[:n] if n < _PIECE else piece
        n -= _PIECE
