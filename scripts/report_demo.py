"""A ``sciprobe report`` on real IDRBench runs, and its screenshot into docs/screenshots/report*.png.

Builds the v1 release files (default ``../shared/data/idrbench/data``; nothing from them is written into the
repository, only figures of aggregate scores), runs the reference baselines on every task and a deterministic
keyword heuristic served over loopback HTTP (``sciprobe.testing.stub_server``, so the real client, runner and parsers
run) on IPI and I3 with stated confidences, adds the SciTaste-Bench sample's baselines, writes the report and,
with ``--screenshot``, screenshots it in headless Chromium. The heuristic is a stand-in for a model, labelled as
such in the report: it answers from discipline keywords, so its calibration curve is not flat.

Usage: ``.venv/bin/python scripts/report_demo.py --out /tmp/report [--screenshot docs/screenshots]``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RELEASE = Path(os.environ.get("SCIPROBE_SHARED_DIR") or REPO.parent / "shared") / "data" / "idrbench" / "data"
MODEL_NAME = "keyword-heuristic-stub"

KEYWORDS = {
    "cs": ("neural", "learning", "algorithm", "network", "language model", "computer", "robot", "signal", "deep"),
    "physics": ("quantum", "physic", "particle", "magnet", "optic", "laser", "plasma", "galax", "thermodynamic"),
    "biology": ("protein", "gene", "cell", "biolog", "dna", "brain", "neuron", "clinical", "patient", "disease"),
    "economics": ("market", "econom", "financ", "price", "trading", "portfolio", "monetary"),
    "mathematics": ("theorem", "statistic", "bayesian", "stochastic", "estimator", "proof", "algebra"),
}


def _groups(text: str) -> set[str]:
    low = text.lower()
    return {name for name, words in KEYWORDS.items() if any(w in low for w in words)}


def _jitter(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:4], 16) % 11 - 5


def keyword_reply(body: dict) -> str:
    """IPI: Yes when the paper's text touches two or more keyword groups; I3: Yes when the two sides touch
    different groups; I2R: the candidate sharing more words with the main paper. Confidence grows with the
    evidence (plus a deterministic jitter)."""
    prompt = body["messages"][-1]["content"]
    papers = re.findall(r"Abstract:\s*([^\n]*)", prompt)
    if "Your choice:" in prompt:
        words = [set(re.findall(r"[a-z]{5,}", p.lower())) for p in papers[-3:]]
        overlap = [len(words[0] & w) for w in words[1:]] if len(words) == 3 else [0, 0]
        choice = 1 if overlap[0] >= overlap[1] else 2
        return f"Your choice: Paper {choice}\nConfidence score: {min(95, 55 + 5 * abs(overlap[0] - overlap[1]))}"
    if "Your reason:" in prompt:
        sides = prompt.split("Papers in Discipline 2:")
        left, right = (_groups(" ".join(re.findall(r"Abstract:\s*([^\n]*)", s))) for s in sides[:2]) \
            if len(sides) == 2 else (set(), set())
        verdict = "Yes" if left and right and left != right else "No"
        confidence = 55 + 8 * len(left ^ right) + _jitter(prompt)
        return (f"Your verdict: {verdict}\nYour reason: keyword groups {sorted(left)} and {sorted(right)}.\n"
                f"Confidence score: {max(5, min(99, confidence))}")
    found = _groups(" ".join(papers[-1:]))
    verdict = "Yes" if len(found) >= 2 else "No"
    confidence = (45 + 15 * len(found) if verdict == "Yes" else 85 - 12 * len(found)) + _jitter(prompt)
    return f'Your verdict: {verdict}\nConfidence score: {max(5, min(99, confidence))}\nSubject: ["Other"]'


def run_demo(out: Path, release: Path = RELEASE, *, tasks: tuple[str, ...] = ("ipi", "i3_set1", "i3_set2"),
             with_scitaste: bool = True) -> Path:
    """Build, run, report; returns the report's index.html."""
    from sciprobe.run.baselines import run_baselines
    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.build import build_benchmark
    from sciprobe.run.evaluation import EvaluationRequest, evaluate
    from sciprobe.testing.stub_server import StubServer
    from sciprobe.results.html_report import build_report

    data = out / "build" / "idrbench"
    if not (data / "sciprobe_build.json").is_file():
        build_benchmark(get_benchmark("idrbench"), release, data, overwrite=True)
    results = out / "runs"
    run_baselines("idrbench", data=str(data), output_dir=results, log=lambda _: None)
    with StubServer(reply=keyword_reply) as stub:
        model = f"openai/{MODEL_NAME},base_url={stub.base_url},api_key=sk-demo,concurrency=32"
        evaluate(EvaluationRequest(tasks=[f"idrbench:{t}" for t in tasks], model=model, data=str(data),
                                   output_dir=results, use_cache=False))
    if with_scitaste:
        run_baselines("scitaste", output_dir=results, log=lambda _: None)
    return build_report([results], out / "report")


def screenshot(index: Path, folder: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    from sciprobe.leaderboard.browser import launch_chromium

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(index.resolve().as_uri())
        page.wait_for_function("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")
        section = page.locator("section#idrbench-ipi-0")
        section.screenshot(path=str(folder / "report.png"))
        written.append(folder / "report.png")
        browser.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="working folder (default: a new temporary folder)")
    parser.add_argument("--release", default=str(RELEASE), help="IDRBench v1 release folder")
    parser.add_argument("--screenshot", metavar="FOLDER", help="also screenshot the IPI section into FOLDER")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="sciprobe-report-"))
    index = run_demo(out, Path(args.release))
    print(index)
    if args.screenshot:
        for path in screenshot(index, Path(args.screenshot)):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
