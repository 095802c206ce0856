"""IDRBench reference baselines (``sciprobe baselines idrbench``; spec ``idrbench.md`` §5.1 "Random baselines",
§5.2, §5.3 Kendall τ vs a similarity ranking):

- ``random``: a fair coin per IPI / I3 item and a uniformly random order of the I2R candidates, seeded per item
  (``random.Random("<seed>:<item id>")``), so a subset of the items gets the same answers;
- ``majority``: the majority gold label of the evaluated items (``no`` on every release set) for IPI / I3 — the
  floor a constant answer reaches;
- ``title-similarity`` (I2R): candidates ranked by the TF-IDF cosine similarity of their title to the seed
  paper's title (word uni- and bigrams, sublinear tf, fitted per instance on its own titles); no model, no
  abstracts.

Predictions go through the tasks' own predictions-file path (labels for IPI / I3, rankings for I2R).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

from sciprobe.core.declaration import Baseline, BaselineInput

SEED = 0
CLASSIFICATION = ("ipi", "ipi_5shot", "i3_set1", "i3_set1_3shot", "i3_set2", "i3_set2_3shot")


def _rng(row: Mapping[str, Any]) -> random.Random:
    return random.Random(f"{SEED}:{row['id']}")


def random_predictions(given: BaselineInput) -> dict[str, dict[str, Any]]:
    if given.task.name == "i2r":
        from sciprobe.benchmarks.idrbench.i2r import candidates

        out = {}
        for row in given.rows:
            order = candidates(row)
            _rng(row).shuffle(order)
            out[str(row["id"])] = {"ranking": order, "scores": [float(len(order) - i) for i in range(len(order))]}
        return out
    return {str(row["id"]): {"prediction": _rng(row).choice(("yes", "no"))} for row in given.rows}


def majority_predictions(given: BaselineInput) -> dict[str, dict[str, Any]]:
    counts = Counter("yes" if row["label"] else "no" for row in given.rows)
    label = max(sorted(counts), key=lambda k: counts[k])
    return {str(row["id"]): {"prediction": label} for row in given.rows}


def title_similarity_predictions(given: BaselineInput) -> dict[str, dict[str, Any]]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    from sciprobe.benchmarks.idrbench.i2r import candidates

    out = {}
    for row in given.rows:
        titles = candidates(row)
        seed = str((row.get("seed") or {}).get("title") or "")
        vectors = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True).fit_transform([seed, *titles])
        similarity = (vectors[1:] @ vectors[0].T).toarray().ravel()
        order = sorted(range(len(titles)), key=lambda k: (-similarity[k], titles[k]))
        out[str(row["id"])] = {"ranking": [titles[k] for k in order],
                               "scores": [round(float(similarity[k]), 12) for k in order]}
    return out


def baselines() -> list[Baseline]:
    return [
        Baseline("random", "a fair coin per IPI/I3 item and a uniformly random candidate order per I2R instance "
                           f"(seeded per item id, seed {SEED})", (*CLASSIFICATION, "i2r"), random_predictions),
        Baseline("majority", "the majority gold label of the evaluated items, for every item",
                 CLASSIFICATION, majority_predictions),
        Baseline("title-similarity", "I2R candidates ranked by TF-IDF cosine similarity of their title to the seed "
                                     "paper's title", ("i2r",), title_similarity_predictions),
    ]
