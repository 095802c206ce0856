"""SciTaste-Bench tool modes (spec scitaste.md §2.3–§2.4): the DimAgent-v3 loop against a loopback model stub that
issues tool calls (real HTTP through litellm), the snapshot backend, the live ADS / OpenAlex clients against a
loopback fake, the tool-call cap, unknown identifiers, the native-search skip, tool calls in the response cache,
and `sciprobe evaluate scitaste:dimagent_v3` end to end on the bundled model."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.scitaste.agent import AgentConfig, parse_text_calls, run_agent
from sciprobe.benchmarks.scitaste.live_tools import (
    AdsBackend,
    LiveBackend,
    OpenAlexBackend,
)
from sciprobe.benchmarks.scitaste.tools import (
    BUNDLED_SNAPSHOT,
    TOOL_NAMES,
    SnapshotBackend,
    execute,
    synthetic_snapshot,
    tool_schemas,
)
from sciprobe.cli.commands import main
from sciprobe.core.errors import SciprobeError
from sciprobe.llm.cache import ResponseCache
from sciprobe.llm.client import LLMClient
from sciprobe.testing.stub_server import StubServer
from sciprobe.llm.types import Completion, Request
from sciprobe.benchmarks.scitaste.scoring.composite import DIMENSIONS

TASTE = get_benchmark("scitaste")
SAMPLE = [json.loads(line) for line in (TASTE.sample_source / "selected.jsonl").read_text().splitlines()]
BACKUP = [json.loads(line) for line in (TASTE.sample_source / "backup.jsonl").read_text().splitlines()]
GOLD = {r["bibcode"]: r for r in SAMPLE}


def _row(record: dict) -> dict:
    """A release record as a loaded dataset row (what the runner sees)."""
    return {**record, "id": record["bibcode"], "gold_total": record["innovation_score"],
            "gold_dims": record["dimension_scores"]}


def _answer(ident: str, shift: float = 4.0) -> str:
    r = GOLD[ident]
    return json.dumps({"score": min(100.0, r["innovation_score"] + shift),
                       "dimensions": {k: min(100.0, v + 2) for k, v in r["dimension_scores"].items()},
                       "reasoning": "stub", "confidence": 0.6})


def _ident(body: dict) -> str:
    return next(re.search(r"Identifier: (\S+)", m["content"])[1] for m in body["messages"]
                if m["role"] == "user" and "Identifier:" in (m.get("content") or ""))


def agent_reply(extra_calls: int = 0, bad_id_tool: str | None = "get_journal_metrics"):
    """Round 1: nine tool calls (one with an unknown identifier) plus ``extra_calls``; round 2: the JSON."""

    def reply(body: dict) -> Any:
        ident = _ident(body)
        if body["messages"][-1]["role"] == "user" and "Identifier:" in body["messages"][-1]["content"]:
            calls = [{"function": {"name": name, "arguments": {"bibcode": "NO-SUCH-ID" if name == bad_id_tool
                                                               else ident}}} for name in TOOL_NAMES]
            calls += [{"function": {"name": "get_citation_stats", "arguments": {"bibcode": ident}}}] * extra_calls
            return {"content": None, "tool_calls": calls}
        return "```json\n" + _answer(ident) + "\n```"

    return reply


# ---------------------------------------------------------------- tool definitions and the snapshot backend

def test_nine_tools_each_take_one_bibcode() -> None:
    schemas = tool_schemas()
    assert [s["function"]["name"] for s in schemas] == list(TOOL_NAMES) and len(schemas) == 9
    for s in schemas:
        params = s["function"]["parameters"]
        assert s["type"] == "function" and list(params["properties"]) == ["bibcode"]
        assert params["required"] == ["bibcode"]


def test_snapshot_errors_are_recorded_outcomes_never_exceptions() -> None:
    backend = SnapshotBackend.load(BUNDLED_SNAPSHOT)
    ident = SAMPLE[0]["bibcode"]
    ok = execute(backend, "c1", "get_citation_stats", json.dumps({"bibcode": ident}))
    assert ok.ok and ok.result["citation_count"] == sum(ok.result["citations_per_year"].values())
    cases = {
        "unknown identifier 'NOPE'": ("get_citation_stats", '{"bibcode": "NOPE"}'),
        "unknown tool 'get_h_index'": ("get_h_index", json.dumps({"bibcode": ident})),
        "not valid JSON": ("get_citation_stats", "{bibcode: oops"),
        "missing argument 'bibcode'": ("get_citation_stats", "{}"),
    }
    for expected, (name, args) in cases.items():
        out = execute(backend, "c", name, args)
        assert not out.ok and expected in out.error
        assert json.loads(out.content()) == {"error": out.error}  # what the model gets back
    partial = SnapshotBackend({ident: {"get_citation_stats": {"citation_count": 1}}})
    assert "no recorded get_references" in execute(partial, "c", "get_references", {"bibcode": ident}).error


def test_bundled_snapshot_is_regenerable_and_covers_the_sample(tmp_path: Path) -> None:
    backend = SnapshotBackend.load(BUNDLED_SNAPSHOT)
    assert {r["bibcode"] for r in SAMPLE + BACKUP} == set(backend.records)
    assert all(set(tools) == set(TOOL_NAMES) for tools in backend.records.values())
    again = synthetic_snapshot(SAMPLE + BACKUP).dump(tmp_path / "snap.json")
    assert again.read_bytes() == BUNDLED_SNAPSHOT.read_bytes()
    assert "synthetic" in backend.describe()["source"]


def test_snapshot_reads_tool_evidence_rows(tmp_path: Path) -> None:
    rows = [{"bibcode": "X1", "tool_name": "get_citation_stats", "payload_json": json.dumps({"citation_count": 7}),
             "source": "ads", "collected_on": "2026-01-31"},
            {"bibcode": "X1", "tool_name": "get_paper_metadata", "payload_json": json.dumps({"title": "t"}),
             "source": "ads", "collected_on": "2026-01-31"}]
    (tmp_path / "ev.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "ev.parquet")
    for name in ("ev.jsonl", "ev.parquet"):
        backend = SnapshotBackend.load(tmp_path / name)
        assert backend.call("get_citation_stats", "X1") == {"citation_count": 7}
        assert backend.collected_on == "2026-01-31" and backend.source == "ads"
    (tmp_path / "bad.jsonl").write_text('{"bibcode": "X1"}\n')
    with pytest.raises(SciprobeError, match="needs bibcode, tool_name, payload_json"):
        SnapshotBackend.load(tmp_path / "bad.jsonl")
    with pytest.raises(SciprobeError, match="does not exist"):
        SnapshotBackend.load(tmp_path / "missing.json")


# ---------------------------------------------------------------- live clients against a loopback fake ADS / OpenAlex

ADS_DOCS = {
    "2001FAKE...1....1A": {"bibcode": "2001FAKE...1....1A", "title": ["A fake focal paper"], "year": "2001",
                           "pub": "Fake Journal", "bibstem": ["FakeJ"], "doi": ["10.1/fake"], "abstract": "abs",
                           "citation_count": 3, "read_count": 9, "keyword": ["fakes"], "author": ["A, B", "C, D"],
                           "aff": ["Uni X", "Uni Y"], "author_count": 2, "reference": ["R1", "R2"],
                           "database": ["astronomy"], "doctype": "article"},
}
ADS_CITING = [{"bibcode": "C1", "year": "2003", "reference": ["R1", "2001FAKE...1....1A"]},
              {"bibcode": "C2", "year": "2003", "reference": ["2001FAKE...1....1A"]},
              {"bibcode": "C3", "year": "2005", "reference": ["R2"]}]
ADS_REFS = [{"bibcode": "R1", "year": "1990", "bibstem": ["PhRvA"], "database": ["physics"]},
            {"bibcode": "R2", "year": "1995", "bibstem": ["ApJ"], "database": ["astronomy"]}]
OA_WORKS = {
    "W1": {"id": "https://openalex.org/W1", "title": "A fake OpenAlex work", "publication_year": 2010,
           "doi": "https://doi.org/10.2/fake", "type": "article", "cited_by_count": 2,
           "counts_by_year": [{"year": 2012, "cited_by_count": 1}, {"year": 2011, "cited_by_count": 1}],
           "abstract_inverted_index": {"Hello": [0], "world": [1]},
           "primary_location": {"source": {"id": "https://openalex.org/S9", "display_name": "Fake Source"}},
           "referenced_works": ["https://openalex.org/W2", "https://openalex.org/W3"],
           "related_works": ["https://openalex.org/W3"],
           "concepts": [{"display_name": "Fakery", "level": 1, "score": 0.7}],
           "topics": [{"display_name": "Fake topic", "score": 0.9, "subfield": {"display_name": "Sub"},
                       "field": {"display_name": "Field A"}}],
           "keywords": [{"display_name": "fake"}],
           "authorships": [{"author": {"display_name": "E F"}, "institutions": [{"display_name": "Inst"}],
                            "countries": ["FR"]},
                           {"author": {"display_name": "G H"}, "institutions": [], "countries": ["DE", "FR"]}],
           "countries_distinct_count": 2, "institutions_distinct_count": 1},
    "W2": {"id": "https://openalex.org/W2", "publication_year": 2001, "title": "ref two",
           "primary_location": {"source": {"display_name": "Venue A"}},
           "primary_topic": {"display_name": "T", "field": {"display_name": "Field A"}}},
    "W3": {"id": "https://openalex.org/W3", "publication_year": 2005, "title": "ref three",
           "primary_location": {"source": {"display_name": "Venue B"}},
           "primary_topic": {"display_name": "U", "field": {"display_name": "Field B"}}},
}
OA_CITING = [{"id": "https://openalex.org/W7", "publication_year": 2012, "referenced_works": ["https://openalex.org/W2"]},
             {"id": "https://openalex.org/W8", "publication_year": 2011, "referenced_works": []}]


class FakeBiblio:
    """Loopback fake of the two APIs: ADS ``/v1/search/query`` and OpenAlex ``/works``, ``/sources``.
    ``fail_first`` answers that many requests with 429 + Retry-After: 0 first."""

    def __init__(self, fail_first: int = 0, any_work: bool = False) -> None:
        self.fail_first = fail_first
        self.any_work = any_work
        self.requests: list[tuple[str, dict[str, str]]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                with lock:
                    fake.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                    failing = fake.fail_first > 0
                    fake.fail_first -= failing
                if failing:
                    return self._send(429, {"error": "slow down"}, {"Retry-After": "0"})
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                status, payload = fake.route(url.path, query, self.headers)
                self._send(status, payload)

            def _send(self, status: int, payload: Any, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def route(self, path: str, query: dict, headers: Any) -> tuple[int, Any]:
        if path == "/v1/search/query":
            if headers.get("Authorization") != "Bearer ads-token":
                return 401, {"error": "Unauthorized"}
            q = query["q"]
            bib = re.search(r'bibcode:"([^"]+)"', q)[1]
            if bib not in ADS_DOCS:
                return 200, {"response": {"numFound": 0, "docs": []}}
            if q.startswith("citations("):
                docs = ADS_CITING
            elif q.startswith("references("):
                docs = ADS_REFS
            elif q.startswith("similar("):
                docs = [ADS_DOCS[bib], {"bibcode": "S1", "title": ["close"], "year": "2002"}]
            else:
                docs = [ADS_DOCS[bib]]
            return 200, {"response": {"numFound": len(docs), "docs": docs}}
        if path.startswith("/works/"):
            wid = path.rsplit("/", 1)[-1]
            work = OA_WORKS.get(wid)
            if work is None and self.any_work:  # any other id: a copy of W1 under that id
                work = {**OA_WORKS["W1"], "id": f"https://openalex.org/{wid}", "cited_by_count": len(wid)}
            return (200, work) if work else (404, {"error": "not found"})
        if path == "/works":
            flt = query.get("filter", "")
            if flt.startswith("cites:"):
                return 200, {"results": OA_CITING}
            ids = flt.removeprefix("openalex:").split("|")
            return 200, {"results": [OA_WORKS[i] for i in ids if i in OA_WORKS]}
        if path == "/sources/S9":
            return 200, {"display_name": "Fake Source", "works_count": 100,
                         "summary_stats": {"2yr_mean_citedness": 3.5, "h_index": 40, "i10_index": 80}}
        return 404, {"error": f"no route {path}"}

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_ads_client_against_the_fake(monkeypatch) -> None:
    monkeypatch.setenv("ADS_API_TOKEN", "ads-token")
    with FakeBiblio(fail_first=1) as fake:
        ads = AdsBackend(base_url=fake.url + "/v1", max_retries=2)
        bib = "2001FAKE...1....1A"
        meta = ads.call("get_paper_metadata", bib)  # first request: 429, retried
        assert meta["title"] == "A fake focal paper" and meta["venue"] == "Fake Journal"
        assert fake.requests[0][1]["authorization"] == "Bearer ads-token"
        stats = ads.call("get_citation_stats", bib)
        assert stats["citation_count"] == 3 and stats["citations_per_year"] == {"2003": 2, "2005": 1}
        citing = ads.call("get_citing_works", bib)
        assert citing["n_also_citing_references"] == 2
        assert [c["also_cites_references"] for c in citing["citing"]] == [True, False, True]
        fields = ads.call("get_field_distribution", bib)
        assert fields["by_venue"]["n_fields"] == 2 and fields["by_venue"]["shannon_entropy_bits"] == 1.0
        neighbours = ads.call("get_semantic_neighbors", bib)["neighbors"]
        assert [n["id"] for n in neighbours] == ["S1"]  # the paper itself is not its own neighbour
        assert ads.call("get_journal_metrics", bib)["impact_factor"] is None
        assert "unknown identifier" in execute(ads, "c", "get_references", {"bibcode": "1999NOPE"}).error
        n = len(fake.requests)
        ads.call("get_authors_affiliations", bib)  # the focal record is fetched once per identifier
        assert len(fake.requests) == n
    monkeypatch.delenv("ADS_API_TOKEN")
    monkeypatch.delenv("ADS_DEV_KEY", raising=False)
    with pytest.raises(SciprobeError, match="ADS_API_TOKEN"):
        AdsBackend(base_url="http://127.0.0.1:9")


def test_openalex_client_against_the_fake(monkeypatch) -> None:
    monkeypatch.setenv("OPENALEX_MAILTO", "lab@example.org")
    with FakeBiblio() as fake:
        oa = OpenAlexBackend(fake.url, id_map={"SYN-internal-1": "W1", "SYN-gone": "W404"}, min_interval_s=0.0)
        meta = oa.call("get_paper_metadata", "SYN-internal-1")  # internal id -> OpenAlex work id
        assert meta["abstract"] == "Hello world" and meta["venue"] == "Fake Source"
        path, headers = fake.requests[0]
        assert "mailto=lab%40example.org" in path and "mailto:lab@example.org" in headers["user-agent"]
        assert oa.call("get_citation_stats", "W1")["citations_per_year"] == {"2011": 1, "2012": 1}
        refs = oa.call("get_references", "W1")
        assert refs["n_references"] == 2 and refs["year_range"] == [2001, 2005] and refs["n_distinct_venues"] == 2
        assert oa.call("get_citing_works", "W1")["n_also_citing_references"] == 1
        assert oa.call("get_field_distribution", "W1")["by_field"]["shannon_entropy_bits"] == 1.0
        people = oa.call("get_authors_affiliations", "W1")
        assert people["author_count"] == 2 and people["countries"] == ["DE", "FR"]
        journal = oa.call("get_journal_metrics", "W1")
        assert journal["two_year_mean_citedness"] == 3.5 and journal["h_index"] == 40
        assert oa.call("get_concepts_topics", "W1")["topics"][0]["field"] == "Field A"
        assert "OpenAlex has no work W404" in execute(oa, "c", "get_citation_stats", {"bibcode": "SYN-gone"}).error
        assert "no OpenAlex work id" in execute(oa, "c", "get_citation_stats", {"bibcode": "SYN-unmapped"}).error


def test_live_backend_routes_physics_to_ads_and_the_rest_to_openalex(monkeypatch) -> None:
    monkeypatch.setenv("ADS_API_TOKEN", "ads-token")
    with FakeBiblio() as fake:
        ads = AdsBackend(base_url=fake.url + "/v1")
        oa = OpenAlexBackend(fake.url, id_map={"SYN-bio": "W1"}, min_interval_s=0.0)
        live = LiveBackend(ads, oa, {"2001FAKE...1....1A": "physics", "SYN-bio": "biology"})
        assert live.call("get_citation_stats", "2001FAKE...1....1A")["read_count"] == 9
        assert live.call("get_citation_stats", "SYN-bio")["citation_count"] == 2
        assert LiveBackend(None, oa, {"W1": "physics"}).route("W1") is oa  # no ADS token: OpenAlex fills in


def test_http_gives_up_with_a_tool_error_after_retries() -> None:
    with FakeBiblio(fail_first=10) as fake:
        oa = OpenAlexBackend(fake.url, min_interval_s=0.0, max_retries=1)
        out = execute(oa, "c", "get_citation_stats", {"bibcode": "W1"})
        assert not out.ok and "HTTP 429 after retries" in out.error and len(fake.requests) == 2


# ---------------------------------------------------------------- the agent loop against a stub model (litellm, HTTP)

def _stub_client(server: StubServer, cache: ResponseCache | None = None) -> LLMClient:
    return LLMClient(f"openai/stub-model,base_url={server.base_url},api_key=sk-test", cache=cache)


def test_agent_two_rounds_with_native_tool_calls(tmp_path: Path) -> None:
    rows = [_row(r) for r in SAMPLE[:3]]
    backend = SnapshotBackend.load(BUNDLED_SNAPSHOT)
    with StubServer(reply=agent_reply()) as server:
        records, phash, n_calls = run_agent(rows, _stub_client(server), {"max_tokens": 300}, backend, AgentConfig())
        bodies = server.requests
    assert n_calls == 6 and len(bodies) == 6 and len(phash) == 64
    first = [b for b in bodies
             if b["messages"][-1]["role"] == "user" and "Identifier:" in b["messages"][-1]["content"]]
    assert len(first) == 3
    for body in first:  # tools and tool_choice reached the server through litellm
        assert [t["function"]["name"] for t in body["tools"]] == list(TOOL_NAMES) and body["tool_choice"] == "auto"
    second = next(b for b in bodies if b not in first)
    assert second["tool_choice"] == "none"
    tool_msgs = [m for m in second["messages"] if m["role"] == "tool"]
    assert len(tool_msgs) == 9
    assert any("unknown identifier 'NO-SUCH-ID'" in m["content"] for m in tool_msgs)
    assert any('"citation_count"' in m["content"] for m in tool_msgs)
    for rec in records:
        assert rec["rounds"] == 2 and rec["parse_path"] == "tolerant:fenced" and rec["prediction"] is not None
        calls = json.loads(rec["tool_calls"])
        assert [c["name"] for c in calls] == list(TOOL_NAMES) and rec["n_tool_errors"] == 1
        bad = next(c for c in calls if c["name"] == "get_journal_metrics")
        assert not bad["ok"] and bad["bibcode"] == "NO-SUCH-ID" and "unknown identifier" in bad["error"]
        good = next(c for c in calls if c["name"] == "get_citation_stats")
        assert good["ok"] and good["result"]["citation_count"] > 0 and good["backend"] == "snapshot"
        assert rec["prediction"]["total"] == pytest.approx(min(100.0, GOLD[rec["id"]]["innovation_score"] + 4))


def test_tool_call_cap(tmp_path: Path) -> None:
    rows = [_row(SAMPLE[0])]
    with StubServer(reply=agent_reply(extra_calls=3, bad_id_tool=None)) as server:
        records, _, _ = run_agent(rows, _stub_client(server), {}, SnapshotBackend.load(BUNDLED_SNAPSHOT),
                                  AgentConfig(max_tool_calls=9))
        final_body = server.requests[-1]
    rec = records[0]
    calls = json.loads(rec["tool_calls"])
    assert rec["n_tool_calls"] == 12 and rec["n_tool_calls_executed"] == 9 and len(calls) == 12
    assert [c["executed"] for c in calls] == [True] * 9 + [False] * 3
    assert all("cap (9) reached" in c["error"] for c in calls[9:])
    tool_msgs = [m for m in final_body["messages"] if m["role"] == "tool"]
    assert len(tool_msgs) == 12 and sum("cap (9) reached" in m["content"] for m in tool_msgs) == 3
    assert rec["prediction"] is not None  # the capped calls do not sink the paper


def test_answer_without_tools_and_failures_are_recorded() -> None:
    rows = [_row(r) for r in SAMPLE[:3]]
    direct, broken = SAMPLE[0]["bibcode"], SAMPLE[1]["bibcode"]

    def reply(body: dict) -> Any:
        ident = _ident(body)
        if ident == direct:
            return _answer(ident)  # answers in round 1, no tools
        if ident == broken:
            return "I cannot score this."
        return agent_reply()(body)

    with StubServer(reply=reply, status_script=lambda body, i: 400 if "tool" in [m["role"] for m in
                                                                               body["messages"]] else None) as server:
        records, _, n_calls = run_agent(rows, _stub_client(server), {}, SnapshotBackend.load(BUNDLED_SNAPSHOT),
                                        AgentConfig())
    by_id = {r["id"]: r for r in records}
    assert n_calls == 4  # three first rounds, one second round (the third paper; it fails with HTTP 400)
    assert by_id[direct]["rounds"] == 1 and by_id[direct]["parse_path"] == "strict"
    assert by_id[direct]["n_tool_calls"] == 0
    assert by_id[broken]["rounds"] == 1 and by_id[broken]["parse_path"] == "failed:no_json"
    third = by_id[SAMPLE[2]["bibcode"]]
    assert third["rounds"] == 2 and third["parse_path"] == "error" and "400" in third["error"]
    assert third["prediction"] is None and third["n_tool_calls"] == 9  # the tool calls stay recorded


def test_text_protocol_parser() -> None:
    calls = parse_text_calls("Sure.\nCALL get_citation_stats 2001ABC\ncall: get_references(bibcode=\"X-1\")\n"
                             "CALL get_reference_stats 2001ABC\nCALL get_paper_metadata\n")
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        ("get_citation_stats", {"bibcode": "2001ABC"}), ("get_references", {"bibcode": "X-1"}),
        ("get_reference_stats", {"bibcode": "2001ABC"}), ("get_paper_metadata", {})]
    assert parse_text_calls("no calls here") == [] and parse_text_calls(None) == []


def test_text_protocol_against_the_stub() -> None:
    """The fallback for models without function calling: CALL lines out, results back in a user message."""
    rows = [_row(SAMPLE[0])]
    ident = SAMPLE[0]["bibcode"]

    def reply(body: dict) -> str:
        assert "tools" not in body
        if len(body["messages"]) == 2:
            return f"CALL get_citation_stats {ident}\nCALL get_wizardry {ident}"
        return _answer(ident)

    with StubServer(reply=reply) as server:
        records, _, _ = run_agent(rows, _stub_client(server), {}, SnapshotBackend.load(BUNDLED_SNAPSHOT),
                                  AgentConfig(protocol="text", result_chars=200))
        results_msg = server.requests[-1]["messages"][-1]["content"]
    assert "Tool results:" in results_msg and "unknown tool 'get_wizardry'" in results_msg
    rec = records[0]
    assert rec["tool_protocol"] == "text" and rec["n_tool_calls"] == 2 and rec["n_tool_errors"] == 1
    assert rec["prediction"] is not None


def test_tool_calls_are_cached_and_old_rows_stay_readable(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    legacy = sqlite3.connect(path)  # a cache written before tool calls existed
    legacy.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL, "
                   "prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, cost_usd REAL, "
                   "created_at REAL NOT NULL)")
    legacy.execute("INSERT INTO responses VALUES ('old', 'm', 'hello', 1, 2, NULL, 0)")
    legacy.commit()
    legacy.close()
    cache = ResponseCache(path)
    old = cache.get("old")
    assert old.text == "hello" and old.tool_calls is None and old.ok
    with StubServer(reply=agent_reply()) as server:
        client = _stub_client(server, cache)
        request = Request.of([{"role": "system", "content": "s"},
                              {"role": "user", "content": f"Identifier: {SAMPLE[0]['bibcode']}"}],
                             {"tools": tool_schemas(), "tool_choice": "auto"})
        first = client.complete_many([request])[0]
        again = client.complete_many([request])[0]
        plain = client.complete_many([Request.of(list(request.messages), {})])[0]  # params are in the key
        assert server.count == 2
    assert first.ok and first.text is None and len(first.tool_calls) == 9
    assert again.cached and again.text is None and again.tool_calls == first.tool_calls
    assert not plain.cached
    assert Completion(text=None, tool_calls=[]).ok is False


# ---------------------------------------------------------------- evaluate (CLI) end to end

def test_evaluate_dimagent_against_the_stub(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with StubServer(reply=agent_reply()) as server:
        model = f"openai/stub-model,base_url={server.base_url},api_key=sk-test"
        assert main(["evaluate", "scitaste:dimagent_v3", "--model", model, "--output-dir", str(out)]) == 0
        assert server.count == 2 * len(SAMPLE)
    results = json.loads(next((out / "results").rglob("results_*.json")).read_text())
    scores = results["results"]["scitaste:dimagent_v3|0"]
    assert scores["n_items"] == 24 and scores["n_failed"] == 0 and scores["bias"] == pytest.approx(4.0)
    task = results["sciprobe"]["tasks"]["scitaste:dimagent_v3|0"]
    details = pq.read_table(out / task["details"]).to_pylist()
    assert all(d["n_tool_calls"] == 9 and d["n_tool_errors"] == 1 and d["rounds"] == 2 for d in details)
    assert json.loads(details[0]["tool_calls"])[0]["name"] == "get_paper_metadata"
    provenance = task["provenance"]
    assert provenance["prompt_version"] == "scitaste-dimagent_v3-v1" and provenance["max_tool_calls"] == 9
    assert provenance["tool_backend"]["n_identifiers"] == 42 and provenance["n_calls"] == 48


def test_live_run_is_recorded_then_replayed_offline(tmp_path: Path, monkeypatch) -> None:
    """evaluate with live OpenAlex tools (loopback fake), freeze what the tools returned, replay from the snapshot:
    the replay sends the same round-2 prompts (served from the response cache) and records the same tool results."""
    monkeypatch.delenv("ADS_API_TOKEN", raising=False)
    monkeypatch.delenv("ADS_DEV_KEY", raising=False)  # physics falls back to OpenAlex
    frozen = tmp_path / "frozen.json"
    with StubServer(reply=agent_reply(bad_id_tool=None)) as server, FakeBiblio(any_work=True) as fake:
        model = f"openai/stub-model,base_url={server.base_url},api_key=sk-test"
        monkeypatch.setenv("SCIPROBE_SCITASTE_TOOLS", "openalex")
        monkeypatch.setenv("SCIPROBE_OPENALEX_URL", fake.url)
        monkeypatch.setenv("SCIPROBE_SCITASTE_RECORD", str(frozen))
        args = ["evaluate", "scitaste:dimagent_v3", "--model", model, "--limit", "3"]
        assert main([*args, "--output-dir", str(tmp_path / "live")]) == 0
        assert server.count == 6 and fake.requests
        for var in ("SCIPROBE_SCITASTE_TOOLS", "SCIPROBE_OPENALEX_URL", "SCIPROBE_SCITASTE_RECORD"):
            monkeypatch.delenv(var)
        monkeypatch.setenv("SCIPROBE_SCITASTE_SNAPSHOT", str(frozen))
        seen = len(fake.requests)
        assert main([*args, "--output-dir", str(tmp_path / "replay")]) == 0
        assert server.count == 6 and len(fake.requests) == seen  # nothing new asked of the model or the API

    def tool_results(out: Path) -> list[list]:
        results = json.loads(next((out / "results").rglob("results_*.json")).read_text())
        task = results["sciprobe"]["tasks"]["scitaste:dimagent_v3|0"]
        details = pq.read_table(out / task["details"]).to_pylist()
        task["headline"] = results["results"]["scitaste:dimagent_v3|0"]["scheme2_score"]
        return [[(c["name"], c["ok"], c["result"]) for c in json.loads(d["tool_calls"])] for d in details], task

    live, live_task = tool_results(tmp_path / "live")
    replay, replay_task = tool_results(tmp_path / "replay")
    assert live == replay and all(ok for item in live for _, ok, _ in item) and len(live) == 3
    assert live_task["provenance"]["tool_backend"]["backend"] == "live"
    assert live_task["provenance"]["recorded_snapshot"] == str(frozen)
    assert replay_task["provenance"]["tool_backend"]["collected_on"] is not None
    assert live_task["headline"] == replay_task["headline"]


def test_native_search_is_skipped_or_forced(tmp_path: Path, monkeypatch, capsys) -> None:
    with StubServer(reply=lambda body: _answer(_ident(body))) as server:
        model = f"openai/stub-model,base_url={server.base_url},api_key=sk-test"
        assert main(["evaluate", "scitaste:native_search", "--model", model, "--limit", "2",
                     "--output-dir", str(tmp_path / "a")]) == 0
        assert server.count == 0
        assert "has no built-in web search" in capsys.readouterr().err
        monkeypatch.setenv("SCIPROBE_SCITASTE_NATIVE_SEARCH", "force")  # a gateway litellm cannot inspect
        assert main(["evaluate", "scitaste:native_search", "--model", model, "--limit", "2",
                     "--output-dir", str(tmp_path / "b")]) == 0
        assert server.count == 2 and all("web_search_options" in b for b in server.requests)
        assert "tools" not in server.requests[0]


def test_unknown_dataset_needs_a_snapshot(tmp_path: Path) -> None:
    from sciprobe.benchmarks.scitaste.live_tools import make_backend

    with pytest.raises(SciprobeError, match="need tool data"):
        make_backend({}, [], bundled_sample=False)
    with pytest.raises(SciprobeError, match="unknown tool backend"):
        make_backend({"tool_backend": "bing"}, [], bundled_sample=True)


def test_evaluate_dimagent_offline_on_the_bundled_model(tmp_path: Path, local_model_dir: Path) -> None:
    """Done means: dimagent_v3 runs end to end offline on SmolLM2 with the snapshot backend (text protocol).
    The 135M model's answers rarely parse; whatever happens is recorded, never a crash or a silent zero."""
    out = tmp_path / "local"
    assert main(["evaluate", "scitaste:dimagent_v3", "--model", "local/smollm2", "--limit", "1",
                 "--max-tokens", "32", "--output-dir", str(out)]) == 0
    results = json.loads(next((out / "results").rglob("results_*.json")).read_text())
    scores = results["results"]["scitaste:dimagent_v3|0"]
    assert scores["n_items"] == 1
    provenance = results["sciprobe"]["tasks"]["scitaste:dimagent_v3|0"]
    details = pq.read_table(out / provenance["details"]).to_pylist()
    rec = details[0]
    assert rec["tool_protocol"] == "text" and rec["rounds"] == 2 and rec["round1_response"] is not None
    assert rec["n_tool_calls"] > 0 or rec["protocol_error"]
    calls = json.loads(rec["tool_calls"])
    assert all(c["ok"] or c["error"] for c in calls)
    if rec["prediction"] is None:
        assert rec["parse_path"].startswith("failed:")
    gold = rec["gold"] if isinstance(rec["gold"], dict) else json.loads(rec["gold"])
    assert set(gold["dims"]) == set(DIMENSIONS)
    assert provenance["provenance"]["tool_protocol"] == "text"
    assert provenance["provenance"]["tool_backend"]["backend"] == "snapshot"


def test_auto_protocol_follows_litellms_model_table():
    from sciprobe.benchmarks.scitaste.agent import auto_protocol

    assert auto_protocol("local/smollm2", True)[0] == "text"
    assert auto_protocol("deepseek/deepseek-reasoner", False) == (
        "text", "deepseek/deepseek-reasoner: no function calling in litellm's model table")
    assert auto_protocol("openai/gpt-4o-mini", False) == ("native", "function calling")
    assert auto_protocol("hosted_vllm/my-model", False) == ("native", "not in litellm's table: assumed")
