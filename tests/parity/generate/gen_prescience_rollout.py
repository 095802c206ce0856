"""PreScience rollout-metric parity cases from allenai/prescience@47384ed ``multiturn/analysis/``: the nearest
neighbours of ``compute_diversity_neighbors.py`` and ``compute_novelty_neighbors.py`` (synthetic corpora, and
real corpora size-matched to a synthetic one; evolving and fixed prior) and the monthly means and bootstrap
intervals of ``plot_lacer_diversity.py`` / ``plot_lacer_novelty.py``. Each script's ``main`` runs as upstream
wrote it; only its file loaders are replaced by the case's inputs (papers, embeddings, scored neighbours), its
output writer and ``matplotlib.pyplot`` by recorders, and ``faiss`` (not installable here) by an exact
inner-product stand-in (``_FlatIndex``: what ``faiss.IndexFlatIP`` computes; the inputs have no ties).
``utils.create_index`` / ``query_index`` / ``add_vector_to_index`` are upstream's own.

Usage: python gen_prescience_rollout.py UPSTREAM_TREE   (the prescience checkout at the pinned commit)
"""

from __future__ import annotations

import datetime
import os
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from common import load_defs, raised, stub_module, write_cases

COMMIT = "47384ed79c48cfef610f30af12ba883f2a0093cb"
REPO = "allenai/prescience"
DIM = 8


class _FlatIndex:
    """Exact inner-product / L2 search as faiss's flat indexes (float32, best first)."""

    def __init__(self, dim: int, l2: bool = False) -> None:
        self.x = np.zeros((0, dim), dtype=np.float32)
        self.l2 = l2

    @property
    def ntotal(self) -> int:
        return len(self.x)

    def add(self, vecs: np.ndarray) -> None:
        self.x = np.vstack([self.x, np.asarray(vecs, dtype=np.float32)])

    def search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        q = np.asarray(q, dtype=np.float32)
        if self.l2:
            d = ((q[:, None, :] - self.x[None, :, :]) ** 2).sum(-1)
            order = np.argsort(d, axis=1, kind="stable")[:, :k]
        else:
            d = q @ self.x.T
            order = np.argsort(-d, axis=1, kind="stable")[:, :k]
        return np.take_along_axis(d, order, axis=1), order


STATE: dict[str, Any] = {}


class _Plot:
    """Records ``plt.plot`` / ``plt.fill_between`` calls (the curves upstream draws)."""

    def __init__(self) -> None:
        self.lines: list[dict] = []
        self.rcParams: dict = {}

    def plot(self, dates, means, label=None, **kw):
        self.lines.append({"label": label, "months": [d.strftime("%Y-%m-%d") for d in dates],
                           "mean": [float(m) for m in means]})

    def fill_between(self, dates, lower, upper, **kw):
        self.lines[-1]["lower"] = [float(x) for x in lower]
        self.lines[-1]["upper"] = [float(x) for x in upper]

    def __getattr__(self, name):
        return lambda *a, **k: None


def _install(tree: Path) -> tuple[dict, dict, dict]:
    faiss = stub_module("faiss", METRIC_INNER_PRODUCT=0, METRIC_L2=1, IndexFlatIP=_FlatIndex,
                        IndexFlatL2=lambda d: _FlatIndex(d, l2=True))
    ns = load_defs(tree / "utils.py", {"np": np, "faiss": faiss, "defaultdict": defaultdict}, imports=False,
                   only=("normalize_rows", "create_index", "flush_index", "query_index", "add_vector_to_index"))

    def load_json(path):
        return STATE["json"][os.path.basename(os.path.dirname(path)) + "/" + os.path.basename(path)], {}

    def save_json(data, path, metadata=None, **kw):
        STATE["saved"] = data

    utils = stub_module("utils", log=lambda *a, **k: None, load_json=load_json, save_json=save_json,
                        update_metadata=lambda m, a: {}, **{k: ns[k] for k in ("normalize_rows", "create_index",
                        "flush_index", "query_index", "add_vector_to_index")})
    an = load_defs(tree / "multiturn" / "analysis" / "utils.py", {"np": np, "os": os, "datetime": datetime.datetime,
                                                                   "utils": utils}, imports=False,
                   only=("partition_by_date", "get_bucket_start", "partition_by_time_bucket", "filter_by_role"))
    loaders = {"load_synthetic_corpus_and_embeddings": lambda *a: (STATE["synthetic"], STATE["emb_synthetic"]),
               "load_natural_corpus_and_embeddings": lambda *a: (STATE["natural"], STATE["emb_natural"])}
    stub_module("multiturn", __path__=[])
    stub_module("multiturn.analysis", __path__=[])
    stub_module("multiturn.analysis.utils", **{k: an[k] for k in ("partition_by_date", "get_bucket_start",
                "partition_by_time_bucket", "filter_by_role")}, **loaders)
    stub_module("tqdm", tqdm=lambda it, **kw: it)
    plt = _Plot()
    mpl = stub_module("matplotlib", pyplot=plt)
    sys.modules["matplotlib.pyplot"] = plt  # type: ignore[assignment]
    mpl.use = lambda *a: None
    div = load_defs(tree / "multiturn" / "analysis" / "compute_diversity_neighbors.py")
    nov = load_defs(tree / "multiturn" / "analysis" / "compute_novelty_neighbors.py")
    plot = load_defs(tree / "multiturn" / "analysis" / "plot_lacer_diversity.py",
                     keep=("NATURAL_COLOR", "SYNTHETIC_COLOR"))
    STATE["plt"] = plt
    return div, nov, plot


