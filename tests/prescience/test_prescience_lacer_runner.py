"""LACER through the LLM client (loopback stub judges, real HTTP), lattice files and building, the validation
harness, and `sciprobe evaluate prescience:contribution_generation` end to end (spec prescience.md §2 T1, §3)."""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import re
import threading
from pathlib import Path

import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.llm.cache import ResponseCache
from sciprobe.llm.client import LLMClient
from sciprobe.testing.stub_server import StubServer
from sciprobe.benchmarks.prescience import lacer_judge as lr
from sciprobe.benchmarks.prescience import lacer_lattice as ll
from sciprobe.benchmarks.prescience.scoring.lacer import PLACEHOLDERS, LacerTemplate, average_judges
from sciprobe.benchmarks.prescience.scoring.lacer_validation import (
    inter_annotator_agreement,
    kendall_tau_b,
    metric_agreement,
    parse_ranking,
)

from golden import CASES_DIR, REPO

SHARED_TEMPLATE = (REPO.parent / "shared" / "data" / "prescience" / "task_followup_prediction"
                   / "evaluate" / "templates" / "lacer_scoring_prompt_percentile50.110.txt")


# ---------------------------------------------------------------- a lattice of our own (invented texts)
@pytest.fixture
def lattice_file(tmp_path: Path) -> Path:
    return lr.write_lattices(tmp_path / "lattice.json", [lr.toy_lattice("matching"), lr.toy_lattice("coloring")],
                             {"note": "test lattice"})


def _pair(user: str) -> tuple[str, str]:
    """(reference title, generation title) from a filled judge prompt (the pair is the last block)."""
    tail = user[user.rindex("\nReference:\n") + len("\nReference:\n"):]
    ref_title = tail.splitlines()[0]
    gen_title = tail[tail.index("Generation:\n") + len("Generation:\n"):].splitlines()[0]
    return ref_title, gen_title


def judge_reply(body: dict, *, high: int = 9, low: int = 4, fail_on: str = "noscore") -> str:
    user = body["messages"][-1]["content"]
    ref, gen = _pair(user)
    if fail_on and fail_on in gen:
        return "Reasoning: I cannot decide."
    return f"Reasoning: compared the two.\nScore: {high if ref == gen else low}"


GOLD = [{"title": f"Paper {i}", "abstract": f"About topic {i}."} for i in range(5)]
GENS = [{"title": "Paper 0", "abstract": "x"}, {"title": "Other", "abstract": "y"},
        {"title": "noscore", "abstract": "z"}, None, {"title": "Paper 4", "abstract": "w"}]
IDS = [f"id{i}" for i in range(5)]


def _client(server: StubServer, name: str, cache: ResponseCache | None = None) -> LLMClient:
    return LLMClient(f"openai/{name},base_url={server.base_url},api_key=sk-test,max_retries=0", cache=cache)


# ---------------------------------------------------------------- templates and lattice files
def test_rendered_lattice_prompt_structure(lattice_file: Path) -> None:
    template = lr.load_template(lattice_file)
    for placeholder in PLACEHOLDERS:
        assert template.text.count(placeholder) == 1
    assert template.text.count("Reference A:") == 1 and template.text.count("Reference B:") == 1
    assert len(re.findall(r"^Score:", template.text, re.MULTILINE)) == 2 * 10 + 1
    filled = template.fill(GOLD[0], GENS[1])
    assert "{{" not in filled and _pair(filled) == ("Paper 0", "Other")
    assert template.text.rstrip().endswith("Reasoning: ...\nScore: ...")


def test_lattice_file_validation(tmp_path: Path) -> None:
    bad = lr.toy_lattice("x")
    bad["generations"] = bad["generations"][:-1]
    with pytest.raises(SciprobeError, match="each score 1..10"):
        lr.write_lattices(tmp_path / "bad.json", [bad])
    (tmp_path / "other.json").write_text(json.dumps({"format": "nope"}))
    with pytest.raises(SciprobeError, match="not a lattice file"):
        lr.read_lattices(tmp_path / "other.json")


