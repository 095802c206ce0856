"""ROUGE-L speed: sciprobe's implementation vs rouge-score 0.1.2 on 10,000 title+abstract pairs.

Command (from the repository root):  .venv/bin/python bench/prescience_rouge.py [--pairs 10000]

Pairs are title + abstract texts of a synthetic PreScience corpus (random pairs plus near-duplicates). Baseline,
measured in the same run: ``rouge_score.rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True).score``.
sciprobe is timed cold (empty stem cache, as in a fresh process) and warm. Every pair's (P, R, F) is compared
for exact equality. Target: >= 10x faster (cold) and identical numbers. Writes bench/results/prescience_rouge.md.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyarrow.parquet as pq  # noqa: E402

from sciprobe.benchmarks.prescience.synthetic import CorpusConfig, write_corpus  # noqa: E402
from sciprobe.scoring import text_similarity as ts  # noqa: E402

TARGET = 10.0


def pairs(n: int) -> list[tuple[str, str]]:
    folder = Path(tempfile.mkdtemp(prefix="rouge-bench-"))
    write_corpus(folder, CorpusConfig(n_papers=max(4000, n // 2), seed=2))
    rows = pq.read_table(folder / "test.parquet", columns=["title", "abstract"]).to_pylist()
    texts = [f"{r['title']} {r['abstract']}" for r in rows]
    rng = random.Random(0)
    out = []
    for i in range(n):
        ref = rng.choice(texts)
        if i % 4 == 0:  # a near-duplicate generation: shuffled halves and some words dropped
            words = ref.split()
            cut = len(words) // 2
            cand = " ".join(w for w in words[cut:] + words[:cut] if rng.random() > 0.2)
        else:
            cand = rng.choice(texts)
        out.append((ref, cand))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "results" / "prescience_rouge.md")
    args = parser.parse_args()
    from rouge_score import rouge_scorer

    data = pairs(args.pairs)
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    t0 = time.perf_counter()
    official = [scorer.score(r, c)["rougeL"] for r, c in data]
    t_official = time.perf_counter() - t0
    ts._STEMS.clear()
    t0 = time.perf_counter()
    mine = [ts.rouge_l_pair(r, c) for r, c in data]
    t_cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    [ts.rouge_l_pair(r, c) for r, c in data]
    t_warm = time.perf_counter() - t0
    mismatches = sum((o.precision, o.recall, o.fmeasure) != m for o, m in zip(official, mine))
    speed_cold, speed_warm = t_official / t_cold, t_official / t_warm
    ok = speed_cold >= TARGET and mismatches == 0
    lines = [
        f"ROUGE-L (F, stemming) on {len(data):,} title+abstract pairs; `.venv/bin/python bench/prescience_rouge.py "
        f"--pairs {args.pairs}`",
        "",
        "| implementation | seconds | speed-up vs rouge-score |",
        "|---|---|---|",
        f"| rouge-score 0.1.2 `RougeScorer(['rougeL'], use_stemmer=True)` (baseline) | {t_official:.2f} | 1.0x |",
        f"| sciprobe `rouge_l_pair`, cold stem cache | {t_cold:.2f} | {speed_cold:.1f}x |",
        f"| sciprobe `rouge_l_pair`, warm stem cache | {t_warm:.2f} | {speed_warm:.1f}x |",
        "",
        f"Pairs whose (precision, recall, F) differ from rouge-score: {mismatches} (exact float equality).",
        "",
        f"Target: >= {TARGET:.0f}x (cold) with identical numbers -> {speed_cold:.1f}x, {mismatches} mismatches -> "
        + ("PASS" if ok else "FAIL"),
        "",
        "How: rouge-score's own tokenizer rules and Porter stemmer with a per-token stem cache, and a bit-parallel "
        "LCS (one big-integer step per reference token) instead of the O(n·m) Python table. Machine: 2 cores.",
    ]
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(args.results.read_text())


if __name__ == "__main__":
    main()
