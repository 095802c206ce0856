"""Where release files and datasets come from: a local path, or a Hugging Face dataset repo at a pinned revision.

:func:`locate` decides once, for every command that takes a data location (``--data``, ``--source``): an existing
local path is local; text that could only be a path (``./x``, ``/x``, ``~/x``, ``a/b/c``, ``build/typo`` beside a
``build/`` folder, a name without ``owner/``) and does not exist is a one-line user error naming it, with the hub
never tried; only an ``owner/name`` id goes to the hub (and with ``HF_HUB_OFFLINE=1`` only to its local cache).

A hub source is downloaded with ``huggingface_hub.snapshot_download`` (cached; honours HF_HUB_OFFLINE) and
resolved to its commit sha, which the build records next to the files' checksums, so a result can always be
traced to the exact revision it came from.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from sciprobe.core.errors import SciprobeError

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class Location:
    """An existing local ``path``, or a hub dataset ``repo_id`` (``owner/name``); exactly one is set."""

    path: Path | None = None
    repo_id: str | None = None


def is_hub_id(text: str) -> bool:
    """``owner/name`` with the hub's characters, whose ``owner`` is not a local path here: ``build/idrbnech``
    next to a ``build/`` folder is a mistyped folder, not a dataset on the hub."""
    return bool(_REPO_ID.match(text)) and not Path(text.split("/", 1)[0]).exists()


def missing_path_message(text: str, option: str) -> str:
    """``--data build/idrbnech: no such file or folder (did you mean build/idrbench?)``, one line."""
    path = Path(text).expanduser()
    parent = path.parent
    hint = ""
    try:
        if parent.is_dir():
            names = sorted(p.name for p in parent.iterdir())[:10_000]
            close = difflib.get_close_matches(path.name, names, n=1)
            if close:
                hint = f" (did you mean {(parent / close[0]) if str(parent) != '.' else close[0]}?)"
        elif str(parent) not in (".", ""):
            hint = f" ({parent} does not exist either)"
    except OSError:
        pass
    if not hint and not _REPO_ID.match(text):
        hint = " (a hub dataset id is owner/name)"
    return f"{option} {text}: no such file or folder{hint}"


def locate(value: str | Path, option: str = "--data") -> Location:
    """Where ``value`` points: an existing local path, else a hub id (:func:`is_hub_id`), else a
    :class:`SciprobeError` naming the path, without touching the network."""
    text = str(value)
    path = Path(text).expanduser()
    if path.exists():
        return Location(path=path)
    if is_hub_id(text):
        return Location(repo_id=text)
    raise SciprobeError(missing_path_message(text, option))


def local_folder(value: str | Path, option: str) -> Path:
    """A command argument that must be an existing local folder (release files read from disk only)."""
    text = str(value)
    path = Path(text).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise SciprobeError(f"{option} {text}: not a folder")
    raise SciprobeError(missing_path_message(text, option))


def hub_offline() -> bool:
    """Whether huggingface_hub is in offline mode (``HF_HUB_OFFLINE=1``): the hub is then never contacted."""
    try:
        from huggingface_hub import constants
    except ImportError:  # pragma: no cover - a dependency
        return os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE")
    return bool(constants.HF_HUB_OFFLINE)


def not_cached_message(repo_id: str) -> str:
    """The one line for a hub id that is not in the local cache while offline."""
    return (f"hub dataset {repo_id} is not in the local cache and HF_HUB_OFFLINE=1 is set, so the hub was not tried; "
            "download it once with network, or pass a local folder (./path)")


@dataclass(frozen=True)
class ResolvedSource:
    path: Path
    repo_id: str | None = None
    revision: str | None = None  # the commit sha for hub sources

    def describe(self) -> str:
        return f"hf://datasets/{self.repo_id}@{self.revision}" if self.repo_id else str(self.path)


def resolve_source(source: str | Path, revision: str | None = None, option: str = "--source") -> ResolvedSource:
    """A local folder as is; ``owner/name`` (:func:`locate`) as a hub dataset snapshot."""
    where = locate(source, option)
    if where.path is not None:
        if revision:
            raise SciprobeError(f"--revision applies to hub sources; {source} is a local folder")
        return ResolvedSource(where.path)
    text = str(where.repo_id)
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        folder = snapshot_download(repo_id=text, repo_type="dataset", revision=revision)
    except LocalEntryNotFoundError:
        if hub_offline():
            raise SciprobeError(not_cached_message(text)) from None
        raise SciprobeError(f"hub dataset {text} is not in the local cache and the hub is unreachable "
                            "(offline?); download it once with network or pass a local folder") from None
    except HfHubHTTPError as exc:
        raise SciprobeError(f"cannot download hub dataset {text}: {str(exc).splitlines()[0]}") from None
    folder = Path(folder)
    # snapshot folders are named by commit sha: .../snapshots/<sha>
    return ResolvedSource(folder, repo_id=text, revision=folder.name)
