"""`sciprobe leaderboard` shows local runs: results files from `sciprobe evaluate` import into the store."""

import json

from sciprobe.cli.commands import main
from sciprobe.leaderboard.importer import import_results_dir
from sciprobe.leaderboard.store import SQLiteStore
from sciprobe.testing.stub_server import StubServer


def test_evaluate_results_import_with_scores_and_provenance(tmp_path):
    def reply(body):
        text = body["messages"][-1]["content"]
        if "Your choice:" in text:
            return "Your choice: Paper 2\nConfidence score: 55"
        return 'Your verdict: No\nConfidence score: 60\nSubject: ["Physics"]'

    with StubServer(reply=reply) as server:
        model = f"openai/gpt-4o-mini,base_url={server.base_url},api_key=sk-test"
        assert main(["evaluate", "idrbench:ipi", "idrbench:i2r", "--model", model,
                     "--output-dir", str(tmp_path / "runs")]) == 0
    store = SQLiteStore(tmp_path / "store")
    assert import_results_dir(store, tmp_path / "runs") == 2
    results = {r.task: r for r in store.list_results("idrbench")}
    assert set(results) == {"idrbench:ipi", "idrbench:i2r"}
    i2r = results["idrbench:i2r"]
    assert set(i2r.scores) == {"official", "corrected"}  # the two tournaments merge into one task result
    assert i2r.model_cutoff == "2023-10-31" and i2r.model_family == "openai"
    written = json.loads(next((tmp_path / "runs" / "results").rglob("*.json")).read_text())
    assert results["idrbench:ipi"].scores["official"]["macro_f1"] == \
        written["sciprobe"]["tasks"]["idrbench:ipi|0"]["scores"]["official"]["macro_f1"]
    assert len(results["idrbench:ipi"].dataset_fingerprint) == 64
    # Importing again replaces, never duplicates.
    import_results_dir(store, tmp_path / "runs")
    assert len(store.list_results("idrbench")) == 2


# ---------------------------------------------------------------- hostile results files (issue 18)

import datetime as dt  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from sciprobe.leaderboard.importer import import_results_file  # noqa: E402
from sciprobe.results.write import RunInfo, TaskResult, write_run  # noqa: E402
from sciprobe.scoring.score_report import Coverage, ScoreReport  # noqa: E402

from golden import CASES_DIR  # noqa: E402
from pinned_support import on_sample, sample_items  # noqa: E402

IMPORT_CASES_FILE = CASES_DIR / "results_import" / "cases.json"
IMPORT_CASES = json.loads(IMPORT_CASES_FILE.read_text("utf-8"))["cases"]
PLACEHOLDER = "@@raw-json-{}@@"


def write_two_task_run(out: Path, model: str = "org/model-a") -> Path:
    """A real results file (write_run) with idrbench:ipi and idrbench:i3_set1 on the bundled sample (the data a
    leaderboard pins by default)."""
    tasks = []
    for ref in ("idrbench:ipi", "idrbench:i3_set1"):
        _, ids = sample_items(ref)
        report = ScoreReport("binary_classification", "official",
                             {"macro_f1": 0.5, "accuracy": 0.5, "n_parsed": len(ids)}, Coverage(len(ids), len(ids), 0))
        provenance = {"benchmark": "idrbench", "benchmark_version": "1.0.0", "model_id": model,
                      "cutoff": {"cutoff": None, "source": "none"}}
        records = [{"id": i, "response": "No", "prediction": "no", "gold": "no"} for i in ids]
        tasks.append(on_sample(TaskResult(ref, 0, {"official": report}, records, provenance, "macro_f1")))
    start = dt.datetime(2026, 11, 29, 12, 0, 0, tzinfo=dt.UTC)
    return write_run(out, RunInfo(model, {"temperature": 0.0}, clock=lambda: start), tasks)


def _walk(data: dict, path: list[str]) -> tuple[dict, str]:
    for key in path[:-1]:
        data = data[key]
    return data, path[-1]


