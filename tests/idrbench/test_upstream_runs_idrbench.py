"""Reproducing and importing upstream IDRBench runs (issue 12): ``--prompts upstream`` sends irllm-framework's
templates (here our own stand-in ``utils.py`` in upstream's format), results record the prompt set and the
leaderboard never ranks the two sets together; ``sciprobe import-upstream idrbench`` scores irllm-framework's
output files (stand-ins written for these tests); stored I2R comparisons replay through ``sciprobe score``."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.cli.commands import main
from sciprobe.testing.stub_server import StubServer
from sciprobe.data.task_data import load_task_data
from sciprobe.run.upstream import python_constants

from golden import CASES_DIR
from upstream_support import pin_stand_ins

CASES = CASES_DIR
UPSTREAM_DIR = CASES / "upstream" / "idrbench"
LOGS = CASES / "upstream_logs" / "idrbench"
IDR = get_benchmark("idrbench")
TEMPLATES = python_constants((UPSTREAM_DIR / "utils.py").read_text())


def reply(body: dict) -> str:
    prompt = body["messages"][-1]["content"]
    if "Your choice:" in prompt:  # prefer the alphabetically later paper: not the default order
        return "Your choice: Paper 2\nConfidence score: 60"
    if "Your reason:" in prompt:
        return "Your verdict: No\nYour reason: Unrelated.\nConfidence score: 70"
    return 'Your verdict: Yes\nConfidence score: 80\nSubject: ["Physics"]'


def _results(out: Path) -> dict:
    return json.loads(max((out / "results").rglob("results_*.json")).read_text())


def _rows(task: str) -> list[dict]:
    return load_task_data(IDR, IDR.task(task), None).rows


def _release_rows(task: str) -> list[dict]:
    """The bundled sample as ``--prompts upstream`` loads it: built with the release text (no normalisation)."""
    return load_task_data(IDR, IDR.task(task), None, sample_options=dict(IDR.upstream.release_text_options)).rows


def _side(papers: list[dict]) -> str:
    return "\n".join(f"Title: {p['title']}; Abstract: {p['abstract']}" for p in papers)


@pytest.fixture(scope="module")
def module_home(tmp_path_factory):
    """The session's private SCIPROBE_HOME for module-scoped fixtures (the autouse one is per test)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SCIPROBE_HOME", str(tmp_path_factory.getbasetemp() / "sciprobe-home"))
        yield


@pytest.fixture(scope="module")
def runs(tmp_path_factory, module_home) -> dict:
    """The same stub model with each prompt set, and what it was sent."""
    out = tmp_path_factory.mktemp("idr-prompts")
    sent = {}
    tasks = ["idrbench:ipi", "idrbench:ipi_5shot", "idrbench:i3_set1", "idrbench:i3_set2_3shot", "idrbench:i2r"]
    upstream = ["--prompts", "upstream", "--upstream-dir", str(UPSTREAM_DIR)]
    with pytest.MonkeyPatch.context() as patch:
        pin_stand_ins(patch, "idrbench")  # the upstream set as pinned (modified templates: test_modified_prompts)
        for name, extra in (("sciprobe", []), ("upstream", upstream)):
            with StubServer(reply=reply) as stub:
                model = f"openai/stub-model,base_url={stub.base_url},api_key=sk-test"
                assert main(["evaluate", *tasks, "--model", model, "--output-dir", str(out / name), *extra]) == 0
                sent[name] = [r["messages"] for r in stub.requests]
    return {"out": out, "sent": sent}


def test_upstream_prompts_are_upstreams_templates_filled_as_upstream_fills_them(runs: dict) -> None:
    sent = runs["sent"]["upstream"]
    system = {"role": "system", "content": TEMPLATES["sys_prompt_critical"]}
    expected = [[system, {"role": "user", "content": TEMPLATES["prompt_exp_1"] % (r["title"], r["abstract"])}]
                for r in _release_rows("ipi")]
    expected += [[system, {"role": "user", "content": TEMPLATES["prompt_exp_1_fewshot"] % (r["title"], r["abstract"])}]
                 for r in _release_rows("ipi_5shot")]
    expected += [[system, {"role": "user", "content": TEMPLATES["prompt_exp_2"] % (_side(r["side_b"]),
                                                                                   _side(r["side_c"]))}]
                 for r in _release_rows("i3_set1")]
    expected += [[system, {"role": "user", "content": TEMPLATES["prompt_exp_2_fewshot"] % (_side(r["side_b"]),
                                                                                           _side(r["side_c"]))}]
                 for r in _release_rows("i3_set2_3shot")]
    for messages in expected:
        assert messages in sent
    comparisons = [m for m in sent if m[1]["content"].startswith("\nTEST-I2R")]
    seeds = {r["seed"]["title"] for r in _release_rows("i2r")}
    assert comparisons and all(m[0] == system for m in comparisons)
    assert all(m[1]["content"].split("Main paper title: ")[1].split(";\n")[0] in seeds for m in comparisons)
    assert not any("TEST-" in m[-1]["content"] for m in runs["sent"]["sciprobe"])  # the default set is ours


