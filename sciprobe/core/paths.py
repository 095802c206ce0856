"""Where sciprobe keeps things on disk: ``$SCIPROBE_HOME`` (default ``~/.cache/sciprobe``)."""

from __future__ import annotations

import os
from pathlib import Path


def sciprobe_home() -> Path:
    return Path(os.environ.get("SCIPROBE_HOME") or Path.home() / ".cache" / "sciprobe")
