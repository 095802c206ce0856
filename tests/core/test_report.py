"""``sciprobe report``: a static HTML page whose every figure renders (headless Chromium), built from baseline and
model runs of the bundled samples and, when the release files are there, from real IDRBench runs."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from sciprobe.run.baselines import run_baselines
from sciprobe.cli.commands import main
from sciprobe.results.compare import compare_files
from sciprobe.run.evaluation import EvaluationRequest, evaluate
from sciprobe.testing.stub_server import StubServer
from sciprobe.results.html_report import build_report

REPO = Path(__file__).resolve().parents[2]


def _demo_module():
    spec = importlib.util.spec_from_file_location("report_demo", REPO / "scripts" / "report_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sample_runs(tmp_path_factory) -> Path:
    """Baselines of IDRBench and SciTaste-Bench plus a stub model with stated confidences on IDRBench."""
    out = tmp_path_factory.mktemp("report-runs")
    run_baselines("idrbench", output_dir=out)
    run_baselines("scitaste", output_dir=out)
    with StubServer(reply=_demo_module().keyword_reply) as stub:
        model = f"openai/keyword-stub,base_url={stub.base_url},api_key=sk-test"
        evaluate(EvaluationRequest(tasks=["idrbench:ipi", "idrbench:i3_set1", "idrbench:i2r"], model=model,
                                   output_dir=out, use_cache=False))
    return out


def _images(index: Path) -> list[str]:
    return re.findall(r'<img src="([^"]+)"', index.read_text())


def test_report_has_every_figure_kind_and_is_reproducible(sample_runs, tmp_path) -> None:
    index = build_report([sample_runs], tmp_path / "a")
    images = _images(index)
    assert images and all((index.parent / src).is_file() for src in images)
    assert sorted(p.name for p in (index.parent / "figures").iterdir()) == sorted(Path(s).name for s in images)
    names = " ".join(images)
    for kind in ("idrbench-ipi-0-scores", "idrbench-ipi-0-by-disciplines", "idrbench-ipi-0-calibration",
                 "idrbench-i2r-0-target-rank", "idrbench-i3-set1-0-by-sides-share-discipline",
                 "scitaste-pure-qa-0-by-discipline", "scitaste-pure-qa-0-scatter", "cutoff"):
        assert kind in names, kind
    html = index.read_text()
    assert "openai/keyword-stub" in html and "reference-baseline/majority (baseline)" in html
    assert "ECE" in html and "95% CI" in html
    again = build_report([sample_runs], tmp_path / "b")
    assert again.read_text() == html  # no clock, no randomness in the page


def test_report_cli(sample_runs, tmp_path, capsys) -> None:
    assert main(["report", str(sample_runs), "--out", str(tmp_path / "r")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "r" / "index.html")
    assert main(["report", str(tmp_path / "nothing-here"), "--out", str(tmp_path / "x")]) == 2
    assert "no such results file or folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty"), "--out", str(tmp_path / "x")]) == 2
    assert "holds no results_*.json" in capsys.readouterr().err


@pytest.mark.slow
def test_every_figure_renders_in_chromium(sample_runs, tmp_path) -> None:
    from sciprobe.leaderboard.browser import chromium_path, launch_chromium

    if chromium_path() is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    index = build_report([sample_runs], tmp_path / "report")
    expected = len(_images(index))
    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(index.resolve().as_uri())
        page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=60_000)
        sizes = page.evaluate("Array.from(document.images).map(i => [i.getAttribute('src'), i.naturalWidth, "
                              "i.naturalHeight, i.getBoundingClientRect().width])")
        title = page.title()
        browser.close()
    assert title == "sciprobe report" and len(sizes) == expected
    broken = [s for s in sizes if s[1] < 200 or s[2] < 100 or s[3] <= 0]
    assert not broken, broken


@pytest.mark.slow
def test_compare_and_report_on_real_idrbench_runs(idrbench_release_built, tmp_path) -> None:
    """The v1 release: baselines on every task and a stub model with confidences on IPI, compared and reported."""
    data = str(idrbench_release_built)
    runs = {b.name: path for b, path, _ in run_baselines("idrbench", data=data, output_dir=tmp_path / "runs")}
    with StubServer(reply=_demo_module().keyword_reply) as stub:
        model = f"openai/keyword-stub,base_url={stub.base_url},api_key=sk-test,concurrency=32"
        model_path, _ = evaluate(EvaluationRequest(tasks=["idrbench:ipi"], model=model, data=data,
                                                   output_dir=tmp_path / "runs", use_cache=False))
    comparisons, general = compare_files(runs["random"], model_path)
    ipi = {c.mode: c for c in comparisons}
    assert set(ipi) == {"official", "strict"} and ipi["strict"].n_common == 1120
    assert not [w for w in ipi["strict"].warnings if "item" in w]  # same items, same data
    assert "tasks only in A (not compared)" in general[0]
    i2r, _ = compare_files(runs["random"], runs["title-similarity"])
    assert i2r[0].test["test"].startswith("Wilcoxon") and i2r[0].n_common == 253
    index = build_report([tmp_path / "runs"], tmp_path / "report")
    names = " ".join(_images(index))
    assert "idrbench-ipi-0-calibration" in names and "idrbench-i2r-0-target-rank" in names


def test_reported_numbers_are_rows_of_their_own_with_a_source_link(sample_runs, tmp_path) -> None:
    """The paper's numbers for a task's headline: labelled rows in a table apart from the scored runs, linking to
    the paper, never in the score tables."""
    from sciprobe.results.published import reported_numbers

    html = build_report([sample_runs], tmp_path / "r").read_text()
    section = html[html.index('<section id="idrbench-ipi-0">'):]
    section = section[: section.index("</section>")]
    reported = re.search(r'<table class=reported data-reported="idrbench:ipi\|0">(.*?)</table>', section).group(1)
    rows = re.findall(r"<tr class=reported>(.*?)</tr>", reported)
    expected = reported_numbers("idrbench", "ipi", ["macro_f1"])
    assert len(rows) == len(expected) and sum(r.source.table == "Table 2" for r in expected) == 12
    for row, number in zip(rows, expected):
        assert f"<td class=\"\">reported in the paper ({number.source.table})</td>" in row
    assert all('href="https://arxiv.org/abs/2507.15736v3"' in row for row in rows)
    assert any(">o4-mini<" in row and ">0.630<" in row for row in rows)
    scored = section[: section.index("<h4>reported in the paper")]  # the runs' tables and figures
    assert "reported in the paper" not in scored and "o4-mini" not in scored
