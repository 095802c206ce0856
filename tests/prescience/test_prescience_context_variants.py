"""Contribution generation's context variants (issue 27 item 2; paper Table 2 right, Table 11, Appendix D.1.3):
parsing the option, every variant's context drawn from H^<t_p of the bundled sample (no paper dated on or after
the target's date, for each variant), the size limits, seeded matched-size subsampling, and the runner through a
loopback stub with the variant recorded in provenance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.prescience import context_variants as cv
from sciprobe.benchmarks.prescience.forecast_context import load_corpus
from sciprobe.core.errors import SciprobeError

from golden import case_ids, load_cases

BENCH = get_benchmark("prescience")
CASES = load_cases("prescience_context_variants")
SAMPLE_SETS = {n: str(BENCH.sample_source / f) for n, f in cv.SAMPLE_REFERENCE_FILES.items()}
#: one variant per option value, and the combinations of Table 2 (right) and Table 11
VARIANTS = ("influential", "all", "impact", "author_history", "related", "citations", "all:influential",
            "impact:influential", "all:impact", "author_history,related,citations")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> str:
    from sciprobe.data.build import build_benchmark

    out = tmp_path_factory.mktemp("prescience") / "build"
    build_benchmark(BENCH, BENCH.sample_source, out)
    return str(out)


@pytest.fixture(scope="module")
def rows(built: str) -> list[dict]:
    import datasets

    return datasets.load_dataset(built, "contribution_generation", split="test").to_list()


class WordCounts:
    """A deterministic stand-in embedder (bag of hashed words): the retrieval logic without the model."""

    def __call__(self, texts):
        import numpy as np

        out = np.zeros((len(texts), 64))
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, sum(map(ord, word)) % 64] += 1
        return out


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse_context(case: dict) -> None:
    if "error" in case:
        with pytest.raises(SciprobeError, match=case["error"]):
            cv.parse_context(case["input"])
    else:
        assert cv.parse_context(case["input"]).label == case["label"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_no_retrieved_paper_is_dated_on_or_after_the_target(built: str, rows: list[dict], variant: str) -> None:
    corpus = load_corpus(built)
    spec = cv.parse_context(variant)
    sets = cv.load_reference_sets(SAMPLE_SETS)
    embeddings = cv.PaperEmbeddings(corpus.test, WordCounts())
    shown = 0
    for row in rows:
        context = cv.target_context(corpus.test, row, spec, sets, embeddings)
        for paper in context.retrieved():
            assert paper["date"] < row["date"], (variant, row["corpus_id"], paper["corpus_id"])
            assert corpus.test.date_of(paper["corpus_id"]) == paper["date"]  # the corpus's date, not a copy
            assert paper["corpus_id"] != row["corpus_id"]
        shown += len(context.retrieved())
        assert cv.verbatim_leak(cv.context_messages(context, spec), row) is None
        assert len(context.author_papers) <= cv.MAX_AUTHOR_PAPERS and len(context.related) <= cv.RELATED_K
        if "citations" in spec.extras:
            assert context.citations is None or context.citations >= 0
    assert shown > 0  # the variant retrieved something on the sample


def test_a_reference_file_naming_a_future_paper_is_dropped_and_counted(built: str, rows: list[dict],
                                                                       tmp_path: Path) -> None:
    corpus = load_corpus(built)
    row = max(rows, key=lambda r: r["date"])
    later = [cid for cid in corpus.test.ids.to_pylist() if corpus.test.date_of(cid) >= row["date"]]
    earlier = [r["corpus_id"] for r in row["references"]]
    path = tmp_path / "all.jsonl"
    path.write_text(json.dumps({"key": row["corpus_id"], "value": [*earlier, later[0]]}) + "\n")
    context = cv.target_context(corpus.test, row, cv.parse_context("all"), cv.load_reference_sets({"all": path}))
    assert [p["corpus_id"] for p in context.references] == earlier
    assert context.counts["references"] == {"listed": len(earlier) + 1, "drawn": len(earlier) + 1,
                                            "shown": len(earlier), "dropped": 1}


def test_author_history_is_recent_papers_per_author_in_listed_order(built: str, rows: list[dict]) -> None:
    corpus = load_corpus(built)
    index = corpus.test
    spec = cv.parse_context("author_history")
    for row in rows:
        target = index.row(index.row_of(row["corpus_id"]))
        view = index.view(row["date"])
        expected: list[str] = []
        for author in target["authors"]:  # newest first; a paper already taken does not use the author's slot
            new = [index.ids[int(r)].as_py() for r in view.author_history_rows(author["author_id"])[::-1]]
            new = [cid for cid in new if cid not in expected][:cv.PAPERS_PER_AUTHOR]
            expected += new[:cv.MAX_AUTHOR_PAPERS - len(expected)]
        got = [p["corpus_id"] for p in cv.target_context(index, row, spec).author_papers]
        assert got == expected


def test_matched_size_subsampling_is_seeded(built: str, rows: list[dict]) -> None:
    corpus = load_corpus(built)
    sets = cv.load_reference_sets(SAMPLE_SETS)
    bigger = [r for r in rows if len(sets["all"][r["corpus_id"]]) > len(r["references"])]
    assert bigger
    draws = {}
    for seed in (0, 0, 1):
        spec = cv.parse_context("all:influential", seed=seed)
        contexts = [cv.target_context(corpus.test, r, spec, sets) for r in bigger]
        assert all(len(c.references) == len(r["references"]) for c, r in zip(contexts, bigger))
        draws.setdefault(seed, []).append([[p["corpus_id"] for p in c.references] for c in contexts])
    assert draws[0][0] == draws[0][1]  # same seed, same draw
    assert draws[0][0] != draws[1][0]  # another seed draws otherwise on some target


def test_verbatim_leak_names_what_leaked(rows: list[dict]) -> None:
    row = dict(rows[0], abstract="x" * 200 + "a sixty-character stretch of the target abstract's middle.." + "y")
    messages = [{"role": "user", "content": "Related Paper 1:\nTitle: t\nAbstract: " + row["abstract"][200:260]}]
    assert cv.verbatim_leak(messages, row) == "mid-abstract"
    assert cv.verbatim_leak([{"role": "user", "content": f"Title: {row['title']}"}], row) == "title"
    assert cv.verbatim_leak([{"role": "user", "content": "nothing of it"}], row) is None


def test_missing_reference_file_is_a_one_line_error(built: str, rows: list[dict]) -> None:
    corpus = load_corpus(built)
    with pytest.raises(SciprobeError, match="--reference-set all=PATH"):
        cv.target_context(corpus.test, rows[0], cv.parse_context("all"), {})


def test_prompt_sections_and_default_unchanged(built: str, rows: list[dict]) -> None:
    from sciprobe.benchmarks.prescience.contribution import contribution_messages

    corpus = load_corpus(built)
    row = rows[0]
    default = cv.target_context(corpus.test, row, cv.parse_context("influential"))
    assert cv.context_messages(default, cv.parse_context("influential")) == contribution_messages(row)
    spec = cv.parse_context("author_history,citations")
    context = cv.target_context(corpus.test, row, spec)
    system, user = (m["content"] for m in cv.context_messages(context, spec))
    assert "Author Paper blocks" in system and "citations the follow-up paper will receive" in system
    assert user.count("Author Paper ") == len(context.author_papers)
    months = context.citation_months or 12
    assert f"Citations of the follow-up paper in its first {months} months:" in user


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["all:influential,author_history,citations", "related"])
def test_evaluate_with_context_through_stub(tmp_path: Path, monkeypatch, variant: str) -> None:
    """The CLI option reaches the runner; the variant, its seed and counts are in provenance; the records keep
    what each target was shown, all of it dated before the target; a rerun answers from the cache."""
    import pyarrow.parquet as pq

    from sciprobe.benchmarks.prescience import lacer_judge as lr
    from sciprobe.cli import main
    from sciprobe.testing.stub_server import StubServer

    lattice = lr.write_lattices(tmp_path / "lattice.json", [lr.toy_lattice("matching")], {"note": "test"})
    monkeypatch.setenv(lr.TEMPLATE_ENV, str(lattice))
    monkeypatch.setenv("SCIPROBE_HOME", str(tmp_path / "home"))
    out = tmp_path / "run"
    prompts: list[str] = []

    def generate(body: dict) -> str:
        prompts.append(body["messages"][-1]["content"])
        return "Reasoning: r.\nTitle: A follow-up\nAbstract: It extends the background papers."

    with StubServer(reply=generate) as gen, StubServer(reply=lambda b: "Reasoning: ok.\nScore: 5") as judge:
        argv = ["evaluate", "prescience:contribution_generation", "--model",
                f"openai/g,base_url={gen.base_url},api_key=x", "--judge",
                f"openai/j,base_url={judge.base_url},api_key=x", "--limit", "4", "--output-dir", str(out),
                "--context", variant, "--context-seed", "3"]
        assert main(argv) == 0
        calls = gen.count
        assert main(argv) == 0 and gen.count == calls  # from the cache
    results = json.loads(max((out / "results").rglob("results_*.json")).read_text())
    provenance = results["sciprobe"]["tasks"]["prescience:contribution_generation|0"]["provenance"]
    context = provenance["context"]
    assert context["variants"] == cv.parse_context(variant).label and context["n_targets"] == 4
    assert provenance["prompt_version"].endswith("+context:" + context["variants"])
    assert context["subsample_seed"] == (3 if ":" in variant else None) and context["n_verbatim_leaks"] == 0
    details = pq.read_table(next((out / "details").rglob("*.parquet"))).to_pylist()
    for record in details:
        shown = json.loads(record["context"]) if isinstance(record["context"], str) else record["context"]
        assert all(date < record["date"] for _, date in shown["shown"])
    marker = "Author Paper 1:" if "author_history" in variant else "Related Paper 1:"
    assert any(marker in p for p in prompts)


def test_context_refuses_other_tasks(capsys) -> None:
    from sciprobe.cli import main

    assert main(["evaluate", "prescience:citation_prediction", "--model", "openai/x,api_key=x",
                 "--context", "related"]) == 2
    assert "prescience:contribution_generation only" in capsys.readouterr().err


def test_context_with_upstream_prompts_is_refused(capsys) -> None:
    """Upstream's expanded-context templates are not pinned: no silent fallback to sciprobe's wording."""
    from sciprobe.cli import main

    assert main(["evaluate", "prescience:contribution_generation", "--model", "openai/x,api_key=x",
                 "--prompts", "upstream", "--context", "author_history"]) == 2
    assert "not pinned" in capsys.readouterr().err


def test_related_is_rank_fusion_over_the_references(built: str, rows: list[dict]) -> None:
    """Checked against a direct computation: per shown reference, every H^<t_p paper ranked by cosine; ranks summed
    over the lists a paper is in (the first max(4K, K + excluded + 10)); the references, the target and the shown
    author papers left out; the K lowest sums, ties to the first seen."""
    import numpy as np

    corpus = load_corpus(built)
    index, embed = corpus.test, WordCounts()
    spec = cv.parse_context("author_history,related")
    embeddings = cv.PaperEmbeddings(index, embed, batch=7)  # small batches: the matrix grows over several
    checked = 0
    for row in rows:
        context = cv.target_context(index, row, spec, embeddings=embeddings)
        history = [cid for cid in index.ids.to_pylist() if index.date_of(cid) < row["date"]]
        text = [f"{index.row(index.row_of(c))['title']} {index.row(index.row_of(c))['abstract']}".strip()
                for c in history]
        vectors = embed(text)
        vectors = vectors / np.where(np.linalg.norm(vectors, axis=1, keepdims=True) == 0, 1,
                                     np.linalg.norm(vectors, axis=1, keepdims=True))
        refs = [r["corpus_id"] for r in row["references"]]
        skip = {*refs, row["corpus_id"], *(p["corpus_id"] for p in context.author_papers)}
        depth = min(len(history), max(4 * cv.RELATED_K, cv.RELATED_K + len(skip) + 10))
        sums: dict[str, int] = {}
        for ref in refs:
            sims = vectors @ vectors[history.index(ref)]
            ranked = sorted(range(len(history)), key=lambda k: (-round(float(sims[k]), 5), k))[:depth]
            for rank, k in enumerate(ranked):
                if history[k] not in skip:
                    sums[history[k]] = sums.get(history[k], 0) + rank
        expected = sorted(sums, key=lambda c: sums[c])[:cv.RELATED_K]
        got = [p["corpus_id"] for p in context.related]
        assert sorted(sums[c] for c in got) == sorted(sums[c] for c in expected)  # same sums (float ties aside)
        checked += bool(got)
    assert checked
