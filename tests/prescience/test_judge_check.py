"""`sciprobe judge-check` (issue 26 item 4): two loopback stub judges of known disagreement on runs of two models;
the expected kappa and tau_b are computed here independently (sklearn, scipy) from the stored details."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau, pearsonr, spearmanr
from sklearn.metrics import cohen_kappa_score

from sciprobe.benchmarks.prescience import lacer_judge as lr
from sciprobe.core.errors import SciprobeError
from sciprobe.results.human_ratings import parse_human_ratings
from sciprobe.testing.stub_server import StubServer
from sciprobe.scoring.judge_agreement import cohen_kappa, ranking_change, swap_consistency

TASK = "prescience:contribution_generation|0"
MODELS = ("gen-a", "gen-b")


def _pair(user: str) -> tuple[str, str]:
    """(reference title, generation title) from a filled lattice judge prompt (the pair is the last block)."""
    tail = user[user.rindex("\nReference:\n") + len("\nReference:\n"):]
    return tail.splitlines()[0], tail[tail.index("Generation:\n") + len("Generation:\n"):].splitlines()[0]


def _digest(*texts: str) -> int:
    return int(hashlib.sha256("\x00".join(texts).encode()).hexdigest(), 16)


def score_a(ref: str, gen: str) -> int:
    return 1 + _digest(ref, gen) % 10


def score_b(ref: str, gen: str) -> int:
    """Judge B: judge A's score on two thirds of the pairs, one point up (10 wraps to 1) on the rest."""
    a = score_a(ref, gen)
    return a if _digest("b", ref, gen) % 3 else a % 10 + 1


def _judge(score) -> callable:
    def reply(body: dict) -> str:
        ref, gen = _pair(body["messages"][-1]["content"])
        return f"Reasoning: compared.\nScore: {score(ref, gen)}"
    return reply


def _generation(body: dict) -> str:
    user = body["messages"][-1]["content"]
    first = user.split("Title: ", 1)[1].splitlines()[0]
    return f"Title: {body['model']} on {first}\nAbstract: A follow-up of {first}."


@pytest.fixture
def judged_runs(tmp_path: Path, monkeypatch) -> tuple[list[Path], str, StubServer]:
    """One results file per model, judged by stub A; yields them with judge B's spec (its server running)."""
    from sciprobe.cli import main

    lattice = lr.write_lattices(tmp_path / "lattice.json", [lr.toy_lattice("matching")], {"note": "test"})
    monkeypatch.setenv(lr.TEMPLATE_ENV, str(lattice))
    paths = []
    with StubServer(reply=_generation) as gen, StubServer(reply=_judge(score_a)) as a, \
            StubServer(reply=_judge(score_b)) as b:
        for model in MODELS:
            out = tmp_path / model
            assert main(["evaluate", "prescience:contribution_generation", "--model",
                         f"openai/{model},base_url={gen.base_url},api_key=x", "--judge",
                         f"openai/judge-a,base_url={a.base_url},api_key=x", "--limit", "8",
                         "--output-dir", str(out)]) == 0
            paths.append(next((out / "results").rglob("results_*.json")))
        yield paths, f"openai/judge-b,base_url={b.base_url},api_key=x", b


def _stored(path: Path) -> list[dict]:
    import pyarrow.parquet as pq

    results = json.loads(path.read_text())
    details = path.parents[2] / results["sciprobe"]["tasks"][TASK]["details"]
    return pq.read_table(details).to_pylist()


def _expected_pairs(paths: list[Path]) -> tuple[list[float], list[float], dict[str, tuple[float, float]]]:
    """(A's stored scores, B's scores from its rule, each model's (A mean, B mean)) over every scored item."""
    a_all, b_all, means = [], [], {}
    for model, path in zip(MODELS, paths):
        a_model, b_model = [], []
        for record in _stored(path):
            a = json.loads(record["lacer_official"])["openai/judge-a"]
            prediction = json.loads(record["prediction"]) if record["prediction"] else None
            gen = (prediction or {}).get("title", "")
            b = score_b(json.loads(record["gold"])["title"], gen)
            if a is not None:
                a_model.append(a)
                b_model.append(b)
        a_all += a_model
        b_all += b_model
        means[f"openai/{model}"] = (float(np.mean(a_model)), float(np.mean(b_model)))
    return a_all, b_all, means


