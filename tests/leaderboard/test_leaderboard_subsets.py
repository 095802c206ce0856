"""What the tables show of results on part of the data, and how the Space looks on the demo (issues 23.1, 23.10).

A cutoff result is ranked only among results with the same cutoff, after the full-data rows; a ``--limit`` sample is
a row of its own Type, after the ranked rows, never ordered by score; coverage reads against the dataset. The
overview has one row per model; every score is written with its metric's declared precision; the Submit dropdown
lists every task once; the submit API has named parameters; the demo scores each task in the mode the Space ranks.
"""

from __future__ import annotations

import json

import pytest

from sciprobe.leaderboard import tables
from sciprobe.leaderboard.records import ResultRecord

IPI = "idrbench:ipi"


def record(model: str, task: str, value: float, *, cutoff: str | None = None, subset: dict | None = None,
           fingerprint: str = "f" * 64, revision: str | None = None, created: str = "2026-01-01T00:00:00",
           user: str = "alice", headline: str = "macro_f1", mode: str = "strict") -> ResultRecord:
    benchmark = task.partition(":")[0]
    n_items, of = (subset["n"], subset["of"]) if subset else (16, 16)
    provenance = {"benchmark": benchmark, "dataset_fingerprint": fingerprint, "subset": subset,
                  "cutoff": {"cutoff": cutoff, "source": "explicit" if cutoff else "none",
                             "n_items_before": of, "n_items_after": n_items if cutoff else of}}
    report = {headline: value, "coverage": {"n_items": n_items, "n_scored": n_items, "n_failed": 0}}
    return ResultRecord(request_id="r", user=user, model_name=model, task=task, benchmark=benchmark,
                        benchmark_version="1.0.0", dataset_fingerprint=fingerprint, headline=headline,
                        default_mode=mode, scores={mode: report}, provenance=provenance, cutoff=cutoff,
                        dataset_revision=revision, created_time=created)


def test_a_cutoff_result_ranks_only_among_its_cutoff_and_a_sample_never_ranks() -> None:
    results = [
        record("org/full-low", IPI, 0.40),
        record("org/full-high", IPI, 0.60),
        record("org/cutoff-best", IPI, 0.95, cutoff="2024-06-30", subset={"kind": "cutoff", "n": 10, "of": 16}),
        record("org/cutoff-other", IPI, 0.70, cutoff="2024-06-30", subset={"kind": "cutoff", "n": 10, "of": 16}),
        record("org/z-sample", IPI, 0.99, subset={"kind": "limit", "n": 8, "of": 16}),
        record("org/a-sample", IPI, 0.10, subset={"kind": "limit", "n": 8, "of": 16}),
    ]
    frame = tables.leaderboard_frame(results, tables.task_columns(["idrbench"]))
    assert list(frame["Model"]) == ["org/full-high", "org/full-low", "org/cutoff-best", "org/cutoff-other",
                                    "org/a-sample", "org/z-sample"]  # samples by name, never by score
    assert list(frame["Type"]) == ["model"] * 4 + ["sample (not ranked)"] * 2
    assert list(frame["ipi coverage"]) == ["16/16", "16/16", "10/16 (cutoff)", "10/16 (cutoff)", "8/16 (limit)",
                                           "8/16 (limit)"]
    assert "ranked only among results with the same cutoff" in tables.ranking_note(tables.task_columns(["idrbench"]))
    # the bars plot ranked rows first; a sample shows only in room left, labelled
    figure = tables.task_bars(results, tables.task_columns(["idrbench"]), top=5)
    labels = figure.axes[0].get_legend_handles_labels()[1]
    assert labels[:4] == [f"{m} (ffffffff)" for m in ("org/full-high", "org/full-low", "org/cutoff-best",
                                                      "org/cutoff-other")]
    assert labels[4] == "org/a-sample (ffffffff) — --limit sample, not ranked"


