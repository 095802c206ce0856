"""Plain records the leaderboard stores: submission requests and scored results (JSON-serialisable).

A :class:`ResultRecord` serialises to the HF leaderboard template's results JSON
(``{"config": {...}, "results": {task: {metric: score}}}``) plus a ``sciprobe`` block with scores per mode,
coverage and provenance, so template readers and sciprobe read the same file.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import unicodedata
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from sciprobe.core.errors import SciprobeError

PENDING, RUNNING, FINISHED, FAILED = "PENDING", "RUNNING", "FINISHED", "FAILED"
STATUSES = (PENDING, RUNNING, FINISHED, FAILED)


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def iso(ts: dt.datetime) -> str:
    return ts.astimezone(dt.UTC).isoformat(timespec="microseconds")


def parse_iso(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value)


def identity_key(text: str | None) -> str:
    """How a name counts for identity: NFKC (full-width and other compatibility forms fold to plain letters),
    whitespace trimmed and collapsed, case folded. ``"Org/Model"``, ``"org/model\\n"`` and ``"ｏｒｇ/ｍｏｄｅｌ"``
    are one model; ``"Alice "`` and ``"ALICE"`` one user (rate limit, dedupe, ownership, rows)."""
    return " ".join(unicodedata.normalize("NFKC", str(text or "")).split()).casefold()


def _from_dict(cls: type, data: dict[str, Any]) -> Any:
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class SubmissionRequest:
    """One submission: who, which model, which task, which predictions (by hash), and its queue status."""

    request_id: str
    user: str
    model_name: str
    task: str                       # "idrbench:ipi"
    benchmark: str
    benchmark_version: str
    dataset_fingerprint: str
    predictions_sha256: str
    n_predictions: int
    predictions_file: str           # the sanitised name the user uploaded
    model_family: str = ""
    model_revision: str = ""
    model_cutoff: str | None = None  # the submitter's knowledge-cutoff claim (YYYY-MM[-DD]) or None
    description: str = ""
    status: str = PENDING
    submitted_time: str = field(default_factory=lambda: iso(utc_now()))
    updated_time: str = field(default_factory=lambda: iso(utc_now()))
    error: str | None = None
    result_id: str | None = None
    claimed_by: str | None = None   # the claim token of the worker scoring it (RUNNING)
    lease_until: str | None = None  # the claim expires then (ISO); another worker may take the request after
    attempts: int = 0               # how many times a worker claimed it

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SubmissionRequest:
        return _from_dict(cls, data)


#: the prompt set of results that record none (every result before prompt sets existed)
DEFAULT_PROMPT_SET = "sciprobe"


def row_key(model_name: str, benchmark: str, benchmark_version: str, dataset_fingerprint: str,
            cutoff: str | None, judge_ids: list[str], dataset_revision: str | None = None, *, owner: str = "",
            prompt_set: str = DEFAULT_PROMPT_SET) -> str:
    """The identity of one leaderboard row. A different benchmark version, dataset fingerprint (file checksums),
    recorded dataset revision (hub commit) or prompt set (sciprobe's / upstream's templates) is a different row,
    never merged.

    The model name counts by :func:`identity_key` (case variants are one row). The owner (the submitting user,
    by :func:`identity_key`) is part of the identity: a result of one user never replaces another user's cell,
    whatever path it came by (the Space also refuses a model name another user submitted first).
    The revision and a non-default prompt set join the key only when recorded."""
    identity = [identity_key(model_name), benchmark, benchmark_version, dataset_fingerprint, cutoff, sorted(judge_ids)]
    if dataset_revision:
        identity.append(str(dataset_revision))
    if owner:
        identity.append({"owner": identity_key(owner)})
    if prompt_set and prompt_set != DEFAULT_PROMPT_SET:
        identity.append({"prompt_set": prompt_set})
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:16]


def registry_cutoff(model_name: str) -> str | None:
    """The registry's knowledge cutoff of ``model_name`` (``YYYY-MM-DD``), None when the registry does not know it."""
    from sciprobe.data.cutoffs import lookup_model_cutoff

    try:
        return lookup_model_cutoff(model_name).cutoff.isoformat()
    except SciprobeError:
        return None


def short_fingerprint(fingerprint: str | None, length: int = 8) -> str:
    """A dataset fingerprint for display: the hash part (``hub:owner/name@rev:HASH`` -> ``HASH``), shortened."""
    text = str(fingerprint or "")
    if text.startswith("hub:"):
        text = text.rsplit(":", 1)[-1]
    return text[:length] or "unknown"


def revision_label(dataset_revision: str | None, dataset_fingerprint: str | None) -> str:
    """What the tables show as a row's data revision: the recorded hub revision (commit/tag, commits cut to 12
    characters), else ``files:<checksum>`` for a local dataset folder identified by its Parquet checksums."""
    if dataset_revision:
        rev = str(dataset_revision)
        return rev[:12] if len(rev) == 40 and all(c in "0123456789abcdef" for c in rev.lower()) else rev[:40]
    fingerprint = str(dataset_fingerprint or "")
    if fingerprint.startswith("hub:") and "@" in fingerprint:
        return fingerprint.split("@", 1)[1].rsplit(":", 1)[0][:40] or "unknown"
    return f"files:{short_fingerprint(fingerprint)}"