def _day(rng: random.Random, start: str, span: int) -> str:
    return (datetime.date.fromisoformat(start) + datetime.timedelta(days=rng.randrange(span))).isoformat()


def _corpora(rng: random.Random, n_prior: int, per_month: list[int], n_natural: list[int], n_comp: int):
    """A synthetic corpus (prior + role 'synthetic' papers) and a real one (companions + 'target' papers)."""
    prior = [{"corpus_id": f"h{i}", "date": _day(rng, "2023-01-01", 600), "roles": ["target"]} for i in range(n_prior)]
    prior.sort(key=lambda p: p["date"])
    months = ["2024-10-01", "2024-11-01", "2024-12-01"]
    synth = []
    for m, count in zip(months, per_month):
        synth += [{"corpus_id": f"S{len(synth) + j:05d}", "date": _day(rng, m, 28), "roles": ["synthetic"]}
                  for j in range(count)]
    synth.sort(key=lambda p: p["date"])
    natural = [{"corpus_id": f"c{i}", "date": _day(rng, "2023-01-01", 640),
                "roles": ["target.key_reference"]} for i in range(n_comp)]
    for m, count in zip(months, n_natural):
        natural += [{"corpus_id": f"t{m[5:7]}_{j}", "date": _day(rng, m, 28), "roles": ["target"]}
                    for j in range(count)]
    natural += [{"corpus_id": f"l{i}", "date": _day(rng, "2024-10-01", 85),
                 "roles": ["target.author.publication_history"]}
                for i in range(rng.randrange(0, 12))]
    rng.shuffle(natural)  # release row order says nothing about dates
    return prior + synth, natural


def _emb(rng: np.random.Generator, papers: list[dict]) -> dict[str, np.ndarray]:
    """Multiples of 1/64: exact in float32 and short in JSON."""
    return {p["corpus_id"]: (rng.integers(-64, 65, DIM) / 64).astype(np.float32) for p in papers}


