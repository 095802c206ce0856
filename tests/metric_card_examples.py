"""Run every code example of a metric card (``metrics/<name>/README.md``): the ```python blocks in order, in one
namespace, from the repository root (so ``evaluate.load("metrics/<name>")`` resolves as a reader of the README
would run it). A block with ``>>>`` prompts is a doctest (outputs compared); any other block is executed."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(readme: Path) -> list[str]:
    return [m.group(1) for m in FENCE.finditer(readme.read_text(encoding="utf-8"))]


def run_card(readme: Path) -> list[str]:
    """Failures (one text per failed example), empty when every example runs and prints what the card says."""
    namespace: dict = {"__name__": f"card_{readme.parent.name}"}
    failures: list[str] = []
    parser = doctest.DocTestParser()
    for number, block in enumerate(python_blocks(readme), 1):
        name = f"{readme.parent.name} README block {number}"
        if ">>>" in block:
            test = parser.get_doctest(block, namespace, name, str(readme), 0)
            out: list[str] = []
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            runner.run(test, out=out.append, clear_globs=False)
            namespace.update(test.globs)
            if runner.failures:
                failures.append(f"{name}:\n" + "".join(out))
        else:
            try:
                exec(compile(block, name, "exec"), namespace)  # noqa: S102 - the card's own example
            except Exception as exc:  # noqa: BLE001 - report which example failed and why
                failures.append(f"{name}: {type(exc).__name__}: {exc}")
    return failures