def test_results_record_the_prompt_set_and_where_the_templates_came_from(runs: dict) -> None:
    upstream = _results(runs["out"] / "upstream")["sciprobe"]["tasks"]
    ours = _results(runs["out"] / "sciprobe")["sciprobe"]["tasks"]
    for key, task in upstream.items():
        prov = task["provenance"]
        assert prov["prompt_set"] == "upstream", key
        assert prov["prompt_version"] == f"upstream:{IDR.upstream.label}"
        files = prov["upstream_prompts"]["files"]
        assert prov["upstream_prompts"]["commit"] == IDR.upstream.commit
        assert files["utils.py"]["source"].endswith("upstream/idrbench/utils.py")
        assert files["utils.py"]["matches_pin"] is True and "prompt_warnings" not in prov
        # the bundled sample was built with the release text, as upstream sends it
        assert prov["upstream_prompts"]["release_text"] == {"reader_options": {"normalize_whitespace": False},
                                                            "as_released": True}
        assert prov["prompt_hash"] != ours[key]["provenance"]["prompt_hash"]
    assert all(t["provenance"]["prompt_set"] == "sciprobe" and "upstream_prompts" not in t["provenance"]
               for t in ours.values())


def test_the_leaderboard_never_ranks_the_two_prompt_sets_together(runs: dict, tmp_path: Path) -> None:
    from sciprobe.leaderboard import tables
    from sciprobe.leaderboard.importer import import_results_dir
    from sciprobe.leaderboard.store import SQLiteStore

    store = SQLiteStore(tmp_path / "store")
    import_results_dir(store, runs["out"])
    results = store.list_results("idrbench")
    by_set = {(r.task, r.prompt_set) for r in results}
    assert ("idrbench:ipi", "upstream") in by_set and ("idrbench:ipi", "sciprobe") in by_set
    rows = tables.group_rows(results)
    assert len(rows) == 2  # one row per prompt set, never merged
    frame = tables.leaderboard_frame(results, tables.task_columns(["idrbench"]))
    assert list(frame["Prompts"]) == ["sciprobe", "upstream"]  # grouped: each set ranked on its own
    labels = [tables.row_label(cells) for cells in rows.values()]
    assert sum("upstream prompts" in label for label in labels) == 1


def test_stored_i2r_comparisons_replay_through_score(runs: dict, tmp_path: Path) -> None:
    out = runs["out"] / "sciprobe"
    results = _results(out)
    matches: dict[str, list] = {}
    for key in ("idrbench:i2r|0", "idrbench:i2r:corrected|0"):
        for row in pq.read_table(out / results["sciprobe"]["tasks"][key]["details"]).to_pylist():
            matches.setdefault(row["id"], []).extend(json.loads(row["matches"]))
    predictions = tmp_path / "comparisons.jsonl"
    predictions.write_text("".join(json.dumps({"id": i, "comparisons": m}) + "\n" for i, m in matches.items()))
    assert main(["score", "idrbench:i2r", "--predictions", str(predictions), "--output-dir", str(tmp_path / "s")]) == 0
    replayed = _results(tmp_path / "s")["results"]["idrbench:i2r|0"]
    played = results["results"]
    assert replayed["mrr"] == played["idrbench:i2r|0"]["mrr"]
    assert replayed["mrr:corrected"] == played["idrbench:i2r:corrected|0"]["mrr"]
    assert replayed["n_failed"] == 0
    # a pairing without a stored reply leaves that instance unscored, with the reason
    first = next(iter(matches))
    pair = next((m["paper_1"], m["paper_2"]) for m in matches[first] if m["round"] == 3)
    cut = {i: ([c for c in m if (c["paper_1"], c["paper_2"]) != pair] if i == first else m)
           for i, m in matches.items()}
    predictions.write_text("".join(json.dumps({"id": i, "comparisons": m}) + "\n" for i, m in cut.items()))
    assert main(["score", "idrbench:i2r", "--predictions", str(predictions), "--output-dir", str(tmp_path / "t")]) == 0
    task = _results(tmp_path / "t")["sciprobe"]["tasks"]["idrbench:i2r|0"]
    assert task["scores"]["official"]["coverage"]["n_failed"] == 1
    details = pq.read_table(tmp_path / "t" / task["details"]).to_pylist()
    (broken,) = [d for d in details if d["error"]]
    assert broken["id"] == first and "no stored reply" in broken["error"]


