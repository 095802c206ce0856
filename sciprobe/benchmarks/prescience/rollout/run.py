"""``sciprobe prescience rollout``: simulate, write the corpora, judge the neighbours, write the results.

Output folder layout::

    corpus/repeat_<r>/          the synthetic corpus of repeat r in the release layout (corpus.py)
    samples/repeat_<r>.jsonl    every sampled quantity of repeat r, one line per simulated day
    neighbours.jsonl            every sampled paper's neighbours with their LACER scores, per curve and corpus
    rollout_results.json        parameters, provenance, per-month diversity/novelty per repeat, pooled and real
                                curves with 95% intervals, coverage, what came from the cache
    rollout_figure.png          the Figure 3 view (report.py)
    cache/<fingerprint>/        the day journals and embedding vectors a rerun resumes from
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sciprobe.benchmarks.prescience.rollout.analysis import (
    CURVES,
    curve_summary,
    judge,
    neighbourhoods,
    pair_key,
    scored_records,
    size_match,
)
from sciprobe.benchmarks.prescience.rollout.calibration import calibrate
from sciprobe.benchmarks.prescience.rollout.corpus import write_corpus
from sciprobe.benchmarks.prescience.rollout.embedders import EmbeddingCache, make_embedder
from sciprobe.benchmarks.prescience.rollout.literature import ReadObserver, paper_text
from sciprobe.benchmarks.prescience.rollout.metrics import month_of, monthly_curves, paper_distances
from sciprobe.benchmarks.prescience.rollout.params import RolloutParams
from sciprobe.benchmarks.prescience.rollout.simulate import (
    SYNTHETIC_ROLE,
    check_generated,
    load_release,
    simulate_repeat,
    simulation_fingerprint,
)

__all__ = ["RESULTS_FORMAT", "run_rollout"]

from sciprobe.benchmarks.prescience.rollout.report import RESULTS_FORMAT  # noqa: E402 - part of this interface
UPSTREAM_REFERENCE = "allenai/prescience@47384ed79c48cfef610f30af12ba883f2a0093cb multiturn/"
EMBEDDER_NOTE = ("upstream embeds with GritLM-7B (4096-d, key instruction) for the task models and the "
                 "neighbours; this run uses the embedder named here, so neighbour sets and curve levels are not "
                 "upstream's; synthetic and real corpora share it")


def run_rollout(source: Path | str, output_dir: Path | str, params: RolloutParams, generator: Any,
                judges: Sequence[Any], template: Any, *, embedder: str | None = None,
                observer: ReadObserver | None = None, figure: bool = True) -> dict[str, Any]:
    out = Path(output_dir)
    release = load_release(source, params.t0)
    calib = calibrate(release.train_targets)
    emb = make_embedder(embedder)
    key = simulation_fingerprint(release, params, generator.spec, emb.spec)
    cache_dir = out / "cache" / key
    embeddings = EmbeddingCache(emb, cache_dir)
    runs = []
    for r in range(params.repeats):
        journal = cache_dir / f"repeat_{r}.jsonl"
        runs.append(simulate_repeat(release, calib, params, r, generator, embeddings, journal, observer))
        (out / "samples").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(journal, out / "samples" / f"repeat_{r}.jsonl")
        write_corpus(out / "corpus" / f"repeat_{r}", release, runs[-1])
    check_generated(runs)

    months = sorted({month_of(params.day(i)) for i in range(params.days)})
    found: dict[tuple[str, str], Any] = {}  # (corpus, curve) -> (neighbourhoods, infos)
    texts: dict[str, dict[str, str]] = {}
    for run in runs:
        lit = run.literature
        vectors = {cid: lit.vectors[i] for i, cid in enumerate(lit.ids)}
        papers = list(lit.records())
        for curve, value in neighbourhoods(papers, vectors, SYNTHETIC_ROLE, params, months).items():
            found[(f"repeat_{run.repeat}", curve)] = value
        texts.update({f"repeat_{run.repeat}:{cid}": _ta(p) for cid, p in lit.papers.items()})
    if params.natural and release.test_corpus:
        real = [p for p in release.test_corpus if str(p["date"]) < params.end]
        real_vectors = dict(zip((str(p["corpus_id"]) for p in real), embeddings.embed([paper_text(p) for p in real])))
        match = size_match(list(runs[0].literature.records()), SYNTHETIC_ROLE, months)
        for curve, value in neighbourhoods(real, real_vectors, "target", params, months, match).items():
            found[("natural", curve)] = value
        texts.update({f"natural:{p['corpus_id']}": _ta(p) for p in real})
    embeddings.save()

    pairs, seen = [], set()
    for (corpus, _), (nbs, _) in found.items():
        for nb in nbs:
            for x in nb.neighbours:
                k = pair_key(f"{corpus}:{nb.corpus_id}", f"{corpus}:{x['corpus_id']}")
                if k not in seen:
                    seen.add(k)
                    pairs.append((texts[f"{corpus}:{nb.corpus_id}"], texts[f"{corpus}:{x['corpus_id']}"], k))
    scores, judging = judge(pairs, judges, template)
    records = {key_: scored_records(nbs, _prefixed(scores, key_[0])) for key_, (nbs, _) in found.items()}
    results = _results(source, release, params, calib, generator, emb, key, runs, found, records, judging,
                       embeddings)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "neighbours.jsonl").open("w", encoding="utf-8") as f:
        for (corpus, curve), recs in records.items():
            for rec in recs:
                f.write(json.dumps({"corpus": corpus, "curve": curve, **rec}) + "\n")
    (out / "rollout_results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    if figure:
        from sciprobe.benchmarks.prescience.rollout.report import save_figure

        save_figure(results, out / "rollout_figure.png")
    return results


def _ta(p: Any) -> dict[str, str]:
    return {"title": p.get("title") or "", "abstract": p.get("abstract") or ""}


def _prefixed(scores: dict[str, float | None], corpus: str) -> dict[str, float | None]:
    """The scores of one corpus's pairs, keyed without the corpus prefix."""
    head = f"{corpus}:"
    out = {}
    for k, v in scores.items():
        q, _, n = k.partition("->")
        if q.startswith(head) and n.startswith(head):
            out[pair_key(q[len(head):], n[len(head):])] = v
    return out


