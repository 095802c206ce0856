"""ROUGE-L identical to rouge-score 0.1.2 (stemming) and offline BERTScore (spec prescience.md §2 T1, pitfall 13)."""

from __future__ import annotations

import random
import string

import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.text_similarity import lcs_length, rouge_l, rouge_l_pair, tokenize

rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")

WORDS = ["model", "models", "modelling", "generalization", "generalize", "retrieval", "retrieving", "retrieved",
         "the", "a", "of", "and", "graph", "graphs", "neural", "networks", "network", "learning", "learned", "learns",
         "transformer", "transformers", "attention", "quantum", "3d", "point-cloud", "état", "naïve", "café", "x",
         "y", "z", "data-efficient", "fine-tuning", "pre-training", "is", "are", "was", "running", "runs", "ran",
         "studies", "studying", "studied", "universities", "university", "ponies", "caresses", "agreed"]


def _text(rng: random.Random) -> str:
    n = rng.randint(0, 60)
    parts = []
    for _ in range(n):
        r = rng.random()
        if r < 0.8:
            parts.append(rng.choice(WORDS).upper() if rng.random() < 0.05 else rng.choice(WORDS))
        elif r < 0.9:
            parts.append("".join(rng.choice(string.ascii_letters + string.digits) for _ in range(rng.randint(1, 9))))
        else:
            parts.append(rng.choice([",", ".", ";", "(", ")", "--", "\n", "\t", "%", "ü", "’s", "1.5", "e.g."]))
    return rng.choice([" ", "  ", ""]).join(parts) if parts else rng.choice(["", " ", "...", "\n"])


def test_rouge_l_identical_to_rouge_score_on_many_pairs():
    rng = random.Random(1234)
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    pairs = [(_text(rng), _text(rng)) for _ in range(3000)]
    pairs += [(a, a) for a, _ in pairs[:100]] + [("", "x"), ("x", ""), ("", "")]
    for reference, prediction in pairs:
        want = scorer.score(reference, prediction)["rougeL"]
        assert rouge_l_pair(reference, prediction) == (want.precision, want.recall, want.fmeasure), \
            (reference, prediction)


def test_tokenizer_identical_to_rouge_score():
    from nltk.stem import porter
    from rouge_score import tokenize as rs_tokenize

    stemmer = porter.PorterStemmer()
    rng = random.Random(9)
    for _ in range(500):
        text = _text(rng)
        assert tokenize(text) == rs_tokenize.tokenize(text, stemmer)


def test_bit_parallel_lcs_matches_dynamic_programming():
    rng = random.Random(3)

    def dp(a, b):
        table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i in range(1, len(a) + 1):
            for j in range(1, len(b) + 1):
                table[i][j] = (table[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1]
                               else max(table[i - 1][j], table[i][j - 1]))
        return table[-1][-1]

    for _ in range(300):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 90))]
        b = [rng.choice("abcdef") for _ in range(rng.randint(0, 90))]
        assert lcs_length(a, b) == dp(a, b)


def test_rouge_l_report_counts_empty_generations():
    report = rouge_l(["", None, "graph neural networks"], ["a", "b", "graph neural network"])
    assert report.coverage.n_failed == 2 and report.values["per_item_rougeL"][:2] == [0.0, 0.0]
    assert report.values["per_item_rougeL"][2] == 1.0  # stemming: network(s) -> network
    with pytest.raises(SciprobeError, match="differ in length"):
        rouge_l(["a"], ["a", "b"])
    with pytest.raises(SciprobeError, match="must be a string"):
        rouge_l([3], ["a"])


def test_contribution_task_scores_title_plus_abstract():
    task = get_benchmark("prescience").task("contribution_generation")
    gold = {"title": "Sparse Experts", "abstract": "We route tokens to experts."}
    report = task.score([{"prediction": gold, "gold": gold}, {"prediction": None, "gold": gold},
                         {"prediction": {"title": "Sparse Experts", "abstract": ""}, "gold": gold}])
    per_item = report.values["per_item_rougeL"]
    assert per_item[0] == 1.0 and per_item[1] == 0.0 and 0 < per_item[2] < 1
    assert report.coverage.n_failed == 1


@pytest.mark.slow
def test_offline_bertscore_matches_bert_score_directly():
    bert_score = pytest.importorskip("bert_score")
    from sciprobe.scoring.text_similarity import bertscore, offline_model_path

    cands = ["graph neural networks for molecules", "", "a cat runs fast"]
    refs = ["message passing networks on molecular graphs", "anything", "quantum error correction"]
    report = bertscore(cands, refs)
    assert report.mode == "offline" and report.coverage.n_failed == 1 and report.notes
    direct = bert_score.BERTScorer(model_type=offline_model_path(), num_layers=6).score(
        [cands[0], cands[2]], [refs[0], refs[2]])[2].tolist()
    per_item = report.values["per_item_bertscore_f1"]
    assert per_item[1] == 0.0
    assert per_item[0] == pytest.approx(direct[0], abs=1e-6) and per_item[2] == pytest.approx(direct[1], abs=1e-6)
    assert per_item[0] > per_item[2]  # the related pair is closer than the unrelated one


class _FakeScorer:
    """Stands in for bert_score.BERTScorer: F1 from the pair's lengths, every call recorded."""

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, str]]] = []

    def score(self, cands: list[str], refs: list[str]):
        import numpy as np

        self.calls.append(list(zip(cands, refs)))
        f1 = np.array([1.0 / (1 + abs(len(c) - len(r))) for c, r in zip(cands, refs)])
        return f1, f1, f1


def test_bertscore_scores_each_pair_once_so_a_bootstrap_reruns_no_model(monkeypatch):
    """lighteval's stderr rescores 1,000 resamples of the items: each pair is scored by the model once, and a
    resample gets exactly the values of the full computation."""
    from sciprobe.scoring import text_similarity

    fake = _FakeScorer()
    monkeypatch.setattr(text_similarity, "_PAIR_F1", {})
    monkeypatch.setattr(text_similarity, "_scorer", lambda *args: fake)
    monkeypatch.setattr(text_similarity, "offline_model_path", lambda: "minilm")
    cands = ["graph networks", "", "a cat", "graph networks", "quantum codes"]
    refs = ["message passing", "anything", "error correction", "message passing", "quantum error correction"]
    full = text_similarity.bertscore(cands, refs)
    assert fake.calls == [[("graph networks", "message passing"), ("a cat", "error correction"),
                           ("quantum codes", "quantum error correction")]]  # the duplicate and the empty one: no
    per_item = full.values["per_item_bertscore_f1"]
    assert per_item[1] == 0.0 and per_item[0] == per_item[3] and full.coverage.n_failed == 1
    rng = random.Random(0)
    for _ in range(20):
        picks = [rng.randrange(len(cands)) for _ in cands]
        resample = text_similarity.bertscore([cands[i] for i in picks], [refs[i] for i in picks])
        assert resample.values["per_item_bertscore_f1"] == [per_item[i] for i in picks]
    assert len(fake.calls) == 1
    text_similarity.bertscore(["graph networks"], ["another reference"])  # a new pair is scored
    assert fake.calls[-1] == [("graph networks", "another reference")]
    text_similarity.bertscore(["graph networks"], ["message passing"], offline=False, model_type="other")
    assert fake.calls[-1] == [("graph networks", "message passing")]  # another model: its own scores
