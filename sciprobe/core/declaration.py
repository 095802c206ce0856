"""The one declaration per benchmark that every artifact reads.

A benchmark module (``sciprobe/benchmarks/<name>/``) builds a :class:`Benchmark`: its dataset configs
(features, source reader), its tasks (prompt, parser, scorer, generation parameters) and its card text.
The dataset builder, the dataset card, the lighteval task card, the metric modules, the CLI and the
leaderboard all derive from this object; nothing about a benchmark is written twice.
(shared/spec/architecture.md)

``sciprobe --help`` and ``sciprobe tasks`` import every declaration, so a declaration names the functions its tasks
call in other modules with :func:`sciprobe.core.lazy.lazy` (``"module:function"``, imported on the first call) and its
runner objects import their machinery when they run (README, "Adding a benchmark").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator, Mapping, Protocol, Required, Sequence, TypedDict

if TYPE_CHECKING:
    from sciprobe.results.write import TaskResult
    from sciprobe.scoring.item_scores import ItemScores
    from sciprobe.run.task_runner import RunContext

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

    @property
    def official(self) -> Any:
        """What the benchmark's official (upstream) parser read, or None (kept in ``extra`` so details files hold
        every parser output in one column)."""
        return self.extra.get("official")


class ItemRecord(TypedDict, total=False):
    """One scored item, as runners write it and ``TaskSpec.score(records, mode)`` reads it (and the details file
    keeps it). Runners add their own keys beside these; a task's ``record_fields`` adds row fields its scorer
    needs (e.g. a paper id that official scoring excludes)."""

    id: Required[str]
    gold: Any                 # what the item is scored against
    prediction: Any           # the tolerant parse (None: nothing parsed)
    official: Any             # the official parse (None: nothing parsed)
    parse_path: str           # which parser matched: official, tolerant:<rule>, failed..., error (no answer)
    parsed_extra: str         # everything else the parser reported, as JSON
    response: str | None      # the raw answer
    error: str | None         # why the call got no answer (None: it did)


class SourceReader(Protocol):
    """Reads a benchmark's release files: yields ``(split, rows)`` pairs for one config, where ``rows`` is a list
    of row dicts or, for a streaming reader, an iterator of row dicts or of Arrow tables / record batches whose
    columns are the config's features (written as they are: no Python object per row). Readers check what they
    read with :mod:`sciprobe.data.release_files` (one-line errors naming file, item and value)."""

    def __call__(self, source: Path, config: str,
                 options: Mapping[str, Any]) -> Iterator[tuple[str, list[dict[str, Any]] | Iterator[Any]]]:
        ...


class Runner:
    """How a task is run. A task is handed its runner object (as an inspect_evals ``Task`` is handed its solver);
    the runner lives in the folder of the benchmark that owns it and calls shared machinery (the LLM client, the
    Swiss tournament, the sandbox). ``None`` on a :class:`TaskSpec` means the generic one-call-per-item runner
    (:class:`sciprobe.run.runners.single_call.SingleCall`).

    Besides :meth:`run`, a runner says whether a predictions file can stand in for the model (``replay_refusal``),
    what a predictions line holds (``prediction_fields``), how to score such a file without any model call
    (:meth:`records_from_predictions`), and what a ``--dry-run`` plan should add (:meth:`plan_notes`).
    """

    #: a stable name, recorded in provenance and messages
    name: ClassVar[str] = "runner"
    #: what ``sciprobe tasks`` shows: "single call", "judged", "tournament", "tool agent", "sandbox"
    kind: ClassVar[str] = "single call"
    #: "no", "optional" or "required": whether the task needs ``--judge``
    judge: ClassVar[str] = "no"
    #: why a predictions file cannot stand in for the model (None: it can be replayed)
    replay_refusal: ClassVar[str | None] = None
    #: True when :meth:`records_from_predictions` scores a predictions file with no model or judge call (the
    #: leaderboard then scores submissions inline); False: the file is replayed through :meth:`run`
    reads_predictions: ClassVar[bool] = False
    #: "module:object" of this runner's judge check (a :class:`sciprobe.run.judge_check.JudgeCheck`): each stored
    #: judge's item scores from the run's records, and how another judge re-judges the same responses
    #: (``sciprobe judge-check``); None: the task has no judge to check
    judge_check: ClassVar[str | None] = None

    def run(self, ctx: RunContext) -> list[TaskResult]:
        raise NotImplementedError

    def prediction_fields(self, task: TaskSpec) -> tuple[str, ...]:
        """The fields a predictions-file line may carry besides ``id`` (and ``task``): the raw answer by default."""
        return ("response",)

    def records_from_predictions(self, task: TaskSpec, rows: Sequence[Row],
                                 predictions: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Per-item records from a predictions file (runners with ``reads_predictions``)."""
        raise NotImplementedError(f"runner {self.name} scores predictions by replaying them through run()")

    def plan_notes(self, task: TaskSpec) -> list[str]:
        """What a ``--dry-run`` plan cannot count exactly for this runner."""
        return []

    def candidates(self, row: Row) -> frozenset[str] | None:
        """For runners whose predictions rank a closed set (a ``ranking`` field): the item's candidates, which a
        submission may list and nothing else. None: no closed set."""
        return None

    def __repr__(self) -> str:
        return f"<runner {self.name}>"


