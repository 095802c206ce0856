"""The I2R driver: lockstep tournaments, call counts equal to upstream's, official vs corrected winners."""


import datasets
import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.data.build import build_benchmark
from sciprobe.llm.types import Completion
from sciprobe.benchmarks.idrbench.i2r import run_i2r
from sciprobe.run.runners.swiss import play

IDR = get_benchmark("idrbench")


class ScriptedClient:
    """In-process stand-in for LLMClient: answers each comparison with a rule on the prompt text."""

    model_id = "scripted"

    def __init__(self, answer):
        self.answer = answer
        self.batches: list[int] = []

    def complete_many(self, requests, desc=None):
        self.batches.append(len(requests))
        return [Completion(text=self.answer(r.messages[-1]["content"])) for r in requests]


@pytest.fixture(scope="module")
def i2r_rows(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("i2r") / "sample"
    build_benchmark(IDR, IDR.sample_source, out, configs=["i2r"])
    return datasets.load_dataset(str(out), "i2r", split="test").to_list()


def _gold_first(rows):
    golds = {t["title"] for r in rows for t in r["targets"]}

    def answer(prompt: str) -> str:
        p1 = prompt.split("Paper 1:\nTitle: ", 1)[1].split("\n", 1)[0]
        return f"Your choice: Paper {1 if p1 in golds else 2}\nConfidence score: 90"
    return answer


def test_gold_always_preferred_gives_mrr_one(i2r_rows):
    client = ScriptedClient(_gold_first(i2r_rows))
    records, phash, n_calls = run_i2r(i2r_rows, client, {"temperature": 0})
    report = IDR.task("i2r").score(records, "official")
    # With one target the gold wins every game; with two, one of them ranks first.
    assert report.values["mrr"] == 1.0
    assert n_calls == sum(client.batches) == sum(r["n_comparisons"] for r in records)
    # Calls equal an independent replay of upstream's procedure, instance by instance.
    for row, record in zip(i2r_rows, records):
        titles = [t["title"] for t in row["targets"]] + [d["title"] for d in row["distractors"]]
        replay = play(titles, lambda ms: [1] * len(ms))
        assert record["n_comparisons"] == len(replay.matches)
    # Lockstep: at most one batch per round.
    assert len(client.batches) <= 10
    assert len(phash) == 64


def test_lowercase_choice_gives_paper_2_the_point_in_official_mode(i2r_rows):
    client = ScriptedClient(lambda prompt: "Your choice: paper 1\nConfidence score: 50")
    official, _, _ = run_i2r(i2r_rows[:1], client, {}, mode="official")
    corrected, _, _ = run_i2r(i2r_rows[:1], client, {}, mode="corrected")
    import json

    assert all(m["winner"] == 2 for m in json.loads(official[0]["matches"]))
    assert all(m["winner"] == 1 for m in json.loads(corrected[0]["matches"]))


def test_unparsable_and_failed_calls_give_no_points(i2r_rows):
    class FailingClient(ScriptedClient):
        def complete_many(self, requests, desc=None):
            return [Completion(text=None, error="APIError: boom") if i % 2 else Completion(text="no idea")
                    for i, _ in enumerate(requests)]

    records, _, _ = run_i2r(i2r_rows, FailingClient(None), {})
    for record, row in zip(records, i2r_rows):
        import json

        assert sum(record["scores"]) == len(json.loads(record["byes"]))  # only byes score
        assert record["n_unparsed"] + record["n_errors"] == record["n_comparisons"]
        assert record["n_errors"] > 0
