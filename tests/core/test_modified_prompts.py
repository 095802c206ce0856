"""Issue 22 item 6: an upstream template whose sha256 differs from the pin. It is refused in one line before any
model call; with ``--allow-modified-prompts`` it runs, says so on stderr, and the result is labelled
``upstream-modified`` in the results, the summary, the model-index / eval-results export and the leaderboard, where
it is never ranked with the ``upstream`` or ``sciprobe`` prompt sets. The templates are the stand-ins of
``tests/cases/upstream/`` (our own text), made the pin where a test needs the pinned upstream set."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.cli.commands import main
from sciprobe.testing.stub_server import StubServer
from sciprobe.data.task_data import load_task_data

from upstream_support import STAND_INS, pin_stand_ins

IDR = get_benchmark("idrbench")


def NO(body: dict) -> str:  # noqa: N802 - a reply, named for what it says
    return "Your verdict: No\nConfidence score: 70\nSubject: []"


def _results(out: Path) -> tuple[Path, dict]:
    [path] = sorted((out / "results").rglob("results_*.json"))
    return path, json.loads(path.read_text())


def _gold_reply() -> Callable[[dict], str]:
    """Answers every IPI item correctly (the title in the prompt names the item): the best possible score."""
    rows = load_task_data(IDR, IDR.task("ipi"), None, sample_options={"normalize_whitespace": False}).rows
    labels = {r["title"]: r["label"] for r in rows}

    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        label = next(v for title, v in labels.items() if title in prompt)
        return f"Your verdict: {'Yes' if label else 'No'}\nConfidence score: 90\nSubject: []"

    return reply


def _evaluate(out: Path, reply, *extra: str, tasks: tuple[str, ...] = ("idrbench:ipi",)) -> tuple[int, list]:
    with StubServer(reply=reply) as stub:
        model = f"openai/stub-model,base_url={stub.base_url},api_key=sk-test"
        code = main(["evaluate", *tasks, "--model", model, "--output-dir", str(out), "--no-cache", *extra])
        return code, stub.requests


def test_a_modified_template_is_refused_in_one_line_before_any_model_call(tmp_path: Path, capsys,
                                                                          monkeypatch) -> None:
    upstream = ["--prompts", "upstream", "--upstream-dir", str(STAND_INS / "idrbench")]
    code, sent = _evaluate(tmp_path / "a", NO, *upstream)
    err = capsys.readouterr().err
    assert code == 2 and sent == [] and not (tmp_path / "a").exists()
    assert err.startswith("error: upstream prompt file ") and err.count("\n") == 1
    assert "differs from project-ai4science/irllm-framework@aa621e4" in err and "--allow-modified-prompts" in err
    assert main(["evaluate", "idrbench:ipi", "--model", "local/smollm2", "--dry-run", *upstream]) == 2
    assert "--allow-modified-prompts" in capsys.readouterr().err
    # a later task's modified template stops the run before the first task's calls: one folder, DIR/<bench>/<path>
    pin_stand_ins(monkeypatch, "idrbench")
    code, sent = _evaluate(tmp_path / "b", NO, "--prompts", "upstream", "--upstream-dir", str(STAND_INS),
                           tasks=("idrbench:ipi", "sgibench:deep_research"))
    err = capsys.readouterr().err
    assert code == 2 and sent == [] and not (tmp_path / "b").exists()
    assert "step_1_get_answer.py differs from InternScience/SGI-Bench@8268d43" in err and err.count("\n") == 1


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """idrbench:ipi with each prompt set; the modified run answers every item right, the others none."""
    out = tmp_path_factory.mktemp("prompt-sets")
    upstream = ["--prompts", "upstream", "--upstream-dir", str(STAND_INS / "idrbench")]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SCIPROBE_HOME", str(out / "home"))
        assert _evaluate(out / "modified", _gold_reply(), *upstream, "--allow-modified-prompts")[0] == 0
        assert _evaluate(out / "sciprobe", NO)[0] == 0
        pin_stand_ins(patch, "idrbench")
        assert _evaluate(out / "upstream", NO, *upstream)[0] == 0
    return {"out": out}


def test_allowed_modified_templates_are_labelled_in_results_summary_and_stderr(tmp_path: Path, capsys) -> None:
    upstream = ["--prompts", "upstream", "--upstream-dir", str(STAND_INS / "idrbench")]
    code, sent = _evaluate(tmp_path, NO, *upstream, "--allow-modified-prompts")
    captured = capsys.readouterr()
    assert code == 0 and len(sent) == 16
    assert captured.err.startswith("warning: upstream prompt file utils.py differs from "
                                   "project-ai4science/irllm-framework@aa621e4")
    assert "idrbench:ipi|0 (MODIFIED upstream prompts)" in captured.out
    _, results = _results(tmp_path)
    prov = results["sciprobe"]["tasks"]["idrbench:ipi|0"]["provenance"]
    assert prov["prompt_set"] == "upstream-modified"
    assert prov["prompt_version"] == "upstream-modified:project-ai4science/irllm-framework@aa621e4"
    assert prov["upstream_prompts"]["files"]["utils.py"]["matches_pin"] is False
    assert "differs from" in prov["prompt_warnings"][0]


def test_modified_prompts_export_under_their_own_name(runs: dict) -> None:
    from sciprobe.results.export import export_results

    path, _ = _results(runs["out"] / "modified")
    card = path.with_name(path.stem + ".model-index.yaml").read_text()
    assert "IDRBench ipi (MODIFIED upstream prompts)" in card and "ipi (upstream prompts)" not in card
    notes = export_results(path, fmt="eval-results", dataset_ids=["idrbench=org/idrbench"])
    assert "MODIFIED upstream prompts" in notes
    pinned, _ = _results(runs["out"] / "upstream")
    assert "IDRBench ipi (upstream prompts)" in export_results(pinned)


def test_the_leaderboard_ranks_each_prompt_set_on_its_own(runs: dict, tmp_path: Path) -> None:
    from sciprobe.leaderboard import tables
    from sciprobe.leaderboard.importer import import_results_dir
    from sciprobe.leaderboard.store import SQLiteStore

    store = SQLiteStore(tmp_path / "store")
    assert import_results_dir(store, runs["out"]) == 3
    results = store.list_results("idrbench")
    assert sorted(r.prompt_set for r in results) == ["sciprobe", "upstream", "upstream-modified"]
    assert len(tables.group_rows(results)) == 3  # three rows, never merged
    columns = tables.task_columns(["idrbench"])
    frame = tables.leaderboard_frame(results, columns)
    # the modified run has the best score and is still listed after the upstream and sciprobe rows
    assert list(frame["Prompts"]) == ["sciprobe", "upstream", "upstream-modified"]
    score = next(c.score_header(False) for c in columns if c.ref == "idrbench:ipi")
    assert frame[score].iloc[2] > max(frame[score].iloc[0], frame[score].iloc[1])
    labels = [tables.row_label(cells) for cells in tables.group_rows(results).values()]
    assert sum("upstream-modified prompts" in label for label in labels) == 1


def test_an_older_results_file_that_says_upstream_for_a_modified_template_is_modified(runs: dict,
                                                                                       tmp_path: Path) -> None:
    """Before the label existed a modified run recorded ``prompt_set: upstream`` with ``matches_pin: false``."""
    from sciprobe.results.export import export_results
    from sciprobe.leaderboard.importer import import_results_dir
    from sciprobe.leaderboard.store import SQLiteStore

    path, data = _results(runs["out"] / "modified")
    data["sciprobe"]["tasks"]["idrbench:ipi|0"]["provenance"]["prompt_set"] = "upstream"
    older = tmp_path / "older" / "results" / "stub-model" / path.name
    older.parent.mkdir(parents=True)
    older.write_text(json.dumps(data))
    assert "IDRBench ipi (MODIFIED upstream prompts)" in export_results(older)
    store = SQLiteStore(tmp_path / "store")
    assert import_results_dir(store, tmp_path / "older") == 1
    assert [r.prompt_set for r in store.list_results("idrbench")] == ["upstream-modified"]
