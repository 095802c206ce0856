"""The published PreScience release layouts, as ``sciprobe doctor`` checks them (issue 25; spec ``prescience.md``).

Columns are the types values have once loaded (``str int list null``; ``absent``: a record may leave the field
out, as upstream ``utils.save_json`` records whose ``None`` values were stripped do):

- the Parquet release of upstream ``dataset/huggingface/prepare_for_upload.py`` (``allenai/prescience@47384ed``;
  HF ``allenai/prescience``), also the layout of the 7-task release (the same files, a ``topics`` column added);
- the two-domain archive of ``pscience674/pscience@6d8045d`` (``README.md``, ``utils.load_corpus``,
  ``dataset/corpus/add_topics.py``): ``<domain>/{train,test}/all_papers.json.gz`` + ``sd2publications.json.gz``
  (an author -> corpus ids mapping, read by :mod:`.releases`, not a list of records), gzipped or not.
"""

from __future__ import annotations

from sciprobe.core.declaration import ReleaseFile, ReleaseLayout

#: every config a split corpus file feeds (the instance configs are derived from the corpora)
CORPUS_CONFIGS = ("papers", "contribution_generation", "collaborator_prediction", "prior_work_selection",
                  "citation_prediction", "future_combination", "topic_trends", "topic_pair_trends")
_OPTIONAL = "null|absent"


def paper_columns(optional: str) -> dict[str, str]:
    """The paper record of the release schema; ``topics`` may be absent (the v1 Parquet has no such column)."""
    return {"corpus_id": "str", "arxiv_id": f"str|{optional}", "date": "str", "title": f"str|{optional}",
            "abstract": f"str|{optional}", "categories": f"list|{optional}", "roles": f"list|{optional}",
            "key_references": f"list|{optional}", "authors": f"list|{optional}",
            "citation_trajectory": f"list|{optional}", "topics": "list|null|absent"}


PARQUET_RELEASE = ReleaseLayout(
    name="allenai/prescience Parquet (v1; the 7-task release adds a topics column)",
    files=(ReleaseFile("train.parquet", CORPUS_CONFIGS, paper_columns("null")),
           ReleaseFile("test.parquet", CORPUS_CONFIGS, paper_columns("null")),
           ReleaseFile("author_publications.jsonl", ("author_publications",), {"key": "str", "value": "list"}),
           ReleaseFile("author_disambiguation.jsonl", ("author_disambiguation",), {"key": "str", "value": "list"})),
    extra_files=("README.md", ".gitattributes", "topic_labels*.jsonl"),
    note="upstream dataset/huggingface/prepare_for_upload.py at 47384ed79c48cfef610f30af12ba883f2a0093cb",
)


def _domain_file(domain: str, split: str, optional: bool = False) -> ReleaseFile:
    # the archive ships gzipped; its README says to gunzip it, so the plain name is the older "part" it may have
    return ReleaseFile(f"{domain}/{split}/all_papers.json.gz", () if optional else CORPUS_CONFIGS,
                       paper_columns(_OPTIONAL), parts=f"{domain}/{split}/all_papers.json", optional=optional)


TWO_DOMAIN_ARCHIVE = ReleaseLayout(
    name="two-domain archive (pscience674/ds-7f93: <domain>/<split>/all_papers.json.gz)",
    files=(_domain_file("prescience-ai", "train"), _domain_file("prescience-ai", "test"),
           _domain_file("prescience-quantum", "train", optional=True),
           _domain_file("prescience-quantum", "test", optional=True)),
    extra_files=("README.md", ".gitattributes", "*/*/sd2publications.json.gz", "*/*/sd2publications.json"),
    note="pscience674/pscience@6d8045d README.md, utils.load_corpus, dataset/corpus/add_topics.py",
)

RELEASE_LAYOUTS = (PARQUET_RELEASE, TWO_DOMAIN_ARCHIVE)
