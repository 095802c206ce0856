"""The judged SGI-Bench metrics wired into ``sciprobe evaluate`` (sciprobe.benchmarks.sgibench.judged_runners): deep
research step-level accuracy + answer parser, experimental reasoning with images as content parts + the
reasoning-validity judge, text-only models (images_dropped), the cache key over images, and the
``sciprobe sgibench`` CLI (spec sgibench.md §3.1, §3.5, §3.6, §4.2, §4.3, §4.6, §8)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.cli.commands import main
from sciprobe.run.evaluation import EvaluationRequest, evaluate
from sciprobe.testing.stub_server import StubServer

SGI = get_benchmark("sgibench")
STEPS_HALF = ('[{"solution_step": "find", "reason": "ok", "judge": "correct"}, '
              '{"solution_step": "multiply", "reason": "wrong", "judge": "incorrect"}]')
STEPS_ALL = '[{"solution_step": "find", "reason": "ok", "judge": "correct"}]'


@pytest.fixture(scope="module")
def sgi_data(tmp_path_factory) -> Path:
    from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
    from sciprobe.data.build import build_benchmark

    root = tmp_path_factory.mktemp("sgi-judged")
    source = write_synthetic_source(root / "source", n=3)
    build_benchmark(SGI, source, root / "built", configs=["deep_research", "experimental_reasoning"])
    return root / "built"


def _text(body: dict) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else "\n".join(p["text"] for p in content if p["type"] == "text")


def _system(body: dict) -> str:
    first = body["messages"][0]
    return first["content"] if first["role"] == "system" and isinstance(first["content"], str) else ""


def _results(out: Path) -> dict:
    return json.loads(max((out / "results").rglob("results_*.json")).read_text())


def _task(out: Path, task: str) -> dict:
    results = _results(out)
    return next(v for k, v in results["sciprobe"]["tasks"].items() if k.startswith(task + "|"))


def _details(out: Path, task: str) -> list[dict]:
    return pq.read_table(out / _task(out, task)["details"]).to_pylist()


def _product(text: str) -> int:
    n = re.search(r"reports (\d+) events per year over (\d+) years", text)
    return int(n[1]) * int(n[2])


# ---------------------------------------------------------------- deep research

def dr_reply(body: dict) -> str:
    text = _text(body)
    if body["model"] == "stub":
        product = _product(text)
        # item 0: right but formatted "20.0" (only the parser rescues it); item 1: plain right; item 2: wrong
        answers = {20: "Step 1. Multiply.\n<answer>20.0</answer>", 33: "<answer>33</answer>"}
        return answers.get(product, "<answer>7</answer>")
    if "<input_text>" in text:  # the answer re-formatting parser
        answer = text.split("<input_text>\n")[1].split("\n</input_text>")[0]
        return answer.removesuffix(".0")
    if "## Reference Answer\n33" in text:
        return "I refuse to produce a list."  # garbage: a failed verdict, scored 0
    return STEPS_HALF if body["model"] == "judge" else STEPS_ALL


def test_deep_research_with_judge_reports_sla_and_parser(sgi_data: Path, tmp_path: Path) -> None:
    with StubServer(reply=dr_reply) as stub:
        model = f"openai/stub,base_url={stub.base_url},api_key=sk-test"
        judge = f"openai/judge,base_url={stub.base_url},api_key=sk-test"
        argv = ["evaluate", "sgibench:deep_research", "--model", model, "--judge", judge, "--data", str(sgi_data)]
        assert main(argv + ["--output-dir", str(tmp_path / "a")]) == 0
        assert stub.count == 3 + 3 + 3 + 1  # answers, parser, step judge, answer judge (item 2: not an exact match)
        assert main(argv + ["--output-dir", str(tmp_path / "b")]) == 0
        assert stub.count == 10  # everything replayed from the shared response cache
    flat = _results(tmp_path / "b")["results"]["sgibench:deep_research|0"]
    assert flat["exact_match"] == pytest.approx(200 / 3)  # "20.0" -> parser "20" matches officially
    assert flat["exact_match_without_parser"] == pytest.approx(100 / 3)
    assert flat["step_level_accuracy"] == pytest.approx(100 * (0.5 + 0 + 0.5) / 3)
    assert flat["step_level_accuracy_upstream"] == pytest.approx(50.0)  # upstream would crash on the garbage item
    assert (flat["sla_n_items"], flat["sla_n_scored"], flat["sla_n_failed"]) == (3, 2, 1)
    assert flat["n_items"] == 3 and flat["step_level_accuracy:paper"] == flat["step_level_accuracy"]
    task = _task(tmp_path / "b", "sgibench:deep_research")
    assert task["provenance"]["sgi_judges"] == ["openai/judge"]
    assert task["provenance"]["answer_parser_id"] == "openai/judge"
    assert any("judged by openai/judge" in n for n in task["scores"]["official"]["notes"])
    details = _details(tmp_path / "b", "sgibench:deep_research")
    assert [d["parsed_answer"] for d in details] == ["20", "33", "7"]
    assert json.loads(details[1]["sla_replies"]) == {"openai/judge": "I refuse to produce a list."}
    assert "sk-test" not in json.dumps(_results(tmp_path / "b"))


def test_deep_research_judge_panel_averages_and_parser_can_be_disabled(sgi_data: Path, tmp_path: Path) -> None:
    with StubServer(reply=dr_reply) as stub:
        model = f"openai/stub,base_url={stub.base_url},api_key=sk-test"
        panel = [f"openai/{name},base_url={stub.base_url},api_key=sk-test" for name in ("judge", "judge2")]
        request = EvaluationRequest(tasks=["sgibench:deep_research"], model=model, data=str(sgi_data),
                                    output_dir=tmp_path, judge=";".join(panel), modes=["official"],
                                    per_task={"sgibench:deep_research": {"answer_parser": False}})
        _, results = evaluate(request)
        # answers + two step judges, no parser; the answer judge (both judges) for items 0 ("20.0" is no exact
        # match without the parser) and 2
        assert stub.count == 3 + 3 + 3 + 2 * 2
    report = results[0].scores["official"]
    assert report.values["step_level_accuracy_by_judge"] == {"openai/judge": pytest.approx(100 / 3),
                                                              "openai/judge2": pytest.approx(200 / 3)}
    assert report.values["step_level_accuracy"] == pytest.approx(50.0)
    assert report.values["sla_n_items"] == 6 and report.values["sla_n_failed"] == 2
    assert "exact_match_without_parser" not in report.values
    assert report.values["exact_match"] == pytest.approx(100 / 3)
    assert any("parser not run" in n for n in report.notes)


def test_deep_research_without_judge_says_judged_metrics_were_not_computed(sgi_data: Path, tmp_path: Path) -> None:
    with StubServer(reply=dr_reply) as stub:
        model = f"openai/stub,base_url={stub.base_url},api_key=sk-test"
        _, results = evaluate(EvaluationRequest(tasks=["sgibench:deep_research"], model=model, data=str(sgi_data),
                                                output_dir=tmp_path))
        assert stub.count == 3
    for report in results[0].scores.values():
        assert report.values["step_level_accuracy"] is None
        assert any(n.startswith("judged metrics not computed") for n in report.notes)
    assert results[0].flat_metrics()["step_level_accuracy"] is None


# ---------------------------------------------------------------- experimental reasoning

def _rows(sgi_data: Path) -> list[dict]:
    import datasets

    return datasets.load_dataset(str(sgi_data), "experimental_reasoning", split="test").to_list()


def test_reasoning_sends_images_as_content_parts_and_judges_them(sgi_data: Path, tmp_path: Path) -> None:
    seen: dict[str, list] = {"vlm": [], "judge": []}

    def reply(body: dict) -> str:
        seen[body["model"]].append(body["messages"])
        if body["model"] == "judge":
            return "7" if "\\boxed{A}" in _text(body) else "not a number"
        n_images = sum(p["type"] == "image_url" for p in body["messages"][-1]["content"])
        return "The first image is larger. \\boxed{A}" if n_images == 2 else "no box"  # item 1 has 3 images

    rows = _rows(sgi_data)
    with StubServer(reply=reply) as stub:
        model = f"openai/vlm,base_url={stub.base_url},api_key=sk-test"
        judge = f"openai/judge,base_url={stub.base_url},api_key=sk-test"
        argv = ["evaluate", "sgibench:experimental_reasoning", "--model", model, "--judge", judge,
                "--data", str(sgi_data), "--output-dir", str(tmp_path)]
        assert main(argv) == 0
    assert len(seen["vlm"]) == 3 and len(seen["judge"]) == 3
    by_first_image = {r["images"][0]["bytes"]: r for r in rows}  # the stub sees the requests in any order
    for messages in seen["vlm"]:
        assert messages[0] == {"role": "system", "content": "You are a helpful assistant."}
        content = messages[1]["content"]
        row = by_first_image[base64.b64decode(content[0]["image_url"]["url"].split(",", 1)[1])]
        assert [p["type"] for p in content] == ["image_url"] * len(row["images"]) + ["text"]
        for part, image in zip(content, row["images"]):
            url = part["image_url"]["url"]
            assert url.startswith("data:image/png;base64,")
            assert base64.b64decode(url.split(",", 1)[1]) == image["bytes"]
        assert "Options:\nA. Option A" in content[-1]["text"]
    for judge_messages in seen["judge"]:
        judge_content = judge_messages[0]["content"]
        row = by_first_image[base64.b64decode(judge_content[0]["image_url"]["url"].split(",", 1)[1])]
        assert [p["type"] for p in judge_content] == ["image_url"] * len(row["images"]) + ["text"]
    assert "# Reference Reasoning" in judge_content[-1]["text"]
    flat = _results(tmp_path)["results"]["sgibench:experimental_reasoning|0"]
    assert flat["mca"] == pytest.approx(100 / 3)  # item 0 (answer A) right, item 2 (C) wrong, item 1 no box
    assert flat["n_no_box"] == 1 and flat["images_dropped"] is False
    assert flat["rv"] == pytest.approx(140.0 / 3)  # two "7", one unparsable reply (0, counted)
    assert (flat["rv_n_items"], flat["rv_n_scored"], flat["rv_n_failed"]) == (3, 2, 1)
    details = _details(tmp_path, "sgibench:experimental_reasoning")
    assert [d["n_images_sent"] for d in details] == [len(r["images"]) for r in rows]


def test_text_only_models_get_placeholders_and_images_dropped(sgi_data: Path, tmp_path: Path) -> None:
    seen = []

    def reply(body: dict) -> str:
        seen.append(body)
        return "\\boxed{A}" if body["model"] == "txt" else "5"

    with StubServer(reply=reply) as stub:
        model = f"openai/txt,base_url={stub.base_url},api_key=sk-test"
        judge = f"openai/judge,base_url={stub.base_url},api_key=sk-test"
        _, results = evaluate(EvaluationRequest(
            tasks=["sgibench:experimental_reasoning"], model=model, data=str(sgi_data), output_dir=tmp_path,
            judge=judge, limit=2, per_task={"sgibench:experimental_reasoning": {"images": "drop"}}))
    asked = [b for b in seen if b["model"] == "txt"]
    assert all(isinstance(m["content"], str) for b in asked for m in b["messages"])
    users = sorted(b["messages"][1]["content"] for b in asked)  # the stub sees them in any order
    from sciprobe.data.task_data import load_task_data

    # the two items --limit 2 asks (a seeded sample), by their number of images
    counts = sorted(len(r["images"]) for r in load_task_data(SGI, SGI.task("experimental_reasoning"),
                                                            str(sgi_data), limit=2).rows)
    assert min(counts) >= 2 and users  # two items with the same text are one (cached) request
    expected = {f"[Image 1 of {n} is not shown: this model receives text only.]\n[Image 2 of {n} " for n in counts}
    assert all(any(user.startswith(start) for start in expected) for user in users), users
    report = results[0].scores["official"]
    assert report.values["images_dropped"] is True and report.values["n_items_images_dropped"] == 2
    assert any(n.startswith("images_dropped:") for n in report.notes)
    assert report.params["images_policy"] == ["drop"]
    assert results[0].provenance["images_policy"] == "drop"
    assert results[0].records[0]["images_dropped"] is True
    assert report.values["rv"] == pytest.approx(50.0)  # the (remote) judge still got the images
    judge_bodies = [b for b in seen if b["model"] == "judge"]
    assert isinstance(judge_bodies[0]["messages"][0]["content"], list)


def test_image_policy_and_flattening() -> None:
    from sciprobe.core.errors import SciprobeError
    from sciprobe.llm.client import LLMClient
    from sciprobe.benchmarks.sgibench.judged_runners import flatten_for_text_model, image_policy

    local = LLMClient("local/smollm2")  # building the client loads nothing
    remote = LLMClient("openai/x,base_url=http://127.0.0.1:9,api_key=k")
    assert image_policy(local, None) == "drop" and image_policy(remote, "auto") == "send"
    assert image_policy(local, "send") == "send" and image_policy(remote, "drop") == "drop"
    with pytest.raises(SciprobeError):
        image_policy(remote, "sometimes")
    messages = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}},
                                             {"type": "text", "text": "Q?"}]}]
    flat, n = flatten_for_text_model(messages)
    assert n == 1 and flat == [{"role": "user", "content": "[Image 1 of 1 is not shown: this model receives text "
                                                           "only.]\nQ?"}]


def test_missing_and_unreadable_images_are_counted_not_fatal(sgi_data: Path) -> None:
    from sciprobe.benchmarks.sgibench.judged_runners import reasoning_request

    row = {**_rows(sgi_data)[0]}
    row["images"] = [row["images"][0], None, {"bytes": b"not an image", "path": None}]
    messages, info = reasoning_request(row, "send")
    assert info["n_images"] == 3 and info["n_images_sent"] == 1 and info["n_images_missing"] == 2
    assert [p["type"] for p in messages[1]["content"]] == ["image_url", "text"]


def test_jpeg_bytes_become_a_true_png_data_url() -> None:
    import io

    from PIL import Image

    from sciprobe.benchmarks.sgibench.scoring.reasoning import image_part

    buffer = io.BytesIO()
    Image.new("RGB", (3, 3), (0, 0, 255)).save(buffer, format="JPEG")
    url = image_part({"bytes": buffer.getvalue(), "path": None})["image_url"]["url"]
    assert base64.b64decode(url.split(",", 1)[1]).startswith(b"\x89PNG")


def test_cache_key_covers_images(sgi_data: Path) -> None:
    from sciprobe.llm.cache import request_key
    from sciprobe.llm.types import Request
    from sciprobe.benchmarks.sgibench.judged_runners import reasoning_request

    row = _rows(sgi_data)[0]
    other = {**row, "images": [row["images"][1], row["images"][0]]}  # same images, other order
    a, _ = reasoning_request(row, "send")
    b, _ = reasoning_request(other, "send")
    def key(messages: list) -> str:
        return request_key("openai/vlm", None, Request.of(messages, {"temperature": 0.0}))

    assert key(a) == key(reasoning_request(dict(row), "send")[0])
    assert key(a) != key(b)
    assert key(a) != key(reasoning_request(row, "drop")[0])


# ---------------------------------------------------------------- sciprobe sgibench ...

def test_sgibench_cli_score_overall_and_check_external(tmp_path: Path, capsys) -> None:
    pairs = ["deep_research=18.48", "idea_generation=39.68", "dry_experiment=36.64", "wet_experiment=32.45",
             "experimental_reasoning=41.92"]
    assert main(["sgibench", "score-overall", *pairs]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sgi_score"] == 33.83 and report["missing_components"] == []
    assert main(["sgibench", "score-overall", *pairs[:4], "--mode", "paper"]) == 0
    assert json.loads(capsys.readouterr().out)["sgi_score"] is None
    assert main(["sgibench", "score-overall"]) == 2
    assert "COMPONENT=VALUE" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["sgibench", "score-overall", "--help"])
    assert "SGI-Score" in capsys.readouterr().out
    status = main(["sgibench", "check-external", "--data", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 1 and "SGI_DryExperiment_0200/adult.data" in out and "missing" in out


def test_score_overall_reads_results_files(sgi_data: Path, tmp_path: Path, capsys) -> None:
    from sciprobe.benchmarks.sgibench.commands import components_from_results

    with StubServer(reply=dr_reply) as stub:
        model = f"openai/stub,base_url={stub.base_url},api_key=sk-test"
        path, _ = evaluate(EvaluationRequest(tasks=["sgibench:deep_research"], model=model, data=str(sgi_data),
                                             output_dir=tmp_path))
    found = components_from_results([path])
    assert set(found) == {"deep_research"} and found["deep_research"]["coverage"]["n_items"] == 3
    others = ["idea_generation=10", "dry_experiment=20", "wet_experiment=30", "experimental_reasoning=40"]
    assert main(["sgibench", "score-overall", "--results", str(path), *others]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["components"]["deep_research"] == 33.33
    assert report["sgi_score"] == round((33.33 + 10 + 20 + 30 + 40) / 5, 2)
    assert report["component_coverage"]["deep_research"]["n_items"] == 3
    assert main(["sgibench", "score-overall", "--results", str(path), "deep_research=1", *others]) == 2
    capsys.readouterr()
    # `--results DIR/results_*.json`: the shell's expansion puts every file after the first among the positionals
    with StubServer(reply=dr_reply) as stub:
        model = f"openai/stub,base_url={stub.base_url},api_key=sk-test"
        second, _ = evaluate(EvaluationRequest(tasks=["sgibench:experimental_reasoning"], model=model,
                                               data=str(sgi_data), output_dir=tmp_path / "second"))
    rest = ["idea_generation=10", "dry_experiment=20", "wet_experiment=30"]
    assert main(["sgibench", "score-overall", "--results", str(path), str(second), *rest]) == 0
    assert set(json.loads(capsys.readouterr().out)["components"]) == {
        "deep_research", "wet_experiment", "idea_generation", "dry_experiment", "experimental_reasoning"}


def test_score_overall_refuses_to_merge_different_runs_and_names_each_source(sgi_data: Path, tmp_path: Path,
                                                                            capsys) -> None:
    """Issue 23.2: `score-overall --results results/results/*/results_*.json` merged the components of two models
    into one SGI-Score without a word."""
    paths = {}
    with StubServer(reply=dr_reply) as stub:
        for name, task in (("model-a", "deep_research"), ("model-b", "experimental_reasoning")):
            model = f"openai/{name},base_url={stub.base_url},api_key=sk-test"
            paths[name], _ = evaluate(EvaluationRequest(tasks=[f"sgibench:{task}"], model=model, data=str(sgi_data),
                                                        output_dir=tmp_path / name))
        model = f"openai/model-a,base_url={stub.base_url},api_key=sk-test"
        paths["sample"], _ = evaluate(EvaluationRequest(tasks=["sgibench:experimental_reasoning"], model=model,
                                                        data=str(sgi_data), output_dir=tmp_path / "sample", limit=1))
    capsys.readouterr()
    rest = ["idea_generation=10", "dry_experiment=20", "wet_experiment=30"]
    argv = ["sgibench", "score-overall", "--results", str(paths["model-a"]), str(paths["model-b"]), *rest]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the components come from different runs" in err
    assert f"deep_research openai/model-a ({paths['model-a']})" in err
    assert f"experimental_reasoning openai/model-b ({paths['model-b']})" in err and "--allow-mixed" in err
    assert main([*argv, "--allow-mixed"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sources"]["deep_research"]["model_id"] == "openai/model-a"
    assert report["sources"]["experimental_reasoning"]["file"] == str(paths["model-b"])
    assert report["sources"]["idea_generation"] == {"given": "10"}
    assert report["mixed_sources"][0].startswith("model: deep_research openai/model-a")
    # one model, but one component a --limit sample: not one run either
    assert main(["sgibench", "score-overall", "--results", str(paths["model-a"]), str(paths["sample"]), *rest]) == 2
    assert "item selection: deep_research all" in capsys.readouterr().err
    # one run's components: merged, each named
    assert main(["sgibench", "score-overall", "--results", str(paths["model-a"]), *rest,
                 "experimental_reasoning=40"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sources"]["deep_research"]["coverage"] == "3/3" and "mixed_sources" not in report


def test_a_text_only_judge_gets_placeholders_too(sgi_data: Path, tmp_path: Path, monkeypatch) -> None:
    from sciprobe.benchmarks.sgibench import judged_runners as sgi_judged

    monkeypatch.setattr(sgi_judged, "is_text_only", lambda client: client.model_id == "openai/txtjudge")
    seen = []

    def reply(body: dict) -> str:
        seen.append(body)
        return "\\boxed{A}" if body["model"] == "vlm" else "4"

    with StubServer(reply=reply) as stub:
        model = f"openai/vlm,base_url={stub.base_url},api_key=sk-test"
        judge = f"openai/txtjudge,base_url={stub.base_url},api_key=sk-test"
        _, results = evaluate(EvaluationRequest(tasks=["sgibench:experimental_reasoning"], model=model,
                                                data=str(sgi_data), output_dir=tmp_path, judge=judge, limit=1))
    judge_bodies = [b for b in seen if b["model"] == "txtjudge"]
    assert len(judge_bodies) == 1 and isinstance(judge_bodies[0]["messages"][0]["content"], str)
    assert "[Image 1 of 2 is not shown" in judge_bodies[0]["messages"][0]["content"]
    report = results[0].scores["official"]
    assert report.values["images_dropped"] is False and report.values["rv_n_items_images_dropped"] == 1
    assert report.values["rv"] == pytest.approx(40.0)
    assert any(n.startswith("images_dropped (judge)") for n in report.notes)
