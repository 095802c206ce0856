"""Regenerate BENCHMARKS.md from the per-bench results in bench/results/*.md (and the notes in bench/notes/*.md).

Command (from the repository root):  .venv/bin/python bench/collect.py
Each bench writes its own results file (with the exact command, the baseline measured in the same run and
the target); this script only gathers them, so BENCHMARKS.md never drifts from what was measured.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

INTRO = """# Benchmarks

Performance targets live here, never in timed unit tests. Every bench runs with a documented command,
measures its baseline in the same run and states its target; ratios are what to compare across machines.
Machine for the figures below: 2 cores, 24 GB, no accelerator, often shared with other jobs (each file
notes the load); absolute times are pessimistic.

Regenerate this file with `.venv/bin/python bench/collect.py` after running a bench. The client benches run
each claim twice in one invocation: *quiet* (no extra load; the machine may still be shared, the load average
is reported) and *busy* (one CPU-burner process per core for the whole measurement: `bench/load.py`), repeat
it at least 3 times and report the median with min-max.
"""

# (claim, script under bench/, target): one row of the bench table in BENCHMARKS.md each
BENCHES = [
    ("Start-up of `sciprobe --help`, `tasks`, `cutoffs`, `cutoffs --help` vs `python -c pass`", "cli_startup.py",
     "<= 2x `python -c pass`, quiet and busy"),
    ("CPU per single-call item end to end, default client path vs litellm", "item_cpu.py",
     "<= 1 ms per item, quiet and busy"),
    ("LLM client throughput vs concurrency bound (default path, litellm, bare aiohttp)", "judge_throughput.py",
     ">= 0.9 of the bound at concurrency 32 and 128, quiet and busy"),
    ("Throughput under a provider RPM limit, paced vs unpaced", "rpm_pacing.py",
     ">= 0.99 of the limit, no 429, quiet and busy"),
    ("Two model servers behind one spec vs one (both transports), and one killed mid-run", "replicas.py",
     ">= 1.8x with 2 servers; every item answered with one killed; quiet and busy"),
    ("I2R tournament, parallel vs one call at a time", "i2r_parallel.py",
     ">= 14x per instance, same call count, quiet and busy"),
    ("Sandbox overhead per run", "sandbox_overhead.py", "< 100 ms beyond the program"),
    ("SGI-Bench deterministic metrics, 100,000 items", "sgi_metrics.py", "throughput vs a naive loop"),
    ("SciTaste WAPE + composite, 1,000,000 pairs", "scitaste_metrics.py", "< 1 s each (median of 5)"),
    ("PreScience 500,000-paper corpus build + date query", "prescience_corpus.py",
     "build <= 3x the data-movement floor, same bytes, < 2 GB peak; query < 0.5 s"),
    ("ROUGE-L on 10,000 pairs vs rouge-score", "prescience_rouge.py", ">= 10x, identical numbers"),
    ("Bootstrap stderr of model-scored corpus metrics (BERTScore, SGI idea terms): one resample vs first scoring",
     "card_stderr.py", "<= 1% of the first scoring"),
    ("SGI dry experiments on a loopback Ray cluster, 2 worker processes vs 1", "ray_dry_experiment.py",
     ">= 1.7x, identical scores"),
    ("Fixed cost of `evaluate`: a 10-item IPI dry run and real run vs `python -c \"import pyarrow.parquet, json\"`",
     "evaluate_fixed_cost.py", "dry run <= 3x the baseline; real run <= 2x its dry run; quiet and busy"),
    ("Model-based scoring (SGI idea embedder, BERTScore), torch threads chosen vs torch's default",
     "scoring_threads.py", "busy <= 1.5x quiet with the chosen threads"),
    ("Leaderboard Space: page load vs rows, first page on a second start, concurrent submitters vs one",
     "leaderboard_space.py", "<= 0.5 s with 1,000 rows; <= 5 s; >= 1.8x on 2 cores"),
    ("Developer loop: an interrupted test run, the whole suite on both cores vs one process", "dev_loop.py --suite",
     "ends within 15 s, nothing left; scripts/test.sh <= 10 min on 2 cores"),
]
INTRO += "\n| bench | command | target |\n|---|---|---|\n" + "".join(
    f"| {claim} | `.venv/bin/python bench/{script}` | {target} |\n" for claim, script, target in BENCHES)


def _below_target(line: str) -> bool:
    """A target line or a results-table row that reports a miss."""
    line = line.strip()
    if line.startswith("Target"):
        return "FAIL" in line
    cells = [c.strip() for c in line.strip("|").split("|")] if line.startswith("|") else []
    return any(c.startswith(("FAIL", "BELOW TARGET")) for c in cells)


def main() -> None:
    sections = []
    below = []
    for path in sorted((ROOT / "bench" / "results").glob("*.md")):
        body = path.read_text().strip()
        if body.startswith("# "):
            body = body.split("\n", 1)[1].strip()
        notes = ROOT / "bench" / "notes" / path.name  # written by hand: what a rerun of the bench must not erase
        if notes.is_file():
            body += "\n\n" + notes.read_text().strip()
        sections.append(f"## {path.stem}\n\n{body}\n")
        below += [f"- {path.stem}: {line.strip()}" for line in body.splitlines() if _below_target(line)]
    summary = "## Below target\n\n" + ("\n".join(below) if below else "Nothing: every target line says PASS.") + "\n"
    parts = [INTRO, summary, *sections]
    (ROOT / "BENCHMARKS.md").write_text("\n".join(parts))
    print(f"wrote {ROOT / 'BENCHMARKS.md'}")


if __name__ == "__main__":
    main()
