"""lighteval task cards: derived from the declaration, runnable through lighteval's own CLI offline."""

import json
import os
import subprocess
import sys

import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.testing.stub_server import StubServer

from task_card_support import CARD, load_card



def test_idrbench_card_lists_every_single_call_task():
    card = load_card("idrbench")
    names = sorted(t.name for t in card.TASKS_TABLE)
    declared = sorted(f"idrbench:{t.name}" for t in get_benchmark("idrbench").tasks.values() if t.build_messages)
    assert names == declared and "idrbench:i2r" not in names
    ipi = next(t for t in card.TASKS_TABLE if t.name == "idrbench:ipi")
    assert ipi.hf_subset == "ipi" and ipi.generation_size == 500
    assert "macro_f1" in [m.metric_name for m in ipi.metrics]


def test_prompt_function_matches_the_declaration(tmp_path):
    from sciprobe.benchmarks.idrbench.prompts import ipi_messages
    from sciprobe.data.build import build_benchmark
    from sciprobe.interop.lighteval_tasks import make_prompt_function, render_query
    import datasets

    bench = get_benchmark("idrbench")
    build_benchmark(bench, bench.sample_source, tmp_path / "d", configs=["ipi"])
    rows = datasets.load_dataset(str(tmp_path / "d"), "ipi")
    line = rows["test"][0]
    doc = make_prompt_function(bench.task("ipi_5shot"), str(tmp_path / "d"))(line, "idrbench:ipi_5shot")
    assert doc.query == render_query(ipi_messages(line, rows["fewshot"].to_list()))
    assert doc.specific["gold"] == ("yes" if line["label"] else "no")


@pytest.mark.slow
def test_lighteval_endpoint_litellm_against_the_stub(tmp_path):
    """The real lighteval CLI (through `sciprobe lighteval`), litellm backend, real HTTP to a loopback stub."""
    answers = iter(["Your verdict: Yes\nConfidence score: 80\nSubject: [\"Physics\"]",
                    "Your verdict: No\nConfidence score: 70\nSubject: [\"Physics\"]"] * 50)
    with StubServer(reply=lambda body: next(answers)) as server:
        env = {**os.environ, "OPENAI_API_KEY": "sk-test", "SCIPROBE_HOME": str(tmp_path / "home")}
        proc = subprocess.run(
            [sys.executable, "-m", "sciprobe.cli.commands", "lighteval", "endpoint", "litellm",
             f"model_name=openai/stub-judge,base_url={server.base_url},provider=openai,api_key=sk-test",
             "idrbench:ipi|0", "--custom-tasks", str(CARD),
             "--output-dir", str(tmp_path / "out"), "--max-samples", "6"],
            env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)  # litellm caches in cwd
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert server.count == 6
    results = json.loads(next((tmp_path / "out" / "results").rglob("results_*.json")).read_text())
    scores = results["results"]["idrbench:ipi|0"]
    assert 0.0 <= scores["macro_f1"] <= 1.0
    assert scores["official_parse_failure_rate"] == 0.0


@pytest.mark.slow
def test_lighteval_accelerate_on_the_bundled_model(tmp_path):
    """lighteval's transformers backend on the converted SmolLM2, offline: a score with its coverage."""
    from sciprobe.llm.local import ensure_local_model

    model_dir = ensure_local_model("smollm2")
    args = f"model_name={model_dir},batch_size=2,generation_parameters={{max_new_tokens:24,temperature:0.0}}"
    proc = subprocess.run(
        [sys.executable, "-m", "sciprobe.cli.commands", "lighteval", "accelerate", args, "idrbench:i3_set1|0",
         "--custom-tasks", str(CARD), "--output-dir", str(tmp_path / "out"),
         "--max-samples", "2"],
        env={**os.environ, "SCIPROBE_HOME": str(tmp_path / "home")}, capture_output=True, text=True, timeout=900,
        cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(next((tmp_path / "out" / "results").rglob("results_*.json")).read_text())
    scores = results["results"]["idrbench:i3_set1|0"]
    assert 0.0 <= scores["official_parse_failure_rate"] <= 1.0
    assert 0.0 <= scores["macro_f1_strict"] <= 1.0  # strict mode always scores every item
