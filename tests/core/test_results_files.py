"""Results files are untrusted input (issue 22, issue 23 items 4 and 5): every command that reads one goes through
``sciprobe.results.read.load_results_file``. The golden hostile files (``tests/cases/results_files/hostile.json``)
are given to each command; ``sciprobe report`` escapes every value and groups runs by the data they used."""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import pytest

from golden import CASES_DIR, case_ids
from sciprobe.cli.commands import main

CASES = json.loads((CASES_DIR / "results_files" / "hostile.json").read_text("utf-8"))["cases"]
COMMANDS = ("export", "compare", "score-overall", "report", "import")
KEPT_TASKS = ("idrbench:ipi|0", "idrbench:i3_set1|0")
PLACEHOLDER = "@@raw-json-{}@@"
SCRIPT = '<script>alert("x")</script>'


def _as_model_run(path: Path, model: str) -> dict:
    """A baseline's results file as an ordinary model's run of two tasks (no reference-baseline flags)."""
    data = json.loads(path.read_text("utf-8"))
    block = data["sciprobe"]
    block["tasks"] = {k: v for k, v in block["tasks"].items() if k in KEPT_TASKS}
    for name in ("results", "config_tasks", "versions", "summary_tasks"):
        data[name] = {k: v for k, v in data[name].items() if k in KEPT_TASKS}
    block["model_id"] = data["config_general"]["model_name"] = model
    block["reference_baseline"] = None
    for task in block["tasks"].values():
        task["provenance"].pop("reference_baseline", None)
        task["provenance"]["model_id"] = model
    return data


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A real results file (sciprobe baselines idrbench, majority) with per-item tables, as a model's run."""
    from sciprobe.run.baselines import run_baselines

    out = tmp_path_factory.mktemp("base")
    [(_, path, _)] = run_baselines("idrbench", names=["majority"], output_dir=out / "runs", log=lambda *a: None)
    target = out / "base.json"
    target.write_text(json.dumps(_as_model_run(path, "org/model-a")), "utf-8")
    return target


def _walk(data, path):
    for key in path[:-1]:
        data = data[key]
    return data, path[-1]


