"""Upstream code at its pinned commit, read at run time and never committed (issue 12).

A benchmark declares its pinned upstream (:class:`sciprobe.declaration.Upstream`: repository, commit and the
sha256 of each file holding a model-facing template). ``--prompts upstream`` builds a task's prompts from those
files instead of sciprobe's own wording; where a file comes from, first match wins:

1. a local folder (offline; ``--upstream-dir DIR`` or ``$SCIPROBE_<BENCH>_UPSTREAM``) holding the files at their
   repository paths, e.g. a checkout of the pinned commit (``DIR/<path>`` or ``DIR/<bench>/<path>``). A local
   file whose sha256 differs from the pin is used as given and the run says so (provenance and a warning);
2. the cache ``$SCIPROBE_HOME/upstream/<owner>+<name>/<commit>/<path>`` (re-checked against the pin);
3. ``raw.githubusercontent.com`` at the pinned commit, checked against the pinned sha256, then cached.
   Offline (``SCIPROBE_OFFLINE=1`` or ``HF_HUB_OFFLINE=1``) and not cached: a one-line error naming the override.

Python files are never executed: :func:`python_constants` reads their module-level literals with :mod:`ast`.
Upstream's judge prompts (``Upstream.judge_files``, e.g. PreScience's LACER template and system message,
:mod:`sciprobe.benchmarks.prescience.lacer`) are read the same way, whatever ``--prompts`` says.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciprobe.errors import SciprobeError

if TYPE_CHECKING:
    from sciprobe.declaration import Benchmark, TaskSpec, Upstream

#: ``--prompts``: sciprobe's own wording (the default) or upstream's templates at the pinned commit
PROMPT_SETS = ("sciprobe", "upstream")
DEFAULT_PROMPT_SET = "sciprobe"


def offline() -> bool:
    return any(os.environ.get(v, "").lower() in ("1", "true", "yes") for v in ("SCIPROBE_OFFLINE", "HF_HUB_OFFLINE"))


def dir_env(benchmark: str) -> str:
    """The environment variable naming a local copy of ``benchmark``'s upstream files."""
    return f"SCIPROBE_{benchmark.upper()}_UPSTREAM"


def check_prompt_set(name: str | None) -> str:
    name = name or DEFAULT_PROMPT_SET
    if name not in PROMPT_SETS:
        raise SciprobeError(f"unknown prompt set {name!r}; choose {' or '.join(PROMPT_SETS)}")
    return name


