"""``sciprobe demo`` (the README's first command runs it): every benchmark's demo tasks run and print one table per
benchmark, SGI-Bench's with its SGI-Score row. The model is a loopback stub here; the idea panel's judge is the
bundled model, as the demo declares, so this is slow."""

from __future__ import annotations

import json

import pytest

from sciprobe.core.registry import benchmark_names, get_benchmark
from sciprobe.cli.commands import main
from sciprobe.testing.stub_server import StubServer


@pytest.mark.slow
def test_demo_prints_one_table_per_benchmark(tmp_path, capsys) -> None:
    with StubServer(reply=lambda body: "Answer: yes") as stub:
        code = main(["demo", "--model", f"openai/stub,base_url={stub.base_url},api_key=sk-test",
                     "--output-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out[-2000:]
    for name in benchmark_names():
        if get_benchmark(name).demo:
            assert f"\n{get_benchmark(name).title}\ntask " in "\n" + out
    assert "sgibench:sgi_score" in out and "95% CI" in out
    results = json.loads(next((tmp_path / "results").rglob("results_*.json")).read_text())
    assert {key.split("|")[0] for key in results["sciprobe"]["tasks"]} >= {
        f"{b}:{t}" for b in benchmark_names() for t in get_benchmark(b).demo if t != "dry_experiment"}

    # what `sciprobe leaderboard` then shows (issue 23.10): the model once in the overview, a number in the mode
    # each tab ranks by on every benchmark tab, labelled as --limit samples of the bundled data
    from sciprobe.leaderboard import tables
    from sciprobe.leaderboard.importer import import_results_dir
    from sciprobe.leaderboard.store import SQLiteStore

    store = SQLiteStore(tmp_path / "store")
    assert import_results_dir(store, tmp_path) == len(results["sciprobe"]["tasks"])
    overview = tables.leaderboard_frame(store.list_results(), tables.task_columns(), overview=True)
    assert list(overview["Model"]) == ["openai/stub"] and list(overview["Type"]) == [tables.SAMPLE_TYPE]
    for name in benchmark_names():
        if not get_benchmark(name).demo:
            continue
        columns = tables.task_columns([name])
        frame = tables.leaderboard_frame(store.list_results(), columns)
        first = next(c for c in columns if c.ref.partition(":")[2] in get_benchmark(name).demo)
        assert frame[first.score_header(False)].notna().all(), (name, frame.to_dict("records"))
        assert all(cell.endswith("(limit)") for cell in frame[first.coverage_header()])