def test_two_stub_judges_reproduce_kappa_and_tau_b_with_human_file(judged_runs, tmp_path: Path, capsys) -> None:
    from sciprobe.cli import main

    paths, judge_b, server_b = judged_runs
    a, b, means = _expected_pairs(paths)
    assert len(a) >= 8 and a != b  # a known, partial disagreement
    # people: a third rule, in ranks (1 = best) for model A's items and scores for B's, per annotator
    human = tmp_path / "human.csv"
    rows, human_scores = ["id,model,annotator,score"], {}
    for model, path in zip(MODELS, paths):
        for record in _stored(path):
            value = _digest("human", record["id"], model) % 7
            rows.append(f"{record['id']},openai/{model},ann1,{value}")
            human_scores[f"openai/{model}|{record['id']}"] = value
    human.write_text("\n".join(rows) + "\n")

    argv = ["judge-check", *map(str, paths), "--judge", judge_b, "--human", str(human), "--resamples", "200",
            "--json"]
    assert main(argv) == 0
    calls = server_b.count
    assert calls > 0
    [report] = json.loads(capsys.readouterr().out)
    assert (report["original_judge"], report["new_judge"]) == ("openai/judge-a", "openai/judge-b")
    assert report["scores"]["n"] == len(a)
    labels_a, labels_b = [int(x) for x in a], [int(y) for y in b]  # LACER's whole-number scale: each a category
    assert report["labels"]["cohen_kappa"]["value"] == pytest.approx(cohen_kappa_score(labels_a, labels_b))
    assert report["scores"]["kendall_tau_b"]["value"] == pytest.approx(kendalltau(a, b, variant="b").statistic)
    assert report["scores"]["pearson"]["value"] == pytest.approx(pearsonr(a, b).statistic)
    assert report["scores"]["spearman"]["value"] == pytest.approx(spearmanr(a, b).statistic)
    for name in ("pearson", "spearman", "kendall_tau_b"):
        cell = report["scores"][name]
        assert cell["ci95_low"] <= cell["value"] <= cell["ci95_high"]
    kappa = report["labels"]["cohen_kappa"]
    assert kappa["ci95_low"] <= kappa["value"] <= kappa["ci95_high"]
    order_a = sorted(means, key=lambda m: (-means[m][0], m))
    order_b = sorted(means, key=lambda m: (-means[m][1], m))
    assert report["ranking"]["order_a"] == order_a and report["ranking"]["order_b"] == order_b
    assert report["ranking"]["changes"] == (order_a != order_b)
    # tau_b against people, for the stored judge, over the items it scored
    stored_a = {}
    for model, path in zip(MODELS, paths):
        for record in _stored(path):
            score = json.loads(record["lacer_official"])["openai/judge-a"]
            if score is not None:
                stored_a[f"openai/{model}|{record['id']}"] = score
    keys = sorted(stored_a)
    expected = kendalltau([stored_a[k] for k in keys], [human_scores[k] for k in keys], variant="b").statistic
    assert report["human"]["original"]["tau_b"] == pytest.approx(expected)
    assert report["human"]["original"]["n"] == len(keys)
    assert report["human"]["original"]["ci95_low"] <= expected <= report["human"]["original"]["ci95_high"]

    # the text form, and a second check answered from the response cache: no new call to judge B
    assert main(argv[:-1]) == 0
    text = capsys.readouterr().out
    assert "Cohen's kappa" in text and "Kendall tau_b" in text and "vs people" in text
    assert server_b.count == calls