UPSTREAM_COPY = CASES_DIR / "upstream" / "prescience"  # our stand-ins at upstream's paths


def test_template_resolution_order(tmp_path: Path, lattice_file: Path, monkeypatch) -> None:
    text = tmp_path / "t.txt"
    text.write_text("Rate.\n" + "\n".join(PLACEHOLDERS) + "\nScore: ...\n")
    monkeypatch.setenv(lr.TEMPLATE_ENV, str(lattice_file))
    monkeypatch.delenv("SCIPROBE_PRESCIENCE_UPSTREAM", raising=False)
    assert "Reference A:" in lr.load_template().text  # env override (lattice file)
    assert lr.load_template(text).source == str(text)  # explicit path beats the env
    assert lr.load_template(text, upstream_dir=UPSTREAM_COPY).source == str(text)
    # --upstream-dir (an explicit option) beats the environment's other judge prompt
    assert lr.load_template(upstream_dir=UPSTREAM_COPY).text.startswith("TEST-LACER-TEMPLATE")
    monkeypatch.delenv(lr.TEMPLATE_ENV)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SciprobeError) as err:
        lr.load_template()
    message = str(err.value)
    assert "\n" not in message and lr.TEMPLATE_ENV in message and "not cached" in message
    assert "--upstream-dir DIR" in message and "SCIPROBE_PRESCIENCE_UPSTREAM" in message
    assert "--lacer-template" not in message  # issue 23.9: `sciprobe score` has no such option
    with pytest.raises(SciprobeError) as err:
        lr.load_template(option=None)  # lighteval: no command-line option to name
    assert "--upstream-dir" not in str(err.value) and "SCIPROBE_PRESCIENCE_UPSTREAM" in str(err.value)
    monkeypatch.setenv("SCIPROBE_PRESCIENCE_UPSTREAM", str(UPSTREAM_COPY))
    assert lr.load_template().system.startswith("TEST-LACER-SYSTEM")


def test_upstream_judge_prompt_is_the_template_and_lacer_scores_system_message() -> None:
    """Issue 22: the judge's system message was sciprobe's own wording; upstream's is lacer_score.py's
    SYSTEM_PROMPT (read with ast from the pinned file, never stored here). The template is stripped as upstream
    reads it."""
    template = lr.load_template(upstream_dir=UPSTREAM_COPY)
    folder = UPSTREAM_COPY / "task_followup_prediction" / "evaluate"
    assert template.text == (folder / "templates" / "lacer_scoring_prompt_percentile50.110.txt").read_text().strip()
    assert template.system == "TEST-LACER-SYSTEM: you compare two research papers."
    assert template.system_source == "allenai/prescience@47384ed:task_followup_prediction/evaluate/lacer_score.py " \
                                     "SYSTEM_PROMPT"
    assert lr.judge_messages(template, GOLD[0], GENS[1])[0] == {"role": "system", "content": template.system}
    # our stand-ins are not upstream's files: the run says so (sha256 against the pins)
    assert len(template.warnings) == 2 and all("differs from allenai/prescience@47384ed" in w
                                               for w in template.warnings)


def test_official_judge_prompt_download_is_pinned_and_cached(tmp_path: Path, monkeypatch) -> None:
    """Served from a loopback HTTP server standing in for raw.githubusercontent.com: both judge files are verified
    against their pinned sha256, cached, then read offline."""
    import hashlib

    from sciprobe.benchmarks.prescience.upstream import LACER_SCORE_PATH, LACER_TEMPLATE_PATH
    from sciprobe.core.declaration import Upstream

    template = "Judge.\n" + "\n".join(PLACEHOLDERS) + "\nScore: ...\n"
    script = 'SYSTEM_PROMPT = "You judge."\n'
    site = tmp_path / "site"
    for path, body in ((LACER_TEMPLATE_PATH, template), (LACER_SCORE_PATH, script)):
        (site / "owner" / "repo" / path).parent.mkdir(parents=True, exist_ok=True)
        (site / "owner" / "repo" / path).write_text(body)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setattr(Upstream, "raw_url", lambda self, path: f"{base}/{self.repo}/{path}")
    monkeypatch.delenv("SCIPROBE_PRESCIENCE_UPSTREAM", raising=False)

    def pinned(template_sha: str) -> Upstream:
        return Upstream("owner/repo", "d" * 40, judge_files={
            LACER_TEMPLATE_PATH: template_sha, LACER_SCORE_PATH: hashlib.sha256(script.encode()).hexdigest()})

    good = pinned(hashlib.sha256(template.encode()).hexdigest())
    try:
        with pytest.raises(SciprobeError, match="expected 000000000000"):
            lr.official_template(upstream=pinned("0" * 64), offline=False)
        first = lr.official_template(upstream=good, offline=False)
        assert first.text == template.strip() and first.system == "You judge." and not first.warnings
    finally:
        server.shutdown()
    again = lr.official_template(upstream=good, offline=True)  # from the cache, no server
    assert (again.text, again.system) == (first.text, first.system) and "cached" in again.source


