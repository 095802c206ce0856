"""Which leaderboard store a process uses, from the environment: the local SQLite store or the Hub store (kept
apart from both so neither store module imports the other)."""

from __future__ import annotations

import os
from pathlib import Path

from sciprobe.core.errors import SciprobeError
from sciprobe.interop.hub_api import HfHubApi, LocalFolderApi
from sciprobe.leaderboard.hub_store import HubStore
from sciprobe.leaderboard.store import LeaderboardStore, SQLiteStore, default_store_dir


def open_store(kind: str | None = None) -> LeaderboardStore:
    """The store the environment asks for.

    ``SCIPROBE_LEADERBOARD_STORE=sqlite`` (default): :class:`SQLiteStore` in ``SCIPROBE_LEADERBOARD_DIR``.
    ``hub``: :class:`HubStore` on ``SCIPROBE_LEADERBOARD_REQUESTS_REPO`` / ``SCIPROBE_LEADERBOARD_RESULTS_REPO``;
    with ``SCIPROBE_LEADERBOARD_HUB_LOCAL=DIR`` the repos are local folders under DIR (tests, offline demos).
    """
    kind = (kind or os.environ.get("SCIPROBE_LEADERBOARD_STORE") or "sqlite").lower()
    if kind == "sqlite":
        return SQLiteStore(default_store_dir())
    if kind == "hub":
        requests_repo = os.environ.get("SCIPROBE_LEADERBOARD_REQUESTS_REPO")
        results_repo = os.environ.get("SCIPROBE_LEADERBOARD_RESULTS_REPO")
        if not requests_repo or not results_repo:
            raise SciprobeError("the hub store needs SCIPROBE_LEADERBOARD_REQUESTS_REPO and "
                                "SCIPROBE_LEADERBOARD_RESULTS_REPO (owner/name dataset repos)")
        local = os.environ.get("SCIPROBE_LEADERBOARD_HUB_LOCAL")
        api = (LocalFolderApi(Path(local)) if local
               else HfHubApi(token=os.environ.get("HF_TOKEN"), cache_dir=default_store_dir() / "hub-cache"))
        return HubStore(api, requests_repo, results_repo)
    raise SciprobeError(f"unknown leaderboard store {kind!r}; use sqlite or hub")
