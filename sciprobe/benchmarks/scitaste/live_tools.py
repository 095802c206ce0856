"""Live NASA ADS and OpenAlex clients behind the SciTaste tool interface (:mod:`sciprobe.benchmarks.scitaste.tools`).

Stdlib HTTP (urllib) with timeouts, retries on 429/5xx honouring ``Retry-After`` (capped), keys from the
environment, OpenAlex's polite pool, and configurable base URLs so tests aim them at a loopback fake.
:class:`LiveBackend` routes as the paper: physics -> ADS, other disciplines -> OpenAlex. :func:`make_backend`
chooses between them and a frozen snapshot.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sciprobe.benchmarks.scitaste.tools import (
    BUNDLED_SNAPSHOT,
    MAX_LIST,
    SnapshotBackend,
    ToolBackend,
    ToolError,
    _distribution,
)
from sciprobe.core.errors import SciprobeError


class HttpJson:
    """GET JSON with a timeout, retries (429 / 5xx / connection errors; ``Retry-After`` honoured, capped) and
    a minimum interval between requests (polite rate limiting, shared by the threads using this client)."""

    def __init__(self, base_url: str, *, headers: Mapping[str, str] | None = None, timeout_s: float = 30.0,
                 max_retries: int = 3, min_interval_s: float = 0.0, backoff_s: float = 0.5,
                 max_wait_s: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.headers = dict(headers or {})
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.min_interval_s = min_interval_s
        self.backoff_s = backoff_s
        self.max_wait_s = max_wait_s
        self.requests = 0
        self._lock = threading.Lock()
        self._next_at = 0.0

    def _pace(self) -> None:
        if self.min_interval_s <= 0:
            return
        with self._lock:
            now = time.monotonic()
            wait = self._next_at - now
            self._next_at = max(now, self._next_at) + self.min_interval_s
        if wait > 0:
            time.sleep(wait)

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        query = urllib.parse.urlencode({k: v for k, v in (params or {}).items() if v is not None})
        url = f"{self.base_url}/{path.lstrip('/')}" + (f"?{query}" if query else "")
        attempt = 0
        while True:
            attempt += 1
            self._pace()
            with self._lock:
                self.requests += 1
            request = urllib.request.Request(url, headers={"Accept": "application/json", **self.headers})
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    return json.loads(response.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                retry = exc.code == 429 or exc.code >= 500
                if exc.code == 404:
                    raise ToolError(f"not found at {self._where()} (HTTP 404)") from None
                if not retry or attempt > self.max_retries:
                    raise ToolError(f"{self._where()} answered HTTP {exc.code}"
                                    + (" after retries" if retry else "")) from None
                time.sleep(self._delay(attempt, exc.headers.get("Retry-After") if exc.headers else None))
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt > self.max_retries:
                    raise ToolError(f"{self._where()} unreachable: {getattr(exc, 'reason', exc)}") from None
                time.sleep(self._delay(attempt, None))
            except json.JSONDecodeError:
                raise ToolError(f"{self._where()} returned a non-JSON body") from None

    def _where(self) -> str:
        return urllib.parse.urlsplit(self.base_url).netloc or self.base_url

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after is not None:
            try:
                return min(max(0.0, float(retry_after)), self.max_wait_s)
            except ValueError:
                pass
        return min(self.max_wait_s, self.backoff_s * 2 ** (attempt - 1))


def _per_year(years: Iterable[Any]) -> dict[str, int]:
    counts = Counter(str(y) for y in years if y)
    return dict(sorted(counts.items()))


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, list) and value else (None if isinstance(value, list) else value)


class AdsBackend:
    """NASA ADS search API (``/search/query``; Solr operators ``references()``, ``citations()``,
    ``similar()``). ADS has no journal impact factors or countries: those fields come back null with a note."""

    name = "ads"
    DEFAULT_URL = "https://api.adsabs.harvard.edu/v1"
    _FOCAL_FIELDS = ("bibcode,title,year,pub,bibstem,doi,abstract,doctype,citation_count,read_count,keyword,"
                     "arxiv_class,database,author,aff,author_count,reference")

    def __init__(self, token: str | None = None, base_url: str | None = None, *, timeout_s: float = 30.0,
                 max_retries: int = 3, min_interval_s: float = 0.0, max_rows: int = 200) -> None:
        token = token or os.environ.get("ADS_API_TOKEN") or os.environ.get("ADS_DEV_KEY")
        if not token:
            raise SciprobeError("the ADS backend needs an API token: set ADS_API_TOKEN (or ADS_DEV_KEY)")
        self.base_url = base_url or os.environ.get("SCIPROBE_ADS_URL") or self.DEFAULT_URL
        self.http = HttpJson(self.base_url, headers={"Authorization": f"Bearer {token}"}, timeout_s=timeout_s,
                             max_retries=max_retries, min_interval_s=min_interval_s)
        self.max_rows = max_rows
        self._focal: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "base_url": self.base_url, "collected_on": time.strftime("%Y-%m-%d")}

    def _query(self, q: str, fl: str, rows: int) -> list[dict[str, Any]]:
        data = self.http.get("search/query", {"q": q, "fl": fl, "rows": rows})
        return list((data.get("response") or {}).get("docs") or [])

    def _doc(self, bibcode: str) -> dict[str, Any]:
        with self._lock:
            cached = self._focal.get(bibcode)
        if cached is not None:
            return cached
        docs = self._query(f'bibcode:"{bibcode}"', self._FOCAL_FIELDS, 1)
        if not docs:
            raise ToolError(f"unknown identifier {bibcode!r}: ADS has no such bibcode")
        with self._lock:
            self._focal[bibcode] = docs[0]
        return docs[0]

    def call(self, tool: str, bibcode: str) -> dict[str, Any]:
        doc = self._doc(bibcode)
        if tool == "get_paper_metadata":
            return {"bibcode": doc.get("bibcode"), "title": _first(doc.get("title")), "year": doc.get("year"),
                    "venue": doc.get("pub"), "bibstem": _first(doc.get("bibstem")), "doi": _first(doc.get("doi")),
                    "doctype": doc.get("doctype"), "abstract": doc.get("abstract")}
        if tool == "get_citation_stats":
            citing = self._query(f'citations(bibcode:"{bibcode}")', "year", self.max_rows)
            return {"citation_count": doc.get("citation_count"), "read_count": doc.get("read_count"),
                    "citations_per_year": _per_year(d.get("year") for d in citing),
                    "citations_listed": len(citing)}
        if tool in ("get_references", "get_field_distribution"):
            refs = self._query(f'references(bibcode:"{bibcode}")', "bibcode,year,bibstem,database", self.max_rows)
            if tool == "get_field_distribution":
                return {"n_references": len(refs),
                        "by_database": _distribution(_first(r.get("database")) for r in refs),
                        "by_venue": _distribution(_first(r.get("bibstem")) for r in refs)}
            years = [int(r["year"]) for r in refs if str(r.get("year") or "").isdigit()]
            return {"n_references": len(doc.get("reference") or refs),
                    "year_range": [min(years), max(years)] if years else None,
                    "n_distinct_venues": len({_first(r.get("bibstem")) for r in refs} - {None}),
                    "references": [{"id": r.get("bibcode"), "year": r.get("year"), "venue": _first(r.get("bibstem"))}
                                   for r in refs[:MAX_LIST]]}
        if tool == "get_citing_works":
            focal_refs = set(doc.get("reference") or [])
            citing = self._query(f'citations(bibcode:"{bibcode}")', "bibcode,year,reference", self.max_rows)
            flags = [bool(focal_refs & set(c.get("reference") or [])) for c in citing]
            return {"n_citing": doc.get("citation_count"), "n_listed": len(citing),
                    "n_also_citing_references": sum(flags),
                    "citing": [{"id": c.get("bibcode"), "year": c.get("year"), "also_cites_references": f}
                               for c, f in list(zip(citing, flags))[:MAX_LIST]]}
        if tool == "get_semantic_neighbors":
            similar = [d for d in self._query(f'similar(bibcode:"{bibcode}")', "bibcode,title,year", MAX_LIST + 1)
                       if d.get("bibcode") != bibcode]
            return {"method": "ADS similar() text similarity, most similar first", "distances": None,
                    "neighbors": [{"rank": i + 1, "id": d.get("bibcode"), "title": _first(d.get("title")),
                                   "year": d.get("year")} for i, d in enumerate(similar[:MAX_LIST])]}
        if tool == "get_concepts_topics":
            return {"keywords": (doc.get("keyword") or [])[:MAX_LIST], "arxiv_classes": doc.get("arxiv_class") or [],
                    "databases": doc.get("database") or [], "topics": None}
        if tool == "get_authors_affiliations":
            authors = doc.get("author") or []
            affs = doc.get("aff") or []
            return {"author_count": doc.get("author_count", len(authors)), "country_count": None,
                    "note": "ADS gives affiliation strings, not countries",
                    "authors": [{"name": a, "affiliation": affs[i] if i < len(affs) else None}
                                for i, a in enumerate(authors[:MAX_LIST])]}
        if tool == "get_journal_metrics":
            return {"venue": doc.get("pub"), "bibstem": _first(doc.get("bibstem")), "impact_factor": None,
                    "jcr_quartile": None, "cas_zone": None, "note": "ADS does not provide journal impact indicators"}
        raise ToolError(f"unknown tool {tool!r}")


_OPENALEX_ID = re.compile(r"^(?:https://openalex\.org/)?(W\d+)$", re.IGNORECASE)


class OpenAlexBackend:
    """OpenAlex works API. Identifiers: an OpenAlex work id (``W123``), or an internal id mapped by
    ``id_map`` (the dataset's ``openalex_id`` column), or ``doi:10.x/...``."""

    name = "openalex"
    DEFAULT_URL = "https://api.openalex.org"

    def __init__(self, base_url: str | None = None, *, id_map: Mapping[str, str] | None = None,
                 mailto: str | None = None, api_key: str | None = None, timeout_s: float = 30.0,
                 max_retries: int = 3, min_interval_s: float = 0.1) -> None:
        self.base_url = base_url or os.environ.get("SCIPROBE_OPENALEX_URL") or self.DEFAULT_URL
        self.mailto = mailto or os.environ.get("OPENALEX_MAILTO")
        self.api_key = api_key or os.environ.get("OPENALEX_API_KEY")
        agent = "sciprobe-scitaste" + (f" (mailto:{self.mailto})" if self.mailto else "")
        self.http = HttpJson(self.base_url, headers={"User-Agent": agent}, timeout_s=timeout_s,
                             max_retries=max_retries, min_interval_s=min_interval_s)
        self.id_map = {str(k): str(v) for k, v in (id_map or {}).items() if v}
        self._works: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "base_url": self.base_url, "polite_pool": bool(self.mailto),
                "collected_on": time.strftime("%Y-%m-%d")}

    def resolve(self, bibcode: str) -> str:
        mapped = self.id_map.get(bibcode, bibcode)
        match = _OPENALEX_ID.match(mapped)
        if match:
            return match[1].upper()
        if mapped.lower().startswith("doi:"):
            return mapped
        raise ToolError(f"unknown identifier {bibcode!r}: no OpenAlex work id is mapped to it")

    def _get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return self.http.get(path, {**(params or {}), "mailto": self.mailto, "api_key": self.api_key})

    def _work(self, bibcode: str) -> dict[str, Any]:
        work_id = self.resolve(bibcode)
        with self._lock:
            cached = self._works.get(work_id)
        if cached is not None:
            return cached
        try:
            work = self._get(f"works/{urllib.parse.quote(work_id, safe=':/')}")
        except ToolError as exc:
            if "404" in str(exc):
                raise ToolError(f"unknown identifier {bibcode!r}: OpenAlex has no work {work_id}") from None
            raise
        with self._lock:
            self._works[work_id] = work
        return work

    def _batch(self, ids: Sequence[str], select: str) -> list[dict[str, Any]]:
        short = [i.rsplit("/", 1)[-1] for i in ids][:50]
        if not short:
            return []
        data = self._get("works", {"filter": "openalex:" + "|".join(short), "select": select, "per-page": 50})
        return list(data.get("results") or [])

    @staticmethod
    def _venue(work: Mapping[str, Any]) -> dict[str, Any] | None:
        return ((work.get("primary_location") or {}).get("source")) or None

    @staticmethod
    def _abstract(inverted: Mapping[str, Sequence[int]] | None) -> str | None:
        if not inverted:
            return None
        slots = sorted((pos, word) for word, positions in inverted.items() for pos in positions)
        return " ".join(word for _, word in slots)

    def call(self, tool: str, bibcode: str) -> dict[str, Any]:
        work = self._work(bibcode)
        venue = self._venue(work) or {}
        if tool == "get_paper_metadata":
            return {"id": work.get("id"), "title": work.get("title") or work.get("display_name"),
                    "year": work.get("publication_year"), "venue": venue.get("display_name"), "doi": work.get("doi"),
                    "doctype": work.get("type"), "abstract": self._abstract(work.get("abstract_inverted_index"))}
        if tool == "get_citation_stats":
            return {"citation_count": work.get("cited_by_count"),
                    "citations_per_year": {str(c["year"]): c.get("cited_by_count") for c in
                                           sorted(work.get("counts_by_year") or [], key=lambda c: c["year"])}}
        if tool in ("get_references", "get_field_distribution"):
            ref_ids = list(work.get("referenced_works") or [])
            refs = self._batch(ref_ids, "id,publication_year,primary_location,primary_topic")
            if tool == "get_field_distribution":
                return {"n_references": len(ref_ids), "n_looked_up": len(refs),
                        "by_field": _distribution(
                            ((r.get("primary_topic") or {}).get("field") or {}).get("display_name") for r in refs)}
            years = [r["publication_year"] for r in refs if r.get("publication_year")]
            return {"n_references": len(ref_ids), "year_range": [min(years), max(years)] if years else None,
                    "n_distinct_venues": len({(self._venue(r) or {}).get("display_name") for r in refs} - {None}),
                    "references": [{"id": r.get("id"), "year": r.get("publication_year"),
                                    "venue": (self._venue(r) or {}).get("display_name")} for r in refs[:MAX_LIST]]}
        if tool == "get_citing_works":
            focal_refs = set(work.get("referenced_works") or [])
            data = self._get("works", {"filter": f"cites:{work.get('id', '').rsplit('/', 1)[-1]}",
                                       "select": "id,publication_year,referenced_works", "per-page": 200})
            citing = list(data.get("results") or [])
            flags = [bool(focal_refs & set(c.get("referenced_works") or [])) for c in citing]
            return {"n_citing": work.get("cited_by_count"), "n_listed": len(citing),
                    "n_also_citing_references": sum(flags),
                    "citing": [{"id": c.get("id"), "year": c.get("publication_year"), "also_cites_references": f}
                               for c, f in list(zip(citing, flags))[:MAX_LIST]]}
        if tool == "get_semantic_neighbors":
            related = self._batch(list(work.get("related_works") or []), "id,title,publication_year,primary_topic")
            return {"method": "OpenAlex related_works (concept overlap), unranked", "distances": None,
                    "neighbors": [{"id": r.get("id"), "title": r.get("title"), "year": r.get("publication_year"),
                                   "topic": (r.get("primary_topic") or {}).get("display_name")}
                                  for r in related[:MAX_LIST]]}
        if tool == "get_concepts_topics":
            return {"concepts": [{"name": c.get("display_name"), "level": c.get("level"), "score": c.get("score")}
                                 for c in (work.get("concepts") or [])[:MAX_LIST]],
                    "topics": [{"name": t.get("display_name"), "score": t.get("score"),
                                "subfield": (t.get("subfield") or {}).get("display_name"),
                                "field": (t.get("field") or {}).get("display_name")}
                               for t in (work.get("topics") or [])[:MAX_LIST]],
                    "keywords": [k.get("display_name") for k in (work.get("keywords") or [])][:MAX_LIST]}
        if tool == "get_authors_affiliations":
            authorships = work.get("authorships") or []
            countries = sorted({c for a in authorships for c in (a.get("countries") or [])})
            return {"author_count": len(authorships),
                    "country_count": work.get("countries_distinct_count", len(countries)),
                    "institution_count": work.get("institutions_distinct_count"), "countries": countries,
                    "authors": [{"name": (a.get("author") or {}).get("display_name"),
                                 "institutions": [i.get("display_name") for i in a.get("institutions") or []],
                                 "countries": a.get("countries") or []} for a in authorships[:MAX_LIST]]}
        if tool == "get_journal_metrics":
            source_id = str(venue.get("id") or "").rsplit("/", 1)[-1]
            if not source_id:
                raise ToolError(f"OpenAlex records no venue for {bibcode!r}")
            source = self._get(f"sources/{source_id}")
            stats = source.get("summary_stats") or {}
            return {"venue": source.get("display_name"), "two_year_mean_citedness": stats.get("2yr_mean_citedness"),
                    "h_index": stats.get("h_index"), "i10_index": stats.get("i10_index"),
                    "works_count": source.get("works_count"), "impact_factor": None, "jcr_quartile": None,
                    "cas_zone": None, "note": "OpenAlex does not provide JCR/CAS indicators"}
        raise ToolError(f"unknown tool {tool!r}")


