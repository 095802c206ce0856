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

from sciprobe.benchmarks import get_benchmark  # noqa: E402
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
    from sciprobe.benchmarks import get_benchmark
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.build import build_benchmark

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
            assert "dataset_fingerprint" in body and "sciprobe.scoring_cli.score_file" in body

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