def hostile_file(case: dict, base: Path, target: Path) -> Path:
    """The case's file at ``target`` (raw JSON text goes in through placeholders, so it reaches the file exactly as
    written; FIFOs, symlinks and folders are made here, never stored in git)."""
    kind = case.get("generate")
    if "raw" in case:
        target.write_text(case["raw"], "utf-8")
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "dev_zero_symlink":
        target.symlink_to("/dev/zero")
    elif kind == "folder":
        target.mkdir()
    elif kind == "deep_nesting":
        target.write_text('{"sciprobe": ' + "[" * 200_000 + "]" * 200_000 + "}", "utf-8")
    elif kind == "latin1":
        target.write_bytes(base.read_text("utf-8").replace("org/model-a", "org/mod\u00e9l").encode("latin-1"))
    else:
        data = json.loads(base.read_text("utf-8"))
        sets = list(case.get("set", []))
        if kind == "nesting_50":
            sets.append([["sciprobe", "tasks", "idrbench:ipi|0", "provenance", "note"], "[" * 50 + "]" * 50])
        elif kind == "digits_5000":
            sets.append([["sciprobe", "tasks", "idrbench:ipi|0", "scores", "official", "macro_f1"], "7" * 5000])
        elif kind == "groups_3000":
            cell = {"score": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n_items": 1, "n_scored": 1, "n_failed": 0}
            groups = json.dumps({f"group {k}": {**cell, "n_items": k % 7 + 1} for k in range(3000)})
            sets.append([["sciprobe", "tasks", "idrbench:ipi|0", "scores", "official", "breakdowns", "disciplines",
                          "groups"], groups])
        raws = []
        for path, raw in sets:
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


def _runs_folder(case: dict, base: Path, root: Path) -> Path:
    """``root/runs``: the case's file and a good file of another model, as `sciprobe evaluate` lays them out."""
    folder = root / "runs" / "results" / "org__model"
    folder.mkdir(parents=True)
    hostile_file(case, base, folder / "results_a_hostile.json")
    good = _as_model_run(base, "org/good")
    (folder / "results_b_good.json").write_text(json.dumps(good), "utf-8")
    return root / "runs"


def _one_line(err: str, expect: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    assert expect in lines[0], lines[0]
    assert "Traceback" not in err and len(lines[0]) < 700


def test_there_are_enough_hostile_cases():
    assert len(CASES) >= 40
    assert {c.get("generate") for c in CASES} >= {"fifo", "dev_zero_symlink", "deep_nesting", "digits_5000"}


@pytest.mark.timeout(600)  # a FIFO opened without O_NONBLOCK would block for ever: fail instead
@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_hostile_results_file(case, command, base, tmp_path, capsys, monkeypatch):
    """One line for every hostile file, whatever the command: `error: ...` and exit 2 for a file named on its own,
    a skipped/warning line for a file in a folder (the good file beside it is still reported or imported)."""
    if case.get("ok") and command == "score-overall":
        pytest.skip("an idrbench file has no SGI-Bench component to combine")
    if command in ("export", "compare", "score-overall"):
        path = hostile_file(case, base, tmp_path / "results_a_hostile.json")
        argv = {"export": ["export", str(path)], "compare": ["compare", str(path), str(base)],
                "score-overall": ["sgibench", "score-overall", "--results", str(path)]}[command]
        status = main(argv)
        err = capsys.readouterr().err
        if case.get("ok"):
            assert status == 0 and "Traceback" not in err, err
            return
        assert status == 2
        assert err.startswith("error: ")
        _one_line(err, case["expect"])
    elif command == "report":
        runs = _runs_folder(case, base, tmp_path)
        assert main(["report", str(runs), "--out", str(tmp_path / "report")]) == 0
        err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("report: ")]
        page = (tmp_path / "report" / "index.html").read_text("utf-8")
        assert "org/good" in page and "<script" not in page.lower()
        if case.get("ok"):
            assert err == [] and "not drawn" not in page
            assert all((tmp_path / "report" / src).is_file() for src in re.findall(r'<img src="([^"]+)"', page))
            return
        _one_line("\n".join(err), case["expect"])
        assert err[0].startswith("skipped ")
    else:  # `sciprobe leaderboard --import DIR`: its import step (no server)
        import sciprobe.leaderboard.commands as commands
        from sciprobe.leaderboard.store import SQLiteStore

        runs = _runs_folder(case, base, tmp_path)
        served = []
        monkeypatch.setattr(commands, "serve", lambda host, port: served.append(port))
        monkeypatch.setenv("SCIPROBE_LEADERBOARD_STORE", "sqlite")
        assert main(["leaderboard", "--import", str(runs), "--store-dir", str(tmp_path / "store")]) == 0
        assert len(served) == 1  # then the Space is served
        captured = capsys.readouterr()
        stored = SQLiteStore(tmp_path / "store").list_results()
        assert sorted(r.task for r in stored if r.model_name == "org/good") == ["idrbench:i3_set1", "idrbench:ipi"]
        if case.get("ok"):
            assert captured.err == "" and "imported 4 task result(s)" in captured.out
            return
        _one_line(captured.err, case["expect"])
        assert captured.err.startswith("warning: ")
        assert not [r for r in stored if r.model_name != "org/good" and r.task == "idrbench:ipi"]


# ---------------------------------------------------------------- the reader itself

def test_the_cap_counts_bytes_read_not_the_reported_size(tmp_path, monkeypatch):
    """A file larger than the cap is refused after reading at most cap + 1 bytes (the old check trusted st_size,
    which a device or /proc file reports as 0)."""
    from sciprobe.results import read as results_file
    from sciprobe.results.read import ResultsFileError, read_regular_file

    path = tmp_path / "results_big.json"
    path.write_bytes(b" " * 5000)
    read: list[int] = []
    real_read = os.read

    def counting_read(fd, n):
        chunk = real_read(fd, n)
        read.append(len(chunk))
        return chunk

    monkeypatch.setattr(results_file.os, "read", counting_read)
    with pytest.raises(ResultsFileError, match="larger than 1,000 bytes: not read"):
        read_regular_file(path, 1000)
    assert sum(read) <= 1001
    assert read_regular_file(path, 5000) == b" " * 5000


def test_a_symlink_to_a_regular_file_is_read_like_the_file(base, tmp_path):
    from sciprobe.results.read import load_results_file

    link = tmp_path / "results_link.json"
    link.symlink_to(base)
    loaded = load_results_file(link)
    assert loaded.model_id == "org/model-a" and set(loaded.tasks) == set(KEPT_TASKS)
    assert loaded.headline("idrbench:ipi|0") == "macro_f1" and loaded.default_mode("idrbench:ipi|0") == "official"


def test_every_results_file_sciprobe_writes_is_valid(tmp_path):
    """The reader accepts what the writer writes: every benchmark's baselines on its bundled sample."""
    from sciprobe.run.baselines import run_baselines
    from sciprobe.core.registry import benchmark_names
    from sciprobe.results.read import load_results_file

    paths = [path for bench in benchmark_names()
             for _, path, _ in run_baselines(bench, output_dir=tmp_path / bench, log=lambda *a: None)]
    assert len(paths) >= 8
    for path in paths:
        assert load_results_file(path).skipped_tasks == ()


def test_skipping_bad_tasks_keeps_the_good_ones(base, tmp_path):
    from sciprobe.results.read import ResultsFileError, load_results_file

    case = next(c for c in CASES if c["name"] == "headline_object")
    path = hostile_file(case, base, tmp_path / "results_x.json")
    with pytest.raises(ResultsFileError) as raised:
        load_results_file(path)
    assert str(raised.value) == (f'{path}: sciprobe.tasks["idrbench:ipi|0"].scores.official.macro_f1: expected a '
                                 "number or null, got an object")
    loaded = load_results_file(path, skip_bad_tasks=True)
    assert list(loaded.tasks) == ["idrbench:i3_set1|0"] and len(loaded.skipped_tasks) == 1


# ---------------------------------------------------------------- report: escaping

def _planted(base: Path) -> dict:
    """The base run with a script in every text field that reaches the page."""
    data = json.loads(base.read_text("utf-8"))
    block = data["sciprobe"]
    block["model_id"] = data["config_general"]["model_name"] = f"org/{SCRIPT}"
    block["judge_ids"] = [f"judge/{SCRIPT}"]
    block["incomplete"] = {"reason": SCRIPT, "skipped_calls": 0, "tasks_not_run": []}
    data["config_general"]["end_time"] = SCRIPT
    for key, task in block["tasks"].items():
        task["analysis_notes"] = [SCRIPT]
        task["provenance"].update(dataset=SCRIPT, dataset_fingerprint=SCRIPT, dataset_revision=SCRIPT,
                                  cutoff={"cutoff": SCRIPT, "source": SCRIPT, "n_items_before": 16,
                                          "n_items_after": 16})
        for report in task["scores"].values():
            report["ci"].update(unit=SCRIPT, method=SCRIPT)
            report["notes"] = [SCRIPT]
            for breakdown in (report.get("breakdowns") or {}).values():
                breakdown["title"] = SCRIPT
        task["scores"]["official"]["ci"].update(low=None, high=None, reason=SCRIPT)
        data["config_tasks"][key]["headline"] = SCRIPT
    return data


def test_report_escapes_every_value_from_a_results_file(base, tmp_path):
    """Issue 22: coverage counts and ci.seed / n_resamples / unit went into index.html unescaped (a script ran in
    Chromium). Every text field holding a script is shown as text; a count or seed holding one is refused."""
    from sciprobe.results.html_report import build_report

    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "results_planted.json").write_text(json.dumps(_planted(base)), "utf-8")
    lines: list[str] = []
    page = build_report([folder], tmp_path / "report", warn=lines.append).read_text("utf-8")
    assert lines == []
    assert "<script" not in page.lower()
    assert page.count(html.escape(SCRIPT, quote=True)) >= 8


