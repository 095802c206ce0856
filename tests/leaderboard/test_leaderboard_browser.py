"""End to end in a real browser: Playwright driving the Debian chromium package against the launched Space.
Signs in locally, uploads a predictions file, sees the scored row with its 95% interval, its provenance, the
breakdown view with real per-group numbers, and the reference baseline rows on every tab (SGI-Bench, which has no
bundled sample, is pinned to a build of its synthetic source so that its tab has them too). Skips only when
chromium is not installed (CI installs it: apt-get install -y chromium)."""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path

import pytest

from sciprobe.leaderboard.browser import VIEWPORT, chromium_path, launch_chromium, upload_file, wait_idle

pytestmark = pytest.mark.slow

if chromium_path() is None:
    pytest.skip("chromium is not installed (apt-get install -y chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")

from sciprobe.core.registry import get_benchmark  # noqa: E402
from sciprobe.leaderboard import breakdowns, tables  # noqa: E402


def service_breakdown(service) -> dict[str, tuple[str, str]]:
    """{group: (interval, coverage)} of the submitted model's IPI result by discipline, as the store has it."""
    column = next(c for c in service.all_columns if c.ref == "idrbench:ipi")
    frame = breakdowns.breakdown_frame(service.results(), column, tables.DEFAULT_MODE, "disciplines")
    row = frame[frame["Model"] == "openai/gpt-4o-mini"].iloc[0]
    labels = [c[: -len(" coverage")] for c in frame.columns if c.endswith(" coverage") and c != "All items coverage"]
    return {label: (row[f"{label} 95% CI"], row[f"{label} coverage"]) for label in labels
            if isinstance(row[f"{label} coverage"], str)}