@dataclass
class ResultRecord:
    """One scored (model, benchmark version, task, dataset fingerprint/revision, cutoff, judge set) cell."""

    request_id: str
    user: str
    model_name: str
    task: str
    benchmark: str
    benchmark_version: str
    dataset_fingerprint: str
    headline: str
    default_mode: str
    scores: dict[str, dict[str, Any]]        # mode -> ScoreReport.as_dict()
    provenance: dict[str, Any]
    cutoff: str | None = None                # the dataset cutoff the items were filtered with
    dataset_revision: str | None = None      # the hub revision the data was loaded at (None: local files)
    judge_ids: list[str] = field(default_factory=list)
    model_family: str = ""
    model_revision: str = ""
    model_cutoff: str | None = None          # the model's knowledge cutoff (registry, else the submitter's claim)
    min_item_date: str | None = None         # the oldest scored item's date (contamination check)
    created_time: str = field(default_factory=lambda: iso(utc_now()))
    model_cutoff_source: str | None = None   # "registry" | "claim" (None: a record from before sources)
    claimed_cutoff: str | None = None        # what the submitter claimed, kept even when the registry wins
    # the prompts the model got: "sciprobe", "upstream" or "upstream-modified"
    # (sciprobe.run.upstream.RECORDED_PROMPT_SETS)
    prompt_set: str = DEFAULT_PROMPT_SET
    # a reference baseline's {"name", "description"} (``sciprobe baselines``): shown as a reference row, never
    # ranked, owned by nobody (``user`` is ""); None for every model result
    reference_baseline: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        # one rule for every way a record is made (import, the worker, a stored record): the set its provenance
        # shows, so upstream templates that differ from the pin are "upstream-modified" even where an older file
        # or record says "upstream"
        from sciprobe.core.prompt_sets import recorded_prompt_set

        provenance = self.provenance if isinstance(self.provenance, dict) else {}
        self.prompt_set = recorded_prompt_set({**provenance, "prompt_set": self.prompt_set})

    @property
    def is_reference(self) -> bool:
        return bool(self.reference_baseline)

    @property
    def row_id(self) -> str:
        return row_key(self.model_name, self.benchmark, self.benchmark_version, self.dataset_fingerprint,
                       self.cutoff, self.judge_ids, self.dataset_revision, owner=self.user,
                       prompt_set=self.prompt_set)

    @property
    def revision(self) -> str:
        """The data revision as the tables show it (see :func:`revision_label`)."""
        return revision_label(self.dataset_revision, self.dataset_fingerprint)

    @property
    def result_id(self) -> str:
        """Unique per row and task: a later result for the same cell replaces the earlier one."""
        return hashlib.sha256(f"{self.row_id}|{self.task}".encode()).hexdigest()[:20]

    @property
    def cutoff_source(self) -> str | None:
        """Where :attr:`model_cutoff` comes from: ``registry`` or ``claim`` (None when there is none). A record
        written before sources were recorded counts as a claim unless the registry gives the same date."""
        if not self.model_cutoff:
            return None
        if self.model_cutoff_source in ("registry", "claim"):
            return self.model_cutoff_source
        return "registry" if registry_cutoff(self.model_name) == self.model_cutoff else "claim"

    @property
    def contamination_free(self) -> bool | None:
        """True when every scored item post-dates the model's knowledge cutoff *from the registry*; False when
        an item does not (by the registry, or by the submitter's own claim); None when unknown. A claim alone
        never makes a result contamination-free: it can only admit overlap."""
        if not self.model_cutoff or not self.min_item_date:
            return None
        from sciprobe.data.cutoffs import parse_cutoff

        try:
            after = self.min_item_date[:10] > parse_cutoff(self.model_cutoff).isoformat()
        except (ValueError, SciprobeError):
            return None
        if self.cutoff_source == "registry":
            return after
        return None if after else False

    @property
    def contamination_label(self) -> str:
        """``yes`` / ``no`` / ``unverified`` (only a claim says the items post-date the model) / ``unknown``."""
        flag = self.contamination_free
        if flag is not None:
            return "yes" if flag else "no"
        return "unverified" if self.cutoff_source == "claim" and self.min_item_date else "unknown"

    @property
    def cutoff_label(self) -> str:
        """The knowledge cutoff as the tables show it, saying where it comes from and any conflicting claim."""
        if not self.model_cutoff:
            return "unknown"
        if self.cutoff_source == "claim":
            return f"{self.model_cutoff} (claimed)"
        if self.claimed_cutoff and self.claimed_cutoff != self.model_cutoff:
            return f"{self.model_cutoff} (registry; claimed {self.claimed_cutoff})"
        return self.model_cutoff

    def flat_results(self) -> dict[str, Any]:
        """lighteval-style flat metrics: default mode bare, others as ``key:mode``."""
        from sciprobe.results.write import flat_scores

        return flat_scores(self.scores, self.default_mode)

    def to_json(self) -> dict[str, Any]:
        """The template's results JSON plus the full sciprobe record."""
        return {
            "config": {"model_name": self.model_name, "model_sha": self.model_revision or None,
                       "model_dtype": None},
            "results": {self.task: self.flat_results()},
            "sciprobe": {**asdict(self), "result_id": self.result_id, "row_id": self.row_id},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ResultRecord:
        return _from_dict(cls, data["sciprobe"])
