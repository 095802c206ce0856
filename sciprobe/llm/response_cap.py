"""A hard cap on the size of a model's answer, on both transports (``max_response_mb`` in a model spec).

A chat completion is kilobytes; a broken or hostile endpoint can send gigabytes, or a 200 MB gzip bomb that
expands to 3 GB. Past the cap the call fails with :class:`ResponseTooLarge` (a recorded failure, not retried:
asking again gets the same body) and nothing beyond the cap was ever held in memory.

- ``transport=http`` (:mod:`sciprobe.llm.http_backend`): aiohttp decompresses incrementally (bounded chunks,
  with back-pressure); :func:`read_capped` counts the decoded bytes as they arrive.
- ``transport=litellm``, providers that take our aiohttp session (``openai``, ``hosted_vllm``): litellm asks
  aiohttp for the raw body and lets httpx decode it, whole. The session's :func:`capped_response_class`
  therefore counts the *decoded* size of what streams through (decoding a shadow copy into a small buffer
  that is thrown away) and stops the stream before httpx is handed more than the cap. Other litellm
  providers use litellm's own HTTP clients, which sciprobe cannot bound.

The same session refuses redirects (:class:`Redirected`): an answer must come from the server the spec names
and is credited to it (``base_url=URL1|URL2`` counts what each replica answered), so a 3xx is a failed call of
that server, never followed. The direct transport posts with ``allow_redirects=False`` and checks the same.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from typing import Any

#: Default of ``max_response_mb``: generous for any chat answer (even with logprobs), tiny next to a bomb.
DEFAULT_MAX_RESPONSE_MB = 32.0
_CHUNK = 1 << 16


class ResponseTooLarge(Exception):
    """The answer's body (decoded) is larger than the spec's ``max_response_mb``."""

    def __init__(self, limit: int, seen: int | None = None, declared: bool = False) -> None:
        what = f"declares {seen:,} bytes, over" if declared else "exceeds"
        super().__init__(f"response body {what} the cap of {limit:,} bytes (decoded; spec key max_response_mb)")


class Redirected(Exception):
    """A server answered with a redirect (3xx): not followed, the call failed on that server."""

    def __init__(self, status: int, location: Any) -> None:
        target = " ".join(str(location).split())[:120] if location else "nowhere"
        super().__init__(f"HTTP {status} redirect to {target!r} not followed (answers come only from the servers "
                         "of the model spec)")


def refuse_redirect(status: int, headers: Any) -> None:
    """Raise :class:`Redirected` for a 3xx answer."""
    if 300 <= status < 400:
        raise Redirected(status, headers.get("Location") if headers is not None else None)


def declared_length(headers: Any) -> int | None:
    """The Content-Length header as an int, when it is a plain number."""
    value = headers.get("Content-Length") if headers is not None else None
    text = str(value).strip() if value is not None else ""
    return int(text) if text.isdigit() and len(text) <= 20 else None


async def read_capped(response: Any, limit: int) -> bytes:
    """The whole body of an aiohttp response whose decoding aiohttp does itself, refusing more than ``limit``
    decoded bytes (and a plain body that announces more)."""
    encoding = (response.headers.get("Content-Encoding") or "identity").strip().lower()
    declared = declared_length(response.headers)
    if encoding == "identity" and declared is not None and declared > limit:
        raise ResponseTooLarge(limit, declared, declared=True)
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(_CHUNK):
        size += len(chunk)
        if size > limit:
            raise ResponseTooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)


# -- the litellm transport: count the decoded size of a raw body ----------------------------------------------


class _DecodedSize:
    """Feeds a raw (possibly compressed) body through a decoder into a small throw-away buffer, counting what
    it would expand to, as httpx will decode it: gzip and deflate (one member), br, zstd, else identity."""

    def __init__(self, encoding: str, limit: int) -> None:
        self.encoding = encoding
        self.limit = limit
        self.size = 0
        self.raw = 0
        self._zlib: Any = None
        self._brotli: Any = None
        self._zstd: Any = None
        if encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif encoding == "br":
            import brotli

            self._brotli = brotli.Decompressor()
        elif encoding == "zstd":
            import zstandard

            self._zstd = zstandard.ZstdDecompressor().stream_writer(_Counter(self), write_size=_CHUNK)

    def feed(self, data: bytes) -> None:
        """Count ``data`` (decoded); raises :class:`ResponseTooLarge` past the limit."""
        self.raw += len(data)
        if self.raw > self.limit:  # bytes after a gzip member, or a corrupt stream, still stream in
            raise ResponseTooLarge(self.limit)
        if self.encoding == "deflate" and self._zlib is None and data:
            # as httpx: zlib-wrapped deflate, or raw deflate from servers that skip the header
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS if data[0] & 0x0F == 8 else -zlib.MAX_WBITS)
        try:
            if self._zlib is not None:
                self._feed_zlib(data)
            elif self._brotli is not None:
                self._feed_brotli(data)
            elif self._zstd is not None:
                self._zstd.write(data)
            else:
                self.add(len(data))
        except ResponseTooLarge:
            raise
        except Exception:  # noqa: BLE001 - a corrupt stream: httpx will say so when it decodes it
            self._zlib = self._brotli = self._zstd = None
            self.encoding = "corrupt"

    def _feed_zlib(self, data: bytes) -> None:
        if self._zlib.eof:  # httpx decodes one member; what follows is ignored
            return
        self.add(len(self._zlib.decompress(data, _CHUNK)))
        while self._zlib.unconsumed_tail and not self._zlib.eof:
            self.add(len(self._zlib.decompress(self._zlib.unconsumed_tail, _CHUNK)))

    def _feed_brotli(self, data: bytes) -> None:
        self.add(len(self._brotli.process(data, output_buffer_limit=_CHUNK)))
        while not self._brotli.can_accept_more_data():
            self.add(len(self._brotli.process(b"", output_buffer_limit=_CHUNK)))

    def add(self, n: int) -> None:
        self.size += n
        if self.size > self.limit:
            raise ResponseTooLarge(self.limit)


class _Counter:
    """The sink of zstandard's stream writer: counts, keeps nothing."""

    def __init__(self, size: _DecodedSize) -> None:
        self._size = size

    def write(self, data: bytes) -> int:
        self._size.add(len(data))
        return len(data)


