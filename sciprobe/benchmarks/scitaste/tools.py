"""DimAgent-v3 bibliometric tools for SciTaste-Bench and their pluggable backends (spec ``scitaste.md`` §2.4, §6.11).

The paper's Table 6 (tool names, return schemas) is **[MISSING]**; the nine tools here are the spec's
**[PROPOSAL]** set, each with one ``bibcode`` argument. They return raw evidence (counts, lists, venues), never
precomputed dimension scores.

Backends, one interface (:class:`ToolBackend`: ``call(tool, bibcode) -> dict`` raising :class:`ToolError`):

- :class:`SnapshotBackend` — frozen tool responses keyed by identifier, read from a local file. Runs are
  reproducible and offline. Formats: a JSON object ``{"format": SNAPSHOT_FORMAT, "source", "collected_on",
  "records": {bibcode: {tool: payload}}}``, or ``tool_evidence`` rows (spec §8: ``bibcode``, ``tool_name``,
  ``payload_json``, ``source``, ``collected_on``) as JSONL or Parquet.
- :class:`~sciprobe.benchmarks.scitaste.live_tools.AdsBackend` (NASA ADS search API; token from ``ADS_API_TOKEN`` /
  ``ADS_DEV_KEY``) and :class:`~sciprobe.benchmarks.scitaste.live_tools.OpenAlexBackend` (polite pool: ``mailto``
  from ``OPENALEX_MAILTO`` in the query and User-Agent, minimum request interval) — live HTTP with timeouts, retries
  on 429/5xx honouring ``Retry-After``, and a configurable base URL (``SCIPROBE_ADS_URL`` /
  ``SCIPROBE_OPENALEX_URL``) so tests aim them at a loopback fake.
- :class:`~sciprobe.benchmarks.scitaste.live_tools.LiveBackend` routes as the paper: physics -> ADS, other
  disciplines -> OpenAlex after mapping the internal identifier to the OpenAlex work id (the row's ``openalex_id``,
  spec's ``openalex_bibcode_map``); physics falls back to OpenAlex when no ADS token is configured.

Every failure a model can cause or meet (unknown identifier, unknown tool, bad arguments, HTTP error) is a
:class:`ToolError`: :func:`execute` turns it into a recorded outcome whose error text goes back to the model as
the tool result; nothing here raises into the runner.

Leakage (spec §6.11): live tools return the raw inputs of the gold (citation counts, references, venues), and
they drift. Leaderboard claims need a frozen snapshot; the snapshot's ``collected_on`` is recorded in results.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sciprobe.core.errors import SciprobeError

#: The nine tools (spec §2.4 [PROPOSAL]; Table 6 missing): name -> (description, dimension letters served).
TOOLS: dict[str, tuple[str, str]] = {
    "get_paper_metadata": ("Title, year, venue, DOI, document type and abstract of the paper.", "A,G"),
    "get_citation_stats": ("Total citation count and citations received per year.", "A"),
    "get_references": ("The works the paper cites, with their years and venues.", "B"),
    "get_citing_works": (("Works citing the paper, each flagged if it also cites the paper's own references "
                         "(inputs of the CD disruption index)."), "D"),
    "get_semantic_neighbors": ("The papers most similar in content to this one, most similar first.", "C"),
    "get_concepts_topics": ("Concepts, topics and keywords assigned to the paper, with scores.", "E"),
    "get_authors_affiliations": ("Authors with their institutions and countries; author and country counts.", "F"),
    "get_journal_metrics": (("Indicators of the publishing venue (citedness, h-index; impact factor and "
                            "quartiles where the source has them)."), "G"),
    "get_field_distribution": (("How the paper's references spread over research fields, with the Shannon "
                               "entropy of that distribution."), "B,C"),
}
TOOL_NAMES: tuple[str, ...] = tuple(TOOLS)
SNAPSHOT_FORMAT = "sciprobe-scitaste-tool-snapshot-v1"
#: How many list entries a tool returns at most (references, citing works, authors...): keeps prompts bounded.
MAX_LIST = 25


def tool_schemas(names: Sequence[str] = TOOL_NAMES) -> list[dict[str, Any]]:
    """The tools in the OpenAI ``tools=`` format (litellm function calling), one ``bibcode`` argument each."""
    return [{"type": "function", "function": {
        "name": name, "description": TOOLS[name][0],
        "parameters": {"type": "object", "properties": {"bibcode": {
            "type": "string", "description": "the paper's identifier exactly as given (ADS bibcode or work id)"}},
            "required": ["bibcode"], "additionalProperties": False}}} for name in names]


class ToolError(Exception):
    """A tool could not answer; the message is what the model sees (``{"error": message}``)."""


class ToolBackend(Protocol):
    name: str

    def call(self, tool: str, bibcode: str) -> dict[str, Any]: ...

    def describe(self) -> dict[str, Any]: ...


@dataclass
class ToolOutcome:
    """One executed (or refused) tool call, as recorded in the sample's details."""

    call_id: str
    name: str
    arguments: str
    bibcode: str | None
    ok: bool
    result: Any = None
    error: str | None = None
    backend: str = ""
    latency_s: float = 0.0

    def content(self, max_chars: int | None = None) -> str:
        """The tool message sent back to the model: the result JSON, or ``{"error": ...}``."""
        payload = self.result if self.ok else {"error": self.error}
        text = json.dumps(payload, ensure_ascii=False, sort_keys=True)
        if max_chars is not None and len(text) > max_chars:
            text = text[: max_chars - 15] + " ...[truncated]"
        return text

    def as_record(self) -> dict[str, Any]:
        return {"id": self.call_id, "name": self.name, "arguments": self.arguments, "bibcode": self.bibcode,
                "ok": self.ok, "result": self.result, "error": self.error, "backend": self.backend,
                "latency_s": round(self.latency_s, 4)}


