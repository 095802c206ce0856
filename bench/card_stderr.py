"""Bootstrap stderr of the model-scored corpus metrics: what one resample costs once the items were scored.

Command (from the repository root):  .venv/bin/python bench/card_stderr.py [--items 40] [--resamples 20]
                                      [--before CHECKOUT [--before-resamples 3]]

lighteval's stderr of a corpus metric (our lighteval cards, ``sciprobe lighteval``) rescores 1,000 resamples of
the items, for each metric and mode. Two scorers run a model per item: PreScience contribution generation
(BERTScore, the bundled MiniLM) and SGI-Bench idea generation (the objective terms' embedder). Each scores an
item once per process, so a resample should cost lookups and a mean, not the model again.

For each: the declaration's scorer (what the card's corpus-level function calls) on ``--items`` synthetic items
the first time (the model loaded beforehand, on other items), then the median of ``--resamples`` resamples drawn
with replacement (seeded), and the projected cost of lighteval's stderr (1,000 resamples x the card's metrics x
modes). Target: one resample <= 1% of the first scoring. ``--before CHECKOUT`` measures the same with the
sciprobe of another checkout (e.g. a ``git worktree`` of an earlier commit) in a subprocess, with fewer resamples
(each may take seconds there). Writes bench/results/card_stderr.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
#: the sciprobe measured: this checkout's, or --before's (set for the subprocess that measures it)
CHECKOUT_ENV = "SCIPROBE_BENCH_CHECKOUT"
sys.path.insert(0, os.environ.get(CHECKOUT_ENV) or str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from load import load_note, median_range, write_results  # noqa: E402

from sciprobe.core.registry import get_benchmark  # noqa: E402

RESULTS = REPO / "bench" / "results" / "card_stderr.md"
TARGET = 0.01
LIGHTEVAL_RESAMPLES = 1000
WORDS = ("model data graph learning protein network language neural quantum cell policy market seismic array "
         "detect locate events station template deep feature sparse expert route token").split()


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(WORDS, k=n))


def contribution_items(rng: random.Random, n: int) -> list[dict]:
    def paper() -> dict:
        return {"title": _text(rng, 8), "abstract": _text(rng, 150)}

    return [{"id": str(i), "gold": paper(), "prediction": paper()} for i in range(n)]


def idea_rows(scratch: Path) -> list[dict]:
    """The bundled sample's idea-generation rows, built as the card reads them."""
    import datasets

    from sciprobe.data.build import build_benchmark

    bench = get_benchmark("sgibench")
    build_benchmark(bench, bench.sample_source, scratch / "sgi", configs=["idea_generation"])
    return datasets.load_dataset(str(scratch / "sgi"), "idea_generation", split="test").to_list()


def idea_items(rng: random.Random, n: int, rows: list[dict], tag: str) -> list[dict]:
    """Answers of the generated-idea schema on the sample's rows (taken in turn)."""
    items = []
    for i in range(n):
        answer = {"Idea": f"{_text(rng, 20).capitalize()}. {_text(rng, 25).capitalize()}.",
                  "ImplementationSteps": {"1": _text(rng, 6), "2": _text(rng, 6)}, "ImplementationOrder": ["1-2"],
                  "Dataset": _text(rng, 5), "EvaluationMetrics": {"recall": _text(rng, 4)},
                  "ExpectedOutcome": _text(rng, 8)}
        row = rows[i % len(rows)]
        items.append({"idx": f"{row['idx']}-{tag}{i}", "id": f"{row['idx']}-{tag}{i}", "gold": None, "row": row,
                      "response": "```json\n" + json.dumps(answer) + "\n```"})
    return items


def measure(task, items: list[dict], warm: list[dict], modes: tuple[str, ...], resamples: int,
            rng: random.Random) -> dict:
    task.score(warm, modes[0])  # loads the model, on other items
    start = time.perf_counter()
    for mode in modes:
        task.score(items, mode)
    first = time.perf_counter() - start
    times = []
    for _ in range(resamples):
        drawn = rng.choices(items, k=len(items))
        start = time.perf_counter()
        for mode in modes:
            task.score(drawn, mode)
        times.append(time.perf_counter() - start)
    return {"first": first, "resample": times}