def test_another_judge_prompt_is_refused(judged_runs, tmp_path: Path, capsys) -> None:
    from sciprobe.cli import main

    paths, judge_b, server_b = judged_runs
    other = lr.write_lattices(tmp_path / "other.json", [lr.toy_lattice("coloring")], {"note": "other"})
    code = main(["judge-check", str(paths[0]), "--judge", judge_b, "--lacer-template", str(other)])
    err = capsys.readouterr().err
    assert code == 2 and "another LACER prompt" in err and err.count("\n") == 1
    assert main(["judge-check", str(paths[0]), "--judge", judge_b, "--task", "idrbench"]) == 2
    assert "no judged task with a judge check in these results matching 'idrbench'" in capsys.readouterr().err
    assert main(["judge-check", str(paths[0]), "--judge", judge_b, "--human", str(tmp_path / "none.csv")]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert server_b.count == 0


@pytest.mark.parametrize(("text", "message"), [
    ("item,score\n1,2\n", "'id' column"),
    ("id,score,rank\n1,2,3\n", "exactly one of"),
    ("id,score,extra\n1,2,3\n", "unexpected"),
    ("id,score\n1,high\n", "line 2: score 'high' is not a number"),
    ("id,rank\n1,0\n", "ranks start at 1"),
    ("id,score\n1,nan\n", "out of range"),
    ("id,score\n1,2\n1,3\n", "line 3: '1' is rated twice"),
    ("id,score\n1,2,3\n", "do not match the header"),
    ("id,score\n,2\n", "id must be"),
    ("id,score\n", "no ratings"),
    ("id,score\na\x00,1\n", "line 2: id must be"),
    ('id,score\n"a,1\n', "do not match the header"),
    ("id,score\n" + "a" * 200_000 + ",1\n", "not a readable CSV"),
])
def test_human_file_errors_are_one_line(text: str, message: str) -> None:
    with pytest.raises(SciprobeError) as err:
        parse_human_ratings(text, "h.csv")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_human_file_is_capped_and_ranks_read_higher_is_better(tmp_path: Path) -> None:
    from sciprobe.results.human_ratings import MAX_BYTES, read_human_ratings

    big = tmp_path / "big.csv"
    big.write_bytes(b"id,score\n" + b"x,1\n" * (MAX_BYTES // 4 + 1))
    with pytest.raises(SciprobeError):
        read_human_ratings(big)
    ranks = parse_human_ratings("id,rank\na,1\nb,2\n")
    assert ranks["by_annotator"]["annotator"]["a"] > ranks["by_annotator"]["annotator"]["b"]


def test_agreement_statistics_edge_cases() -> None:
    assert cohen_kappa(["1", "1"], ["1", "1"]) is None  # chance agreement already 1: undefined, never 0
    assert cohen_kappa(list("aabb"), list("abab")) == pytest.approx(cohen_kappa_score(list("aabb"), list("abab")))
    change = ranking_change({"m1": 2.0, "m2": 1.0}, {"m1": 1.0, "m2": 3.0})
    assert change["changes"] is True and change["order_b"] == ["m2", "m1"]
    swaps = swap_consistency({"i|novelty": {"original": "generated", "swapped": "reference"},
                              "j|novelty": {"original": "generated", "swapped": "generated"},
                              "k|novelty": {"original": None, "swapped": "generated"}})
    assert (swaps["consistency"], swaps["n_pairs"], swaps["n_incomplete"]) == (0.5, 2, 1)


def test_judge_vs_two_annotators_and_their_own_agreement() -> None:
    """Ranks from two annotators (1 = best): tau_b of the judge against each, averaged, and between the two, as
    PreScience B.3 sets LACER's 0.57 beside the annotators' 0.53."""
    from sciprobe.results.human_ratings import judge_vs_human

    ratings = parse_human_ratings("id,annotator,rank\n" + "".join(
        f"{i},{who},{rank}\n" for who, ranks in (("ann1", [1, 2, 3, 4, 5]), ("ann2", [2, 1, 3, 5, 4]))
        for i, rank in zip("abcde", ranks)))
    judge = {"m|a": 9.0, "m|b": 7.0, "m|c": 8.0, "m|d": 3.0, "m|e": 3.0}
    report = judge_vs_human(ratings, judge, several_models=False)
    scores = [judge[f"m|{i}"] for i in "abcde"]
    ann1 = kendalltau(scores, [-1, -2, -3, -4, -5], variant="b").statistic
    ann2 = kendalltau(scores, [-2, -1, -3, -5, -4], variant="b").statistic
    assert report["per_annotator"] == pytest.approx({"ann1": ann1, "ann2": ann2})
    assert report["tau_b"] == pytest.approx((ann1 + ann2) / 2)
    assert report["inter_annotator_tau_b"] == pytest.approx(
        kendalltau([1, 2, 3, 4, 5], [2, 1, 3, 5, 4], variant="b").statistic)
    with pytest.raises(SciprobeError, match="'model' column"):
        judge_vs_human(ratings, judge, several_models=True)
