"""Upstream code at its pinned commit, read at run time and never committed (issue 12).

A benchmark declares its pinned upstream (:class:`sciprobe.core.declaration.Upstream`: repository, commit and the
sha256 of each file holding a model-facing template). ``--prompts upstream`` builds a task's prompts from those
files instead of sciprobe's own wording; where a file comes from, first match wins:

1. a local folder (offline; ``--upstream-dir DIR`` or ``$SCIPROBE_<BENCH>_UPSTREAM``) holding the files at their
   repository paths, e.g. a checkout of the pinned commit (``DIR/<path>`` or ``DIR/<bench>/<path>``). Only
   regular files whose real path stays inside the folder are read, at most :data:`MAX_UPSTREAM_FILE_BYTES`. A
   local file whose sha256 differs from the pin is refused, unless ``--allow-modified-prompts``: then the run
   is labelled with the prompt set ``upstream-modified`` everywhere it is shown (results, summary, export,
   leaderboard) and says so on stderr;
2. the cache ``$SCIPROBE_HOME/upstream/<owner>+<name>/<commit>/<path>`` (re-checked against the pin);
3. ``raw.githubusercontent.com`` at the pinned commit, checked against the pinned sha256, then cached.
   Offline (``SCIPROBE_OFFLINE=1`` or ``HF_HUB_OFFLINE=1``) and not cached: a one-line error naming the override.

Python files are never executed: :func:`python_constants` reads their module-level literals with :mod:`ast`
(code nested too deeply for the parser is one error line, never a RecursionError or MemoryError).
Upstream's judge prompts (``Upstream.judge_files``, e.g. PreScience's LACER template and system message,
:mod:`sciprobe.benchmarks.prescience.lacer_judge`) are read the same way, whatever ``--prompts`` says.
"""

from __future__ import annotations

import ast
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciprobe.core.errors import SciprobeError
from sciprobe.core.prompt_sets import (  # noqa: F401 - re-exported: the names every caller used
    DEFAULT_PROMPT_SET, MODIFIED_PROMPT_SET, PROMPT_SET_TITLES, PROMPT_SETS, RECORDED_PROMPT_SETS, UNKNOWN_PROMPT_SET,
    UPSTREAM_PROMPT_SET, check_prompt_set, recorded_prompt_set)

if TYPE_CHECKING:
    from sciprobe.core.declaration import Benchmark, TaskSpec, Upstream

#: the most bytes read of one upstream file (the largest pinned template is 68 KB)
MAX_UPSTREAM_FILE_BYTES = 1 << 20


def offline() -> bool:
    return any(os.environ.get(v, "").lower() in ("1", "true", "yes") for v in ("SCIPROBE_OFFLINE", "HF_HUB_OFFLINE"))


def dir_env(benchmark: str) -> str:
    """The environment variable naming a local copy of ``benchmark``'s upstream files."""
    return f"SCIPROBE_{benchmark.upper()}_UPSTREAM"