def parse_arguments(arguments: Any) -> str:
    """The ``bibcode`` of a call's arguments (a JSON string or a dict); :class:`ToolError` when unusable."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            raise ToolError(f"arguments are not valid JSON: {arguments[:120]!r}") from None
    if not isinstance(arguments, Mapping):
        raise ToolError("arguments must be a JSON object with a 'bibcode' string")
    bibcode = arguments.get("bibcode")
    if not isinstance(bibcode, str) or not bibcode.strip():
        raise ToolError("missing argument 'bibcode' (the paper's identifier)")
    return bibcode.strip()


def execute(backend: ToolBackend, call_id: str, name: str, arguments: Any) -> ToolOutcome:
    """Run one tool call; every failure becomes a recorded outcome, never an exception."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, sort_keys=True)
    started = time.perf_counter()
    bibcode = None
    try:
        if name not in TOOLS:
            raise ToolError(f"unknown tool {name!r}; tools: {', '.join(TOOL_NAMES)}")
        bibcode = parse_arguments(arguments)
        result = backend.call(name, bibcode)
        return ToolOutcome(call_id, name, raw, bibcode, True, result, None, backend.name,
                           time.perf_counter() - started)
    except ToolError as exc:
        error = str(exc)
    except Exception as exc:  # noqa: BLE001 - a backend bug must not sink the run; it is recorded
        error = f"{type(exc).__name__}: {exc}"
    return ToolOutcome(call_id, name, raw, bibcode, False, None, error, backend.name, time.perf_counter() - started)


# ---------------------------------------------------------------- frozen snapshot