def hostile_file(case: dict, base: Path, target: Path) -> Path:
    """The case's results file, made from the real ``base`` file (raw JSON text goes in through placeholders, so
    1e400, NaN-like literals and 401-digit ints reach the file exactly as written)."""
    if "raw" in case:
        target.write_text(case["raw"], "utf-8")
        return target
    if case.get("raw_generate") == "deep_nesting":
        target.write_text('{"sciprobe": ' + "[" * 200_000 + "]" * 200_000 + "}", "utf-8")
        return target
    if case.get("raw_generate") == "latin1":
        target.write_bytes(base.read_text("utf-8").replace("org/model-a", "org/mod\u00e9l").encode("latin-1"))
        return target
    data = json.loads(base.read_text("utf-8"))
    raws = []
    for path, raw in case.get("set", []):
        parent, key = _walk(data, path)
        parent[key] = PLACEHOLDER.format(len(raws))
        raws.append(raw)
    for path in case.get("delete", []):
        parent, key = _walk(data, path)
        del parent[key]
    if "rename" in case:
        path, new_key = case["rename"]
        parent, key = _walk(data, path)
        parent[new_key] = parent.pop(key)
    text = json.dumps(data)
    for k, raw in enumerate(raws):
        text = text.replace(json.dumps(PLACEHOLDER.format(k)), raw)
    target.write_text(text, "utf-8")
    return target


@pytest.fixture(scope="module")
def base_results(tmp_path_factory) -> Path:
    return write_two_task_run(tmp_path_factory.mktemp("base-run"))


def test_there_are_enough_import_cases():
    assert len(IMPORT_CASES) >= 40


@pytest.mark.parametrize("case", IMPORT_CASES, ids=[c["name"] for c in IMPORT_CASES])
def test_hostile_results_file_is_one_warning_and_the_import_goes_on(case, base_results, tmp_path):
    """Each hostile file sits next to a good one: one warning line for it, the good file (and the untouched task of
    a partly bad file) still import, nothing of the refused part is stored."""
    folder = tmp_path / "runs" / "results" / "org__model"
    folder.mkdir(parents=True)
    hostile_file(case, base_results, folder / "results_a_hostile.json")
    good = write_two_task_run(tmp_path / "good-run", model="org/good")
    (folder / "results_b_good.json").write_bytes(good.read_bytes())
    store = SQLiteStore(tmp_path / "store")
    warnings: list[str] = []
    added = import_results_dir(store, tmp_path / "runs", warn=warnings.append)
    assert len(warnings) == 1, warnings
    assert case["expect"] in warnings[0], warnings[0]
    assert "\n" not in warnings[0] and len(warnings[0]) < 600 and "Traceback" not in warnings[0]
    assert added == 2 + case["imported"]
    stored = store.list_results()
    assert sorted((r.model_name, r.task) for r in stored if r.model_name == "org/good") == [
        ("org/good", "idrbench:i3_set1"), ("org/good", "idrbench:ipi")]
    hostile = [r for r in stored if r.model_name != "org/good"]
    assert [r.task for r in hostile] == (["idrbench:i3_set1"] if case["imported"] else [])


def test_import_cli_warns_in_one_line_and_goes_on(tmp_path, capsys):
    """`sciprobe leaderboard --import` (its import step): a malformed file is one `warning:` line on stderr."""
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "results_broken.json").write_text('{"sciprobe": {"model_id": "m", "tasks": {"idrbench:ipi|0": 1}}')
    write_two_task_run(folder)
    store = SQLiteStore(tmp_path / "store")
    assert import_results_dir(store, folder) == 2
    assert import_results_dir(store, tmp_path / "missing") == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("warning: ") for line in err), err
    assert "not valid JSON" in err[0] and "no such file or folder" in err[1]


def test_every_task_headline_has_a_declared_range():
    """The range of every score the leaderboard shows is declared once, per metric family (sciprobe.scoring.ranges)."""
    from sciprobe.core.registry import benchmark_names, get_benchmark
    from sciprobe.scoring.ranges import score_range

    for bench in benchmark_names():
        for task in get_benchmark(bench).tasks.values():
            for metric in (task.headline, *task.extra_columns):
                for mode in task.modes:
                    assert score_range(task.metric, metric, mode) is not None, (bench, task.name, metric, mode)


def test_imported_cutoff_comes_from_the_registry_and_details_paths_stay_inside(tmp_path):
    path = write_two_task_run(tmp_path / "run", model="openai/gpt-4o-mini")
    data = json.loads(path.read_text())
    data["sciprobe"]["tasks"]["idrbench:ipi|0"]["details"] = "../../../../../../etc/passwd"
    path.write_text(json.dumps(data))
    store = SQLiteStore(tmp_path / "store")
    assert len(import_results_file(store, path)) == 2
    result = next(r for r in store.list_results() if r.task == "idrbench:ipi")
    assert result.model_cutoff == "2023-10-31" and result.cutoff_source == "registry"
    assert "judge_scores" not in result.provenance