def read_regular_file(path: Path, what: str, max_bytes: int = MAX_UPSTREAM_FILE_BYTES) -> bytes:
    """The bytes of ``path`` when it is a regular file of at most ``max_bytes`` (counted as read, so a sparse
    file or one that grows is cut at the cap, and a FIFO or device is refused without blocking)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SciprobeError(f"cannot read {what} ({exc.strerror or exc})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise SciprobeError(f"{what} is not a regular file")
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise SciprobeError(f"cannot read {what} ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise SciprobeError(f"{what} is larger than {max_bytes:,} bytes: not a template file")
    return data


def fetch_pinned(url: str, sha256: str, cached: Path, *, what: str, hint: str, timeout_s: float = 30.0,
                 offline_mode: bool | None = None) -> tuple[bytes, str]:
    """The bytes at ``url`` whose sha256 is pinned: from ``cached`` when it holds them, else downloaded once,
    verified and cached (atomically). Returns (bytes, where they came from). Neither the cache nor the download
    is read beyond :data:`MAX_UPSTREAM_FILE_BYTES`."""
    import hashlib

    if cached.is_file():
        try:
            data = read_regular_file(cached, f"the cached {what}")
        except SciprobeError:
            data = b""  # unreadable or oversized: a corrupted cache entry, fetched again below
        if hashlib.sha256(data).hexdigest() == sha256:
            return data, f"{url} (cached {cached})"
        cached.unlink()  # a corrupted cache entry: fetch again
    if offline_mode if offline_mode is not None else offline():
        raise SciprobeError(f"{what} is not cached ({cached}) and sciprobe is offline; {hint}")
    import urllib.error
    import urllib.request  # here: the CLI imports this module for its --prompts choices

    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            data = response.read(MAX_UPSTREAM_FILE_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SciprobeError(f"cannot download {what} ({reason}); {hint}") from None
    if len(data) > MAX_UPSTREAM_FILE_BYTES:
        raise SciprobeError(f"{what} at {url} is larger than {MAX_UPSTREAM_FILE_BYTES:,} bytes; {hint}")
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
    assignment to the same name wins, as at run time. Code nested too deeply to parse is refused in one line."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise SciprobeError(f"{where} is not Python this interpreter can read ({exc.msg}, line {exc.lineno})") \
            from None
    except (RecursionError, MemoryError):  # the parser's own limits: absurdly nested expressions
        raise SciprobeError(f"{where} is nested too deeply to parse: not a template file") from None
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
#: the longest ``"...".strip().strip()`` chain read as a literal (upstream's files have one call)
_MAX_STRING_CALLS = 8


def _literal(node: ast.expr) -> Any:
    """A literal, or a string literal with up to :data:`_MAX_STRING_CALLS` strip calls; else ``_NOT_LITERAL``."""
    calls: list[str] = []
    while (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args
           and not node.keywords and node.func.attr in _STRING_METHODS and len(calls) <= _MAX_STRING_CALLS):
        calls.append(node.func.attr)
        node = node.func.value
    if len(calls) > _MAX_STRING_CALLS:
        return _NOT_LITERAL
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL
    if not calls:
        return value
    if not isinstance(value, str):
        return _NOT_LITERAL
    for name in reversed(calls):  # the innermost call first, as Python evaluates it
        value = _STRING_METHODS[name](value)
    return value


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
        # the folder's real path, fixed now: every file read must stay inside it
        self._local_root = self.local_dir.resolve() if self.local_dir is not None else None
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
            result = self._local_file(path, pinned)
        else:
            from sciprobe.core.paths import sciprobe_home

            owner_name = self.upstream.repo.replace("/", "+")
            cached = sciprobe_home() / "upstream" / owner_name / self.upstream.commit / path
            data, source = fetch_pinned(self.upstream.raw_url(path), pinned, cached,
                                        what=f"{self.upstream.label}:{path}", hint=self._hint(),
                                        timeout_s=self.timeout_s, offline_mode=self.offline_mode)
            result = UpstreamFile(path, data, source, pinned)
        self._files[path] = result
        return result

    def _local_file(self, path: str, pinned: str) -> UpstreamFile:
        """``path`` from the local folder (``DIR/<path>``, else ``DIR/<bench>/<path>``): a regular file whose real
        path stays inside the folder; a symlink leading out of it is refused, never followed."""
        assert self.local_dir is not None and self._local_root is not None
        for candidate in (self.local_dir / path, self.local_dir / self.benchmark / path):
            if not os.path.lexists(candidate):
                continue
            real = Path(os.path.realpath(candidate))
            if not real.is_relative_to(self._local_root):
                raise SciprobeError(f"upstream file {candidate} resolves to {str(real)!r}, outside the upstream "
                                    f"folder {self.local_dir}: refused (templates are read only from inside it)")
            return UpstreamFile(path, read_regular_file(real, f"upstream file {candidate}"), str(candidate), pinned)
        raise SciprobeError(f"{path} not found in the upstream folder {self.local_dir} (nor under "
                            f"{self.benchmark}/); it must hold {self.upstream.label}'s files at their paths")

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

    def modified(self) -> list[UpstreamFile]:
        """The files read so far whose sha256 differs from the pin (only a local folder can supply one)."""
        return [f for _, f in sorted(self._files.items()) if not f.matches_pin]

    def warnings(self) -> list[str]:
        return [f"upstream prompt file {f.path} differs from {self.upstream.label} (sha256 {f.sha256[:12]}…, pinned "
                f"{f.pinned_sha256[:12]}…): the run used the local copy {f.source} (prompt set "
                f"{MODIFIED_PROMPT_SET})" for f in self.modified()]

    def refusal(self) -> str | None:
        """Why the files read so far cannot run as the upstream prompt set (None: every one matches the pin)."""
        modified = self.modified()
        if not modified:
            return None
        first = modified[0]
        more = f" (and {len(modified) - 1} more)" if len(modified) > 1 else ""
        return (f"upstream prompt file {first.source}{more} differs from {self.upstream.label} (sha256 "
                f"{first.sha256[:12]}…, pinned {first.pinned_sha256[:12]}…): refused; pass --allow-modified-prompts "
                f"to run with it, labelled {MODIFIED_PROMPT_SET} and never ranked with the upstream prompts")


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


def release_text_check(benchmark: Benchmark, location: Path | str, local: bool) -> tuple[dict[str, Any] | None,
                                                                                        str | None]:
    """For the upstream prompt set: does the data at ``location`` hold the release text upstream sends
    (:attr:`~sciprobe.core.declaration.Upstream.release_text_options`, e.g. IDRBench's whitespace as released)? Returns
    what provenance records (None: the benchmark declares nothing) and a warning when the messages are not, or
    may not be, upstream's byte for byte."""
    upstream = benchmark.upstream
    wanted = dict(upstream.release_text_options) if upstream is not None else {}
    if upstream is None or not wanted:
        return None, None
    from sciprobe.data.build import read_build_info

    hint = f"build it with `{upstream.release_text_build}` for upstream's exact messages"
    options = read_build_info(Path(location)).get("options") if local else None
    if not isinstance(options, Mapping):
        return ({"reader_options": None, "as_released": None},
                f"cannot tell whether the {benchmark.name} data holds the release text upstream sends (no sciprobe "
                f"build record): the upstream prompts may not be upstream's messages byte for byte; {hint}")
    built = {key: options.get(key, benchmark.source_options.get(key)) for key in wanted}
    if built == wanted:
        return {"reader_options": built, "as_released": True}, None
    changed = ", ".join(f"{key}={built[key]!r}" for key in wanted if built[key] != wanted[key])
    return ({"reader_options": built, "as_released": False},
            f"the {benchmark.name} data was built with {changed}, not the release text upstream sends: the upstream "
            f"prompts are not upstream's messages byte for byte (recorded in provenance); {hint}")


def no_upstream_prompt_reason(benchmark: Benchmark, task: TaskSpec) -> str | None:
    """Why ``--prompts upstream`` cannot run ``task`` (None: it can)."""
    if task.upstream_prompt:
        return None
    if benchmark.upstream is None:
        return f"{benchmark.name} has no public upstream code"
    return f"the pinned upstream code ({benchmark.upstream.label}) has no model-facing template for this task"


def prompt_set_for(benchmark: Benchmark, task: TaskSpec, name: str | None, *, local_dir: Path | str | None = None,
                   offline_mode: bool | None = None, allow_modified: bool = False) -> PromptSet:
    """The prompt set a task runs with. The upstream set reads its templates now, so a missing file fails before
    any model call. A template that differs from the pin is refused unless ``allow_modified``; then the set is
    :data:`MODIFIED_PROMPT_SET` and carries a warning per file."""
    name = check_prompt_set(name)
    if name == DEFAULT_PROMPT_SET:
        return PromptSet()
    why = no_upstream_prompt_reason(benchmark, task)
    if why:
        raise SciprobeError(f"task {benchmark.name}:{task.name} has no upstream prompt set: {why}")
    assert benchmark.upstream is not None and task.upstream_prompt is not None
    from sciprobe.core.lazy import resolve

    factory = resolve(task.upstream_prompt)
    texts = UpstreamTexts(benchmark.name, benchmark.upstream, local_dir, offline_mode=offline_mode)
    builders = dict(factory(texts))
    refusal = texts.refusal()
    if refusal and not allow_modified:
        raise SciprobeError(refusal)
    return PromptSet(MODIFIED_PROMPT_SET if refusal else UPSTREAM_PROMPT_SET, builders, texts.provenance(),
                     tuple(texts.warnings()))