def test_a_malformed_comparisons_line_is_one_line_error(tmp_path: Path, capsys) -> None:
    row_id = _rows("i2r")[0]["id"]
    predictions = tmp_path / "bad.jsonl"
    predictions.write_text(json.dumps({"id": row_id, "comparisons": [{"paper_1": "a"}]}) + "\n")
    assert main(["score", "idrbench:i2r", "--predictions", str(predictions), "--output-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "comparisons[0] must be" in err and err.count("\n") == 1
    assert not (tmp_path / "results").exists()


# ---------------------------------------------------------------- import-upstream


@pytest.fixture(scope="module")
def imported(tmp_path_factory, module_home) -> dict:
    out = tmp_path_factory.mktemp("idr-import")
    assert main(["import-upstream", "idrbench", "--logs", str(LOGS), "--output-dir", str(out)]) == 0
    return {"out": out, "results": _results(out)}


def _logged(name: str) -> list[dict]:
    return json.loads((LOGS / name).read_text())


def test_import_scores_every_task_found_in_every_mode(imported: dict) -> None:
    results = imported["results"]
    assert set(results["results"]) == {"idrbench:ipi|0", "idrbench:i3_set1_3shot|3", "idrbench:i3_set2|0",
                                       "idrbench:i2r|0"}
    assert results["config_general"]["model_name"] == "stub-model"
    for key, task in results["sciprobe"]["tasks"].items():
        assert set(task["scores"]) == set(IDR.task(key.split(":")[1].split("|")[0]).modes)
        prov = task["provenance"]
        assert prov["prompt_set"] == "upstream" and prov["upstream"]["commit"] == IDR.upstream.commit
        assert all(len(f["sha256"]) == 64 for f in prov["upstream_files"])
        assert sorted(prov["upstream_files_skipped"]) == ["exp_1_stub-model_budget_critical.json",
                                                          "exp_4_1_stub-model_critical.json"]


def test_import_official_equals_upstreams_own_evaluation_of_the_file(imported: dict) -> None:
    """Upstream's ``evaluate_file`` is scikit-learn over the file's y_true / y_pred: compute it here directly."""
    from sklearn.metrics import f1_score

    for name, key in (("exp_1_stub-model_critical.json", "idrbench:ipi|0"),
                      ("exp_2_1_stub-model_critical_fewshot.json", "idrbench:i3_set1_3shot|3"),
                      ("exp_2_3_stub-model_critical.json", "idrbench:i3_set2|0")):
        logged = _logged(name)
        expected = f1_score([x["y_true"] for x in logged], [x["y_pred"] for x in logged], average="macro")
        scores = imported["results"]["sciprobe"]["tasks"][key]["scores"]
        assert scores["official"]["macro_f1"] == expected, key
        assert scores["official"]["size"] == len(logged)
    ipi = imported["results"]["sciprobe"]["tasks"]["idrbench:ipi|0"]["scores"]
    # ten sample items are not in the file (upstream keeps only readable replies): strict counts them wrong
    assert ipi["strict"]["coverage"] == {"n_items": 16, "n_scored": 16, "n_failed": 10, "failure_rate": 0.625}
    assert any("not in the upstream file" in n for n in ipi["official"]["notes"])


def test_import_i2r_scores_upstreams_standings(imported: dict) -> None:
    ranks = []
    for item in _logged("part_1_exp_3_1_stub-model_critical.json"):
        titles = [p["title"] for p in item["y_pred"]]
        ranks.append(1 / (1 + min(titles.index(t) for t in item["y_true"]["title"])))
    scores = imported["results"]["sciprobe"]["tasks"]["idrbench:i2r|0"]["scores"]
    assert scores["official"]["mrr"] == sum(ranks) / len(ranks) and scores["official"]["coverage"]["n_items"] == 2
    assert scores["corrected"]["mrr"] is not None
    assert any("not run" in n for n in scores["official"]["notes"])


def test_imported_results_export_and_reach_the_leaderboard(imported: dict, tmp_path: Path) -> None:
    from sciprobe.results.export import export_results
    from sciprobe.leaderboard.importer import import_results_dir
    from sciprobe.leaderboard.store import SQLiteStore

    path = max((imported["out"] / "results").rglob("results_*.json"))
    card = export_results(path)
    assert "IDRBench i2r (upstream prompts)" in card and "IDRBench ipi (upstream prompts)" in card
    assert "upstream prompts" in export_results(path, fmt="eval-results", dataset_ids=["idrbench=org/idrbench"])
    store = SQLiteStore(tmp_path / "store")
    warnings: list[str] = []
    assert import_results_dir(store, imported["out"], warn=warnings.append) == 3
    assert {r.prompt_set for r in store.list_results("idrbench")} == {"upstream"}
    # the upstream run ran I2R on 2 of the 3 instances: checked against the pinned data, never ranked (issue 22.5)
    assert "idrbench:i2r" not in {r.task for r in store.list_results("idrbench")}
    assert len(warnings) == 1 and all("it covers 2 of the 3 items of this leaderboard's data" in w
                                      for w in warnings), warnings


def test_import_refuses_logs_of_another_release(tmp_path: Path, capsys) -> None:
    logs = tmp_path / "output"
    logs.mkdir()
    (logs / "exp_1_m_critical.json").write_text(json.dumps([{"id": "9999.99999", "y_true": True, "y_pred": True}]))
    assert main(["import-upstream", "idrbench", "--logs", str(logs), "--output-dir", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "not in the dataset (first: '9999.99999')" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_import_refuses_two_models_and_empty_folders(tmp_path: Path, capsys) -> None:
    logs = tmp_path / "output"
    logs.mkdir()
    for model in ("a", "b"):
        (logs / f"exp_1_{model}_critical.json").write_text((LOGS / "exp_1_stub-model_critical.json").read_text())
    assert main(["import-upstream", "idrbench", "--logs", str(logs), "--output-dir", str(tmp_path / "o")]) == 2
    assert "several models" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["import-upstream", "idrbench", "--logs", str(empty), "--output-dir", str(tmp_path / "o")]) == 2
    assert "no upstream output file of idrbench" in capsys.readouterr().err
    assert main(["import-upstream", "scitaste", "--logs", str(empty), "--output-dir", str(tmp_path / "o")]) == 2
    assert "no public upstream code" in capsys.readouterr().err


def test_score_records_the_prompt_set_the_predictions_were_made_with(tmp_path: Path, capsys) -> None:
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text("".join(json.dumps({"id": r["id"], "prediction": "yes"}) + "\n" for r in _rows("ipi")))
    assert main(["score", "idrbench:ipi", "--predictions", str(predictions), "--prompts", "upstream",
                 "--output-dir", str(tmp_path / "a")]) == 0
    prov = _results(tmp_path / "a")["sciprobe"]["tasks"]["idrbench:ipi|0"]["provenance"]
    assert prov["prompt_set"] == "upstream" and prov["upstream_prompts"]["commit"] == IDR.upstream.commit
    assert main(["score", "idrbench:ipi", "--predictions", str(predictions), "--output-dir", str(tmp_path / "b")]) == 0
    assert _results(tmp_path / "b")["sciprobe"]["tasks"]["idrbench:ipi|0"]["provenance"]["prompt_set"] == "sciprobe"
    scitaste = tmp_path / "s.jsonl"
    scitaste.write_text(json.dumps({"id": "x", "response": "50"}) + "\n")
    assert main(["score", "scitaste:pure_qa", "--predictions", str(scitaste), "--prompts", "upstream",
                 "--output-dir", str(tmp_path / "c")]) == 2
    assert "no upstream prompt set" in capsys.readouterr().err