class SnapshotBackend:
    """Recorded tool responses keyed by identifier (offline, reproducible)."""

    name = "snapshot"

    def __init__(self, records: Mapping[str, Mapping[str, Any]], *, source: str = "", collected_on: str | None = None,
                 path: str | None = None) -> None:
        self.records = {str(k): dict(v) for k, v in records.items()}
        self.source = source
        self.collected_on = collected_on
        self.path = path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SnapshotBackend:
        """Read a snapshot file (JSON object, or JSONL / Parquet ``tool_evidence`` rows); one-line errors."""
        path = Path(path)
        if not path.is_file():
            raise SciprobeError(f"tool snapshot {path} does not exist")
        suffix = path.suffix.lower()
        try:
            if suffix == ".json":
                data = json.loads(path.read_text("utf-8"))
                if not isinstance(data, Mapping) or not isinstance(data.get("records"), Mapping):
                    raise SciprobeError(f"tool snapshot {path}: expected an object with 'records' {{bibcode: {{tool: "
                                        "payload}}}}")
                return cls(data["records"], source=str(data.get("source", "")), collected_on=data.get("collected_on"),
                           path=str(path))
            if suffix == ".jsonl":
                rows: Iterable[Mapping] = [json.loads(line) for line in path.read_text("utf-8").splitlines()
                                           if line.strip()]
            elif suffix == ".parquet":
                import pyarrow.parquet as pq

                rows = pq.read_table(path).to_pylist()
            else:
                raise SciprobeError(f"tool snapshot {path}: use .json, .jsonl or .parquet")
        except json.JSONDecodeError as exc:
            raise SciprobeError(f"tool snapshot {path} is not valid JSON: {exc}") from None
        records: dict[str, dict[str, Any]] = {}
        sources, dates = set(), set()
        for n, row in enumerate(rows):
            try:
                payload = row["payload_json"] if "payload_json" in row else row["payload"]
                records.setdefault(str(row["bibcode"]), {})[str(row["tool_name"])] = (
                    json.loads(payload) if isinstance(payload, str) else payload)
            except (KeyError, TypeError, json.JSONDecodeError) as exc:
                raise SciprobeError(f"tool snapshot {path} row {n}: needs bibcode, tool_name, payload_json "
                                    f"({type(exc).__name__}: {exc})") from None
            sources.add(row.get("source"))
            dates.add(row.get("collected_on"))
        return cls(records, source=",".join(sorted(str(s) for s in sources if s)),
                   collected_on=",".join(sorted(str(d) for d in dates if d)) or None, path=str(path))

    def call(self, tool: str, bibcode: str) -> dict[str, Any]:
        entry = self.records.get(bibcode)
        if entry is None:
            raise ToolError(f"unknown identifier {bibcode!r}: not in the tool snapshot")
        if tool not in entry:
            raise ToolError(f"no recorded {tool} response for {bibcode!r} in the tool snapshot")
        return entry[tool]

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "path": self.path, "source": self.source, "collected_on": self.collected_on,
                "n_identifiers": len(self.records)}

    def dump(self, path: str | os.PathLike[str]) -> Path:
        """Write the JSON form: one stable byte layout, one identifier per line (readable diffs)."""
        def dumps(obj: Any) -> str:
            return json.dumps(obj, ensure_ascii=False, sort_keys=True)

        head = [f' "format": {dumps(SNAPSHOT_FORMAT)},', f' "source": {dumps(self.source)},',
                f' "collected_on": {dumps(self.collected_on)},']
        body = ",\n".join(f"  {dumps(k)}: {dumps(self.records[k])}" for k in sorted(self.records))
        path = Path(path)
        path.write_text("{\n" + "\n".join(head) + '\n "records": {\n' + body + "\n }\n}\n", "utf-8")
        return path


class RecordingBackend:
    """Wraps a live backend and keeps every successful response, to freeze a run into a snapshot."""

    def __init__(self, inner: ToolBackend) -> None:
        self.inner = inner
        self.name = inner.name
        self.records: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def call(self, tool: str, bibcode: str) -> dict[str, Any]:
        result = self.inner.call(tool, bibcode)
        with self._lock:
            self.records.setdefault(bibcode, {})[tool] = result
        return result

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "recording": True}

    def snapshot(self, collected_on: str | None = None) -> SnapshotBackend:
        return SnapshotBackend(self.records, source=self.inner.name, collected_on=collected_on)


# ---------------------------------------------------------------- evidence shapes (live and synthetic)

def _entropy(counts: Mapping[str, int]) -> float | None:
    total = sum(counts.values())
    if total == 0:
        return None
    return round(-sum(c / total * math.log2(c / total) for c in counts.values() if c), 4)


def _distribution(labels: Iterable[str | None]) -> dict[str, Any]:
    counts = Counter(label for label in labels if label)
    return {"n_labelled": sum(counts.values()), "n_fields": len(counts),
            "counts": dict(counts.most_common(MAX_LIST)), "shannon_entropy_bits": _entropy(counts)}



# ---------------------------------------------------------------- choosing a backend

#: The frozen synthetic snapshot for the bundled sample (see :func:`synthetic_snapshot`).
BUNDLED_SNAPSHOT = Path(__file__).resolve().parent / "tool_snapshot.json"
#: The bundled sample (release layout) the snapshot was made from.
SAMPLE_DIR = Path(__file__).resolve().parent / "sample"


# ---------------------------------------------------------------- synthetic snapshot for the bundled sample