def test_the_overview_has_one_row_per_model() -> None:
    """23.10: local/smollm2 was listed four times in the Overview, one row per benchmark it ran."""
    ours = [record("local/smollm2", IPI, 0.5, fingerprint="1" * 64),
            record("local/smollm2", "sgibench:deep_research", 12.345678, fingerprint="2" * 64,
                   headline="exact_match", mode="paper"),
            record("local/smollm2", "scitaste:pure_qa", 40.0, fingerprint="3" * 64, headline="scheme2_score",
                   mode="strict"),
            record("org/other", IPI, 0.7, fingerprint="1" * 64)]
    overview = tables.leaderboard_frame(ours, tables.task_columns(), overview=True)
    assert sorted(overview["Model"]) == ["local/smollm2", "org/other"]
    row = overview[overview["Model"] == "local/smollm2"].iloc[0]
    assert row["Benchmark"] == "idrbench, scitaste, sgibench"
    assert row["Dataset"] == "idrbench 11111111; scitaste 33333333; sgibench 22222222"
    assert row["sgibench:deep_research exact_match"] == 12.35  # a 0-100 metric: 2 decimals
    assert row["Coverage"] == "48/48"
    provenance = tables.row_provenance(ours, row["Row"], "sgibench:deep_research")
    assert provenance["task"] == "sgibench:deep_research"
    assert set(tables.row_provenance(ours, row["Row"])["cells"]) == {IPI, "sgibench:deep_research",
                                                                     "scitaste:pure_qa"}
    # another data revision of one benchmark is another overview row, never a mixed cell
    newer = record("local/smollm2", IPI, 0.25, fingerprint="9" * 64, created="2026-02-01T00:00:00")
    overview = tables.leaderboard_frame([*ours, newer], tables.task_columns(), overview=True)
    rows = overview[overview["Model"] == "local/smollm2"]
    assert len(rows) == 2 and sorted(rows["idrbench:ipi macro_f1"]) == [0.25, 0.5]
    by_ipi = rows.set_index("idrbench:ipi macro_f1")
    assert by_ipi.loc[0.25, "sgibench:deep_research exact_match"] == 12.35  # the newest rows side by side
    assert by_ipi.loc[0.5, "Benchmark"] == "idrbench"  # the older IPI data on a row of its own


def test_every_score_is_shown_with_its_metrics_declared_precision() -> None:
    """23.10: one score column mixed 0, 0.619, 0.3846 and 72.3902."""
    import gradio as gr

    columns = tables.task_columns()
    decimals = {c.score_header(True): c.decimals for c in columns}
    assert decimals["idrbench:ipi macro_f1"] == 3 and decimals["sgibench:deep_research exact_match"] == 2
    results = [record("org/a", IPI, 0.0), record("org/b", IPI, 0.38461538), record("org/c", IPI, 0.619),
               record("org/d", "sgibench:deep_research", 72.39024, headline="exact_match", mode="paper")]
    frame = tables.leaderboard_frame(results, columns, overview=True)
    assert sorted(frame["idrbench:ipi macro_f1"].dropna()) == [0.0, 0.385, 0.619]
    shown = gr.Dataframe(interactive=False).postprocess(tables.display_frame(frame, columns, overview=True))
    headers = list(shown.headers)
    cells = {(row[0], headers[k]): value for row in shown.metadata["display_value"] for k, value in enumerate(row)}
    assert [cells[(m, "idrbench:ipi macro_f1")] for m in ("org/a", "org/b", "org/c")] == ["0.000", "0.385", "0.619"]
    assert cells[("org/d", "sgibench:deep_research exact_match")] == "72.39"
    assert cells[("org/d", "idrbench:ipi macro_f1")] == ""


@pytest.fixture
def service(tmp_path):
    from sciprobe.leaderboard.app import LeaderboardService, Settings
    from sciprobe.leaderboard.store import SQLiteStore

    return LeaderboardService(SQLiteStore(tmp_path / "store"), Settings(), ["idrbench", "prescience", "sgibench"])


def test_the_submit_dropdown_lists_every_task_once(service) -> None:
    """23.10: prescience:contribution_generation and sgibench:deep_research were listed twice (their extra
    columns)."""
    choices = service.task_choices()
    assert len(choices) == len(set(choices))
    assert {"prescience:contribution_generation", "sgibench:deep_research"} <= set(choices)


def test_the_submit_api_names_its_parameters(tmp_path) -> None:
    """23.10: the Gradio API called them param_1..param_7."""
    from sciprobe.leaderboard.app import Settings, build_app
    from sciprobe.leaderboard.store import SQLiteStore

    demo = build_app(SQLiteStore(tmp_path / "store"), Settings(), ["idrbench"])
    parameters = demo.get_api_info()["named_endpoints"]["/submit"]["parameters"]
    assert [p["parameter_name"] for p in parameters] == ["user", "task", "predictions", "model_name", "model_family",
                                                         "model_revision", "knowledge_cutoff", "notes"]


def test_the_demo_scores_each_task_in_the_mode_the_space_ranks(tmp_path, monkeypatch) -> None:
    """23.10: the demo scored SGI-Bench in official mode only, the Space ranks it in paper mode: the bundled
    model's row was blank."""
    from sciprobe.run import evaluation
    from sciprobe.core.registry import resolve_task
    from sciprobe.cli.commands import main

    seen = {}

    def capture(request):
        seen["request"] = request
        raise SystemExit(0)

    monkeypatch.setattr(evaluation, "evaluate", capture)
    with pytest.raises(SystemExit):
        main(["demo", "--output-dir", str(tmp_path)])
    request = seen["request"]
    for ref in request.tasks:
        modes = request.per_task.get(ref, {}).get("modes") or resolve_task(ref)[1].modes
        assert resolve_task(ref)[1].ranked_mode in modes, (ref, modes)
    assert request.per_task["sgibench:deep_research"]["modes"] == ["official", "paper"]
    assert json.dumps(request.per_task)  # plain options, as the declaration gives them