def test_reference_template_when_present() -> None:
    if not SHARED_TEMPLATE.is_file():
        pytest.skip("reference LACER template not available in ../shared")
    template = lr.load_template(SHARED_TEMPLATE)
    assert template.sha256 == lr.OFFICIAL_TEMPLATE_SHA256
    assert len(re.findall(r"Reference [A-E]:", template.text)) == 5
    assert sum(1 for line in template.text.splitlines() if "Score:" in line) == 51
    assert "{{" not in template.fill(GOLD[0], GENS[0])
    with StubServer(reply=judge_reply) as server:
        run = lr.judge_pairs(IDS[:2], GENS[:2], GOLD[:2], [_client(server, "j")], template)
    assert run.per_judge["openai/j"]["official"].values["per_item"] == [9.0, 4.0]


# ---------------------------------------------------------------- judging through the client
def test_judge_through_stub_records_failures(lattice_file: Path) -> None:
    template = lr.load_template(lattice_file)
    with StubServer(reply=judge_reply) as server:
        run = lr.judge_pairs(IDS, GENS, GOLD, [_client(server, "judge-a")], template, modes=("official", "corrected"))
        assert server.count == 5
    official = run.per_judge["openai/judge-a"]["official"]
    # 9 (same title), 4, no score (failure), 4 (empty generation is judged), 9
    assert official.values["per_item"] == [9.0, 4.0, None, 4.0, 9.0]
    assert official.values["lacer"] == pytest.approx(6.5)
    assert (official.coverage.n_items, official.coverage.n_scored, official.coverage.n_failed) == (5, 4, 1)
    assert official.values["ci95_low"] <= 6.5 <= official.values["ci95_high"]
    assert official.params["template_sha256"] == template.sha256
    corrected = run.per_judge["openai/judge-a"]["corrected"]
    assert corrected.values["lacer"] == pytest.approx(6.5) and corrected.coverage.n_failed == 1
    assert run.average["official"].values["lacer"] == pytest.approx(6.5)
    assert run.replies["openai/judge-a"][2] == "Reasoning: I cannot decide."


def test_two_judges_averaged_over_the_intersection(lattice_file: Path) -> None:
    template = lr.load_template(lattice_file)
    second = functools.partial(judge_reply, high=7, low=2, fail_on="Paper 4")
    with StubServer(reply=judge_reply) as a, StubServer(reply=second) as b:
        run = lr.judge_pairs(IDS, GENS, GOLD, [_client(a, "judge-a"), _client(b, "judge-b")], template)
    avg = run.average["official"]
    # judge-a fails on id2, judge-b on id2? no: on id4 ("Paper 4") and scores id2 ("noscore" is not its trigger)
    assert run.per_judge["openai/judge-b"]["official"].values["per_item"] == [7.0, 2.0, 2.0, 2.0, None]
    assert avg.values["ids"] == ["id0", "id1", "id3"]
    assert avg.values["per_item"] == [8.0, 3.0, 3.0]
    assert avg.values["lacer"] == pytest.approx(14 / 3)
    assert avg.values["lacer[openai/judge-a]"] == pytest.approx(17 / 3)
    assert avg.values["lacer[openai/judge-b]"] == pytest.approx(11 / 3)
    assert (avg.coverage.n_items, avg.coverage.n_scored, avg.coverage.n_failed) == (5, 3, 2)


