"""Callables named ``"module:function"``, imported when first called.

Declarations (``sciprobe/benchmarks/<name>/``) are imported by every ``sciprobe`` command, ``--help`` and ``tasks``
included, so they name their scorers, parsers, prompt builders and source readers with :func:`lazy` instead of
importing them: the module behind a name (and whatever heavy library it imports) loads on the first call only.

    score=lazy("sciprobe.benchmarks.mybench.scoring:score_verdicts")

:func:`resolve` is the one place a ``"module:function"`` reference is imported (the declaration's string hooks,
e.g. ``Benchmark.baselines``, go through it too).
"""

from __future__ import annotations

import importlib
TYPE_CHECKING = False  # typing's flag without importing typing: these modules are on the CLI's start-up path
if TYPE_CHECKING:
    from typing import Any, Callable


def _check(ref: str) -> tuple[str, str]:
    module, sep, name = ref.partition(":")
    parts = (*module.split("."), *name.split("."))
    if not (sep and module and name) or not all(part.isidentifier() for part in parts):
        raise ValueError(f"a lazy reference must look like 'package.module:function', got {ref!r}")
    return module, name


def resolve(ref: str) -> Any:
    """The object ``"module:name"`` names (``name`` may be dotted: ``"module:Class.method"``), imported now."""
    module, name = _check(ref)
    target: Any = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    return target


class Lazy:
    """A callable standing for ``"module:function"``: called, it imports the module once and forwards the call
    (same arguments, same result, same exceptions). Two references to the same name are equal; pickled, it
    travels as its name."""

    __slots__ = ("ref", "_target")

    def __init__(self, ref: str) -> None:
        _check(ref)
        self.ref = ref
        self._target: Callable[..., Any] | None = None

    @property
    def target(self) -> Callable[..., Any]:
        """The function itself (imports its module on first use)."""
        if self._target is None:
            self._target = resolve(self.ref)
        return self._target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.target(*args, **kwargs)

    def __repr__(self) -> str:
        return f"lazy({self.ref!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Lazy) and other.ref == self.ref

    def __hash__(self) -> int:
        return hash(("lazy", self.ref))

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (Lazy, (self.ref,))


def lazy(ref: str) -> Callable[..., Any]:
    """``"package.module:function"`` as a callable that imports its module on the first call."""
    return Lazy(ref)
