"""Judge agreement (issue 6): per-judge item scores from real results files (``write_run`` details Parquet) of
a PreScience LACER panel and an SGI-Bench idea panel, the pairwise numbers, the heatmap and the Space tab."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from scipy import stats

from pinned_support import pinned_as
from sciprobe.leaderboard import agreement
from sciprobe.leaderboard.importer import import_results_file
from sciprobe.leaderboard.store import SQLiteStore
from sciprobe.results.write import RunInfo, TaskResult, write_run
from sciprobe.scoring.score_report import Coverage, ScoreReport

J1, J2, J3 = "openai/gpt-4o", "anthropic/claude-sonnet", "openai/gpt-4o-mini"
# LACER 0-10 scores per item; J1 failed on item 4 (None: excluded, as the official mode does)
LACER = {J1: [2, 4, 6, 8, None, 5], J2: [3, 5, 7, 9, 5, 6], J3: [8, 6, 4, 3, 1, 7]}
LACER_IDS, IDEA_IDS = [f"c{k}" for k in range(6)], [f"s{k}" for k in range(4)]
# the made-up data a leaderboard here pins (it imports only results on every item of its pinned data)
PINNED = {"lacer": pinned_as(LACER_IDS), "idea": pinned_as(IDEA_IDS)}


def _provenance(benchmark: str, judges: list[str]) -> dict:
    return {"benchmark": benchmark, "benchmark_version": "1.0.0", "dataset": "folder",
            "dataset_fingerprint": "a" * 64, "dataset_revision": None, "prompt_version": "1", "model_id": "org/m",
            "judge_ids": judges, "cutoff": {"cutoff": None, "source": "none"}, "prompt_hash": "p" * 64}


def write_lacer_run(out: Path) -> Path:
    records = [{"id": f"c{k}", "gold": {"title": "t", "abstract": "a"}, "prediction": {"title": "t", "abstract": "b"},
                "lacer_replies": {j: f"Score: {LACER[j][k]}" for j in LACER},
                "lacer_official": {j: LACER[j][k] for j in LACER}} for k in range(6)]
    report = ScoreReport("contribution_generation", "official", {"lacer": 5.1, "rougeL": 0.3}, Coverage(6, 5, 1))
    task = TaskResult("prescience:contribution_generation", 0, {"official": report}, records,
                      _provenance("prescience", list(LACER)), "lacer", analysis={"items": {"ids": LACER_IDS}})
    return write_run(out, RunInfo("org/m", {}, judge_ids=list(LACER)), [task])


DIMS = ("effectiveness", "novelty", "detailedness", "feasibility", "overall")


def idea_log(item: int) -> list[dict]:
    """J1 and J2 agree on everything except item 2; J1 prefers the generated idea on even items."""
    log = []
    for judge in (J1, J2):
        for swapped in (False, True):
            generated_wins = item % 2 == 0
            if judge == J2 and item == 2:
                generated_wins = not generated_wins
            winner = ("A" if swapped else "B") if generated_wins else ("B" if swapped else "A")
            if judge == J2 and item == 1 and not swapped:  # one unparsed attempt, then a retry that parsed
                log.append({"judge": judge, "swapped": swapped, "attempt": 1, "verdict": None, "response": "?"})
            log.append({"judge": judge, "swapped": swapped, "attempt": 1, "verdict": {d: winner for d in DIMS},
                        "response": "...", "error": None, "cached": False})
    return log


def write_idea_run(out: Path) -> Path:
    records = [{"id": f"s{k}", "response": "{}", "judge_ids": [J1, J2], "judge_calls": json.dumps(idea_log(k))}
               for k in range(4)]
    report = ScoreReport("sgi_idea", "official", {"final": 0.5}, Coverage(4, 4, 0))
    task = TaskResult("sgibench:idea_generation", 0, {"official": report}, records,
                      {**_provenance("sgibench", [J1, J2]), "idea_judges": [J1, J2]}, "final",
                      analysis={"items": {"ids": IDEA_IDS}})
    return write_run(out, RunInfo("org/m", {}, judge_ids=[J1, J2]), [task])


def test_lacer_panel_numbers(tmp_path):
    path = write_lacer_run(tmp_path / "runs")
    details = json.loads(path.read_text())["sciprobe"]["tasks"]["prescience:contribution_generation|0"]["details"]
    scores = agreement.judge_scores_from_details(tmp_path / "runs" / details)
    assert scores["source"] == "lacer_official"
    assert scores["judges"][J1] == {"c0": 2, "c1": 4, "c2": 6, "c3": 8, "c5": 5}  # the failed item is left out
    assert list(scores["judges"]) == sorted(LACER)  # judges in a stable (sorted) order
    pairs = {frozenset((r["judge_a"], r["judge_b"])): r for r in agreement.agreement_table(scores)}
    assert len(pairs) == 3
    rows = {(a, b): pairs[frozenset((a, b))] for a, b in ((J1, J2), (J1, J3), (J2, J3))}
    assert rows[(J1, J2)]["n"] == 5 and rows[(J1, J2)]["pearson"] == 1.0 and rows[(J1, J2)]["mean_abs_diff"] == 1.0
    a, b = [2, 4, 6, 8, 5], [8, 6, 4, 3, 7]
    assert rows[(J1, J3)]["pearson"] == pytest.approx(stats.pearsonr(a, b)[0], abs=1e-4)
    assert rows[(J1, J3)]["spearman"] == pytest.approx(stats.spearmanr(a, b)[0], abs=1e-4)
    assert rows[(J2, J3)]["n"] == 6
    assert rows[(J2, J3)]["pearson"] == pytest.approx(stats.pearsonr(LACER[J2], LACER[J3])[0], abs=1e-4)
    assert rows[(J2, J3)]["mean_abs_diff"] == pytest.approx(sum(abs(x - y) for x, y in zip(LACER[J2], LACER[J3])) / 6,
                                                            abs=1e-4)
    names, matrix = agreement.agreement_matrix(scores)
    i, j = names.index(J1), names.index(J2)
    assert names == sorted(LACER) and matrix[i][i] == 1.0 and matrix[i][j] == matrix[j][i] == 1.0


def test_sgi_idea_panel_votes(tmp_path):
    path = write_idea_run(tmp_path / "runs")
    store = SQLiteStore(tmp_path / "store")
    (rid,) = import_results_file(store, path, pinned=PINNED["idea"])
    scores = store.get_result(rid).provenance[agreement.PROVENANCE_KEY]  # kept with the stored result
    assert scores["source"] == "sgi_idea_votes"
    assert scores["judges"][J1] == {"s0": 1.0, "s1": 0.0, "s2": 1.0, "s3": 0.0}
    assert scores["judges"][J2] == {"s0": 1.0, "s1": 0.0, "s2": 0.0, "s3": 0.0}
    (row,) = agreement.agreement_table(scores)
    assert row["n"] == 4 and row["n_votes"] == 4 * 2 * len(DIMS)
    assert row["verdict_agreement"] == 0.75  # 3 of 4 items, every vote
    assert row["mean_abs_diff"] == 0.25
    assert row["pearson"] == pytest.approx(stats.pearsonr([1, 0, 1, 0], [1, 0, 0, 0])[0], abs=1e-4)


def test_double_encoded_details_are_read():
    """The all-text fallback of write_details (mixed column types) JSON-encodes every cell once more."""
    records = [{"id": json.dumps(f"c{k}"),
                "lacer_official": json.dumps(json.dumps({J1: LACER[J1][k], J2: LACER[J2][k]}))} for k in range(6)]
    scores = agreement.judge_scores_from_records(records)
    assert scores["judges"][J2] == {f"c{k}": LACER[J2][k] for k in range(6)}


def test_no_panel_no_scores():
    assert agreement.judge_scores_from_records([{"id": "x", "response": "r"}]) is None
    single = [{"id": "x", "lacer_official": json.dumps({J1: 3})}]
    assert agreement.judge_scores_from_records(single) is None  # one judge: nothing to agree with
    fig = agreement.agreement_plot(None)
    assert "no result scored by a panel" in fig.axes[0].texts[0].get_text()


def test_agreement_plot_has_every_cell(tmp_path):
    path = write_lacer_run(tmp_path / "runs")
    store = SQLiteStore(tmp_path / "store")
    (rid,) = import_results_file(store, path, pinned=PINNED["lacer"])
    fig = agreement.agreement_plot(store.get_result(rid).provenance[agreement.PROVENANCE_KEY])
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert len(texts) == 9 and "1.00\nn=5" in texts


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_space_agreement_tab_renders(tmp_path):
    from gradio_client import Client

    from sciprobe.leaderboard.app import Settings, build_app, launch_options

    store = SQLiteStore(tmp_path / "store")
    (lacer_id,) = import_results_file(store, write_lacer_run(tmp_path / "runs"), pinned=PINNED["lacer"])
    demo = build_app(store, Settings(), ["idrbench", "sgibench", "prescience"])
    (idea_id,) = import_results_file(store, write_idea_run(tmp_path / "runs2"),  # stored after start-up
                                     pinned=PINNED["idea"])
    labels = [c.get("props", {}).get("label") for c in demo.config["components"]]
    assert "Judge agreement" in labels and "Pairwise agreement" in labels
    demo.queue()
    port = _free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options())
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        # a refresh (or a page load) offers the result stored after start-up, and keeps a chosen one drawn
        *_, box, plot, table = client.predict(lacer_id, api_name="/refresh")
        assert {rid for _, rid in box["choices"]} == {lacer_id, idea_id} and box["value"] == lacer_id
        assert plot["plot"].startswith("data:image/png;base64,") and len(table["data"]) == 3  # three judges
        *_, box, _, _ = client.predict(None, api_name="/refresh")
        assert box["value"] in {lacer_id, idea_id}  # nothing chosen yet: the first panel result is shown
        plot, table = client.predict(idea_id, api_name="/agreement")
        assert plot["type"] == "matplotlib" and plot["plot"].startswith("data:image/png;base64,")
        assert table["headers"][:4] == ["Judge A", "Judge B", "Items", "Pearson r"]
        (row,) = table["data"]
        assert row[2] == 4 and row[6] == 0.75
        _, empty = client.predict(None, api_name="/agreement")
        assert empty["data"] == []
    finally:
        demo.close()


@pytest.mark.slow
def test_sgi_idea_panel_end_to_end(tmp_path, monkeypatch):
    """``sciprobe evaluate`` with a real two-judge SGI idea panel (loopback stub): judge-a always prefers the
    generated idea, judge-b always votes for Hypothesis A (pure position bias), so they agree on exactly the
    half of the votes where the generated idea is A. The importer reads the details Parquet of the run."""
    from sciprobe.core.registry import get_benchmark
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.data.build import build_benchmark
    from sciprobe.run.evaluation import EvaluationRequest, evaluate
    from sciprobe.leaderboard.importer import import_results_dir
    from sciprobe.testing.stub_server import StubServer

    source = write_synthetic_source(tmp_path / "source", n=3)
    build_benchmark(get_benchmark("sgibench"), source, tmp_path / "built", configs=["idea_generation"])
    idea = {"Idea": "GENERATED: a learned denoiser feeds a robust estimator. " * 6,
            "ImplementationSteps": {"1": "Collect data.", "2": "Train."}, "ImplementationOrder": ["1-2"],
            "Dataset": "Synthetic traces.", "EvaluationMetrics": {"SNR": "signal-to-noise"}, "ExpectedOutcome": "SNR."}

    def reply(body):
        text = body["messages"][-1]["content"]
        if "##Hypothesis A:" not in text:
            return "```json\n" + json.dumps(idea) + "\n```"
        generated_is_a = "GENERATED" in text.split("##Hypothesis A:")[1].split("##Hypothesis B:")[0]
        winner = "A" if body["model"] == "judge-b" or generated_is_a else "B"
        return "\n".join(f"{d.capitalize()}: [Win {winner}] because." for d in DIMS)

    with StubServer(reply=reply) as stub:
        judges = [f"openai/judge-{k},base_url={stub.base_url},api_key=sk-test" for k in "ab"]
        evaluate(EvaluationRequest(tasks=["sgibench:idea_generation"], modes=["official"],
                                   model=f"openai/ideator,base_url={stub.base_url},api_key=sk-test",
                                   data=str(tmp_path / "built"), output_dir=tmp_path / "runs",
                                   per_task={"sgibench:idea_generation": {"judges": judges}}))
    # the leaderboard ranks results on the data it is pinned to: here the 3-item build the run used
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DATA", f"sgibench={tmp_path / 'built'}")
    store = SQLiteStore(tmp_path / "store")
    assert import_results_dir(store, tmp_path / "runs") == 1
    (result,) = store.list_results()
    scores = result.provenance[agreement.PROVENANCE_KEY]
    assert sorted(scores["judges"]) == ["openai/judge-a", "openai/judge-b"]
    assert set(scores["judges"]["openai/judge-a"].values()) == {1.0}
    assert set(scores["judges"]["openai/judge-b"].values()) == {0.5}
    (row,) = agreement.agreement_table(scores)
    assert row["n"] == 3 and row["n_votes"] == 3 * 2 * len(DIMS)
    assert row["verdict_agreement"] == 0.5 and row["mean_abs_diff"] == 0.5
    assert row["pearson"] is None  # constant scores: no correlation, shown as n/a rather than a made-up number
