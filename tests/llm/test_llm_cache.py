"""ResponseCache: exact replays, no stored failures, durable per call, safe across threads and processes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from sciprobe.llm.cache import ResponseCache, default_cache_path, request_key
from sciprobe.llm.types import Completion, Request

from golden import REPO

MSGS = [{"role": "user", "content": "Is this idea novel?"}]


def _ok(text: str = "Yes", **kw) -> Completion:
    return Completion(text=text, prompt_tokens=12, completion_tokens=3, cost_usd=0.00042, model="openai/x", **kw)


def test_request_key_depends_on_what_is_sent_not_on_item_id():
    base = request_key("openai/x", None, Request.of(MSGS, {"temperature": 0}, item_id="a"))
    assert base == request_key("openai/x", None, Request.of(MSGS, {"temperature": 0}, item_id="b"))
    assert len(base) == 64 and int(base, 16) >= 0
    variants = {
        request_key("openai/y", None, Request.of(MSGS, {"temperature": 0})),
        request_key("openai/x", "http://127.0.0.1:1/v1", Request.of(MSGS, {"temperature": 0})),
        request_key("openai/x", None, Request.of(MSGS, {"temperature": 0.5})),
        request_key("openai/x", None, Request.of([{"role": "user", "content": "Other?"}], {"temperature": 0})),
    }
    assert base not in variants and len(variants) == 4


def test_request_key_ignores_param_order():
    a = request_key("m", None, Request.of(MSGS, {"temperature": 0, "max_tokens": 5}))
    b = request_key("m", None, Request.of(MSGS, {"max_tokens": 5, "temperature": 0}))
    assert a == b


def test_put_get_roundtrip_marks_cached(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    assert cache.get("k") is None and len(cache) == 0
    assert cache.put("k", _ok("Verdict: Yes"))
    hit = cache.get("k")
    assert hit is not None
    assert (hit.text, hit.prompt_tokens, hit.completion_tokens, hit.cost_usd, hit.model) == (
        "Verdict: Yes", 12, 3, 0.00042, "openai/x")
    assert hit.cached and hit.ok and hit.request_hash == "k" and hit.attempts == 0
    assert "k" in cache and len(cache) == 1
    assert cache.created_at("k") is not None


def test_unknown_cost_stays_unknown(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", Completion(text="x", cost_usd=None))
    assert cache.get("k").cost_usd is None


def test_failures_are_never_stored(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    assert cache.put("k", Completion(text=None, error="RateLimitError: slow down")) is False
    assert cache.get("k") is None and len(cache) == 0


def test_wal_mode_and_persistence_across_instances(tmp_path):
    path = tmp_path / "sub" / "c.sqlite"
    with ResponseCache(path) as cache:
        cache.put("k", _ok())
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with ResponseCache(path) as again:
        assert again.get("k").text == "Yes"


def test_thread_safe_under_concurrent_writers_and_readers(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(50):
                cache.put(f"{t}-{i}", _ok(f"{t}-{i}"))
                assert cache.get(f"{t}-{i}").text == f"{t}-{i}"
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(cache) == 400


def test_killed_process_loses_no_completed_put(tmp_path):
    """Each put commits at once: SIGKILL right after a put (no close, no atexit) keeps every entry."""
    path = tmp_path / "c.sqlite"
    script = textwrap.dedent(f"""
        import os, signal
        from sciprobe.llm.cache import ResponseCache
        from sciprobe.llm.types import Completion
        cache = ResponseCache({str(path)!r})
        for i in range(5):
            cache.put(f"k{{i}}", Completion(text=f"t{{i}}"))
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    repo = REPO
    env = {**os.environ, "PYTHONPATH": str(repo)}
    proc = subprocess.run([sys.executable, "-c", script], check=False, env=env, capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    cache = ResponseCache(path)
    assert len(cache) == 5
    assert cache.get("k4").text == "t4"


def test_default_cache_path_follows_sciprobe_home(monkeypatch, tmp_path):
    monkeypatch.setenv("SCIPROBE_HOME", str(tmp_path / "home"))
    assert default_cache_path() == tmp_path / "home" / "cache" / "responses.sqlite"
    monkeypatch.delenv("SCIPROBE_HOME")
    assert default_cache_path() == Path.home() / ".cache" / "sciprobe" / "cache" / "responses.sqlite"