# gradio 6.31 ignores pinned_columns when rendering (no sticky cell); sciprobe.leaderboard.app.CSS pins the first
# column. Scroll the table's viewport sideways and measure where the first body cell and its header end up.
PINNED_CHECK = """(sel) => new Promise((resolve) => {
  const root = document.querySelector(sel);
  root.scrollIntoView({block: 'start'});  // in the window, whatever the notes above it take
  const viewport = root.querySelector('.virtual-table-viewport');
  viewport.scrollLeft = viewport.scrollWidth;
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const cell = root.querySelector('[role=gridcell]');
    const header = root.querySelector('[role=columnheader]');
    const box = cell.getBoundingClientRect();
    const hit = document.elementFromPoint(box.left + 4, box.top + box.height / 2);
    resolve({scrolled: viewport.scrollLeft, scroll_width: viewport.scrollWidth, client_width: viewport.clientWidth,
             viewport_left: viewport.getBoundingClientRect().left, cell_left: box.left,
             header_left: header.getBoundingClientRect().left, text: cell.innerText,
             on_top: !!hit && hit.closest('[role=gridcell]') === cell});
  }));
})"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def space(tmp_path, monkeypatch):
    from sciprobe.core.registry import get_benchmark
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.data.build import build_benchmark

    write_synthetic_source(tmp_path / "sgi-src")
    build_benchmark(get_benchmark("sgibench"), tmp_path / "sgi-src", tmp_path / "sgi")
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DATA", f"sgibench={tmp_path / 'sgi'}")
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DIR", str(tmp_path / "store"))
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_AUTH", "local")
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_STORE", "sqlite")
    from sciprobe.leaderboard.app import build_app, launch_options

    demo = build_app()  # computes every benchmark's reference baselines on its data
    demo.queue()
    port = _free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options())
    yield f"http://127.0.0.1:{port}/", demo.sciprobe_service
    demo.close()


@pytest.fixture
def predictions(tmp_path) -> Path:
    from sciprobe.leaderboard.queue import data_for
    from sciprobe.leaderboard.validation import task_target

    target = task_target("idrbench:ipi", data_for("idrbench"))
    path = tmp_path / "gpt-4o-mini-ipi.jsonl"
    answer = "Your verdict: {}. Confidence score: 70. Subject: [Physics, Biology]"
    path.write_text("".join(json.dumps({"id": i, "response": answer.format("Yes" if k % 2 else "No")}) + "\n"
                            for k, i in enumerate(target.ids)))
    return path


def test_sign_in_submit_see_row_and_provenance(space, predictions):
    space_url, service = space
    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(space_url)
            page.wait_for_selector("#table-overview", timeout=60_000)
            wait_idle(page)  # the page-load refresh has redrawn every table
            assert "openai/gpt-4o-mini" not in page.locator("#table-overview").inner_text()

            # reference baselines on every tab, marked and owned by nobody, before anyone submitted
            for key in ["overview", *service.benchmarks]:
                if key != "overview":
                    page.get_by_role("tab", name=get_benchmark(key).title, exact=True).click()
                reference = page.locator(f"#table-{key} [role=row]").filter(has_text="(reference baseline)")
                reference.first.wait_for(timeout=30_000)
                expected = set(tables.reference_rows(service.table(key))["Model"])
                assert expected, key
                rows = page.locator(f"#table-{key} [role=row]").filter(has_text="(reference baseline)")
                shown = {name for name in expected if rows.filter(has_text=name).count()}
                assert shown == expected, (key, shown, expected)
                assert "reference baseline" in rows.first.inner_text() and "—" in rows.first.inner_text()
                if key != "overview":
                    assert "Reference baselines" in page.locator(f"#baselines-{key}").inner_text()
            page.get_by_role("tab", name="Overview", exact=True).click()

            page.get_by_role("tab", name="Submit", exact=True).click()
            wait_idle(page)
            page.locator("#user-name textarea, #user-name input").first.fill("alice")
            page.click("#sign-in")
            page.wait_for_selector("#signed-in >> text=Signed in as", timeout=30_000)
            upload_file(page, "#predictions", predictions)
            page.locator("#model-name textarea, #model-name input").first.fill("openai/gpt-4o-mini")
            page.click("#submit")
            page.wait_for_selector("#sp-status >> text=Scored:", timeout=60_000)
            status = page.locator("#sp-status").inner_text()
            assert "macro_f1" in status and "16/16" in status

            # the scored row appears (the submit chain refreshes every table)
            page.get_by_role("tab", name="IDRBench").click()
            row = page.locator("#table-idrbench [role=row]").filter(has_text="openai/gpt-4o-mini")
            row.first.wait_for(timeout=30_000)
            text = row.first.inner_text()
            assert "16/16" in text and "idrbench" in text and "yes" in text  # coverage, benchmark, contamination-free
            # the 95% interval beside the score, as the store has it
            frame = service.table("idrbench")
            gpt = frame[frame["Model"] == "openai/gpt-4o-mini"].iloc[0]
            assert re.fullmatch(r"\[\d\.\d{3}, \d\.\d{3}\]", gpt["ipi macro_f1 95% CI"])
            assert gpt["ipi macro_f1 95% CI"] in text and f"{gpt['ipi macro_f1']}"[:4] in text
            # the models come first, then the reference rows
            names = page.locator("#table-idrbench [role=row]").all_inner_texts()
            body = [n for n in names if "openai/gpt-4o-mini" in n or "(reference baseline)" in n]
            assert "openai/gpt-4o-mini" in body[0] and all("(reference baseline)" in n for n in body[1:])

            # the Model column stays pinned when the table scrolls sideways (narrow window so that it must scroll)
            page.set_viewport_size({"width": 820, "height": 900})
            pinned = page.evaluate(PINNED_CHECK, "#table-idrbench")
            assert pinned["scroll_width"] > pinned["client_width"] and pinned["scrolled"] > 100, pinned
            assert abs(pinned["cell_left"] - pinned["viewport_left"]) <= 1, pinned  # body cell stuck to the left
            assert abs(pinned["header_left"] - pinned["viewport_left"]) <= 1, pinned  # and its header
            assert pinned["on_top"] and pinned["text"].startswith("openai/gpt-4o-mini"), pinned  # visible, not covered
            page.evaluate("(sel) => { document.querySelector(sel + ' .virtual-table-viewport').scrollLeft = 0; }",
                          "#table-idrbench")
            page.set_viewport_size(VIEWPORT)

            # provenance of the clicked cell
            row.first.locator("[role=gridcell]").filter(has_text="16/16").first.click()
            prov = page.locator("#provenance-idrbench")
            prov.get_by_text("predictions_sha256").first.wait_for(timeout=30_000)
            body = prov.inner_text()
            assert "dataset_fingerprint" in body and "sciprobe.run.score_predictions.score_file" in body

            # the breakdown view: the submitted row's score per discipline, with interval and coverage
            page.get_by_role("tab", name="Breakdowns", exact=True).click()
            breakdown = page.locator("#table-breakdowns [role=row]").filter(has_text="openai/gpt-4o-mini")
            breakdown.first.wait_for(timeout=30_000)
            shown = breakdown.first.inner_text()
            per_group = service_breakdown(service)
            assert per_group, "the breakdown has groups"
            for label, (ci, coverage) in per_group.items():
                assert ci in shown and coverage in shown, (label, ci, coverage, shown)
            header = page.locator("#table-breakdowns").inner_text()
            assert all(label[:20] in header for label in per_group)
            assert "idrbench:ipi" in page.locator("#breakdown-note").inner_text()
            assert page.locator("#table-breakdowns [role=row]").filter(has_text="(reference baseline)").count() >= 1

            # and of the whole row, from the Provenance tab
            page.get_by_role("tab", name="Provenance", exact=True).click()
            page.locator("#provenance-row input").first.click()
            page.get_by_role("option").filter(has_text="openai/gpt-4o-mini").first.click()
            page.get_by_role("button", name="Show provenance").click()
            page.locator("#provenance").get_by_text("idrbench:ipi").first.wait_for(timeout=30_000)
            assert "alice" in page.locator("#provenance").inner_text()
        finally:
            browser.close()
    assert os.environ["SCIPROBE_LEADERBOARD_AUTH"] == "local"


# ---------------------------------------------------------------- the Space on the demo (issue 23.10)

DEMO_MODEL = "openai/demo-stub"


@pytest.fixture
def demo_space(tmp_path, monkeypatch):
    """The Space on the bundled samples (no pin) after demo-like runs: `--limit` samples of three benchmarks, each
    scored in every mode its task declares (so also the mode the Space ranks), imported before the start."""
    from sciprobe.cli.commands import main
    from sciprobe.leaderboard.importer import import_results_dir
    from sciprobe.leaderboard.store_factory import open_store
    from sciprobe.testing.stub_server import StubServer

    monkeypatch.delenv("SCIPROBE_LEADERBOARD_DATA", raising=False)
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_DIR", str(tmp_path / "store"))
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_AUTH", "local")
    monkeypatch.setenv("SCIPROBE_LEADERBOARD_STORE", "sqlite")
    with StubServer(reply=lambda body: "Your verdict: Yes\nConfidence score: 60\n\\boxed{A}") as stub:
        model = f"{DEMO_MODEL},base_url={stub.base_url},api_key=sk-test"
        for task, limit in (("idrbench:ipi", "8"), ("sgibench:deep_research", "1"), ("scitaste:pure_qa", "4")):
            assert main(["evaluate", task, "--model", model, "--limit", limit,
                         "--output-dir", str(tmp_path / "runs" / task.replace(":", "-"))]) == 0
    assert import_results_dir(open_store(), tmp_path / "runs") == 3
    from sciprobe.leaderboard.app import build_app, launch_options

    demo = build_app(benchmarks=["idrbench", "scitaste", "sgibench"])
    demo.queue()
    port = _free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options())
    yield f"http://127.0.0.1:{port}/", demo.sciprobe_service
    demo.close()


def test_the_space_on_the_demo_shows_the_bundled_model(demo_space):
    """23.10: on the demo the bundled model's SGI-Bench row was blank (official scores, paper ranked), the Overview
    listed it once per benchmark, one column mixed 0, 0.619, 0.3846 and 72.3902, the Submit dropdown listed two
    tasks twice and the API named the submit parameters param_1..7."""
    space_url, service = demo_space
    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(space_url)
            page.wait_for_selector("#table-overview", timeout=60_000)
            wait_idle(page)
            # one overview row for the model, labelled as samples of the data
            rows = page.locator("#table-overview [role=row]").filter(has_text=DEMO_MODEL)
            rows.first.wait_for(timeout=30_000)
            assert rows.count() == 1
            overview = rows.first.inner_text()
            assert "sample (not ranked)" in overview and "(limit)" in overview
            assert "8/16 (limit)" in overview and "1/3 (limit)" in overview

            # every benchmark tab: the model's row with a number in the ranked mode, at the metric's precision
            expected = {"idrbench": (r"\b\d\.\d{3}\b", "8/16 (limit)"), "sgibench": (r"\b\d+\.\d{2}\b", "1/3 (limit)"),
                        "scitaste": (r"\b\d+\.\d{2}\b", "4/24 (limit)")}
            for key, (number, coverage) in expected.items():
                page.get_by_role("tab", name=get_benchmark(key).title, exact=True).click()
                row = page.locator(f"#table-{key} [role=row]").filter(has_text=DEMO_MODEL)
                row.first.wait_for(timeout=30_000)
                cells = row.first.locator("[role=gridcell]").all_inner_texts()
                assert coverage in cells and "sample (not ranked)" in cells, (key, cells)
                score = cells[1]  # the first task's score, right after the Model column
                assert re.fullmatch(number, score.strip()), (key, score, cells)
                frame = service.table(key)
                shown = frame[frame["Model"] == DEMO_MODEL].iloc[0]
                assert shown.iloc[1] == pytest.approx(float(score), abs=0.01)

            # the Submit dropdown lists every task once
            page.get_by_role("tab", name="Submit", exact=True).click()
            wait_idle(page)
            page.locator("#task input").first.click()
            options = page.get_by_role("option").all_inner_texts()
            assert options and len(options) == len(set(options)), options
            assert len(options) == len(service.task_choices())

            # the API names the submit parameters
            info = page.request.get(f"{space_url}gradio_api/info").json()
            names = [p["parameter_name"] for p in info["named_endpoints"]["/submit"]["parameters"]]
            assert names == ["user", "task", "predictions", "model_name", "model_family", "model_revision",
                             "knowledge_cutoff", "notes"]
        finally:
            browser.close()


def test_reported_rows_are_apart_from_the_scored_rows(demo_space):
    """Issue 26.3: each benchmark tab shows the paper's numbers as rows labelled "reported in the paper (Table N)",
    in a table of their own under the leaderboard (never among the scored rows, never ranked: in the paper's
    order), owned by nobody, each linking to its source."""
    from sciprobe.leaderboard.reported import reported_frame

    space_url, service = demo_space
    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(space_url)
            page.wait_for_selector("#table-overview", timeout=60_000)
            wait_idle(page)
            for key, url in (("idrbench", "https://arxiv.org/abs/2507.15736v3"),
                             ("sgibench", "https://arxiv.org/abs/2512.16969v1")):
                page.get_by_role("tab", name=get_benchmark(key).title, exact=True).click()
                page.locator(f"#table-{key} [role=row]").filter(has_text=DEMO_MODEL).first.wait_for(timeout=30_000)
                expected = reported_frame(key, service.columns[key])
                rows = page.locator(f"#reported-{key} tr.sp-reported")
                rows.first.wait_for(timeout=30_000)
                texts = rows.all_inner_texts()
                assert len(texts) == len(expected) > 0
                # in the paper's order, each labelled with its table, owned by nobody, linking to the paper
                assert [t.split("\t")[0].strip() for t in texts] == list(expected["Model"])
                assert all("reported in the paper (Table" in t and "—" in t for t in texts)
                links = page.locator(f"#reported-{key} tr.sp-reported a")
                assert links.count() == len(texts)
                assert {links.nth(i).get_attribute("href") for i in range(links.count())} == {url}
                # never mixed with the scored rows: the leaderboard has none of them, and they sit below it
                board = page.locator(f"#table-{key}").inner_text()
                assert "reported in the paper" not in board and DEMO_MODEL in board
                assert DEMO_MODEL not in page.locator(f"#reported-{key}").inner_text()
                below = page.evaluate("([a, b]) => { const t = document.querySelector(a);"
                                      " const r = document.querySelector(b);"
                                      " return !t.contains(r) && t.getBoundingClientRect().bottom"
                                      " <= r.getBoundingClientRect().top; }", [f"#table-{key}", f"#reported-{key}"])
                assert below, key
            page.get_by_role("tab", name="IDRBench", exact=True).click()
            o4 = page.locator("#reported-idrbench tr.sp-reported").filter(has_text="o4-mini").first.inner_text()
            assert "0.630" in o4 and "Table 2" in o4  # the paper's table, not the prose's "o3-mini"
        finally:
            browser.close()
