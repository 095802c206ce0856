"""`sciprobe prescience rollout` (issue 27 item 1; paper §4.5, Figure 3, Appendix C.7): two simulated months on
the bundled sample with the bundled baselines and a loopback stub judge, the corpus read back with
`load_dataset`, a rerun answered from the cache, and the guard that keeps every read in the past."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.prescience import lacer_judge as lr
from sciprobe.benchmarks.prescience.rollout.calibration import calibrate
from sciprobe.benchmarks.prescience.rollout.embedders import EmbeddingCache, make_embedder
from sciprobe.benchmarks.prescience.rollout.literature import Literature
from sciprobe.benchmarks.prescience.rollout.params import RolloutParams
from sciprobe.benchmarks.prescience.rollout.policy import RandomReference
from sciprobe.benchmarks.prescience.rollout.simulate import load_release, simulate_repeat, starting_literature
from sciprobe.core.errors import SciprobeError
from sciprobe.testing.stub_server import StubServer, score_reply

SAMPLE = get_benchmark("prescience").sample_source
CURVES = ("diversity", "novelty_evolving", "novelty_fixed")


@pytest.fixture
def lattice(tmp_path: Path) -> Path:
    return lr.write_lattices(tmp_path / "lattice.json", [lr.toy_lattice("rollouts")], {"note": "test lattice"})


def _rollout(server: StubServer, out: Path, lattice: Path, *extra: str) -> dict:
    from sciprobe.cli import main

    assert main(["prescience", "rollout", "--output-dir", str(out), "--months", "2", "--repeats", "2",
                 "--n", "8", "--k", "3", "--n-bootstrap", "200", "--lacer-template", str(lattice),
                 "--judge", f"openai/stub-judge,base_url={server.base_url},api_key=sk-test,max_retries=0",
                 *extra]) == 0
    return json.loads((out / "rollout_results.json").read_text())


def test_two_months_on_the_sample_write_a_corpus_and_monthly_curves_and_rerun_from_cache(tmp_path: Path,
                                                                                          lattice: Path) -> None:
    out = tmp_path / "rollout"
    with StubServer(reply=score_reply) as server:
        first = _rollout(server, out, lattice)
        calls = server.count
        assert calls > 0 and first["cache"]["judge_new_calls"] == calls
        again = _rollout(server, out, lattice)
        assert server.count == calls  # the rerun asks the judge nothing
    # the paper's start date and parameters, overridden only where the command line says so
    assert first["params"]["t0"] == "2024-10-01" and first["params"]["days"] == 61 and first["params"]["seed"] == 42
    assert first["provenance"]["embedder"] == "minilm" and "GritLM" in first["provenance"]["embedder_note"]
    assert again["cache"] == {"days_from_journal": 122, "days_drawn": 0, "judge_new_calls": 0,
                              "generation_new_calls": 0, "embeddings_computed": 0}
    assert again["curves"] == first["curves"]
    assert [r["curves"] for r in again["repeats"]] == [r["curves"] for r in first["repeats"]]
    assert [r["days_from_journal"] for r in again["repeats"]] == [61, 61]

    # per month and repeat, with intervals and the sampling facts
    for curve in CURVES:
        synthetic = first["curves"][curve]["synthetic"]
        assert sorted(synthetic) == ["2024-10-01", "2024-11-01"]
        for month in synthetic.values():
            assert month["ci95_low"] <= month["mean"] <= month["ci95_high"] and 0 <= month["mean"] <= 9
        for repeat in first["repeats"]:
            for month in repeat["curves"][curve].values():
                assert month["n_queries"] == 8 and month["k"] == 3 and month["n_pairs_scored"] == month["n_pairs"]
        assert first["curves"][curve]["natural"], curve  # the real months, size-matched
    assert first["coverage"]["n_failed"] == 0 and first["coverage"]["n_pairs"] > 0

    # every sampled quantity is in the journal copy, one line per day
    days = [json.loads(line) for line in (out / "samples" / "repeat_0.jsonl").read_text().splitlines()]
    assert [d["index"] for d in days] == list(range(61))
    sample = next(s for d in days for s in d["samples"])
    assert {"team_size", "authors", "seed_author", "reference_count", "references", "padded_references",
            "generation", "corpus_id"} <= set(sample)

    # the corpus in the release schema, read back by datasets
    from datasets import load_dataset

    corpus = out / "corpus" / "repeat_0"
    papers = load_dataset("parquet", data_files={"test": str(corpus / "test.parquet")}, split="test")
    synthetic = [p for p in papers if p["roles"] == ["synthetic"]]
    assert len(synthetic) == first["repeats"][0]["n_papers"] > 0
    assert all("2024-10-01" <= p["date"] < "2024-12-01" and p["title"] and p["key_references"] for p in synthetic)
    assert (out / "rollout_figure.png").stat().st_size > 0
    from sciprobe.cli import main

    assert main(["prescience", "rollout-report", str(out / "rollout_results.json"), "--out",
                 str(tmp_path / "figure3.png")]) == 0
    assert (tmp_path / "figure3.png").read_bytes()[:4] == b"\x89PNG"


def test_the_rollout_never_reads_a_paper_from_the_future_of_its_day(tmp_path: Path) -> None:
    params = RolloutParams(days=45, repeats=1)
    release = load_release(SAMPLE, params.t0)
    assert release.test_corpus and any(p["date"] >= params.t0 for p in release.test_corpus)  # the future exists
    reads: list[tuple[str, str, str]] = []
    embeddings = EmbeddingCache(make_embedder("hashing"), None)
    run = simulate_repeat(release, calibrate(release.train_targets), params, 0, RandomReference(), embeddings,
                          observer=lambda day, cid, date: reads.append((day, cid, date)))
    assert run.synthetic_ids and len({day for day, _, _ in reads}) == 45
    assert all(date < day for day, _, date in reads)
    # synthetic papers are read once folded in, from the next day on
    assert any(cid.startswith("S") for _, cid, _ in reads)
    # nothing of the real test period entered the starting literature
    start = starting_literature(release, embeddings)
    assert max(start.dates) < params.t0 and len(start) == len(release.start)


def test_a_view_refuses_a_paper_of_its_day_or_later() -> None:
    literature = Literature(dim=2)
    papers = [{"corpus_id": "old", "date": "2024-09-30"}, {"corpus_id": "today", "date": "2024-10-01"}]
    literature.add(papers, [[1.0, 0.0], [0.0, 1.0]])
    view = literature.asof("2024-10-01")
    assert view.paper("old")["corpus_id"] == "old"
    with pytest.raises(SciprobeError, match="is not history on 2024-10-01"):
        view.paper("today")
    assert view.nearest_papers([0.0, 1.0], 5) == ["old"]  # the closer, same-day paper is not a candidate
    with pytest.raises(SciprobeError, match="folded in after"):
        literature.add([{"corpus_id": "late", "date": "2024-01-01"}], [[1.0, 1.0]])


def test_an_interrupted_rollout_resumes_from_its_journal(tmp_path: Path) -> None:
    params = RolloutParams(days=20, repeats=1)
    release = load_release(SAMPLE, params.t0)
    calib = calibrate(release.train_targets)
    embeddings = EmbeddingCache(make_embedder("hashing"), None)
    journal = tmp_path / "repeat_0.jsonl"
    whole = simulate_repeat(release, calib, params, 0, RandomReference(), embeddings, journal)
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:12]) + "\n" + lines[12][:40])  # killed while writing day 12
    resumed = simulate_repeat(release, calib, params, 0, RandomReference(), embeddings, journal)
    assert resumed.days_from_journal == 12
    assert resumed.synthetic_ids == whole.synthetic_ids
    assert [resumed.literature.papers[c] for c in resumed.synthetic_ids] == \
           [whole.literature.papers[c] for c in whole.synthetic_ids]


@pytest.mark.parametrize(("changes", "message"), [
    ({"t0": "2024-13-01"}, "not a YYYY-MM-DD date"),
    ({"days": 0}, "days must be at least 1"),
    ({"daily_counts": "poisson"}, "choose one of empirical, normal"),
    ({"collaborators": "oracle"}, "choose one of embedding_fusion, frequency"),
])
def test_bad_parameters_are_one_line_errors(changes: dict, message: str) -> None:
    with pytest.raises(SciprobeError, match=message) as err:
        RolloutParams(**changes)
    assert "\n" not in str(err.value)


def test_daily_counts_follow_the_train_distribution() -> None:
    import numpy as np

    targets = [{"date": d, "authors": [{"publication_history": []}, {"publication_history": ["x"]}],
                "key_references": [{}] * 2} for d in ["2024-01-01"] * 3 + ["2024-01-02"]]
    calib = calibrate(targets)
    assert calib.daily_counts == [3, 1] and calib.first_time_author_rate == 0.5
    rng = np.random.default_rng(0)
    assert {calib.papers_today(rng, "empirical") for _ in range(50)} == {1, 3}
    assert all(calib.papers_today(rng, "normal") >= 0 for _ in range(50))
    with pytest.raises(SciprobeError, match="no target papers"):
        calibrate([])


def test_rollout_report_refuses_another_file(tmp_path: Path, capsys) -> None:
    from sciprobe.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["prescience", "rollout-report", str(bad), "--out", str(tmp_path / "x.png")]) != 0
    err = capsys.readouterr().err.strip()
    assert "not a rollout results file" in err and "\n" not in err and not (tmp_path / "x.png").exists()


def test_a_model_spec_generates_the_contributions_and_unparsable_replies_drop_the_paper(tmp_path: Path) -> None:
    from sciprobe.benchmarks.prescience.rollout.policy import ModelGenerator
    from sciprobe.llm.cache import ResponseCache
    from sciprobe.llm.client import LLMClient

    def writer(body: dict) -> str:
        user = body["messages"][-1]["content"]
        if user.count("Background Paper") <= 2:
            return "I would rather not."  # no Title/Abstract: the paper is dropped, as upstream drops it
        return f"Reasoning: combine.\nTitle: Combining {user.count('Background Paper')} ideas\nAbstract: We do so."

    params = RolloutParams(days=10, repeats=1)
    release = load_release(SAMPLE, params.t0)
    embeddings = EmbeddingCache(make_embedder("hashing"), None)
    with StubServer(reply=writer) as server:
        client = LLMClient(f"openai/writer,base_url={server.base_url},api_key=sk-test,max_retries=0",
                           cache=ResponseCache(tmp_path / "cache.sqlite"))
        run = simulate_repeat(release, calibrate(release.train_targets), params, 0, ModelGenerator(client),
                              embeddings)
        assert server.count == 10  # one paper a day on the sample, one call each
    samples = [s for day in run.days for s in day["samples"]]
    kept = [s for s in samples if s["corpus_id"]]
    dropped = [s for s in samples if not s["corpus_id"]]
    assert dropped and run.n_dropped == len(dropped) and all(len(s["references"]) <= 2 for s in dropped)
    assert all(s["generation"]["parse_path"] == "failed:no_title" for s in dropped)
    assert kept and all(s["generation"]["parse_path"] == "official" for s in kept)
    for s in kept:
        paper = run.literature.papers[s["corpus_id"]]
        assert paper["title"] == f"Combining {len(s['references'])} ideas" and paper["abstract"] == "We do so."


def test_identical_pairs_are_judged_once_across_batches(lattice: Path) -> None:
    from sciprobe.benchmarks.prescience.rollout.analysis import judge
    from sciprobe.llm.client import LLMClient

    a, b, c = ({"title": t, "abstract": f"About {t}."} for t in "abc")
    pairs = [(a, b, "q1->n1"), (a, c, "q1->n2"), (a, b, "q2->n1"), (b, c, "q3->n3"), (a, b, "q4->n4")]
    with StubServer(reply=score_reply) as server:
        client = LLMClient(f"openai/j,base_url={server.base_url},api_key=sk-test,max_retries=0")
        scores, info = judge(pairs, [client], lr.load_template(lattice), batch=2)
        assert server.count == 3
    assert info["n_distinct_pairs"] == 3 and info["n_pairs"] == 5 and info["n_new_calls"] == 3
    assert scores["q1->n1"] == scores["q2->n1"] == scores["q4->n4"] is not None
    assert all(1 <= v <= 10 for v in scores.values())
