"""The one declaration per benchmark that every artifact reads.

A benchmark module (``sciprobe/benchmarks/<name>/``) builds a :class:`Benchmark`: its dataset configs
(features, source reader), its tasks (prompt, parser, scorer, generation parameters) and its card text.
The dataset builder, the dataset card, the lighteval task card, the metric modules, the CLI and the
leaderboard all derive from this object; nothing about a benchmark is written twice.
(shared/spec/architecture.md)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

Row = Mapping[str, Any]
Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Parsed:
    """A model answer turned into a prediction. ``value`` is None when nothing could be parsed;
    ``path`` says which parser matched (``official``, ``tolerant:<rule>``, ``failed``)."""

    value: Any
    path: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.value is not None


class SourceReader(Protocol):
    def __call__(self, source: Path, config: str, options: Mapping[str, Any]) -> Iterator[dict[str, Any]]: ...


@dataclass(frozen=True)
class ConfigSpec:
    """One dataset config: its features (a callable so ``datasets`` is imported lazily), its splits
    and a one-line description for the card."""

    name: str
    description: str
    features: Callable[[], Any]
    splits: tuple[str, ...] = ("test",)


@dataclass(frozen=True)
class TaskSpec:
    """One scored task. Single-call tasks give ``build_messages`` + ``parse`` and are run by the generic
    runner and by lighteval; multi-call tasks (tournaments, agents) name a ``runner``.

    ``score(records, mode)`` takes per-item records (gold, parsed prediction, row) and returns a
    :class:`sciprobe.scoring.ScoreReport`.
    """

    name: str
    config: str
    description: str
    metric: str
    score: Callable[..., Any]
    build_messages: Callable[[Row, Sequence[Row]], Messages] | None = None
    parse: Callable[[str], Parsed] | None = None
    gold: Callable[[Row], Any] | None = None
    runner: str | None = None
    num_fewshot: int = 0
    fewshot_split: str | None = None
    generation: dict[str, Any] = field(default_factory=dict)
    modes: tuple[str, ...] = ("official",)
    headline: str = ""
    # metrics the leaderboard shows next to the headline (a judged metric that not every path computes)
    extra_columns: tuple[str, ...] = ()
    # (score key, higher is better) pairs the lighteval card reports for every mode; empty = the
    # classification set (macro_f1, positive_f1, tpr, tnr) plus the official parse-failure rate.
    corpus_metrics: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True)
class Benchmark:
    name: str
    title: str
    version: str
    description: str
    citation: str
    license: str
    homepage: str
    configs: dict[str, ConfigSpec]
    tasks: dict[str, TaskSpec]
    read_source: SourceReader
    source_options: dict[str, Any] = field(default_factory=dict)
    sample_source: Path | None = None
    card_sections: dict[str, str] = field(default_factory=dict)
    prompt_version: str = "1"

    def task(self, name: str) -> TaskSpec:
        from sciprobe.errors import SciprobeError

        if name not in self.tasks:
            raise SciprobeError(f"unknown task {self.name}:{name}; known: {', '.join(sorted(self.tasks))}")
        return self.tasks[name]

    def config(self, name: str) -> ConfigSpec:
        from sciprobe.errors import SciprobeError

        if name not in self.configs:
            raise SciprobeError(f"unknown config {name!r} for {self.name}; known: {', '.join(self.configs)}")
        return self.configs[name]