@dataclass(frozen=True)
class Upstream:
    """A benchmark's pinned upstream code: what ``mode="official"`` reproduces, and where ``--prompts upstream``
    reads the model-facing templates (``prompt_files``: repository path -> sha256 of the file at ``commit``;
    fetched at run time, never committed; :mod:`sciprobe.run.upstream`)."""

    repo: str                                   # GitHub "owner/name"
    commit: str                                 # the full 40-hex commit
    prompt_files: Mapping[str, str] = field(default_factory=dict)
    note: str = ""                              # what else the cards should say (e.g. a later upstream change used)
    # the reader options (``Benchmark.source_options``) under which the built text is the text upstream sends, and
    # how to build with them: ``--prompts upstream`` builds the bundled sample with them and flags other data
    release_text_options: Mapping[str, Any] = field(default_factory=dict)
    release_text_build: str = ""
    # upstream's judge prompts (path -> sha256), read the same way for judging whatever ``--prompts`` says: the
    # official judge messages are upstream's in every run
    judge_files: Mapping[str, str] = field(default_factory=dict)

    @property
    def pinned_files(self) -> dict[str, str]:
        """Every file sciprobe reads from this upstream: the model's templates and the judges'."""
        return {**self.prompt_files, **self.judge_files}

    @property
    def label(self) -> str:
        return f"{self.repo}@{self.commit[:7]}"

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/tree/{self.commit}"

    def raw_url(self, path: str) -> str:
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{path}"


@dataclass(frozen=True)
class Breakdown:
    """A way to group a task's items for per-group scores (by discipline, question type, team size...).

    Every record gets the item's group under ``name`` (the runner copies it when ``name`` is in the task's
    ``record_fields``; otherwise :func:`sciprobe.results.analysis.attach_row_fields` adds it from the row). ``of``
    computes
    the group from the row when it is not a plain row field; a group may be a list (the item counts in each of its
    groups, e.g. a paper with two disciplines). None is shown as ``unknown``."""

    name: str
    title: str = ""
    of: Callable[[Row], Any] | None = None

    def group_of(self, row: Row) -> Any:
        return self.of(row) if self.of is not None else row.get(self.name)


@dataclass(frozen=True)
class BaselineInput:
    """What a reference baseline sees: the task, its test rows (after cutoff and limit), the few-shot examples,
    the built dataset folder (None: the bundled sample) and the release folder ``--source`` (None: the bundled
    sample's release files)."""

    benchmark: Benchmark
    task: TaskSpec
    rows: Sequence[Row]
    fewshot: Sequence[Row]
    data: str | None
    source: Path | None


@dataclass(frozen=True)
class Baseline:
    """A reference baseline: predictions made without any model (random, majority, a similarity ranker ...).

    ``predict`` returns the lines of a predictions file keyed by item id (``{"prediction": label}``,
    ``{"ranking": [...]}``, ``{"response": text}`` as ``sciprobe tasks`` lists them), scored exactly as ``sciprobe
    score`` scores a file; ``records`` (instead) returns the scorer's per-item records directly, for tasks whose
    runner reads no predictions file. ``tasks``: the task names it applies to."""

    name: str
    description: str
    tasks: tuple[str, ...]
    predict: Callable[[BaselineInput], Mapping[str, Mapping[str, Any]]] | None = None
    records: Callable[[BaselineInput], list[dict[str, Any]]] | None = None


@dataclass(frozen=True)
class PaperCount:
    """How many rows one split of a config should hold, as the paper (or the release's own documentation) states.

    ``sciprobe doctor`` and ``sciprobe build`` compare the rows the source reader yields (before any cutoff) with
    it, warn in one line on a mismatch, and the dataset card records the comparison. ``source`` says where the
    number is stated, e.g. ``"paper Table 1"`` or ``"spec idrbench.md §3.2 (release v1 at aa621e4)"``."""

    rows: int
    source: str
    split: str = "test"


