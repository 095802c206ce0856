"""All Hugging Face Hub I/O of the leaderboard and ``sciprobe publish``, behind one small interface.

:class:`HfHubApi` talks to the Hub through ``huggingface_hub`` (one ``create_commit`` per batch of files,
``snapshot_download`` to read, ``upload_folder`` to publish). :class:`LocalFolderApi` is the offline stand-in:
repo ``owner/name`` of type ``dataset`` is the folder ``<root>/datasets/owner/name`` and every file lands at
its path in the repo, exactly where the Hub layout would put it.

Commits can be conditional (``parent_commit``): the commit fails with :class:`CommitConflict` when the repo's head
moved since that revision. That compare-and-swap is what lets several leaderboard workers claim requests on the
Hub store without a database (the Hub checks ``parentCommit`` server-side; :class:`LocalFolderApi` under a file
lock, with a revision counter beside the repo folder).
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Protocol

from sciprobe.core.errors import SciprobeError

REPO_TYPES = ("dataset", "space", "model")


class CommitConflict(SciprobeError):
    """A conditional commit lost: the repo changed since ``parent_commit``."""


def check_repo_path(path_in_repo: str) -> str:
    """A relative POSIX path inside a repo, with no ``..``, absolute part or backslash."""
    pure = PurePosixPath(path_in_repo)
    if (not path_in_repo or "\\" in path_in_repo or pure.is_absolute() or any(p in ("..", "") for p in pure.parts)
            or path_in_repo != str(pure)):
        raise SciprobeError(f"invalid path in repo: {path_in_repo!r}")
    return path_in_repo


def check_repo_id(repo_id: str) -> str:
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts) or any(p in (".", "..") for p in parts):
        raise SciprobeError(f"repo id {repo_id!r} must look like owner/name")
    return repo_id


class HubApi(Protocol):
    """The operations sciprobe needs from the Hub."""

    def commit(self, repo_id: str, files: Mapping[str, bytes], message: str, repo_type: str = "dataset", *,
               parent_commit: str | None = None) -> str | None:
        """Add or replace all ``files`` (path in repo -> content) in one commit; returns the new revision. With
        ``parent_commit``, raises :class:`CommitConflict` (and changes nothing) unless that is still the head."""

    def head(self, repo_id: str, repo_type: str = "dataset") -> str | None:
        """The repo's current revision; None when the repo does not exist yet."""

    def snapshot(self, repo_id: str, repo_type: str = "dataset", patterns: list[str] | None = None,
                 revision: str | None = None) -> Path | None:
        """A local folder with the repo's files matching ``patterns`` (all when None) at ``revision`` (default
        the head); None when the repo does not exist yet."""

    def download(self, repo_id: str, path_in_repo: str, repo_type: str = "dataset") -> bytes | None:
        """One file's content (None when it does not exist)."""

    def upload_folder(self, repo_id: str, folder: Path, repo_type: str, message: str) -> str:
        """Create the repo if needed and upload a whole folder; returns where it went."""