def test_report_tables_escape_values_of_any_type():
    """The one escape works on what the schema would refuse too (a count or a seed holding markup)."""
    from sciprobe.results.html_report import _score_table
    from sciprobe.results.figures import RunTask

    entry = {"scores": {"official": {"macro_f1": 0.5,
                                     "coverage": {"n_scored": SCRIPT, "n_items": SCRIPT, "n_failed": SCRIPT},
                                     "ci": {"low": 0.1, "high": 0.9, "n_resamples": SCRIPT, "seed": SCRIPT,
                                            "unit": SCRIPT}}}}
    table = _score_table([RunTask(SCRIPT, "idrbench:ipi|0", entry, "macro_f1", "official", data=SCRIPT)])
    # shown as escaped text: run, data, failed, n_resamples, seed; counts that are no counts read "?/?"
    assert "<script" not in table.lower() and table.count("&lt;script&gt;") == 5 and "?/?" in table


# ---------------------------------------------------------------- report: foreign files, data groups, figures

def test_report_skips_lighteval_results_beside_sciprobe_results(base, tmp_path, capsys):
    """Issue 23.5: the README's lighteval lines write into results/, so `sciprobe report results/results` meets
    lighteval's files: one line each, the report is built from sciprobe's."""
    model_dir = tmp_path / "results" / "results" / "org__model-a"
    model_dir.mkdir(parents=True)
    (model_dir / "results_2026-01-01T00-00-00.json").write_bytes(base.read_bytes())
    lighteval = tmp_path / "results" / "results" / "org" / "model-a"
    lighteval.mkdir(parents=True)
    (lighteval / "results_2026-01-02T00-00-00.000000.json").write_text(json.dumps(
        {"config_general": {"lighteval_sha": "?", "model_name": "org/model-a"},
         "results": {"idrbench:ipi|0": {"macro_f1": 0.4}, "all": {"macro_f1": 0.4}}, "config_tasks": {}}))
    assert main(["report", str(tmp_path / "results" / "results"), "--out", str(tmp_path / "report")]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("report: ")]
    assert len(err) == 1 and err[0].startswith("skipped ") and "lighteval's results file" in err[0], err
    assert "org/model-a" in (tmp_path / "report" / "index.html").read_text("utf-8")
    only_lighteval = tmp_path / "results" / "results" / "org"
    assert main(["report", str(only_lighteval), "--out", str(tmp_path / "r2")]) == 2
    assert "error: no sciprobe results file to report" in capsys.readouterr().err