def test_average_judges_by_hand() -> None:
    report = average_judges({"a": {"x": 2.0, "y": 4.0, "z": None}, "b": {"x": 4.0, "y": 8.0, "w": 1.0}})
    assert report.values["ids"] == ["x", "y"] and report.values["lacer"] == pytest.approx(4.5)
    assert report.coverage.n_items == 4 and report.coverage.n_failed == 2


def test_cache_replay_makes_no_new_http_call(tmp_path: Path, lattice_file: Path) -> None:
    template = lr.load_template(lattice_file)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    with StubServer(reply=judge_reply) as server:
        first = lr.judge_pairs(IDS, GENS, GOLD, [_client(server, "judge-a", cache)], template)
        assert server.count == 5 and first.n_calls == 5
        replay = lr.judge_pairs(IDS, GENS, GOLD, [_client(server, "judge-a", cache)], template)
        assert server.count == 5 and replay.n_calls == 0
    assert replay.replies == first.replies
    assert replay.average["official"].values["lacer"] == first.average["official"].values["lacer"]


# ---------------------------------------------------------------- lattice building
def interpolation_reply(body: dict, *, sloppy_first: bool = False) -> str:
    last = body["messages"][-1]["content"]
    if sloppy_first and "could not be read" not in last:
        return "Here are some ideas: B is like A, I is like J."
    lines = []
    for letter in ll.STEP_LETTERS:
        lines += [f"**Title {letter}:** Bridge paper {letter}",
                  f"Abstract {letter}: We move one facet, step {letter}.", "It continues on a second line."]
    return "\n".join(lines)


def test_ngram_overlap_and_anchor_by_hand() -> None:
    assert ll.ngram_overlap("a b c", "a b x") == pytest.approx(0.5)  # bigrams {ab, bc}: ab shared
    target = {"title": "T", "abstract": "graph neural networks for molecules"}
    refs = [{"title": "low", "abstract": "unrelated words here"},
            {"title": "mid", "abstract": "graph neural models of text"},
            {"title": "high", "abstract": "graph neural networks for molecules"}]
    assert ll.select_anchor(target, refs)["title"] == "mid"
    assert ll.select_anchor(target, refs, percentile=0)["title"] == "low"
    assert ll.select_anchor(target, refs, percentile=100)["title"] == "high"


def test_build_lattice_with_a_stub_llm(tmp_path: Path) -> None:
    target = {"title": "Target paper", "abstract": "graph neural networks for molecules"}
    refs = [{"title": "low", "abstract": "unrelated words here"},
            {"title": "mid", "abstract": "graph neural models of text"},
            {"title": "high", "abstract": "graph neural networks for molecules"}]
    with StubServer(reply=functools.partial(interpolation_reply, sloppy_first=True)) as server:
        lattice = ll.build_lattice(target, _client(server, "writer"), references=refs)
        assert server.count == 2  # the unparsable first answer is retried once with a reminder
    scores = [g["score"] for g in lattice["generations"]]
    assert scores == list(range(1, 11))
    assert lattice["generations"][0]["title"] == "mid"  # the median-overlap reference anchors score 1
    assert lattice["generations"][-1] == {"score": 10, **target} and lattice["reference"] == target
    assert lattice["generations"][1] == {"score": 2, "title": "Bridge paper B",
                                         "abstract": "We move one facet, step B. It continues on a second line."}
    path = lr.write_lattices(tmp_path / "built.json", [lattice])
    assert lr.load_template(path).text.count("Score: ") == 11