@dataclass(frozen=True)
class ReleaseFile:
    """One file of a published release as upstream's own loader reads it (``sciprobe doctor`` checks it).

    ``name`` is a path under the source folder; ``parts`` a glob of an older layout that splits the same records
    over several files (read instead when ``name`` is absent). ``columns`` maps each field to the types its values
    may have, ``"|"``-joined: ``str int float bool list dict null`` (JSON/Arrow values as Python sees them), plus
    ``absent`` for a field some records leave out;
    a field missing from a record, a field no record should have, and a value of another type are each named.
    ``configs`` are the configs built from the file: a missing file is an error only for a build asking for one
    of them. ``optional`` marks a named historical variant whose absence is not a difference."""

    name: str
    configs: tuple[str, ...]
    columns: Mapping[str, str]
    parts: str = ""
    optional: bool = False
    note: str = ""


@dataclass(frozen=True)
class ReleaseLayout:
    """A published layout of a benchmark's release (e.g. the files at a pinned upstream commit). A benchmark may
    declare several (release variants); ``sciprobe doctor`` checks a source against the one it matches best and
    says which. ``extra_files`` are globs of files the layout has but no config reads (not reported as extra)."""

    name: str
    files: tuple[ReleaseFile, ...]
    extra_files: tuple[str, ...] = ()
    # the folder of the upstream repository holding the files: doctor given a git checkout looks there
    root: str = ""
    note: str = ""


@dataclass(frozen=True)
class ReleaseCheck:
    """What a build (and ``sciprobe doctor``) says about the release a source folder holds, from the benchmark's
    ``release_check`` hook: which published variant it is, notes to print and record in the card, and the configs
    this release cannot give, each with a one-line reason (``{"topic_trends": "no topic labels in this release;
    see ..."}``): a build skips them instead of writing empty configs, and refuses them when asked by name."""

    variant: str
    notes: tuple[str, ...] = ()
    unavailable: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ConfigSpec:
    """One dataset config: its features (a callable so ``datasets`` is imported lazily), its splits
    and a one-line description for the card.

    A temporal cutoff filters every split of items (``test``, its samples, ``train`` and dev subsets alike): no row
    dated on or before the cutoff survives, at build time or at run time. Only ``context_splits`` are kept whole:
    prompt material that is never an evaluated item (few-shot demonstrations, shown with their answers)."""

    name: str
    description: str
    features: Callable[[], Any]
    splits: tuple[str, ...] = ("test",)
    id_field: str = "id"  # the column that identifies an item (predictions files and submissions key on it)
    context_splits: tuple[str, ...] = ()
    # the row count the paper (or the release's documentation) gives for this config; None: none stated
    paper_count: PaperCount | None = None

    def cutoff_applies(self, split: str) -> bool:
        """Whether a temporal cutoff filters ``split`` (every split but the context ones)."""
        return split not in self.context_splits