class _CappedContent:
    """A response's ``content`` stream that counts the decoded size of everything read through it."""

    def __init__(self, stream: Any, size: _DecodedSize, declared: int | None) -> None:
        self._stream = stream
        self._size = size
        self._declared = declared

    def __getattr__(self, name: str) -> Any:  # exception(), set_exception(), at_eof(), ... of the real stream
        return getattr(self._stream, name)

    def _count(self, data: bytes) -> bytes:
        if self._declared is not None and self._size.encoding == "identity" and self._declared > self._size.limit:
            raise ResponseTooLarge(self._size.limit, self._declared, declared=True)
        self._size.feed(data)
        return data

    async def iter_chunked(self, n: int) -> AsyncIterator[bytes]:
        async for chunk in self._stream.iter_chunked(n):
            yield self._count(chunk)

    async def iter_any(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream.iter_any():
            yield self._count(chunk)

    async def iter_chunks(self) -> AsyncIterator[tuple[bytes, bool]]:
        async for chunk, end in self._stream.iter_chunks():
            yield self._count(chunk), end

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[bytes]:
        async for line in self._stream:
            yield self._count(line)

    async def read(self, n: int = -1) -> bytes:
        if n >= 0:
            return self._count(await self._stream.read(n))
        parts = []
        while chunk := await self._stream.read(_CHUNK):
            parts.append(self._count(chunk))
        return b"".join(parts)

    async def readany(self) -> bytes:
        return self._count(await self._stream.readany())

    async def readchunk(self) -> tuple[bytes, bool]:
        chunk, end = await self._stream.readchunk()
        return self._count(chunk), end

    async def readline(self) -> bytes:
        return self._count(await self._stream.readline())

    async def readexactly(self, n: int) -> bytes:
        return self._count(await self._stream.readexactly(n))


_CLASSES: dict[int, type] = {}


def capped_response_class(limit: int) -> type:
    """An ``aiohttp.ClientResponse`` subclass (the ``response_class`` of a session) whose body reads stop at
    ``limit`` decoded bytes and that refuses redirects (:class:`Redirected`, before httpx could follow one). For
    sessions that hand raw bodies to httpx (``auto_decompress=False``, as litellm's transport asks): with aiohttp
    decoding, use :func:`read_capped` instead."""
    cls = _CLASSES.get(limit)
    if cls is None:
        import aiohttp

        class CappedClientResponse(aiohttp.ClientResponse):
            async def start(self, connection: Any) -> Any:
                response = await super().start(connection)
                refuse_redirect(self.status, self.headers)
                encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
                self.content = _CappedContent(self.content, _DecodedSize(encoding, limit),
                                              declared_length(self.headers))
                return response

        cls = _CLASSES[limit] = CappedClientResponse
    return cls


def too_large_in(exc: BaseException) -> ResponseTooLarge | None:
    """The :class:`ResponseTooLarge` behind ``exc`` (litellm and the OpenAI SDK wrap it), if any."""
    found = _in_chain(exc, ResponseTooLarge)
    return found if isinstance(found, ResponseTooLarge) else None


def redirected_in(exc: BaseException) -> Redirected | None:
    """The :class:`Redirected` behind ``exc`` (litellm and the OpenAI SDK wrap it), if any."""
    found = _in_chain(exc, Redirected)
    return found if isinstance(found, Redirected) else None


def _in_chain(exc: BaseException, cls: type[BaseException]) -> BaseException | None:
    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 16:
        if isinstance(current, cls):
            return current
        current = current.__cause__ or current.__context__
        seen += 1
    return None
