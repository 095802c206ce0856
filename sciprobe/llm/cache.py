"""Persistent response cache: SQLite in WAL mode, keyed by the sha256 of what was actually sent.

Why our own: litellm's cache cannot be used (disk cache removed in >= 1.109, in-memory hits crash on a plain
install: BerriAI/litellm#42195), and judge re-runs must replay *exactly*, across processes and machines.

Every ``put`` commits at once, so a run killed mid-way loses no completed (paid-for) call; failures are
never stored, so a re-run retries them.

Tool calls (``Completion.tool_calls``) live in a side table ``tool_calls(key, calls_json)`` rather than in a
new column of ``responses``: rows written before it existed stay readable (no tool calls), and an older
sciprobe sharing the file keeps writing its seven-column rows. A tool-call message without text is stored
with ``text = ''`` and read back as ``text=None``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Self

from sciprobe.llm.types import Completion, Request, canonical_json, sha256_hex

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost_usd REAL,
    created_at REAL NOT NULL
)
"""
_TOOL_CALLS_SCHEMA = "CREATE TABLE IF NOT EXISTS tool_calls (key TEXT PRIMARY KEY, calls_json TEXT NOT NULL)"


def sciprobe_home() -> Path:
    """``$SCIPROBE_HOME``, default ``~/.cache/sciprobe``: cache and converted models live below it."""
    env = os.environ.get("SCIPROBE_HOME")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "sciprobe"


def default_cache_path() -> Path:
    return sciprobe_home() / "cache" / "responses.sqlite"


def request_key(model_id: str, base_url: str | None, request: Request) -> str:
    """sha256 of canonical JSON {model, base_url, messages, params}.

    ``params`` must be the *effective* params (after spec defaults and reasoning-model adjustments), so
    that two requests that would send the same payload share one entry. ``item_id`` is deliberately not
    part of the key: the same prompt for two items is paid once.
    """
    payload: dict[str, Any] = {
        "model": model_id,
        "base_url": base_url,
        "messages": [dict(m) for m in request.messages],
        "params": dict(request.params),
    }
    return sha256_hex(canonical_json(payload))


class ResponseCache:
    """Thread-safe read-through store for successful completions.

    One connection guarded by a lock (``check_same_thread=False``): callers are the client's event loop and
    the local model's worker thread; WAL + ``busy_timeout`` let several processes share one file.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # isolation_level=None: autocommit, each INSERT is its own durable transaction.
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30.0)
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL is durable against process crashes in WAL mode (only an OS crash can lose the tail).
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA busy_timeout=30000")
            self._conn.execute(_SCHEMA)
            self._conn.execute(_TOOL_CALLS_SCHEMA)

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT r.model, r.text, r.prompt_tokens, r.completion_tokens, r.cost_usd, t.calls_json "
                "FROM responses AS r LEFT JOIN tool_calls AS t ON t.key = r.key WHERE r.key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        model, text, prompt_tokens, completion_tokens, cost_usd, calls_json = row
        tool_calls = json.loads(calls_json) if calls_json else None
        return Completion(
            text=None if tool_calls and text == "" else text,
            tool_calls=tool_calls,
            cached=True,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=cost_usd,
            latency_s=0.0,
            attempts=0,  # no API attempt was made for this answer
            request_hash=key,
            model=model,
        )

    def put(self, key: str, completion: Completion) -> bool:
        """Store a successful completion; returns False (and stores nothing) for a failure."""
        if not completion.ok:
            return False
        row = (key, completion.model, completion.text if completion.text is not None else "",
               completion.prompt_tokens, completion.completion_tokens, completion.cost_usd, time.time())
        with self._lock:
            if not completion.tool_calls:
                self._conn.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)", row)
                return True
            # text '' + its tool calls must land together: a reader must never see the row without them
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)", row)
                self._conn.execute("INSERT OR REPLACE INTO tool_calls VALUES (?, ?)",
                                   (key, json.dumps(completion.tool_calls, ensure_ascii=False, sort_keys=True)))
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
        return True

    def created_at(self, key: str) -> float | None:
        """When ``key`` was stored (epoch seconds), for provenance; None if absent."""
        with self._lock:
            row = self._conn.execute("SELECT created_at FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else float(row[0])

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"