def synthetic_snapshot(records: Sequence[Mapping[str, Any]]) -> SnapshotBackend:
    """Invented tool responses for synthetic release records (the bundled sample): deterministic per
    identifier and loosely tied to the record's gold dimensions (citations to A, references to B, the CD
    inputs to D, team size to F, venue citedness to G) so a capable model can use them. **Not real data.**"""
    import numpy as np

    out: dict[str, dict[str, Any]] = {}
    for rec in records:
        bib = str(rec["bibcode"])
        dims = rec["dimension_scores"]
        rng = np.random.default_rng(zlib.crc32(bib.encode()))
        year = int(rec["year"])
        span = max(1, 2025 - year)
        cites = int(np.round(2 ** (dims["citation_impact"] / 10) * (1 + rng.uniform(0, 0.3))))
        weights = rng.uniform(0.5, 1.5, span)
        shares = [int(c) for c in np.floor(cites * weights / weights.sum())]
        shares[-1] += cites - sum(shares)
        per_year = {str(year + 1 + i): c for i, c in enumerate(shares)}
        n_refs = int(8 + dims["knowledge_breadth"] * 0.6 + rng.integers(0, 5))
        fields = ["physics", "mathematics", "chemistry", "biology", "medicine", "economics", "computer science"]
        n_fields = 1 + int(dims["knowledge_breadth"] / 20)
        field_counts = Counter(fields[int(i)] for i in rng.integers(0, n_fields, n_refs))
        listed = min(cites, MAX_LIST)
        also = int(np.round(listed * (1 - dims["disruptiveness"] / 100)))
        n_authors = 1 + int(dims["team_collaboration"] / 8)
        n_countries = 1 + int(dims["team_collaboration"] / 25)
        topic = str(rec["title"]).split(" of ", 1)[-1].split(" in ", 1)[0]
        venue = rec.get("journal_name")
        out[bib] = {
            "get_paper_metadata": {"bibcode": bib, "title": rec["title"], "year": year, "venue": venue,
                                   "doi": rec.get("doi"), "doctype": "article", "abstract": rec["abstract"]},
            "get_citation_stats": {"citation_count": cites, "citations_per_year": per_year},
            "get_references": {"n_references": n_refs,
                               "year_range": [year - 5 - int(dims["knowledge_breadth"] / 5), year - 1],
                               "n_distinct_venues": max(1, n_refs // 3),
                               "references": [{"id": f"SYN-REF-{bib}-{i}", "year": year - 1 - i % 6,
                                               "venue": f"Synthetic Venue {i % 7}"} for i in range(min(n_refs, 5))]},
            "get_citing_works": {"n_citing": cites, "n_listed": listed, "n_also_citing_references": also},
            "get_semantic_neighbors": {"method": "synthetic", "distances": None,
                                       "nearest_distance": round(dims["semantic_novelty"] / 100, 3),
                                       "neighbors": [{"rank": i + 1, "id": f"SYN-NB-{bib}-{i}"} for i in range(3)]},
            "get_concepts_topics": {"concepts": [{"name": topic, "level": 2,
                                                  "score": round(dims["conceptual_innovation"] / 100, 3)}],
                                    "topics": [{"name": f"{topic} ({rec['discipline']})", "score": 0.9}],
                                    "keywords": [topic, str(rec["discipline"])]},
            "get_authors_affiliations": {"author_count": n_authors, "country_count": n_countries,
                                         "countries": [f"C{i}" for i in range(n_countries)]},
            "get_journal_metrics": {"venue": venue, "two_year_mean_citedness": round(dims["journal_impact"] / 12, 2),
                                    "jcr_quartile": rec.get("journal_tier"), "impact_factor": None, "cas_zone": None},
            "get_field_distribution": {"n_references": n_refs, "by_field": _distribution(field_counts.elements())},
        }
    return SnapshotBackend(out, source="synthetic (invented for the bundled sample; not real data)",
                           collected_on=None)


def write_bundled_snapshot(sample_dir: Path | None = None, out: Path | None = None) -> Path:
    """Regenerate ``sciprobe/benchmarks/scitaste/tool_snapshot.json`` from the bundled sample (both pools)."""
    sample_dir = Path(sample_dir or SAMPLE_DIR)
    records = [json.loads(line) for pool in ("selected", "backup")
               for line in (sample_dir / f"{pool}.jsonl").read_text("utf-8").splitlines() if line.strip()]
    return synthetic_snapshot(records).dump(out or BUNDLED_SNAPSHOT)
