"""Where release files come from: a local folder, or a Hugging Face dataset repo at a pinned revision.

A hub source is downloaded with ``huggingface_hub.snapshot_download`` (cached; honours HF_HUB_OFFLINE) and
resolved to its commit sha, which the build records next to the files' checksums, so a result can always be
traced to the exact revision it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sciprobe.errors import SciprobeError

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class ResolvedSource:
    path: Path
    repo_id: str | None = None
    revision: str | None = None  # the commit sha for hub sources

    def describe(self) -> str:
        return f"hf://datasets/{self.repo_id}@{self.revision}" if self.repo_id else str(self.path)


def resolve_source(source: str | Path, revision: str | None = None) -> ResolvedSource:
    """A local folder as is; ``owner/name`` (not an existing folder) as a hub dataset snapshot."""
    path = Path(source)
    if path.exists():
        if revision:
            raise SciprobeError(f"--revision applies to hub sources; {source} is a local folder")
        return ResolvedSource(path)
    text = str(source)
    if not _REPO_ID.match(text):
        raise SciprobeError(f"source {text!r} is neither an existing folder nor a hub dataset id (owner/name)")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        folder = snapshot_download(repo_id=text, repo_type="dataset", revision=revision)
    except LocalEntryNotFoundError:
        raise SciprobeError(f"hub dataset {text} is not in the local cache and the hub is unreachable "
                            "(offline?); download it once with network or pass a local folder") from None
    except HfHubHTTPError as exc:
        raise SciprobeError(f"cannot download hub dataset {text}: {str(exc).splitlines()[0]}") from None
    folder = Path(folder)
    # snapshot folders are named by commit sha: .../snapshots/<sha>
    return ResolvedSource(folder, repo_id=text, revision=folder.name)
