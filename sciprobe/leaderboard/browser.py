"""The headless Chromium setup shared by the browser test and ``scripts/screenshots.py``.

Playwright (PyPI ``playwright``) drives the Debian ``chromium`` package (``apt-get install -y chromium``); no
Playwright-managed browser download is needed.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

CHROMIUM_PATH = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1440, "height": 900}


def chromium_path() -> str | None:
    """The Debian chromium binary, or None when it is not installed."""
    if shutil.which(CHROMIUM_PATH):
        return CHROMIUM_PATH
    return shutil.which("chromium")


def launch_chromium(playwright: Any) -> Any:
    """``playwright.chromium.launch`` on the system binary with the project's flags."""
    path = chromium_path()
    if path is None:
        raise RuntimeError("chromium is not installed (apt-get install -y chromium)")
    return playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)


#: gradio's overlay on a component whose event is still running ("processing | 2.1s")
BUSY_SCRIPT = "() => !document.body.innerText.includes('processing |')"


def wait_idle(page: Any, timeout_ms: int = 120_000) -> None:
    """Wait until no event of the page is running (the page-load refresh included): no "processing" overlay left.
    A loaded machine can take a while to finish the first refresh; acting on the page before it may be lost."""
    page.wait_for_function(BUSY_SCRIPT, timeout=timeout_ms)


def upload_file(page: Any, elem: str, path: Path | str, attempts: int = 6, timeout_ms: int = 20_000) -> None:
    """Put ``path`` into the ``gr.File`` with ``elem_id`` selector ``elem`` and wait until its name shows.

    Set again only while the file input is still there: a file set before the component has finished hydrating is
    ignored by the front end. While an upload runs, gradio replaces the input by a progress bar; on a loaded
    machine that can outlast one wait, so a missing input means "keep waiting", never "wait for a new input"."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    path = Path(path)
    file_input = page.locator(f"{elem} input[type=file]")
    file_input.set_input_files(str(path), timeout=3 * timeout_ms)
    resets = 0
    for attempt in range(attempts):
        try:
            # the name's stem: once uploaded, gradio shows stem and extension apart ("name .jsonl 1.6 KB")
            page.locator(elem).get_by_text(path.stem).first.wait_for(timeout=timeout_ms)
            return
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                # what the page showed instead, for the next person who reads the failure
                shown = " ".join(page.locator(elem).inner_text(timeout=timeout_ms).split())
                raise PlaywrightTimeout(f"{path.name} never showed in {elem} after {attempts} waits of "
                                        f"{timeout_ms} ms ({resets} re-sets); it shows {shown[:300]!r}, file input "
                                        f"{'present' if file_input.count() else 'absent'}") from None
            if file_input.count():  # dropped by the front end, not uploading: set it again
                resets += 1
                file_input.set_input_files(str(path), timeout=3 * timeout_ms)
