"""The event loop behind :meth:`LLMClient.complete_many <sciprobe.llm.client.LLMClient.complete_many>`: one per
process, in a daemon thread, for the life of the process.

Why not ``asyncio.run`` per batch: a new loop means a new aiohttp session, so every batch opened its
connections again (and the server its threads); a tournament of many small rounds paid 30-50 ms a round for
it (bench/i2r_parallel.py: ~18% of the lockstep runner's wall time). Backends keep their sessions on this loop
open between batches (keep-alive) and close them when their owner is garbage-collected or the process exits
(:func:`keep_open`).

A synchronous call made *from* this loop's own thread (a coroutine on it calling ``complete_many``) cannot wait
for the loop it blocks: :func:`run` then falls back to a fresh loop in a worker thread.

Only backends whose connections are their own use it (the direct HTTP transport, the local model). litellm
caches its provider clients per event loop, keyed by endpoint and key but not by the session it was handed: on
a loop that lives on, two clients of one deployment would share the first one's session (its concurrency
bound), or litellm's own unbounded one once that closes. litellm batches therefore keep a fresh loop each
(:func:`run_fresh`), as before.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
import weakref
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_pid: int | None = None
_open: weakref.WeakSet[Any] = weakref.WeakSet()  # sessions kept open on the shared loop


def shared_loop() -> asyncio.AbstractEventLoop:
    """The process's client loop, started on first use (and again in a forked child)."""
    global _loop, _thread, _pid
    with _lock:
        if _loop is None or _pid != os.getpid() or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="sciprobe-llm-loop", daemon=True)
            thread.start()
            if _pid is None:
                atexit.register(_shutdown)
            _loop, _thread, _pid = loop, thread, os.getpid()
            _open.clear()
        return _loop


def is_shared(loop: asyncio.AbstractEventLoop) -> bool:
    return loop is _loop and _pid == os.getpid()


def keep_open(session: Any, owner: object) -> None:
    """Keep ``session`` (anything with an async ``close()``, e.g. an aiohttp session) open on the shared loop
    until ``owner`` is garbage-collected or the process exits, whichever comes first."""
    _open.add(session)
    weakref.finalize(owner, _close_soon, session)


def _close_soon(session: Any) -> None:
    loop = _loop
    if loop is not None and _pid == os.getpid() and loop.is_running():
        loop.call_soon_threadsafe(lambda: loop.create_task(session.close()))


def run_fresh(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on a new event loop of its own: here, or in a worker thread when this thread already runs
    a loop (a notebook, an async runner), where ``asyncio.run`` would refuse."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="sciprobe-client") as pool:
        return pool.submit(asyncio.run, coro).result()


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on the shared loop and return its result; from any thread, including one running another
    event loop (a notebook). An exception, KeyboardInterrupt included, cancels the coroutine."""
    loop = shared_loop()
    if threading.current_thread() is _thread:
        return run_fresh(coro)
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise


def _shutdown() -> None:
    loop = _loop
    if loop is None or _pid != os.getpid() or loop.is_closed() or not loop.is_running():
        return

    async def close_all() -> None:
        await asyncio.gather(*(session.close() for session in list(_open)), return_exceptions=True)
        # then what asyncio.run does before closing a loop: cancel what is left (e.g. litellm's logging worker)
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    try:
        asyncio.run_coroutine_threadsafe(close_all(), loop).result(timeout=5)
    except Exception:  # noqa: BLE001 - exiting anyway: a session left open only costs a warning
        pass
    loop.call_soon_threadsafe(loop.stop)