def test_build_lattice_cli_hook(tmp_path: Path, capsys) -> None:
    items = tmp_path / "targets.jsonl"
    items.write_text("\n".join(json.dumps({"title": f"Target {i}", "abstract": "a b c d",
                                           "anchor": {"title": "Anchor", "abstract": "e f g"}}) for i in range(3)))
    parser = ll.configure_parser(argparse.ArgumentParser())
    with StubServer(reply=interpolation_reply) as server:
        args = parser.parse_args(["--input", str(items), "--model", f"openai/w,base_url={server.base_url},api_key=x",
                                  "--out", str(tmp_path / "l.json"), "--count", "2", "--render",
                                  str(tmp_path / "prompt.txt")])
        assert ll.cmd(args) == 0
        assert server.count == 2
    assert len(lr.read_lattices(tmp_path / "l.json")) == 2
    LacerTemplate((tmp_path / "prompt.txt").read_text())  # a valid judge prompt
    assert "wrote 2 lattice(s)" in capsys.readouterr().out


def test_parse_interpolation_rejects_missing_steps() -> None:
    assert ll.parse_interpolation("Title B: x\nAbstract B: y") is None
    assert ll.parse_interpolation(None) is None


# ---------------------------------------------------------------- validation harness
def test_parse_ranking_with_ties() -> None:
    assert parse_ranking("3>1=2>4") == {"3": 3.0, "1": 2.0, "2": 2.0, "4": 1.0}
    with pytest.raises(SciprobeError, match="twice"):
        parse_ranking("1>1")


def test_kendall_tau_b_hand_derived() -> None:
    """Human 1>2=3 vs metric 1:3, 2:1, 3:2. Pairs (1,2), (1,3) concordant; (2,3) tied in the human ranking only.
    tau_b = (C - D) / sqrt((n0 - n_x)(n0 - n_y)) = 2 / sqrt(2 * 3)."""
    rankings = {"p1": {"ann1": "1>2=3", "ann2": "1>2>3"}, "p2": {"ann1": "a>b>c", "ann2": "c>b>a"}}
    metric = {"p1": {"1": 3, "2": 1, "3": 2}, "p2": {"a": 3, "b": 2, "c": 1}}
    report = metric_agreement(rankings, metric, metric="lacer")
    t = 2 / 6 ** 0.5
    # ann1: p1 t, p2 1 -> (t + 1) / 2; ann2: p1 (1,2)C (1,3)C (2,3)D -> 1/3, p2 -1 -> (1/3 - 1) / 2
    assert report.values["per_cell"]["p1"]["ann1"] == pytest.approx(t)
    assert report.values["per_annotator"]["ann1"] == pytest.approx((t + 1) / 2)
    assert report.values["per_annotator"]["ann2"] == pytest.approx((1 / 3 - 1) / 2)
    assert report.values["tau_b"] == pytest.approx(((t + 1) / 2 + (1 / 3 - 1) / 2) / 2)
    iaa = inter_annotator_agreement(rankings)
    # p1: ann1 1>2=3 vs ann2 1>2>3 -> same t (ties on one side); p2: reversed -> -1
    assert iaa.values["per_pair"]["ann1|ann2"] == pytest.approx((t - 1) / 2)
    assert iaa.values["tau_b"] == pytest.approx((t - 1) / 2)


def test_undefined_tau_is_skipped_and_counted() -> None:
    assert kendall_tau_b([1, 1, 1], [1, 2, 3]) is None
    report = metric_agreement({"p": {"a": "1=2=3", "b": "1>2>3"}}, {"p": {"1": 3, "2": 2, "3": 1}}, bootstrap=0)
    assert report.coverage.n_failed == 1 and report.values["tau_b"] == pytest.approx(1.0)


# ---------------------------------------------------------------- end to end through `sciprobe evaluate`
def generation_reply(body: dict) -> str:
    user = body["messages"][-1]["content"]
    first = user.split("Title: ", 1)[1].splitlines()[0]
    if "Background Paper 2:" not in user:
        return "I would rather not answer."  # single-reference targets: unparsable
    return f"Reasoning: combine them.\nTitle: {first}\nAbstract: A follow-up that extends {first}."


def _gold_aware_judge(body: dict) -> str:
    _, gen = _pair(body["messages"][-1]["content"])
    return "Reasoning: fine.\nScore: 6" if gen else "Reasoning: empty generation, nothing to compare."


