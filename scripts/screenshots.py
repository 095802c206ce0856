"""Screenshots of every leaderboard tab into docs/screenshots/*.png.

Launches the Space on a temporary store filled with a few synthetic submissions (scored by the real pipeline on
the bundled samples), then drives the Debian chromium with Playwright — the same setup as
tests/leaderboard/test_leaderboard_browser.py.
Usage: ``.venv/bin/python scripts/screenshots.py [--out docs/screenshots]``.

The judged task (PreScience ``contribution_generation``) goes through the real queue worker
(:class:`sciprobe.leaderboard.queue.Worker`, :func:`~sciprobe.leaderboard.queue.process_pending`) with a panel of two
judges on a loopback :class:`sciprobe.testing.stub_server.StubServer` and an offline LACER lattice template, as
tests/leaderboard/test_leaderboard_judged.py does. The two stub judges score a generation by its word overlap with
the reference plus their own noise (judge ``-b`` compresses the scale and is noisier), so they agree only in part and
the *Judge agreement* tab has something to show. Nothing leaves the machine.
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
JUDGED_TASK = "prescience:contribution_generation"  # scored by the queue worker with the judge panel below
JUDGED_MODELS = MODELS[:2] + MODELS[3:]  # Llama's judged submission is left PENDING, to show the queue
JUDGES = ("stub-judge-a", "stub-judge-b")  # model names on the stub server: judge ids openai/stub-judge-{a,b}


def _words(text: str) -> set[str]:
    return {w.strip(".,;:()").lower() for w in text.split() if len(w.strip(".,;:()")) > 2}


def _paper(text: str, heading: str) -> tuple[str, str]:
    """(title, abstract) of the block after ``heading`` in a filled LACER judge prompt (the pair is the last block)."""
    block = text[text.rindex(f"\n{heading}:\n") + len(heading) + 3:]
    lines = block.splitlines() + ["", ""]
    return lines[0], lines[1]


def judge_reply(body: dict) -> str:
    """A LACER judge on the stub server: overlap of the generation's words with the reference, on 1..10, plus
    noise drawn per (judge, pair); judge ``*-b`` compresses the scale and is noisier. Correlated, not identical."""
    user = body["messages"][-1]["content"]
    tail = user[user.rindex("\nReference:\n"):]
    ref, gen = _paper(tail, "Reference"), _paper(tail, "Generation")
    ref_words, gen_words = _words(" ".join(ref)), _words(" ".join(gen))
    overlap = len(ref_words & gen_words) / max(1, len(gen_words))
    rng = random.Random(f"{body['model']}|{gen[0]}|{gen[1]}")
    if body["model"].endswith("-b"):
        score = 2.0 + 7.0 * overlap + rng.gauss(0, 1.3)
    else:
        score = 1.0 + 9.0 * overlap + rng.gauss(0, 0.9)
    score = min(10, max(1, round(score)))
    return f"Reasoning: the generation shares {overlap:.0%} of its words with the reference.\nScore: {score}"


def _lattice_file(path: Path) -> Path:
    """An offline LACER judge prompt (two lattices of ten scored exemplars), as the judged tests use."""
    from sciprobe.benchmarks.prescience import lacer_judge as lacer

    lattices = [lacer.toy_lattice(topic) for topic in ("matching", "coloring")]
    return lacer.write_lattices(path, lattices, {"note": "synthetic lattice for the screenshot demo"})


def _generations(target, gold: dict, accuracy: float, rng: random.Random) -> list[dict]:
    """PreScience follow-up papers: a good model reuses much of the gold follow-up's wording, a weak one drifts."""
    lines = []
    for item_id in target.ids:
        title, abstract = gold[item_id]["title"].split(), gold[item_id]["abstract"].split()
        keep = min(1.0, max(0.0, rng.gauss(accuracy - 0.2, 0.3)))  # share of the gold wording this answer reuses
        filler = ["novel", "framework", "towards", "scalable", "learning", "analysis", "robust", "benchmark"]
        words = [w if rng.random() < keep else rng.choice(filler) for w in abstract[:40]]
        head = [w if rng.random() < keep else rng.choice(filler) for w in title]
        lines.append({"id": item_id, "response": f"Reasoning: builds on the cited work.\nTitle: {' '.join(head)}\n"
                                                 f"Abstract: {' '.join(words)}"})
    return lines


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