def run_cases(n_items: int, resamples: int) -> list[dict]:
    rng = random.Random(0)
    out = []
    with tempfile.TemporaryDirectory(prefix="sciprobe-bench-") as scratch:
        prescience = get_benchmark("prescience").task("contribution_generation")
        sgi = get_benchmark("sgibench").task("idea_generation")
        rows = idea_rows(Path(scratch))
        cases = [("PreScience contribution_generation (BERTScore, ROUGE-L)", prescience,
                  contribution_items(rng, n_items), contribution_items(rng, 4), len(prescience.corpus_metrics)),
                 ("SGI-Bench idea_generation (objective terms)", sgi, idea_items(rng, n_items, rows, "i"),
                  idea_items(rng, 2, rows, "warm"), 5)]  # the card's IDEA_KEYS: final + 4 objective terms
        for label, task, items, warm, n_metrics in cases:
            result = measure(task, items, warm, tuple(task.modes), resamples, rng)
            out.append({"label": label, "items": len(items), "modes": list(task.modes), "metrics": n_metrics,
                        **result})
    return out


def _row(case: dict, who: str) -> str:
    resample = statistics.median(case["resample"])
    projected = LIGHTEVAL_RESAMPLES * case["metrics"] * resample
    return (f"| {case['label']} | {who} | {case['items']} | {', '.join(case['modes'])} | {case['first']:.2f} s | "
            f"{median_range([t * 1000 for t in case['resample']], '{:.2f}')} ms | "
            f"{resample / case['first']:.2%} | {projected:,.1f} s |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--resamples", type=int, default=20)
    parser.add_argument("--before", type=Path, help="a checkout of an earlier sciprobe: measured too")
    parser.add_argument("--before-resamples", type=int, default=3)
    parser.add_argument("--json-out", type=Path, help=argparse.SUPPRESS)  # the --before subprocess's answer
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.json_out:
        args.json_out.write_text(json.dumps(run_cases(args.items, args.resamples)))
        return
    cases = run_cases(args.items, args.resamples)
    before = []
    if args.before:
        import subprocess

        with tempfile.TemporaryDirectory(prefix="sciprobe-bench-") as scratch:
            answer = Path(scratch) / "before.json"
            subprocess.run([sys.executable, __file__, "--items", str(args.items), "--resamples",
                            str(args.before_resamples), "--json-out", str(answer)], check=True,
                           env={**os.environ, CHECKOUT_ENV: str(args.before.resolve())})
            before = json.loads(answer.read_text())
    table = [_row(case, "this checkout") for case in cases]
    table += [_row(case, f"before ({args.before_resamples} resamples)") for case in before]
    verdicts = []
    for case in cases:
        ratio = statistics.median(case["resample"]) / case["first"]
        verdicts.append(f"Target: one resample <= {TARGET:.0%} of the first scoring, {case['label']} -> "
                        f"{ratio:.2%} -> " + ("PASS" if ratio <= TARGET else "FAIL (below target)") + "  ")
    command = (f"`.venv/bin/python bench/card_stderr.py --items {args.items} --resamples {args.resamples}"
               + (" --before CHECKOUT" if args.before else "") + "`")
    lines = [
        f"One resample of a model-scored corpus metric vs scoring the items the first time (all modes), median "
        f"(min-max) of the resamples; {command}",
        "",
        f"Machine: {load_note()} at the end. Projected stderr: {LIGHTEVAL_RESAMPLES:,} resamples x the card's "
        "metrics of the task (each metric's stderr draws its own resamples) at the median resample time."
        + (" before: the sciprobe of the checkout given as --before, in a subprocess." if args.before else ""),
        "",
        "| task (model per item) | sciprobe | items | modes | first scoring | one resample | resample / first | "
        "projected stderr |",
        "|---|---|---|---|---|---|---|---|",
        *table,
    ]
    write_results(args.results, lines, verdicts)


if __name__ == "__main__":
    main()