@pytest.mark.slow
def test_evaluate_contribution_generation_end_to_end(tmp_path: Path, lattice_file: Path, monkeypatch) -> None:
    from sciprobe.cli.commands import main

    monkeypatch.setenv(lr.TEMPLATE_ENV, str(lattice_file))
    out = tmp_path / "run"
    with StubServer(reply=generation_reply) as gen, StubServer(reply=_gold_aware_judge) as judge:
        model = f"openai/gen-model,base_url={gen.base_url},api_key=sk-test"
        judge_spec = f"openai/judge-model,base_url={judge.base_url},api_key=sk-test"
        argv = ["evaluate", "prescience:contribution_generation", "--model", model, "--judge", judge_spec,
                "--limit", "8", "--output-dir", str(out)]
        assert main(argv) == 0
        # identical prompts (synthetic targets may share their references) are asked once
        calls = (gen.count, judge.count)
        assert 0 < calls[0] <= 8 and 0 < calls[1] <= 8
        assert main(argv) == 0  # replayed from the response cache: no new HTTP call
        assert (gen.count, judge.count) == calls
    results = json.loads(max((out / "results").rglob("results_*.json")).read_text())
    scores = results["results"]["prescience:contribution_generation|0"]
    failed_generations = scores["n_generation_failed"]
    assert 0 < failed_generations < 8
    assert scores["lacer"] == pytest.approx(6.0) and scores["n_failed"] == failed_generations
    # the judge gave no score to the failed generations: failures in both modes, never a score
    assert scores["lacer:corrected"] == pytest.approx(6.0)
    corrected = results["sciprobe"]["tasks"]["prescience:contribution_generation|0"]["scores"]["corrected"]
    assert corrected["coverage"]["n_failed"] == failed_generations
    assert 0 < scores["rougeL"] < 1 and 0 < scores["bertscore_f1"] <= 1
    task = results["sciprobe"]["tasks"]["prescience:contribution_generation|0"]
    assert task["provenance"]["lacer_template_sha256"] == lr.load_template(lattice_file).sha256
    assert task["scores"]["official"]["params"]["lacer"]["judge_ids"] == ["openai/judge-model"]


def test_no_generation_and_no_judge_score_is_a_failure_in_every_mode(tmp_path: Path, lattice_file: Path,
                                                                      monkeypatch) -> None:
    """Issue 22.2: the stub's reply is no answer ("failed:no_title") and, as the judge, gives no score; corrected
    mode reported 1.000 with "failed 0 (0%)". No mode turns a judge's silence into a number."""
    from sciprobe.cli.commands import main

    monkeypatch.setenv(lr.TEMPLATE_ENV, str(lattice_file))
    out = tmp_path / "run"
    with StubServer() as stub:
        spec = f"openai/stub,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", "prescience:contribution_generation", "--model", spec, "--judge", spec,
                     "--limit", "3", "--output-dir", str(out), "--no-cache"]) == 0
    task = json.loads(max((out / "results").rglob("results_*.json")).read_text())["sciprobe"]["tasks"]
    result = task["prescience:contribution_generation|0"]
    assert {r["parse_path"] for r in _details(out)} == {"failed:no_title"}
    for mode in ("official", "corrected"):
        scores = result["scores"][mode]
        assert scores["lacer"] is None, mode
        assert (scores["coverage"]["n_items"], scores["coverage"]["n_scored"], scores["coverage"]["n_failed"]) \
            == (3, 0, 3), mode