def populate(service, work: Path) -> None:
    """Submit synthetic predictions for every (model, task) through the real validation + scoring path; the judged
    task's submissions are scored by the queue worker with a two-judge panel on a loopback stub server."""
    from sciprobe.core.registry import resolve_task
    from sciprobe.run.evaluation import load_task_data
    from sciprobe.leaderboard.queue import Worker, data_for, process_pending
    from sciprobe.leaderboard.validation import task_target
    from sciprobe.testing.stub_server import StubServer
    from sciprobe.benchmarks.prescience import lacer_judge as lacer
    from sciprobe.run.score_predictions import row_item_id

    os.environ[lacer.TEMPLATE_ENV] = str(_lattice_file(work / "lacer-lattice.json"))
    with tempfile.TemporaryDirectory() as tmp:
        for m, (model, cutoff, accuracy) in enumerate(MODELS):
            for task in TASKS:
                bench, spec = resolve_task(task)
                rows = load_task_data(bench, spec, data_for(bench.name)).rows
                swiss = getattr(spec.runner, "name", None) == "swiss"
                gold = ({str(r["id"]): [t["title"] for t in r["targets"]] for r in rows} if swiss
                        else {str(r["id"]): spec.gold(r) for r in rows})
                target = task_target(task, data_for(bench.name))
                path = Path(tmp) / f"{model.replace('/', '_')}-{task.replace(':', '_')}.jsonl"
                lines = _answers(task, target, gold, accuracy, random.Random(f"{model}{task}"))
                path.write_text("".join(json.dumps(line) + "\n" for line in lines))
                status, record = service.submit(f"user{m}", task, str(path), model, "", "", cutoff, "synthetic demo")
                if record.get("status") != "FINISHED":
                    raise SystemExit(f"demo submission failed: {status}")

        bench, spec = resolve_task(JUDGED_TASK)
        rows = load_task_data(bench, spec, data_for(bench.name)).rows
        gold = {str(row_item_id(bench, spec, r)): spec.gold(r) for r in rows}
        target = task_target(JUDGED_TASK, data_for(bench.name))

        def submit_judged(model: str, cutoff: str, accuracy: float) -> None:
            path = Path(tmp) / f"{model.replace('/', '_')}-judged.jsonl"
            lines = _generations(target, gold, accuracy, random.Random(f"{model}{JUDGED_TASK}"))
            path.write_text("".join(json.dumps(line) + "\n" for line in lines))
            user = f"user{[m for m, _, _ in MODELS].index(model)}"
            status, record = service.submit(user, JUDGED_TASK, str(path), model, "", "", cutoff, "synthetic demo")
            if record.get("status") != "PENDING":
                raise SystemExit(f"judged demo submission not queued: {status}")

        for model, cutoff, accuracy in JUDGED_MODELS:
            submit_judged(model, cutoff, accuracy)
        logs: list[str] = []
        with StubServer(reply=judge_reply) as stub:
            panel = ";".join(f"openai/{name},base_url={stub.base_url},api_key=sk-demo" for name in JUDGES)
            done = process_pending(service.store, worker=Worker.create(panel, use_cache=False, log=logs.append))
        failed = [r for r in done if r.status != "FINISHED"]
        if failed or len(done) != len(JUDGED_MODELS):
            raise SystemExit(f"judged demo scoring failed: {[(r.model_name, r.status, r.error) for r in failed]} "
                             f"{logs}")
        left = [m for m in MODELS if m not in JUDGED_MODELS]
        for model, cutoff, accuracy in left:  # waits in the queue for a worker: shows PENDING in the Queue tab
            submit_judged(model, cutoff, accuracy)


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

    from sciprobe.core.registry import benchmark_names, get_benchmark
    from sciprobe.leaderboard.app import build_app, launch_options
    from sciprobe.leaderboard.browser import VIEWPORT, launch_chromium, upload_file, wait_idle

    demo = build_app()
    populate(demo.sciprobe_service, work)
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
                wait_idle(page)  # the page-load refresh (and any event) has finished
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
            page.get_by_role("tab", name="Breakdowns", exact=True).click()
            page.locator("#table-breakdowns [role=row]").filter(has_text="gpt-4o-mini").first.wait_for(timeout=30_000)
            shot("breakdowns")
            page.get_by_role("tab", name="Provenance", exact=True).click()
            page.locator("#provenance-row input").first.click()
            page.get_by_role("option").filter(has_text="gpt-4o-mini").first.click()
            page.get_by_role("button", name="Show provenance").click()
            page.locator("#provenance").get_by_text("cells").first.wait_for()
            shot("provenance")
            page.get_by_role("tab", name="Judge agreement", exact=True).click()
            page.locator("#agreement-result input").first.click()
            page.get_by_role("option").filter(has_text="gpt-4o-mini").first.click()
            page.locator("#agreement-table [role=gridcell]").filter(has_text="stub-judge-b").first \
                .wait_for(timeout=30_000)
            page.locator("#agreement-plot img").first.wait_for(timeout=30_000)
            shot("agreement")
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
