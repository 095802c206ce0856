"""What the light commands read from the benchmark declarations, cached so they start without importing them.

``sciprobe --help``, ``sciprobe tasks`` and a benchmark's own command (``sciprobe prescience ...``) need the task
rows (:func:`sciprobe.task_listing.task_rows`) and the benchmarks' own commands; computing them imports every
declaration and the runners behind it, which costs more than starting Python itself. The index is computed from
the declarations (never written by hand) and kept in ``$SCIPROBE_HOME/cli-index/`` together with what it was
computed from: every sciprobe module imported at that point (path, size, modification time) and the benchmark
packages present. Any change to those (an edited declaration or runner, a new benchmark folder) recomputes it,
as Python's bytecode cache does. A declaration that fails to import is never cached (its warning shows on every
run), and a cache that cannot be read or written is not an error: the index is computed instead.
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from pathlib import Path

from sciprobe import __version__

TYPE_CHECKING = False  # typing's flag without importing typing: these modules are on the CLI's start-up path
if TYPE_CHECKING:
    from typing import Any

#: Bump when the layout of the stored index changes.
INDEX_FORMAT = 1
_BENCHMARKS = Path(__file__).resolve().parent / "benchmarks"


def cli_index() -> dict[str, Any]:
    """``{"tasks": [task row, ...], "commands": {name: {"module": ..., "help": ...}}}`` over every registered
    benchmark, from the cache when it is current."""
    path = _cache_path()
    packages = _packages()
    cached = _read(path)
    if (cached is not None and cached.get("benchmarks") == str(_BENCHMARKS) and cached.get("packages") == packages
            and _current(cached.get("sources"))):
        return cached["index"]  # _read checked its shape
    return _compute_and_store(path, packages)


def _compute_and_store(path: Path, packages: list[str]) -> dict[str, Any]:
    import warnings

    from sciprobe.benchmarks import DeclarationWarning, benchmark_names, get_benchmark
    from sciprobe.task_listing import task_rows

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = benchmark_names()
    for warning in caught:  # shown as if no cache existed
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    index = {"tasks": task_rows(names),
             "commands": {c.name: {"module": c.module, "help": c.help} for b in names
                          for c in get_benchmark(b).commands}}
    if not any(issubclass(w.category, DeclarationWarning) for w in caught):  # a broken one warns on every run
        _write(path, {"format": INDEX_FORMAT, "benchmarks": str(_BENCHMARKS), "packages": packages,
                      "sources": _sources(), "index": index})
    return index


def _cache_path() -> Path:
    from sciprobe.paths import sciprobe_home

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
                stat = os.stat(source)
            except OSError:
                continue
            seen.append([source, stat.st_size, stat.st_mtime_ns])
    return sorted(seen)


def _current(sources: Any) -> bool:
    if not isinstance(sources, list) or not sources:
        return False
    for source, size, mtime_ns in sources:
        try:
            stat = os.stat(source)
        except OSError:
            return False
        if stat.st_size != size or stat.st_mtime_ns != mtime_ns:
            return False
    return True


def _read(path: Path) -> dict[str, Any] | None:
    try:
        cached = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(cached, dict) or cached.get("format") != INDEX_FORMAT:
        return None
    index = cached.get("index")
    shaped = (isinstance(index, dict) and isinstance(index.get("tasks"), list)
              and isinstance(index.get("commands"), dict))
    return cached if shaped else None


def _write(path: Path, content: dict[str, Any]) -> None:
    """Atomically (a reader sees the old file or the new one), and silently when the home is read-only."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(json.dumps(content), encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        try:
            temporary.unlink(missing_ok=True)
        except OSError:  # e.g. its folder could not be made
            pass