class LocalFolderApi:
    """Repos as local folders: ``<root>/<repo_type>s/<owner>/<name>/<path in repo>``."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def repo_dir(self, repo_id: str, repo_type: str = "dataset") -> Path:
        if repo_type not in REPO_TYPES:
            raise SciprobeError(f"unknown repo type {repo_type!r}")
        return self.root / f"{repo_type}s" / check_repo_id(repo_id)

    def _head_file(self, repo_id: str, repo_type: str) -> Path:
        base = self.repo_dir(repo_id, repo_type)
        return base.with_name(base.name + ".head")  # beside the repo folder: the folder holds only repo files

    @contextlib.contextmanager
    def _locked(self, repo_id: str, repo_type: str) -> Iterator[None]:
        base = self.repo_dir(repo_id, repo_type)
        base.parent.mkdir(parents=True, exist_ok=True)
        with open(base.with_name(base.name + ".lock"), "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # across processes; released when the file closes
            yield

    def _read_head(self, repo_id: str, repo_type: str) -> str | None:
        if not self.repo_dir(repo_id, repo_type).is_dir():
            return None
        file = self._head_file(repo_id, repo_type)
        return file.read_text("ascii").strip() if file.is_file() else "0"

    def commit(self, repo_id: str, files: Mapping[str, bytes], message: str, repo_type: str = "dataset", *,
               parent_commit: str | None = None) -> str | None:
        from sciprobe.results.write import atomic_write_bytes

        base = self.repo_dir(repo_id, repo_type)
        for path in files:
            check_repo_path(path)
        with self._locked(repo_id, repo_type):
            head = self._read_head(repo_id, repo_type)
            if parent_commit is not None and parent_commit != head:
                raise CommitConflict(f"{repo_id} moved from {parent_commit} to {head}")
            for path, data in files.items():
                atomic_write_bytes(base / path, data)
            revision = str(int(head or 0) + 1)
            atomic_write_bytes(self._head_file(repo_id, repo_type), revision.encode("ascii"))
            return revision

    def head(self, repo_id: str, repo_type: str = "dataset") -> str | None:
        with self._locked(repo_id, repo_type):
            return self._read_head(repo_id, repo_type)

    def snapshot(self, repo_id: str, repo_type: str = "dataset", patterns: list[str] | None = None,
                 revision: str | None = None) -> Path | None:
        base = self.repo_dir(repo_id, repo_type)  # the live folder; a conditional commit catches any change since
        return base if base.is_dir() else None

    def download(self, repo_id: str, path_in_repo: str, repo_type: str = "dataset") -> bytes | None:
        file = self.repo_dir(repo_id, repo_type) / check_repo_path(path_in_repo)
        return file.read_bytes() if file.is_file() else None

    def upload_folder(self, repo_id: str, folder: Path, repo_type: str, message: str) -> str:
        base = self.repo_dir(repo_id, repo_type)
        shutil.copytree(folder, base, dirs_exist_ok=True)
        return str(base)


class HfHubApi:
    """The real Hub (needs network and a write token); kept deliberately thin — not exercised offline."""

    def __init__(self, token: str | None = None, cache_dir: Path | None = None) -> None:
        from huggingface_hub import HfApi

        self.api = HfApi(token=token)
        self.cache_dir = cache_dir

    def commit(self, repo_id: str, files: Mapping[str, bytes], message: str, repo_type: str = "dataset", *,
               parent_commit: str | None = None) -> str | None:
        from huggingface_hub import CommitOperationAdd
        from huggingface_hub.errors import HfHubHTTPError

        operations = [CommitOperationAdd(path_in_repo=check_repo_path(p), path_or_fileobj=data)
                      for p, data in files.items()]
        try:
            info = self.api.create_commit(repo_id=repo_id, operations=operations, commit_message=message,
                                          repo_type=repo_type, parent_commit=parent_commit)
        except HfHubHTTPError as exc:
            status = getattr(getattr(exc, "response", None), "status_code", None)
            if parent_commit is not None and status in (409, 412):  # the head is no longer parent_commit
                raise CommitConflict(f"{repo_id} moved since {parent_commit[:12]}") from None
            raise
        return getattr(info, "oid", None)

    def head(self, repo_id: str, repo_type: str = "dataset") -> str | None:
        from huggingface_hub.errors import RepositoryNotFoundError

        try:
            return self.api.repo_info(repo_id, repo_type=repo_type).sha
        except RepositoryNotFoundError:
            return None

    def snapshot(self, repo_id: str, repo_type: str = "dataset", patterns: list[str] | None = None,
                 revision: str | None = None) -> Path | None:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import RepositoryNotFoundError

        try:
            local_dir = None if self.cache_dir is None else self.cache_dir / repo_type / repo_id
            return Path(snapshot_download(repo_id=repo_id, repo_type=repo_type, token=self.api.token,
                                          local_dir=local_dir, allow_patterns=patterns, revision=revision))
        except RepositoryNotFoundError:
            return None

    def download(self, repo_id: str, path_in_repo: str, repo_type: str = "dataset") -> bytes | None:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError

        try:
            return Path(hf_hub_download(repo_id, check_repo_path(path_in_repo), repo_type=repo_type,
                                        token=self.api.token)).read_bytes()
        except (EntryNotFoundError, RepositoryNotFoundError):
            return None

    def upload_folder(self, repo_id: str, folder: Path, repo_type: str, message: str) -> str:
        self.api.create_repo(repo_id, repo_type=repo_type, exist_ok=True,
                             space_sdk="gradio" if repo_type == "space" else None)
        info = self.api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type=repo_type,
                                      commit_message=message)
        return str(info)
