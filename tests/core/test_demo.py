"""``sciprobe demo`` (the README's first command runs it): every benchmark's demo tasks run and print one table per
benchmark, SGI-Bench's with its SGI-Score row. The model is a loopback stub here; the idea panel's judge is the
bundled model, as the demo declares, so this is slow."""

from __future__ import annotations

import json

import pytest

from sciprobe.benchmarks import benchmark_names, get_benchmark
from sciprobe.cli import main
from sciprobe.llm.stub_server import StubServer


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
