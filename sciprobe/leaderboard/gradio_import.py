"""``import gradio`` without its type-stub writer: a Space's start costs half a second to a second less (issue 28).

gradio 6.31 regenerates a ``.pyi`` stub next to every component module each time it is imported
(``gradio.component_meta.create_or_modify_pyi``, called by the component metaclass for ~80 classes): it reads and
parses each module's source with ``ast`` and renders a template, and it writes into site-packages when a stub is
missing or stale. The stubs are for editors, and a running Space never reads them; on this 2-core machine the
writer was 1.0-1.1 s of the 2.3-2.5 s of CPU of ``import gradio``, and ~3x that with the cores busy.

:func:`import_gradio` imports gradio with that one function replaced by a no-op, through an import hook on
``gradio.component_meta`` alone (the function is looked up by name when each component class is made, so the
replacement is seen by every class). Components, events and their behaviour are unchanged. When gradio is
already imported (a test, a notebook), nothing is changed and the module is returned as it is.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from types import ModuleType
from typing import Any

STUB_MODULE = "gradio.component_meta"
STUB_WRITER = "create_or_modify_pyi"

_lock = threading.Lock()


def _no_stub(*_args: Any, **_kwargs: Any) -> None:
    """Stands in for gradio's stub writer: a running app has no use for editor stubs."""


class _SkipStubWriter(importlib.abc.MetaPathFinder):
    """Finds ``gradio.component_meta`` as usual and, once it has run, swaps its stub writer for :func:`_no_stub`."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != STUB_MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        execute = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            if callable(getattr(module, STUB_WRITER, None)):  # a gradio without the writer: leave it be
                setattr(module, STUB_WRITER, _no_stub)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def import_gradio() -> ModuleType:
    """``gradio``, imported (when it is not yet) without regenerating its type stubs."""
    with _lock:
        if "gradio" in sys.modules:
            return sys.modules["gradio"]
        hook = _SkipStubWriter()
        sys.meta_path.insert(0, hook)
        try:
            import gradio
        finally:
            sys.meta_path.remove(hook)
        return gradio


__all__ = ["import_gradio"]