@dataclass(frozen=True)
class TaskSpec:
    """One scored task. Single-call tasks give ``build_messages`` + ``parse`` and are run by the generic
    runner and by lighteval; multi-call tasks (tournaments, agents, judges, code execution) are handed a
    :class:`Runner`.

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
    runner: Runner | None = None
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
    # row fields copied into every record (right after ``id``) for the scorer, e.g. a paper id to exclude
    record_fields: tuple[str, ...] = ()
    # labels a predictions file may give instead of raw text (``{"id", "prediction": label}``); empty = raw text only
    prediction_labels: tuple[str, ...] = ()
    # "module:function" building this task's prompts from upstream's own templates (``--prompts upstream``): it
    # takes a :class:`sciprobe.run.upstream.UpstreamTexts` and returns {builder name: callable} with the shapes the
    # task's runner asks for ("build_messages" replaces ``build_messages``); None: upstream has no such template
    upstream_prompt: str | None = None
    # per-group scores in every results file (``sciprobe.results.analysis``): the groups this task's items fall into
    breakdowns: tuple[Breakdown, ...] = ()
    # the headline of one mode as a statistic over items, ``item_scores(records, mode, report, headline) ->
    # ItemScores`` (None when that mode has no headline number): confidence intervals, breakdowns, compare
    item_scores: Callable[[Sequence[Mapping[str, Any]], str, Any, str], ItemScores | None] | None = None
    # metrics besides the headline that also get an interval and per-group scores in every results file
    # (``other_ci`` / ``other_breakdowns``, docs/results.md); ``item_scores`` is called with each one's name
    analysed_metrics: tuple[str, ...] = ()
    # a record field whose items share a source (e.g. the seed paper of I2R instances): the bootstrap resamples
    # these clusters instead of single items
    cluster_field: str | None = None
    # the mode the leaderboard ranks by: one that scores every item (an unparsable or null answer counts against
    # the score, never dropped), so leaving hard items unanswered cannot raise a rank; None = the first mode
    leaderboard_mode: str | None = None
    # the valid range and display decimals of each score key (:class:`sciprobe.core.score_ranges.ScoreRange`);
    # tasks of one metric family share them (the leaderboard refuses a number outside them)
    score_ranges: tuple[Any, ...] = ()
    # a line for the lighteval task card's docstring and the metric cards (e.g. what a judged metric needs)
    card_note: str = ""
    # runner options the command line may set for this task (``sciprobe evaluate --context`` sets ``context``,
    # ``context_seed`` and ``reference_sets``); ``check_options(options, prompt_set)`` refuses bad values in one
    # line before anything runs
    options: tuple[str, ...] = ()
    check_options: Callable[[Mapping[str, Any], str], None] | None = None

    @property
    def ranked_mode(self) -> str:
        """The mode the leaderboard ranks this task by (``leaderboard_mode``, else the first mode)."""
        return self.leaderboard_mode or self.modes[0]


@dataclass(frozen=True)
class Command:
    """A benchmark's own ``sciprobe`` subcommand (``sciprobe <name> ...``). ``module`` is imported only when the
    command runs; it has ``configure_parser(parser)`` (adds the arguments) and ``cmd(args) -> int``."""

    name: str
    help: str
    module: str


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
    # CLI extras of this benchmark (``sciprobe prescience baselines`` ...)
    commands: tuple[Command, ...] = ()
    # "module:function" returning this benchmark's lighteval TASKS_TABLE for a dataset (folder or hub id);
    # None: the generic adapter (sciprobe.interop.lighteval_tasks.tasks_table) over the single-call tasks
    lighteval_tasks: str | None = None
    # what `sciprobe demo` runs on the bundled model: {task name: {"modes": [...], "limit": N}} ({} = defaults)
    demo: dict[str, dict[str, Any]] = field(default_factory=dict)
    # "module:function" (this benchmark's results of a run) -> extra rows of its summary table, e.g. an aggregate
    # over the tasks that ran (SGI-Bench's SGI-Score); None: none
    summary_rows: str | None = None
    # other names a task answers to, {alias: task name} (e.g. a name the upstream release adopted later); results
    # are keyed by the task's own name
    aliases: dict[str, str] = field(default_factory=dict)
    # benchmark-level scores that combine tasks, {name: metric family} (SGI-Bench's SGI-Score): named like a task in
    # summary rows (``sgibench:sgi_score``) and in the papers' published numbers (``sciprobe.results.published``)
    aggregates: dict[str, str] = field(default_factory=dict)
    # the pinned upstream code (official mode reproduces it; shown on the dataset and metric cards); None: no
    # public upstream code
    upstream: Upstream | None = None
    # "module:function" reading the per-item output files the upstream code writes (``sciprobe import-upstream``):
    # ``function(path, rows_of) -> list[sciprobe.run.upstream_import.ImportedTask]``; None: nothing to import
    upstream_logs: str | None = None
    # "module:function" returning this benchmark's reference baselines (a list of Baseline), run by
    # `sciprobe baselines NAME`; None: the benchmark has none
    baselines: str | None = None
    # "module:function(task_name, runs) -> [(title, matplotlib Figure, caption)]": this benchmark's own figures in
    # `sciprobe report` (runs: sciprobe.results.figures.RunTask, with the details' records); None: generic ones only
    report_figures: str | None = None
    # the published layouts of the release files (``sciprobe doctor``: files, columns, types; the configs' own
    # ``paper_count`` give the counts); empty: doctor checks only the counts the source reader yields
    release_layouts: tuple[ReleaseLayout, ...] = ()
    # "module:function(source, options) -> ReleaseCheck": which release variant a source holds and which configs it
    # cannot give (e.g. no topic labels); None: every release gives every config its files allow
    release_check: str | None = None

    def task(self, name: str) -> TaskSpec:
        from sciprobe.core.errors import SciprobeError

        name = self.aliases.get(name, name)
        if name not in self.tasks:
            raise SciprobeError(f"unknown task {self.name}:{name}; known: {', '.join(sorted(self.tasks))}")
        return self.tasks[name]

    def config(self, name: str) -> ConfigSpec:
        from sciprobe.core.errors import SciprobeError

        if name not in self.configs:
            raise SciprobeError(f"unknown config {name!r} for {self.name}; known: {', '.join(self.configs)}")
        return self.configs[name]