def _on_data(base: Path, model: str, dataset: str, fingerprint: str, total: int, limit: int | None) -> dict:
    data = _as_model_run(base, model)
    for task in data["sciprobe"]["tasks"].values():
        task["provenance"].update(dataset=dataset, dataset_fingerprint=fingerprint, limit=limit)
        task["provenance"]["cutoff"].update(n_items_before=total, n_items_after=total)
    return data


def test_report_groups_runs_by_the_data_they_used(base, tmp_path):
    """Issue 23.4: the demo's sample, a --limit run and a full run appeared in one table and plot with nothing
    saying which data each used. Each data set now has its own table and figures, named by its data."""
    from sciprobe.results.html_report import build_report

    folder = tmp_path / "runs"
    folder.mkdir()
    runs = {"sample": _on_data(base, "org/demo", "sample:idrbench", "a" * 64, 16, None),
            "limited": _on_data(base, "org/limited", "folder:idrbench", "b" * 64, 1120, 16),
            "full": _on_data(base, "org/full", "folder:idrbench", "b" * 64, 1120, None),
            "full2": _on_data(base, "org/full-2", "folder:idrbench", "b" * 64, 1120, None)}
    for task in runs["full2"]["sciprobe"]["tasks"].values():  # same data, but a cap stopped it: labelled as such
        task["provenance"]["incomplete"] = "max-calls 10 reached"
    for name, data in runs.items():
        (folder / f"results_{name}.json").write_text(json.dumps(data), "utf-8")
    index = build_report([folder], tmp_path / "report")
    page = index.read_text("utf-8")
    start = page.index('<section id="idrbench-ipi-0">')
    section = page[start:page.index("</section>", start)]
    headings = re.findall(r"<h4>data: ([^<]*)</h4>", section)
    assert headings == ["folder:idrbench · 1120 items · data bbbbbbbbbbbb",  # whole data sets first
                        "sample:idrbench · 16 items · data aaaaaaaaaaaa",
                        "folder:idrbench · 16 of 1120 items (--limit 16) · data bbbbbbbbbbbb"]
    assert "used 3 different data sets" in section
    tables = re.findall(r"<table>.*?</table>", section)
    assert len(tables) == 3
    assert "org/full" in tables[0] and "org/full-2 (INCOMPLETE)" in tables[0] and "org/demo" not in tables[0]
    assert "org/demo" in tables[1] and "<th>data</th>" in tables[1]
    assert "org/limited" in tables[2] and "org/full" not in tables[2]
    scores = re.findall(r'src="figures/(\d+-idrbench-ipi-0[a-z0-9-]*-scores\.png)"', section)
    assert len(scores) == 3 and all((index.parent / "figures" / s).is_file() for s in scores)