def _results(source: Any, release: Any, params: RolloutParams, calib: Any, generator: Any, emb: Any, key: str,
             runs: Sequence[Any], found: dict, records: dict, judging: dict, embeddings: Any) -> dict[str, Any]:
    repeats = []
    for run in runs:
        corpus = f"repeat_{run.repeat}"
        repeats.append({
            "repeat": run.repeat, "seed": params.repeat_seed(run.repeat), "n_papers": len(run.synthetic_ids),
            "n_dropped": run.n_dropped, "days_from_journal": run.days_from_journal,
            "corpus": f"corpus/{corpus}", "samples": f"samples/{corpus}.jsonl",
            "curves": {c: curve_summary(records[(corpus, c)], found[(corpus, c)][1], params.n_bootstrap, params.seed)
                       for c in CURVES}})
    natural = {c: curve_summary(records[("natural", c)], found[("natural", c)][1], params.n_bootstrap, params.seed)
               for c in CURVES if ("natural", c) in found}
    pooled = {}
    for c in CURVES:
        nat = paper_distances(records[("natural", c)]) if ("natural", c) in found else None
        syn = [paper_distances(records[(f"repeat_{r.repeat}", c)]) for r in runs]
        pooled[c] = monthly_curves(nat, syn, params.n_bootstrap, params.seed)
    n_pairs = judging.get("n_pairs", 0)
    n_scored = judging.get("n_scored", 0)
    return {
        "format": RESULTS_FORMAT,
        "params": params.as_dict(),
        "provenance": {"source": str(source), "release_digest": release.digest, "simulation_fingerprint": key,
                       "generator": generator.spec, "embedder": emb.spec, "embedder_note": EMBEDDER_NOTE,
                       "reference_code": UPSTREAM_REFERENCE, "calibration": calib.summary(),
                       "judge": {k: v for k, v in judging.items()
                                 if k not in ("n_pairs", "n_distinct_pairs", "n_scored", "n_new_calls")},
                       "natural_size_matched_to": "repeat_0"},
        "coverage": {"n_pairs": n_pairs, "n_distinct_pairs": judging.get("n_distinct_pairs", 0),
                     "n_scored": n_scored, "n_failed": n_pairs - n_scored},
        "cache": {"days_from_journal": sum(r.days_from_journal for r in runs),
                  "days_drawn": sum(len(r.days) - r.days_from_journal for r in runs),
                  "judge_new_calls": judging.get("n_new_calls", 0),
                  "generation_new_calls": getattr(generator, "n_new_calls", 0),
                  "embeddings_computed": embeddings.n_computed},
        "curves": pooled, "natural": natural, "repeats": repeats,
    }