class LiveBackend:
    """Paper routing: physics -> ADS, other disciplines -> OpenAlex (mapped id); physics -> OpenAlex when no ADS
    backend is configured. ``rows`` supply discipline and ``openalex_id`` per identifier."""

    name = "live"

    def __init__(self, ads: AdsBackend | None, openalex: OpenAlexBackend | None,
                 disciplines: Mapping[str, str]) -> None:
        if ads is None and openalex is None:
            raise SciprobeError("the live tool backend needs ADS (ADS_API_TOKEN) or OpenAlex")
        self.ads, self.openalex, self.disciplines = ads, openalex, dict(disciplines)

    def route(self, bibcode: str) -> ToolBackend:
        if self.disciplines.get(bibcode) == "physics" and self.ads is not None:
            return self.ads
        if self.openalex is not None:
            return self.openalex
        if self.ads is not None:
            return self.ads
        raise ToolError(f"no backend serves {bibcode!r}")

    def call(self, tool: str, bibcode: str) -> dict[str, Any]:
        return self.route(bibcode).call(tool, bibcode)

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "ads": self.ads.describe() if self.ads else None,
                "openalex": self.openalex.describe() if self.openalex else None,
                "collected_on": time.strftime("%Y-%m-%d")}


# ---------------------------------------------------------------- choosing a backend