def fetch_pinned(url: str, sha256: str, cached: Path, *, what: str, hint: str, timeout_s: float = 30.0,
                 offline_mode: bool | None = None) -> tuple[bytes, str]:
    """The bytes at ``url`` whose sha256 is pinned: from ``cached`` when it holds them, else downloaded once,
    verified and cached (atomically). Returns (bytes, where they came from)."""
    import hashlib

    if cached.is_file():
        data = cached.read_bytes()
        if hashlib.sha256(data).hexdigest() == sha256:
            return data, f"{url} (cached {cached})"
        cached.unlink()  # a corrupted cache entry: fetch again
    if offline_mode if offline_mode is not None else offline():
        raise SciprobeError(f"{what} is not cached ({cached}) and sciprobe is offline; {hint}")
    import urllib.error
    import urllib.request  # here: the CLI imports this module for its --prompts choices

    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            data = response.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SciprobeError(f"cannot download {what} ({reason}); {hint}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise SciprobeError(f"{what} at {url} has sha256 {digest[:12]}…, expected {sha256[:12]}…; {hint}")
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_name(cached.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, cached)
    return data, url


def python_constants(text: str, where: str = "<upstream file>") -> dict[str, Any]:
    """Module-level ``NAME = <literal>`` assignments of Python source, without executing it: strings, numbers,
    dicts and lists (:func:`ast.literal_eval`), and ``"...".strip()``-style calls on a string literal. A later
    assignment to the same name wins, as at run time."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise SciprobeError(f"{where} is not Python this interpreter can read ({exc.msg}, line {exc.lineno})") \
            from None
    out: dict[str, Any] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        value = _literal(node.value)
        if value is _NOT_LITERAL:
            continue
        for target in node.targets:
            if isinstance(target, ast.Name):
                out[target.id] = value
    return out


_NOT_LITERAL = object()
_STRING_METHODS = {"strip": str.strip, "lstrip": str.lstrip, "rstrip": str.rstrip}


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args and not node.keywords
            and node.func.attr in _STRING_METHODS):
        inner = _literal(node.func.value)
        if isinstance(inner, str):
            return _STRING_METHODS[node.func.attr](inner)
    return _NOT_LITERAL


@dataclass(frozen=True)
class UpstreamFile:
    path: str
    data: bytes
    source: str
    pinned_sha256: str

    @property
    def sha256(self) -> str:
        import hashlib

        return hashlib.sha256(self.data).hexdigest()

    @property
    def matches_pin(self) -> bool:
        return self.sha256 == self.pinned_sha256

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")


class UpstreamTexts:
    """The model-facing files of one benchmark's pinned upstream, each read once on first use (see the module
    docstring for the order: local folder, cache, download)."""

    def __init__(self, benchmark: str, upstream: Upstream, local_dir: Path | str | None = None, *,
                 offline_mode: bool | None = None, timeout_s: float = 30.0,
                 option: str | None = "--upstream-dir DIR") -> None:
        self.benchmark = benchmark
        self.option = option  # how the calling command takes a local folder (None: only the environment)
        self.upstream = upstream
        chosen = local_dir or os.environ.get(dir_env(benchmark)) or None
        self.local_dir = Path(chosen) if chosen else None
        if self.local_dir is not None and not self.local_dir.is_dir():
            raise SciprobeError(f"upstream folder {self.local_dir} not found (--upstream-dir / {dir_env(benchmark)})")
        self.offline_mode = offline_mode
        self.timeout_s = timeout_s
        self._files: dict[str, UpstreamFile] = {}
        self._constants: dict[str, dict[str, Any]] = {}

    def _hint(self) -> str:
        how = f"pass {self.option} or set" if self.option else "set"
        return (f"{how} {dir_env(self.benchmark)}=DIR, a folder holding the files of "
                f"{self.upstream.label} at their repository paths (e.g. a checkout of that commit)")

    def file(self, path: str) -> UpstreamFile:
        if path in self._files:
            return self._files[path]
        pinned = self.upstream.pinned_files.get(path)
        if pinned is None:
            raise SciprobeError(f"{path} is not a pinned prompt file of {self.upstream.label}")
        if self.local_dir is not None:
            found = next((c for c in (self.local_dir / path, self.local_dir / self.benchmark / path) if c.is_file()),
                         None)
            if found is None:
                raise SciprobeError(f"{path} not found in the upstream folder {self.local_dir} (nor under "
                                    f"{self.benchmark}/); it must hold {self.upstream.label}'s files at their paths")
            result = UpstreamFile(path, found.read_bytes(), str(found), pinned)
        else:
            from sciprobe.paths import sciprobe_home

            owner_name = self.upstream.repo.replace("/", "+")
            cached = sciprobe_home() / "upstream" / owner_name / self.upstream.commit / path
            data, source = fetch_pinned(self.upstream.raw_url(path), pinned, cached,
                                        what=f"{self.upstream.label}:{path}", hint=self._hint(),
                                        timeout_s=self.timeout_s, offline_mode=self.offline_mode)
            result = UpstreamFile(path, data, source, pinned)
        self._files[path] = result
        return result

    def text(self, path: str) -> str:
        try:
            return self.file(path).text
        except UnicodeDecodeError:
            raise SciprobeError(f"{self.upstream.label}:{path} is not UTF-8 text") from None

    def constant(self, path: str, name: str, kind: type = str) -> Any:
        """The module-level literal ``name`` of the Python file ``path`` (never executed)."""
        if path not in self._constants:
            self._constants[path] = python_constants(self.text(path), f"{self.upstream.label}:{path}")
        if name not in self._constants[path]:
            raise SciprobeError(f"{self.upstream.label}:{path} defines no literal {name!r} (a different revision?)")
        value = self._constants[path][name]
        if not isinstance(value, kind):
            raise SciprobeError(f"{self.upstream.label}:{path}: {name} is a {type(value).__name__}, expected "
                                f"{kind.__name__}")
        return value

    def provenance(self) -> dict[str, Any]:
        return {"repo": self.upstream.repo, "commit": self.upstream.commit,
                "files": {p: {"sha256": f.sha256, "source": f.source, "matches_pin": f.matches_pin}
                          for p, f in sorted(self._files.items())}}

    def warnings(self) -> list[str]:
        return [f"upstream prompt file {p} differs from {self.upstream.label} (sha256 {f.sha256[:12]}…, pinned "
                f"{f.pinned_sha256[:12]}…): the run used the local copy {f.source}"
                for p, f in sorted(self._files.items()) if not f.matches_pin]


@dataclass
class PromptSet:
    """What a task runs with: the prompt set's name, the builders replacing sciprobe's own (empty for the
    default set) and, for the upstream set, where each template came from."""

    name: str = DEFAULT_PROMPT_SET
    builders: Mapping[str, Callable[..., Any]] | None = None
    provenance: dict[str, Any] | None = None
    warnings: tuple[str, ...] = ()

    def builder(self, key: str, ours: Callable[..., Any]) -> Callable[..., Any]:
        if self.name == DEFAULT_PROMPT_SET or not self.builders:
            return ours
        if key not in self.builders:
            raise SciprobeError(f"the upstream prompt set has no {key!r} builder for this task")
        return self.builders[key]

    def record(self) -> dict[str, Any]:
        """Provenance keys of a result."""
        out: dict[str, Any] = {"prompt_set": self.name}
        if self.provenance:
            out["upstream_prompts"] = self.provenance
        return out


def no_upstream_prompt_reason(benchmark: Benchmark, task: TaskSpec) -> str | None:
    """Why ``--prompts upstream`` cannot run ``task`` (None: it can)."""
    if task.upstream_prompt:
        return None
    if benchmark.upstream is None:
        return f"{benchmark.name} has no public upstream code"
    return f"the pinned upstream code ({benchmark.upstream.label}) has no model-facing template for this task"


def prompt_set_for(benchmark: Benchmark, task: TaskSpec, name: str | None, *, local_dir: Path | str | None = None,
                   offline_mode: bool | None = None) -> PromptSet:
    """The prompt set a task runs with. The upstream set reads its templates now, so a missing file fails before
    any model call."""
    name = check_prompt_set(name)
    if name == DEFAULT_PROMPT_SET:
        return PromptSet()
    why = no_upstream_prompt_reason(benchmark, task)
    if why:
        raise SciprobeError(f"task {benchmark.name}:{task.name} has no upstream prompt set: {why}")
    assert benchmark.upstream is not None and task.upstream_prompt is not None
    from sciprobe.lazy import resolve

    factory = resolve(task.upstream_prompt)
    texts = UpstreamTexts(benchmark.name, benchmark.upstream, local_dir, offline_mode=offline_mode)
    builders = dict(factory(texts))
    return PromptSet("upstream", builders, texts.provenance(), tuple(texts.warnings()))
