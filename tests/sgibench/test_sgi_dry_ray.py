"""SGI-Bench dry experiments with ``--executor ray://...`` on a real loopback Ray cluster (the session's
``ray_cluster``: a head and a worker node) give what a local run gives: the same records in the same order, the
same scores, the same cache keys; only the measured run times differ. Data generation runs on the cluster too
(its files come back to this machine's cache). Skips when Ray is not installed."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.cli.commands import main
from sciprobe.testing.stub_server import StubServer
from sciprobe.sandbox.runner import sandbox_available

SGI = get_benchmark("sgibench")
pytestmark = [pytest.mark.skipif(not sandbox_available()[0], reason="bubblewrap sandbox not available here"),
              pytest.mark.ray_cluster]

CORRECT = "<answer>\ndef scale(values, factor):\n    return [v * factor for v in values]\n</answer>"
OFF_BY_ONE = "<answer>\ndef scale(values, factor):\n    return [v * factor + 1 for v in values]\n</answer>"
CRASH = "<answer>\ndef scale(values, factor):\n    return values.nope\n</answer>"
TASK = "sgibench:dry_experiment"


@pytest.fixture(scope="module")
def sgi_data(tmp_path_factory) -> Path:
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.data.build import build_benchmark

    root = tmp_path_factory.mktemp("sgi-ray")
    build_benchmark(SGI, write_synthetic_source(root / "source", n=3), root / "built", configs=["dry_experiment"])
    return root / "built"


def _without_timings(records: list[dict]) -> list[dict]:
    """Records with the measured wall time of each sandboxed run taken out (everything else must match)."""
    out = []
    for record in records:
        record = dict(record)
        for key in ("runs", "runs_paper"):
            if record.get(key):
                record[key] = [{k: v for k, v in run.items() if k != "wall_time"} for run in record[key]]
        out.append(record)
    return out


def _outcomes(scores: dict) -> dict:
    """Scores without the average execution time (a measurement: ``aet``, ``aet:paper``, per item ``aet``)."""
    out = {k: v for k, v in scores.items() if k.split(":")[0] != "aet"}
    if "per_item" in out:
        out["per_item"] = [{k: v for k, v in item.items() if k != "aet"} for item in out["per_item"]]
    return out


def _results(out: Path) -> dict:
    return json.loads(max((out / "results").rglob("results_*.json")).read_text())


def test_evaluate_with_executor_ray_matches_a_local_run(ray_cluster, sgi_data: Path, tmp_path: Path,
                                                       monkeypatch) -> None:
    runs = {}
    with StubServer(reply=lambda body: CORRECT) as stub:
        model = f"openai/coder,base_url={stub.base_url},api_key=sk-test"
        for executor in ("local", ray_cluster.address):
            label = "local" if executor == "local" else "ray"
            monkeypatch.setenv("SCIPROBE_HOME", str(tmp_path / f"home-{label}"))  # own cache and generated data
            assert main(["evaluate", TASK, "--model", model, "--data", str(sgi_data), "--executor", executor,
                         "--output-dir", str(tmp_path / label)]) == 0
            results = _results(tmp_path / label)
            task = results["sciprobe"]["tasks"][f"{TASK}|0"]
            runs[label] = (results["results"][f"{TASK}|0"], task["provenance"],
                           pq.read_table(tmp_path / label / task["details"]).to_pylist())
        assert stub.count == 2  # one model call per run (three identical prompts): each home starts empty
    (local_scores, local_prov, local_records), (ray_scores, ray_prov, ray_records) = runs["local"], runs["ray"]
    assert _outcomes(ray_scores) == _outcomes(local_scores) and ray_scores["passall_at_5"] == 100.0
    assert _without_timings(ray_records) == _without_timings(local_records)
    assert [r["request_hash"] for r in ray_records] == [r["request_hash"] for r in local_records]
    assert all(json.loads(r["data_generation"])[0]["ok"] for r in ray_records)  # generated on the cluster
    assert ray_prov["executor"] == ray_cluster.address and local_prov["executor"] == "local"
    assert ray_prov["sandboxed"] is True and ray_prov["n_runs"] == local_prov["n_runs"] == 15
    assert "on all 1 node(s)" in ray_prov["sandbox"]


def test_mixed_outcomes_come_back_in_order(ray_cluster, sgi_data: Path) -> None:
    import datasets

    from sciprobe.benchmarks.sgibench import prompts, score_dry
    from sciprobe.benchmarks.sgibench.dry_runner import run_sgi_dry
    from sciprobe.core.executors import get_executor
    from sciprobe.llm.client import LLMClient

    rows = datasets.load_dataset(str(sgi_data), "dry_experiment", split="test").to_list()
    rows = [{**r, "question": f"[item {k}]\n{r['question']}"} for k, r in enumerate(rows)]
    answers = {"[item 0]": OFF_BY_ONE, "[item 1]": CRASH, "[item 2]": CORRECT}

    def reply(body: dict) -> str:
        text = body["messages"][-1]["content"]
        return next(answer for marker, answer in answers.items() if marker in text)

    with StubServer(reply=reply) as stub:
        client = LLMClient(f"openai/coder,base_url={stub.base_url},api_key=sk-test")
        outcomes = {}
        for name in ("local", ray_cluster.address):
            records, _, _, _ = run_sgi_dry(rows, client, {}, build_messages=prompts.dry_messages,
                                           modes=("official", "paper"), executor=get_executor(name))
            outcomes[name] = records
    local, remote = outcomes["local"], outcomes[ray_cluster.address]
    assert _without_timings(remote) == _without_timings(local)
    assert [_outcomes(score_dry(remote, m).values) for m in ("official", "paper")] == \
        [_outcomes(score_dry(local, m).values) for m in ("official", "paper")]
    assert [r["runs"][0]["returncode"] for r in remote] == [0, 1, 0]
    assert "AttributeError" in remote[1]["runs"][0]["stderr"]
    assert score_dry(remote, "official").values["passall_at_5"] == pytest.approx(100 / 3)