def test_heatmap_says_a_mode_without_a_number_is_not_applicable():
    """Issue 23.4: a run whose official mode has no number (hence no breakdown) was drawn as "not in run"."""
    from sciprobe.results.figures import NO_ITEMS, NOT_IN_MODE, breakdown_figure

    cell = {"score": 0.5, "n_items": 4, "n_scored": 4}
    fig = breakdown_figure("disciplines", "discipline", [("a [official]", {"Physics": cell, "Biology": cell}),
                                                         ("b [official]", None),
                                                         ("c [official]", {"Physics": cell})], "macro_f1")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts.count(NOT_IN_MODE) == 2 and texts.count(NO_ITEMS) == 1 and "not in run" not in texts


@pytest.mark.parametrize("value", [0.0, 0.5, None])
def test_cutoff_axis_has_a_real_range_when_every_value_is_equal(value):
    """Issue 23.4: all-equal scores drew an axis from -0.04 to 0.04 (matplotlib's +-5.5% around the value)."""
    import io

    from sciprobe.results.figures import RunTask, cutoff_figure

    run = RunTask("m", "idrbench:ipi|0", {"scores": {}}, "macro_f1", "official")
    ys = [value] * 3
    curve = {"cutoff": ["2024-01-01", "2024-02-01", "2024-03-01"], "score": ys, "low": ys, "high": ys,
             "n_scored": [3, 2, 1]}
    fig = cutoff_figure([(run, curve)], "macro_f1", "t", (0.0, 1.0))
    fig.savefig(io.BytesIO())
    low, high = fig.axes[0].get_ylim()
    assert low <= 0.0 and high >= 1.0
    fig = cutoff_figure([(run, curve)], "mae", "t")
    fig.savefig(io.BytesIO())
    low, high = fig.axes[0].get_ylim()
    assert high - low >= 2.0


@pytest.mark.slow
def test_no_planted_script_runs_in_chromium(base, tmp_path):
    """Issue 22 as it was found: the report of a results file with scripts planted in every field, opened in
    headless Chromium, has no script element and opens no dialog."""
    from sciprobe.leaderboard.browser import chromium_path, launch_chromium
    from sciprobe.results.html_report import build_report

    if chromium_path() is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "results_planted.json").write_text(json.dumps(_planted(base)), "utf-8")
    attack = _as_model_run(base, "org/attack")  # the break as reported: markup in counts and the seed
    score = attack["sciprobe"]["tasks"]["idrbench:ipi|0"]["scores"]["official"]
    score["coverage"]["n_scored"] = score["ci"]["seed"] = score["ci"]["n_resamples"] = SCRIPT
    (folder / "results_attack.json").write_text(json.dumps(attack), "utf-8")
    skipped: list[str] = []
    index = build_report([folder], tmp_path / "report", warn=skipped.append)
    assert len(skipped) == 1 and "coverage.n_scored: expected a count" in skipped[0]
    dialogs: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page()
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(index.resolve().as_uri())
        scripts = page.evaluate("document.scripts.length")
        shown = page.evaluate("document.body.innerText")
        browser.close()
    assert scripts == 0 and dialogs == []
    assert SCRIPT in shown  # shown as text


@pytest.mark.parametrize("content, expect", [
    ('{"exact_match": "x"}', "exact_match: expected a number or null"),
    ('{"score": {"a": 1}}', "score: expected a number or null"),
    ('{"score": 18.4, "coverage": "16/16"}', "coverage: expected an object or null"),
    ('{"score": 18.4, "coverage": {"n_items": "16"}}', "coverage.n_items: expected a count"),
    ("[18.4]", "a component report is a number or a JSON object"),
    ("1" * 5000, "an integer of 5000 digits"),
    (None, "is a FIFO, not a regular file"),
])
def test_sgi_component_report_files_are_checked(tmp_path, capsys, content, expect):
    """`sgibench score-overall deep_research=FILE.json`: a component report file is outside input too."""
    path = tmp_path / "dr.json"
    if content is None:
        os.mkfifo(path)
    else:
        path.write_text(content, "utf-8")
    assert main(["sgibench", "score-overall", f"deep_research={path}", "idea_generation=39.68"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    _one_line(err, expect)