def _details(out: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(next((out / "details").rglob("*.parquet"))).to_pylist()


def test_evaluate_without_judge_is_a_one_line_error(tmp_path: Path, capsys, lattice_file: Path, monkeypatch) -> None:
    from sciprobe.cli.commands import main

    monkeypatch.setenv(lr.TEMPLATE_ENV, str(lattice_file))
    with StubServer(reply=generation_reply) as gen:
        code = main(["evaluate", "prescience:contribution_generation", "--model",
                     f"openai/g,base_url={gen.base_url},api_key=x", "--limit", "2", "--output-dir", str(tmp_path)])
        assert gen.count == 0
    assert code == 2 and "--judge" in capsys.readouterr().err


# ---------------------------------------------------------------- `sciprobe prescience baselines|score` hooks
def test_prescience_cli_hooks(tmp_path: Path, capsys, lattice_file: Path) -> None:
    from sciprobe.core.registry import get_benchmark
    from sciprobe.benchmarks.prescience import cli as pcli
    from sciprobe.benchmarks.prescience.offline_scoring import TaskData

    parser = pcli.configure_parser(argparse.ArgumentParser())
    assert pcli.cmd(parser.parse_args(["baselines", "--task", "citation_prediction",
                                       "--json", str(tmp_path / "b.json")])) == 0
    assert "prescience:citation_prediction [official] n=" in capsys.readouterr().out
    assert "mae" in json.loads((tmp_path / "b.json").read_text())["citation_prediction"]

    instances = TaskData(get_benchmark("prescience").sample_source, "contribution_generation").instances
    preds = tmp_path / "preds.jsonl"
    preds.write_text("\n".join(json.dumps({"id": r["corpus_id"], "prediction": {"title": r["title"],
                                                                                 "abstract": r["abstract"]}})
                               for r in instances[:3]) + "\n")
    with StubServer(reply=judge_reply) as server:
        args = parser.parse_args(["score", "contribution_generation", "--predictions", str(preds), "--judge",
                                  f"openai/j,base_url={server.base_url},api_key=x", "--lacer-template",
                                  str(lattice_file), "--json", str(tmp_path / "s.json")])
        assert pcli.cmd(args) == 0
    out = json.loads((tmp_path / "s.json").read_text())
    n = len(instances)
    assert out["contribution_generation"]["coverage"]["n_failed"] == n - 3
    assert out["contribution_generation:lacer"]["lacer"] == pytest.approx((3 * 9 + (n - 3) * 4) / n)
    with pytest.raises(SciprobeError, match="contribution_generation only"):
        pcli.cmd(parser.parse_args(["score", "citation_prediction", "--predictions", str(preds), "--judge", "x/y"]))


def test_task_scorer_rescores_stored_replies_of_two_judges() -> None:
    """The declaration's scorer re-parses stored judge replies per mode and averages judges over common ids."""
    from sciprobe.benchmarks.prescience.contribution import score_records

    gold = {"title": "G", "abstract": "g"}
    replies = [{"a": "Score: 8", "b": "Score: 6"}, {"a": "no score", "b": "Score: 2"},
               {"a": "Score: 4", "b": "Score: 4"}]
    records = [{"id": f"i{k}", "gold": gold, "prediction": gold, "lacer_replies": json.dumps(r)}
               for k, r in enumerate(replies)]
    official = score_records(records, "official", bertscore=False)
    assert official.values["lacer"] == pytest.approx((7 + 4) / 2)
    assert official.values["lacer[a]"] == pytest.approx(6.0) and official.values["lacer_failed[a]"] == 1
    assert official.coverage.n_scored == 2 and official.coverage.n_failed == 1
    corrected = score_records(records, "corrected", bertscore=False)
    assert corrected.values["lacer"] == pytest.approx((7 + 4) / 2)  # judge a's unscored reply is no 1
    assert corrected.coverage.n_scored == 2 and corrected.coverage.n_failed == 1


@pytest.mark.slow
def test_bundled_model_as_judge(lattice_file: Path) -> None:
    """LACER with the bundled SmolLM2 as the judge, offline: every item ends scored or a counted failure."""
    from sciprobe.llm.client import LLMClient

    template = lr.load_template(lattice_file)
    judge = LLMClient("local/smollm2,max_tokens=24,temperature=0")
    run = lr.judge_pairs(IDS[:2], GENS[:2], GOLD[:2], [judge], template)
    report = run.per_judge["local/smollm2"]["official"]
    assert report.coverage.n_items == 2
    assert report.coverage.n_scored + report.coverage.n_failed == 2
    assert len(run.replies["local/smollm2"]) == 2 and all(isinstance(r, str) for r in run.replies["local/smollm2"])
    scored = [s for s in report.values["per_item"] if s is not None]
    assert len(scored) == report.coverage.n_scored  # official parsing does not clamp, so no range check
