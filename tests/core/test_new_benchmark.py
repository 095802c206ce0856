"""``sciprobe new-benchmark``: the scaffold works at once from every front door (build, evaluate, score, tasks,
the lighteval card, the leaderboard) and writes nothing outside its own folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sciprobe.cli.commands import main
from sciprobe.testing.stub_server import StubServer

from task_card_support import load_card

REPO = Path(__file__).resolve().parents[2]
NAME = f"toyclaims{os.getpid()}"


def _git_status() -> set[str]:
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout
    return set(out.splitlines())


@pytest.fixture(scope="module")
def scaffold():
    from sciprobe.core import registry as benchmarks
    from sciprobe.cli.scaffold import create_benchmark

    before = _git_status() if (REPO / ".git").exists() else None
    folder = create_benchmark(NAME, "Toy Claims")
    try:
        if before is not None:
            added = _git_status() - before
            assert added and all(line.startswith(f"?? sciprobe/benchmarks/{NAME}/") for line in added), added
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        benchmarks._load.cache_clear()
        for module in [m for m in sys.modules if m.startswith(f"sciprobe.benchmarks.{NAME}")]:
            del sys.modules[module]


def verdict(body: dict) -> str:
    prompt = body["messages"][-1]["content"]
    return "It is about a paper." if prompt.startswith("Summarise") else "Answer: yes"


@pytest.mark.serial  # the scaffold is in the source tree that every other test reads
def test_refuses_a_bad_or_taken_name(scaffold, capsys) -> None:
    assert main(["new-benchmark", "Bad-Name"]) == 2
    assert main(["new-benchmark", NAME]) == 2
    err = capsys.readouterr().err
    assert "lower-case letters" in err and "exists" in err


@pytest.mark.serial  # the scaffold is in the source tree that every other test reads
def test_build_evaluate_score_and_tasks(scaffold, tmp_path, capsys) -> None:
    assert main(["tasks", NAME]) == 0
    listing = capsys.readouterr().out
    assert f"{NAME}:verify " in listing and "two-step" in listing and f"{NAME}:explain " in listing
    assert main(["build", NAME, "--out", str(tmp_path / "data")]) == 0
    with StubServer(reply=verdict) as stub:
        model = f"openai/stub,base_url={stub.base_url},api_key=x"
        assert main(["evaluate", f"{NAME}:verify", f"{NAME}:verify_after_summary", "--model", model, "--data",
                     str(tmp_path / "data"), "--output-dir", str(tmp_path / "out"), "--no-cache"]) == 0
        assert stub.count == 8 + 16  # one call per item, then two per item
    results = json.loads(next((tmp_path / "out" / "results").rglob("results_*.json")).read_text())
    scores = results["results"]
    assert scores[f"{NAME}:verify|0"]["n_items"] == 8 and scores[f"{NAME}:verify|0"]["n_failed"] == 0
    assert scores[f"{NAME}:verify_after_summary|0"]["n_items"] == 8
    # all "yes" on 4 yes / 4 no: F1(yes) 2/3, F1(no) 0
    assert scores[f"{NAME}:verify|0"]["macro_f1"] == pytest.approx(1 / 3)
    predictions = tmp_path / "preds.jsonl"
    rows = [json.loads(line) for line in (scaffold / "sample" / "claims.jsonl").read_text().splitlines()]
    predictions.write_text("".join(json.dumps({"id": r["id"], "prediction": r["label"]}) + "\n" for r in rows))
    assert main(["score", f"{NAME}:verify", "--predictions", str(predictions), "--data", str(tmp_path / "data"),
                 "--output-dir", str(tmp_path / "scored")]) == 0
    assert "1.000" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.serial  # the scaffold is in the source tree that every other test reads
def test_both_tasks_run_on_the_bundled_model(scaffold, tmp_path) -> None:
    assert main(["evaluate", f"{NAME}:verify", f"{NAME}:verify_after_summary", "--model", "local/smollm2",
                 "--limit", "2", "--max-tokens", "16", "--output-dir", str(tmp_path / "out")]) == 0


@pytest.mark.serial  # the scaffold is in the source tree that every other test reads
def test_lighteval_card_and_leaderboard_pick_it_up(scaffold, tmp_path, monkeypatch) -> None:
    card = load_card(NAME)
    assert [t.name for t in card.TASKS_TABLE] == [f"{NAME}:verify"]  # the two-step task needs its runner
    from sciprobe.leaderboard.app import LeaderboardService, Settings, loadable_benchmarks
    from sciprobe.leaderboard.store import SQLiteStore

    assert NAME in loadable_benchmarks()
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DATA", "")
    service = LeaderboardService(SQLiteStore(tmp_path / "store"), Settings.from_env(), [NAME])
    rows = [json.loads(line) for line in (scaffold / "sample" / "claims.jsonl").read_text().splitlines()]
    upload = tmp_path / "preds.jsonl"
    upload.write_text("".join(json.dumps({"id": r["id"], "response": f"Answer: {r['label']}"}) + "\n" for r in rows))
    message, record = service.submit("alice", f"{NAME}:verify", str(upload), "org/toy-model")
    assert record.get("status") == "FINISHED", message
    frame = service.table(NAME)
    assert "verify macro_f1" in frame.columns and frame["verify macro_f1"].tolist() == [1.0]


@pytest.mark.serial  # the scaffold is in the source tree that every other test reads
def test_the_judged_task_grades_with_a_panel_and_reports_each_judge(scaffold, tmp_path) -> None:
    """``explain``: one call per item for the explanation, one per item and judge for the grade; the mean of the
    judges' grades is the score and each judge's grade reaches the agreement view through ``judge_scores``."""
    import pyarrow.parquet as pq

    from sciprobe.leaderboard.agreement import judge_scores_from_records

    assert main(["build", NAME, "--out", str(tmp_path / "data")]) == 0
    explanation = lambda body: "The abstract says so."  # noqa: E731
    with StubServer(reply=explanation) as model_stub, StubServer(reply=lambda body: "Grade: 4") as judge_a, \
            StubServer(reply=lambda body: "no grade" if "sparse attention" in str(body) else "Grade: 2") as judge_b:
        model = f"openai/stub,base_url={model_stub.base_url},api_key=x"
        judges = (f"openai/judge-a,base_url={judge_a.base_url},api_key=x;"
                  f"openai/judge-b,base_url={judge_b.base_url},api_key=x")
        assert main(["evaluate", f"{NAME}:explain", "--model", model, "--judge", judges, "--data",
                     str(tmp_path / "data"), "--output-dir", str(tmp_path / "out"), "--no-cache"]) == 0
        assert (model_stub.count, judge_a.count, judge_b.count) == (8, 8, 8)
    path = next((tmp_path / "out" / "results").rglob("results_*.json"))
    score = json.loads(path.read_text())["results"][f"{NAME}:explain|0"]
    assert score["n_items"] == 8 and score["n_failed"] == 0
    # judge b gives no grade to the first claim (judge a's 4 stands alone), the mean of 4 and 2 to the others
    assert score["mean_grade"] == pytest.approx((4 + 7 * 3) / 8)
    details = next((tmp_path / "out").rglob(f"details_{NAME}:explain*.parquet"))
    table = judge_scores_from_records(pq.read_table(details).to_pylist())
    assert table is not None and table["source"] == "judge_scores" and len(table["judges"]) == 2
    assert sorted(len(items) for items in table["judges"].values()) == [7, 8]


#: the tests that walk every registered benchmark: a new one must pass them with no edit outside its folder
REGISTRY_DRIVEN = ("tests/core/test_registry.py", "tests/core/test_architecture.py",
                   "tests/core/test_lighteval_every_task.py", "tests/core/test_every_task_runs.py",
                   "tests/core/test_published.py", "tests/core/test_cli_index.py",
                   "tests/leaderboard/test_leaderboard_import.py")


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_scaffold_in_a_clean_clone_passes_the_registry_driven_tests(tmp_path) -> None:
    """Issue 24: `sciprobe new-benchmark toybench` in a clean clone, then the tests that walk every registered
    benchmark, with no edit outside ``sciprobe/benchmarks/toybench/`` (a judged task and a two-step task
    included)."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--local", str(REPO), str(clone)], check=True)
    env = {**os.environ, "PYTHONPATH": str(clone), "SCIPROBE_HOME": str(tmp_path / "home")}
    env.pop("SCIPROBE_TEST_PHASE", None)  # the clone's tests run in one go
    run = subprocess.run([sys.executable, "-m", "sciprobe", "new-benchmark", "toybench"], cwd=clone, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    assert status and all(line.startswith("?? sciprobe/benchmarks/toybench/") for line in status), status
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow",
                            *REGISTRY_DRIVEN], cwd=clone, env=env, capture_output=True, text=True, timeout=1700)
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
