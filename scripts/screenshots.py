"""Screenshots of every leaderboard tab into docs/screenshots/*.png.

Launches the Space on a temporary store filled with a few synthetic submissions (scored by the real pipeline on
the bundled samples), then drives the Debian chromium with Playwright — the same setup as
tests/test_leaderboard_browser.py. Usage: ``.venv/bin/python scripts/screenshots.py [--out docs/screenshots]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODELS = [  # (model, knowledge cutoff claim or "" for the registry, accuracy of the synthetic answers)
    ("openai/gpt-4o-mini", "", 0.75),
    ("deepseek/deepseek-chat", "", 0.65),
    ("meta-llama/Llama-3.3-70B-Instruct", "2023-12", 0.55),
    ("qwen/qwen-3", "", 0.8),
]
TASKS = ["idrbench:ipi", "idrbench:i3_set1", "idrbench:i2r"]


def _answers(task: str, target, gold: dict, accuracy: float, rng: random.Random) -> list[dict]:
    lines = []
    for item_id in target.ids:
        if task.endswith("i2r"):
            ranking = sorted(target.candidates[item_id])
            rng.shuffle(ranking)
            golds = [t for t in ranking if t in gold[item_id]]
            if rng.random() < accuracy:  # a good model puts a gold title first
                ranking = golds[:1] + [t for t in ranking if t not in golds[:1]]
            lines.append({"id": item_id, "ranking": ranking})
            continue
        if rng.random() < 0.08:
            lines.append({"id": item_id, "response": "I cannot tell."})  # unparsable: shows in coverage
            continue
        right = rng.random() < accuracy
        verdict = gold[item_id] if right else ("no" if gold[item_id] == "yes" else "yes")
        if task.endswith("ipi"):
            text = f"Your verdict: {verdict.title()}. Confidence score: 80. Subject: [Physics, Biology]"
        else:
            text = f"Your verdict: {verdict.title()}. Your reason: plausible link. Confidence score: 70."
        lines.append({"id": item_id, "response": text})
    return lines


def populate(service) -> None:
    """Submit synthetic predictions for every (model, task) through the real validation + scoring path."""
    from sciprobe.benchmarks import resolve_task
    from sciprobe.evaluation import load_task_data
    from sciprobe.leaderboard.queue import data_for
    from sciprobe.leaderboard.validation import task_target

    with tempfile.TemporaryDirectory() as tmp:
        for m, (model, cutoff, accuracy) in enumerate(MODELS):
            for task in TASKS:
                bench, spec = resolve_task(task)
                rows = load_task_data(bench, spec, data_for(bench.name)).rows
                gold = ({str(r["id"]): [t["title"] for t in r["targets"]] for r in rows} if spec.runner == "swiss"
                        else {str(r["id"]): spec.gold(r) for r in rows})
                target = task_target(task, data_for(bench.name))
                path = Path(tmp) / f"{model.replace('/', '_')}-{task.replace(':', '_')}.jsonl"
                lines = _answers(task, target, gold, accuracy, random.Random(f"{model}{task}"))
                path.write_text("".join(json.dumps(line) + "\n" for line in lines))
                status, record = service.submit(f"user{m}", task, str(path), model, "", "", cutoff, "synthetic demo")
                if record.get("status") != "FINISHED":
                    raise SystemExit(f"demo submission failed: {status}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "docs" / "screenshots"))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    work = Path(tempfile.mkdtemp(prefix="sciprobe-shots-"))
    os.environ.update({"SCIPROBE_LEADERBOARD_DIR": str(work / "store"), "SCIPROBE_LEADERBOARD_AUTH": "local",
                       "SCIPROBE_LEADERBOARD_STORE": "sqlite", "SCIPROBE_HOME": os.environ.get("SCIPROBE_HOME")
                       or str(work / "home"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    from playwright.sync_api import sync_playwright

    from sciprobe.benchmarks import benchmark_names, get_benchmark
    from sciprobe.leaderboard.app import build_app, launch_options
    from sciprobe.leaderboard.browser import VIEWPORT, launch_chromium, upload_file

    demo = build_app()
    populate(demo.sciprobe_service)
    demo.queue()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options())
    written = []
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector("#table-overview [role=gridcell]", timeout=60_000)

            def shot(name: str) -> None:
                time.sleep(1.0)
                path = out / f"{name}.png"
                page.screenshot(path=str(path), full_page=True)
                written.append(path)

            shot("overview")
            for bench in benchmark_names():
                page.get_by_role("tab", name=get_benchmark(bench).title, exact=True).click()
                page.wait_for_selector(f"#table-{bench}", timeout=30_000)
                if bench == "idrbench":  # show the provenance of one cell
                    page.locator("#table-idrbench [role=row]").filter(has_text="gpt-4o-mini").first \
                        .locator("[role=gridcell]").nth(1).click()
                    page.locator("#provenance-idrbench").get_by_text("dataset_fingerprint").first.wait_for()
                shot(bench)
            page.get_by_role("tab", name="Provenance", exact=True).click()
            page.locator("#provenance-row input").first.click()
            page.get_by_role("option").filter(has_text="gpt-4o-mini").first.click()
            page.get_by_role("button", name="Show provenance").click()
            page.locator("#provenance").get_by_text("cells").first.wait_for()
            shot("provenance")
            page.get_by_role("tab", name="Submit", exact=True).click()
            page.locator("#user-name textarea, #user-name input").first.fill("alice")
            page.click("#sign-in")
            page.wait_for_selector("#signed-in >> text=Signed in as")
            sample = REPO / "tests" / "cases" / "submissions" / "valid_ipi.jsonl"
            upload_file(page, "#predictions", sample)
            page.locator("#model-name textarea, #model-name input").first.fill("google/gemini-2.0-flash")
            page.click("#submit")
            page.wait_for_selector("#sp-status >> text=Scored:", timeout=60_000)
            shot("submit")
            page.get_by_role("tab", name="Queue", exact=True).click()
            page.wait_for_selector("#queue [role=gridcell]")
            shot("queue")
            page.get_by_role("tab", name="About", exact=True).click()
            shot("about")
            browser.close()
    finally:
        demo.close()
    for path in written:
        print(path.relative_to(REPO) if path.is_relative_to(REPO) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
