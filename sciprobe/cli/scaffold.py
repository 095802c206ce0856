"""``sciprobe new-benchmark NAME``: a working example benchmark, entirely inside ``sciprobe/benchmarks/NAME/``.

The templates in ``sciprobe/cli/templates/new_benchmark/`` become a declaration with two tasks (a single-call task
and a two-step task with its own runner), its prompts, parser, source reader, a bundled sample and a README.
Right after it, with no other edit, ``sciprobe build / evaluate / score / tasks``, the lighteval card module and
the leaderboard pick the benchmark up: the registry discovers packages, nothing lists them.
"""

from __future__ import annotations

import keyword
import re
import shutil
import tempfile
from pathlib import Path

from sciprobe.core.errors import SciprobeError

TEMPLATES = Path(__file__).resolve().parent / "templates" / "new_benchmark"
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
_NAME = re.compile(r"^[a-z][a-z0-9_]{1,39}$")


def check_name(name: str) -> str:
    if not _NAME.match(name) or keyword.iskeyword(name):
        raise SciprobeError(f"benchmark name {name!r}: use 2-40 lower-case letters, digits and _, starting with a "
                            "letter (it is a Python package name and the BENCH of BENCH:TASK)")
    return name


def create_benchmark(name: str, title: str | None = None, root: Path = BENCHMARKS) -> Path:
    """Write the example benchmark ``name`` into ``root/name`` (all or nothing) and return the folder."""
    check_name(name)
    target = Path(root) / name
    if target.exists():
        raise SciprobeError(f"{target} exists; choose another name")
    title = (title or name.replace("_", " ").title()).strip()
    if not title or any(ch in title for ch in '"\\\n'):
        raise SciprobeError("--title: one line without quotes or backslashes")
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=root))
    try:
        for template in sorted(TEMPLATES.rglob("*")):
            if template.is_dir():
                continue
            relative = template.relative_to(TEMPLATES)
            out = staging / (str(relative)[: -len(".tmpl")] if template.suffix == ".tmpl" else relative)
            out.parent.mkdir(parents=True, exist_ok=True)
            if template.suffix == ".tmpl":
                out.write_text(template.read_text("utf-8").replace("__NAME__", name).replace("__TITLE__", title),
                               "utf-8")
            else:
                shutil.copyfile(template, out)
        staging.chmod(0o755)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target