def neighbour_cases(div: dict, nov: dict) -> list[dict]:
    """One case per pair of corpora: every curve on the synthetic corpus and on the real one matched to it."""
    rng = random.Random(27)
    nrng = np.random.default_rng(27)
    cases = []
    configs = [(5, 3, [12, 9, 10], [20, 15, 8]), (4, 2, [6, 7], [9, 30]), (6, 5, [6, 14, 12], [6, 14, 12]),
               (3, 1, [4, 4, 4], [40, 3, 10]), (8, 4, [10, 12, 11], [12, 16, 25]), (2, 2, [3, 5], [4, 6]),
               (5, 5, [6, 6, 6], [5, 20, 20]), (7, 3, [8, 20, 9], [10, 10, 10]), (6, 3, [4, 9], [12, 12]),
               (4, 3, [9, 9], [3, 12]), (3, 2, [3, 3, 3], [3, 3, 3]), (8, 5, [10, 12, 11], [14, 12, 16])]
    for i, (n, k, per, nat) in enumerate(configs):
        seed = (42, 7, 0)[i % 3]
        synthetic, natural = _corpora(rng, rng.randrange(8, 30), per, nat, rng.randrange(10, 40))
        emb_s, emb_n = _emb(nrng, synthetic), _emb(nrng, natural)
        expected = {}
        for kind in ("diversity", "novelty_evolving", "novelty_fixed"):
            for on in ("synthetic", "natural"):
                STATE.update({"synthetic": {p["corpus_id"]: p for p in synthetic},
                              "natural": {p["corpus_id"]: p for p in natural}, "emb_synthetic": emb_s,
                              "emb_natural": emb_n, "json": {"simulated/all_papers.json": synthetic}, "saved": None})
                sys.argv = ["x", "--compute_on", on, "--embeddings_dir", "e", "--synthetic_dir", "simulated",
                            "--role", "synthetic" if on == "synthetic" else "target", "--time_bucket", "30",
                            "--n", str(n), "--k", str(k), "--output_path", "/tmp/x/out.json", "--seed", str(seed)]
                if kind == "novelty_fixed":
                    sys.argv.append("--fixed_prior")
                try:
                    (div if kind == "diversity" else nov)["main"]()
                    expected[f"{kind}:{on}"] = {"neighbours": STATE["saved"]}
                except ValueError as exc:
                    expected[f"{kind}:{on}"] = {"raises": raised(exc), "message": str(exc)}
        cases.append({"name": f"corpora_{i}", "n": n, "k": k, "seed": seed, "synthetic": synthetic,
                      "natural": natural, "embeddings": {"synthetic": {c: v.tolist() for c, v in emb_s.items()},
                                                         "natural": {c: v.tolist() for c, v in emb_n.items()}},
                      "expected": expected})
    return cases


def _scored(rng: random.Random, months: list[str], per: int, fail: float) -> list[dict]:
    out = []
    for m in months:
        for j in range(rng.randrange(1, per)):
            nbs = []
            for _ in range(rng.randrange(0, 6)):
                nb = {"corpus_id": f"n{rng.randrange(999)}"}
                if rng.random() >= fail:
                    nb["lacer_score"] = float(rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 5.5]))
                nbs.append(nb)
            out.append({"corpus_id": f"p{j}", "bucket": m, "neighbors": nbs})
    rng.shuffle(out)
    return out


def curve_cases(plot: dict) -> list[dict]:
    rng = random.Random(3)
    cases = []
    for i in range(24):
        months = sorted(rng.sample(["2024-10-01", "2024-11-01", "2024-12-01", "2025-01-01", "2025-02-01"],
                                   rng.randrange(1, 5)))
        natural = _scored(rng, months, rng.randrange(2, 30), rng.choice([0.0, 0.1, 0.5]))
        synthetic = [_scored(rng, months, rng.randrange(2, 20), rng.choice([0.0, 0.2]))
                     for _ in range(rng.randrange(1, 4))]
        seed, n_boot = rng.choice([42, 0, 123]), rng.choice([50, 200, 1000])
        STATE["json"] = {"x/natural.json": natural, **{f"x/s{j}.json": s for j, s in enumerate(synthetic)}}
        STATE["plt"].lines = []
        sys.argv = ["x", "--natural_path", "x/natural.json", "--synthetic_paths",
                    *[f"x/s{j}.json" for j in range(len(synthetic))], "--output_path", "/tmp/x/fig.png",
                    "--n_bootstrap", str(n_boot), "--seed", str(seed)]
        try:
            plot["main"]()
            expected = {"curves": {line["label"].lower(): line for line in STATE["plt"].lines}}
        except (ValueError, ZeroDivisionError, IndexError) as exc:
            expected = {"raises": raised(exc)}
        cases.append({"name": f"curves_{i}", "seed": seed, "n_bootstrap": n_boot, "natural": natural,
                      "synthetic": synthetic, "expected": expected})
    return cases


def main(tree: str) -> None:
    root = Path(tree)
    div, nov, plot = _install(root)
    os.makedirs("/tmp/x", exist_ok=True)
    upstream = {"repo": REPO, "commit": COMMIT}
    write_cases("prescience_rollout_neighbours", {**upstream, "function": "multiturn/analysis/"
                "compute_diversity_neighbors.py and compute_novelty_neighbors.py main (--time_bucket 30)"},
                neighbour_cases(div, nov))
    write_cases("prescience_rollout_curves", {**upstream, "function": "multiturn/analysis/plot_lacer_diversity.py "
                "main (compute_per_paper_scores, bootstrap_ci; plot_lacer_novelty.py is the same code)"},
                curve_cases(plot))


if __name__ == "__main__":
    main(sys.argv[1])
