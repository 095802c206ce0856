"""What the light commands read from the benchmark declarations, cached so they start without importing them.

``sciprobe --help``, ``sciprobe tasks`` and a benchmark's own command (``sciprobe prescience ...``) need the task
rows (:func:`sciprobe.cli.task_listing.task_rows`) and the benchmarks' own commands; computing them imports every
declaration and the runners behind it, which costs more than starting Python itself. The index is computed from
the declarations (never written by hand) and kept in ``$SCIPROBE_HOME/cli-index/`` together with what it was
computed from: every sciprobe module imported at that point (path, size, modification time) and the benchmark
packages present. Any change to those (an edited declaration or runner, a new benchmark folder) recomputes it,
as Python's bytecode cache does. A declaration that fails to import is never cached (its warning shows on every
run), and a cache that cannot be read or written is not an error: the index is computed instead.

The index decides which module a benchmark command imports, so a cached file is used only when nobody else
could have written it and it says nothing the declarations could not have said; anything else is ignored and the
index recomputed (and stored again when the folder is ours):

- the ``cli-index`` folder is a real folder (not a symlink) owned by this user and writable by no one else, and
  the file a regular file owned by this user, writable by no one else, of at most :data:`MAX_INDEX_BYTES`. Both
  are checked on the open descriptors, so a swap between the check and the read is read as what was checked. A
  folder of ours that others may write to (an old umask) is made private (0700) before we write into it; a folder
  owned by someone else (planted in a shared ``SCIPROBE_HOME``) is neither read nor written: every run computes.
- every field has its type (:data:`sciprobe.cli.task_listing.ROW_FIELDS` for the task rows), every task and command
  module belongs to a benchmark folder present (``sciprobe.benchmarks.<name>[.<module>...]``, a file that exists),
  and a checksum of the index matches (it catches a hand-edited or damaged file; it is not a signature: keeping
  other users out is the owner and folder checks' job).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import zlib
from pathlib import Path

from sciprobe import __version__

TYPE_CHECKING = False  # typing's flag without importing typing: these modules are on the CLI's start-up path
if TYPE_CHECKING:
    from typing import Any

#: Bump when the layout of the stored index changes.
INDEX_FORMAT = 2
#: The largest index file read (today's holds ~12 kB): a larger file is not one we wrote.
MAX_INDEX_BYTES = 1 << 20
_BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
_STORED_KEYS = {"format", "benchmarks", "packages", "sources", "index", "checksum"}


def cli_index() -> dict[str, Any]:
    """``{"tasks": [task row, ...], "commands": {name: {"module": ..., "help": ...}}}`` over every registered
    benchmark, from the cache when it is current and trusted."""
    path = _cache_path()
    packages = _packages()
    cached = _read(path)
    if (cached is not None and cached["benchmarks"] == str(_BENCHMARKS) and cached["packages"] == packages
            and _current(cached["sources"]) and index_problem(cached["index"], packages) is None):
        return cached["index"]
    return _compute_and_store(path, packages)


def _compute_and_store(path: Path, packages: list[str]) -> dict[str, Any]:
    import warnings

    from sciprobe.core.registry import DeclarationWarning, benchmark_names, get_benchmark
    from sciprobe.cli.task_listing import task_rows

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = benchmark_names()
        commands = {}
        for name in names:
            for command in get_benchmark(name).commands:
                entry = {"module": command.module, "help": command.help}
                problem = _command_problem(command.name, entry, packages)
                if problem is None:
                    commands[command.name] = entry
                else:  # never offered: the CLI imports only modules of the benchmark folders
                    warnings.warn(f"benchmark {name!r}: command left out: {problem}", DeclarationWarning,
                                  stacklevel=2)
    for warning in caught:  # shown as if no cache existed
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    index = {"tasks": task_rows(names), "commands": commands}
    if not any(issubclass(w.category, DeclarationWarning) for w in caught):  # a broken one warns on every run
        _write(path, {"format": INDEX_FORMAT, "benchmarks": str(_BENCHMARKS), "packages": packages,
                      "sources": _sources(), "index": index, "checksum": index_checksum(index)})
    return index


def _cache_path() -> Path:
    from sciprobe.core.paths import sciprobe_home

    # one file per installation and interpreter (the folder is checked on reading too): two checkouts or Pythons
    # sharing a home never use each other's index. crc32: hashlib's start-up cost is a tenth of Python's.
    key = f"{zlib.crc32(f'{_BENCHMARKS}|{sys.version}|{__version__}'.encode()):08x}"
    return sciprobe_home() / "cli-index" / f"{key}.json"


def _packages() -> list[str]:
    """The benchmark packages present (the registry's rule, as ``pkgutil``: a folder with an ``__init__.py``)."""
    try:
        return sorted(e.name for e in os.scandir(_BENCHMARKS)
                      if "." not in e.name and e.is_dir() and os.path.isfile(os.path.join(e.path, "__init__.py")))
    except OSError:
        return []


def _sources() -> list[list[Any]]:
    """(path, size, mtime_ns) of every sciprobe module loaded now: all the code the index was computed from."""
    seen = []
    for name, module in list(sys.modules.items()):
        source = getattr(module, "__file__", None)
        if (name == "sciprobe" or name.startswith("sciprobe.")) and source:
            try:
                status = os.stat(source)
            except OSError:
                continue
            seen.append([source, status.st_size, status.st_mtime_ns])
    return sorted(seen)


def _current(sources: list[list[Any]]) -> bool:
    for source, size, mtime_ns in sources:
        try:
            status = os.stat(source)
        except (OSError, ValueError):  # ValueError: a NUL in the path
            return False
        if status.st_size != size or status.st_mtime_ns != mtime_ns:
            return False
    return True


# ---- what a stored index may say -----------------------------------------------------------------------------


def index_checksum(index: Any) -> int:
    """crc32 of the index's canonical JSON: catches a hand-edited or damaged file (not a signature)."""
    return zlib.crc32(json.dumps(index, sort_keys=True, separators=(",", ":")).encode())


def index_problem(index: Any, packages: list[str]) -> str | None:
    """What is wrong with an index (its shape, a task of no benchmark present, a command importing a module
    outside the benchmark folders), or None."""
    if not isinstance(index, dict) or set(index) != {"tasks", "commands"}:
        return "not {tasks, commands}"
    tasks, commands = index["tasks"], index["commands"]
    if not isinstance(tasks, list) or not isinstance(commands, dict):
        return "tasks is not a list or commands not an object"
    seen: set[str] = set()
    for row in tasks:
        problem = _row_problem(row, packages)
        if problem is None and row["task"] in seen:
            problem = "listed twice"
        if problem is not None:
            return f"task row {str(row)[:80]!r}: {problem}"
        seen.add(row["task"])
    for name, command in commands.items():
        problem = _command_problem(name, command, packages)
        if problem is not None:
            return problem
    return None


def _row_problem(row: Any, packages: list[str]) -> str | None:
    from sciprobe.cli.task_listing import ROW_FIELDS

    if not isinstance(row, dict) or set(row) != set(ROW_FIELDS):
        return "not a task row"
    for field, kind in ROW_FIELDS.items():
        value = row[field]
        if kind == "str":
            ok = isinstance(value, str)
        else:
            ok = ((value is None and kind == "strs?")
                  or (isinstance(value, list) and all(isinstance(item, str) for item in value)))
        if not ok:
            return f"{field} is not {kind}"
    benchmark, _, task = row["task"].partition(":")
    if benchmark not in packages or not task.isidentifier():
        return "not a task of a benchmark present"
    if not all(alias.startswith(f"{benchmark}:") for alias in row["aliases"]):
        return "an alias of another benchmark"
    return None


def _command_problem(name: Any, command: Any, packages: list[str]) -> str | None:
    if not (isinstance(name, str) and name.isascii() and name[:1].isalpha()
            and name.replace("-", "_").isidentifier()):
        return f"command name {str(name)[:40]!r} is not a name"
    if (not isinstance(command, dict) or set(command) != {"module", "help"}
            or not isinstance(command["module"], str) or not isinstance(command["help"], str)):
        return f"command {name!r} is not {{module, help}} strings"
    if not _is_benchmark_module(command["module"], packages):
        return f"command {name!r}: module {command['module'][:80]!r} is not a module of a benchmark folder"
    return None


def _is_benchmark_module(module: str, packages: list[str]) -> bool:
    """``sciprobe.benchmarks.<name>[.<module>...]`` for a benchmark folder present, naming a file there."""
    parts = module.split(".")
    if parts[:2] != ["sciprobe", "benchmarks"] or len(parts) < 3 or parts[2] not in packages:
        return False
    if not all(part.isidentifier() and part.isascii() for part in parts[2:]):
        return False
    where = _BENCHMARKS.joinpath(*parts[2:])
    return os.path.isfile(f"{where}.py") or os.path.isfile(os.path.join(where, "__init__.py"))


# ---- reading and writing, only in a folder of ours ------------------------------------------------------------


def _private_folder(folder: Path, *, for_writing: bool) -> int | None:
    """An open descriptor of ``folder`` when it is a real folder owned by this user and writable by no one else
    (for writing: created 0700 when missing, and made private when ours but open to others); else None."""
    if not hasattr(os, "geteuid") or os.open not in os.supports_dir_fd:
        return None  # no owner or descriptor-relative opens here: never cached
    if for_writing:
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
    try:
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        status = os.fstat(descriptor)
        if status.st_uid == os.geteuid():
            if not status.st_mode & 0o022:
                return descriptor
            if for_writing:
                os.fchmod(descriptor, 0o700)
                return descriptor
    except OSError:
        pass
    os.close(descriptor)
    return None


def _read(path: Path) -> dict[str, Any] | None:
    """The stored entry when the folder and the file are ours and private and it has the stored shape; else
    None (then the index is computed)."""
    folder = _private_folder(path.parent, for_writing=False)
    if folder is None:
        return None
    try:
        descriptor = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except OSError:
        return None
    finally:
        os.close(folder)
    try:
        status = os.fstat(descriptor)
        if (not stat.S_ISREG(status.st_mode) or status.st_uid != os.geteuid()
                or status.st_mode & 0o022 or status.st_size > MAX_INDEX_BYTES):
            return None
        data = os.read(descriptor, MAX_INDEX_BYTES + 1)
        cached = json.loads(data) if len(data) <= MAX_INDEX_BYTES else None
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(descriptor)
    return cached if _stored_shape(cached) else None


def _stored_shape(cached: Any) -> bool:
    if not isinstance(cached, dict) or set(cached) != _STORED_KEYS or cached["format"] != INDEX_FORMAT:
        return False
    sources, packages = cached["sources"], cached["packages"]
    return (isinstance(cached["benchmarks"], str)
            and isinstance(packages, list) and all(isinstance(p, str) for p in packages)
            and isinstance(sources, list) and bool(sources)
            and all(isinstance(s, list) and len(s) == 3 and isinstance(s[0], str)
                    and type(s[1]) is int and type(s[2]) is int for s in sources)
            and type(cached["checksum"]) is int and cached["checksum"] == index_checksum(cached["index"]))


def _write(path: Path, content: dict[str, Any]) -> None:
    """Atomically (a reader sees the old file or the new one), only into a folder of ours, and silently when it
    cannot (a read-only home, a folder someone else owns)."""
    folder = _private_folder(path.parent, for_writing=True)
    if folder is None:
        return
    temporary = f".{path.name}.{os.getpid()}.tmp"
    try:
        try:
            os.unlink(temporary, dir_fd=folder)  # left by a process of ours that died, with our pid
        except FileNotFoundError:
            pass
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644,
                             dir_fd=folder)
        with os.fdopen(descriptor, "wb") as out:
            out.write(json.dumps(content).encode("utf-8"))
        os.replace(temporary, path.name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException as exc:  # no temporary file left behind, Ctrl-C included
        try:
            os.unlink(temporary, dir_fd=folder)
        except OSError:
            pass
        if not isinstance(exc, OSError):
            raise
    finally:
        os.close(folder)
