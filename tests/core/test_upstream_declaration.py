"""Each benchmark declares its pinned upstream commit once (``Benchmark.upstream``); the dataset card and every
metric card show it (issue 12, "Newer upstream")."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from sciprobe.core.registry import benchmark_names, get_benchmark
from sciprobe.data.cards import dataset_card_body, upstream_section

from golden import REPO


def _report() -> SimpleNamespace:
    return SimpleNamespace(cutoff={}, rows={"c": {"test": 1}}, sciprobe_version="x", source="s",
                           source_fingerprint="0" * 64, version="1", options={}, skipped=[])


@pytest.mark.parametrize("name", benchmark_names())
def test_dataset_card_states_the_pinned_upstream(name: str) -> None:
    benchmark = get_benchmark(name)
    body = dataset_card_body(benchmark, _report())
    assert "## Upstream\n\n" + upstream_section(benchmark) in body
    if benchmark.upstream is None:
        assert "No public upstream code" in body
        return
    upstream = benchmark.upstream
    assert re.fullmatch(r"[0-9a-f]{40}", upstream.commit) and upstream.commit in body
    assert all(re.fullmatch(r"[0-9a-f]{64}", sha) for sha in upstream.prompt_files.values())
    assert all(f"`{path}`" in body for path in upstream.prompt_files)
    judged = upstream.judge_files.items()
    assert all(re.fullmatch(r"[0-9a-f]{64}", sha) and f"`{path}`" in body for path, sha in judged)
    assert f"sciprobe import-upstream {name}" in body


def test_the_pins_are_the_commits_official_mode_reproduces() -> None:
    pins = {name: get_benchmark(name).upstream for name in benchmark_names()}
    assert pins["idrbench"].label == "project-ai4science/irllm-framework@aa621e4"
    assert pins["sgibench"].label == "InternScience/SGI-Bench@8268d43"
    assert pins["prescience"].label == "allenai/prescience@47384ed"
    assert pins["scitaste"] is None
    assert "5d562f6" in pins["sgibench"].note  # the later commit the deep-research llm_judge follows
    # the LACER judge's template and system message (lacer_score.py's SYSTEM_PROMPT) are upstream's judge files
    assert {p.rsplit("/", 1)[-1] for p in pins["prescience"].judge_files} == {
        "lacer_scoring_prompt_percentile50.110.txt", "lacer_score.py"}


@pytest.mark.parametrize("folder", sorted(p.name for p in (REPO / "metrics").iterdir() if p.is_dir()))
def test_every_metric_card_names_its_benchmarks_pinned_commit(folder: str) -> None:
    module = (REPO / "metrics" / folder / f"{folder}.py").read_text()
    benchmark = get_benchmark(re.search(r'metric_info\("(\w+)"', module)[1])
    card = (REPO / "metrics" / folder / "README.md").read_text()
    line = next(line for line in card.splitlines() if line.startswith("**Pinned upstream:**"))
    if benchmark.upstream is None:
        assert "none" in line
    else:
        assert benchmark.upstream.commit in line and benchmark.upstream.url in line


def test_metric_info_lists_the_pinned_tree() -> None:
    pytest.importorskip("evaluate")
    from sciprobe.interop.metric_module import metric_info

    info = metric_info("sgibench", "d", "i", None)
    assert get_benchmark("sgibench").upstream.url in info.codebase_urls