def make_backend(options: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], *,
                 bundled_sample: bool) -> ToolBackend:
    """The backend a run asked for. ``options`` (``per_task`` options, else environment):

    - ``tool_backend`` / ``SCIPROBE_SCITASTE_TOOLS``: ``snapshot`` (default), ``live``, ``ads``, ``openalex``;
    - ``snapshot`` / ``SCIPROBE_SCITASTE_SNAPSHOT``: the snapshot file; default the bundled synthetic snapshot,
      only when the data is the bundled sample (any other dataset must name its own snapshot);
    - ``ads_url`` / ``openalex_url``, ``tool_timeout_s``, ``tool_retries``, ``openalex_min_interval_s``.
    """
    from sciprobe.benchmarks.scitaste.source import discipline_name

    kind = str(options.get("tool_backend") or os.environ.get("SCIPROBE_SCITASTE_TOOLS") or "snapshot").lower()
    if kind == "snapshot":
        path = options.get("snapshot") or os.environ.get("SCIPROBE_SCITASTE_SNAPSHOT")
        if not path:
            if not bundled_sample:
                raise SciprobeError("the dimagent modes need tool data: give a snapshot file (per-task option "
                                    "'snapshot' or SCIPROBE_SCITASTE_SNAPSHOT) or a live backend "
                                    "(SCIPROBE_SCITASTE_TOOLS=live|ads|openalex)")
            path = BUNDLED_SNAPSHOT
        return SnapshotBackend.load(path)
    common = {"timeout_s": float(options.get("tool_timeout_s", 30.0)),
              "max_retries": int(options.get("tool_retries", 3))}
    id_map = {str(r["bibcode"]): r.get("openalex_id") for r in rows if r.get("openalex_id")}
    ads = openalex = None
    if kind in ("live", "ads"):
        has_token = bool(os.environ.get("ADS_API_TOKEN") or os.environ.get("ADS_DEV_KEY"))
        if kind == "ads" or has_token:
            ads = AdsBackend(base_url=options.get("ads_url"), **common)
    if kind in ("live", "openalex"):
        openalex = OpenAlexBackend(options.get("openalex_url"), id_map=id_map,
                                   min_interval_s=float(options.get("openalex_min_interval_s", 0.1)), **common)
    if kind not in ("live", "ads", "openalex"):
        raise SciprobeError(f"unknown tool backend {kind!r} (snapshot, live, ads, openalex)")
    return LiveBackend(ads, openalex, {str(r["bibcode"]): discipline_name(r["discipline"]) for r in rows})
