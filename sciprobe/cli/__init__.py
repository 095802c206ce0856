"""The command line: ``sciprobe`` and its commands, the cached command index, the task listing and the
benchmark scaffold.

``sciprobe.cli`` was a module before the layer reorganisation: its names are still importable from here for one release
(deprecated; they live in ``sciprobe.cli.commands``)."""

from __future__ import annotations

from typing import Any


def main(argv: Any = None) -> int:
    """The ``sciprobe`` command (the console script's entry point)."""
    from sciprobe.cli.commands import main as run

    return run(argv)


def __getattr__(name: str) -> Any:
    from sciprobe import _compat

    return _compat.moved_attribute("sciprobe.cli", "sciprobe.cli.commands", name)
