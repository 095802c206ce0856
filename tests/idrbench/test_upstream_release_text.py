"""Issue 22, fidelity: under ``--prompts upstream`` IDRBench sends upstream's messages byte for byte.

irllm-framework@aa621e4 reads the release files with ``pd.read_json(path, dtype={"id": str})`` and fills its
templates with the text as released (``TaskHandler.identify_task``: ``template % (title, abstract)``;
``classify_task``: each side's papers as ``"Title: %s; Abstract: %s"`` over ``zip(titles, abstracts)``, joined by
newlines; ``utils.simulate_match``: seed, Paper 1, Paper 2, each title then abstract, the players being ``list``
then ``target_paper``). :func:`upstream_messages` renders that logic here over the stand-in templates of
``tests/cases/upstream/idrbench/utils.py`` (our text, made the pin), and sciprobe must send the same messages:
the bundled sample is built with the release text for the upstream prompt set (16 of 16 IPI and 14 of 14 I3
messages; before, 0 and 5), a ``--data`` built with the default whitespace normalisation is said on stderr and
recorded in provenance, and the v1 release files (``../shared``, skipped when absent) built with
``--raw-whitespace`` give upstream's messages for every item."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.data.build import BUILD_INFO_FILE, build_benchmark
from sciprobe.cli.commands import main
from sciprobe.testing.stub_server import StubServer
from sciprobe.data.task_data import load_task_data, sample_dataset_dir
from sciprobe.run.upstream import prompt_set_for, python_constants

from upstream_support import STAND_INS, pin_stand_ins

IDR = get_benchmark("idrbench")
SAMPLE = IDR.sample_source
TEMPLATES = python_constants((STAND_INS / "idrbench" / "utils.py").read_text())
Messages = list[dict[str, str]]


@pytest.fixture(autouse=True)
def _stand_ins_pinned(monkeypatch) -> None:
    pin_stand_ins(monkeypatch, "idrbench")


def _release(source: Path, name: str) -> pd.DataFrame:
    return pd.read_json(source / name, dtype={"id": str})


def _chat(user: str) -> Messages:
    return [{"role": "system", "content": TEMPLATES["sys_prompt_critical"]}, {"role": "user", "content": user}]


def upstream_messages(source: Path, template: str, name: str) -> list[Messages]:
    """Upstream's IPI / I3 messages for one release file, in file order (see the module docstring)."""
    out = []
    for _, each in _release(source, name).iterrows():
        if name == "data_exp_1.json":
            values: tuple[str, ...] = (each["title"], each["abstract"])
        else:
            values = tuple("\n".join("Title: %s; Abstract: %s" % (t, a)
                                     for t, a in zip(each[f"{side}_title"], each[f"{side}_abstract"]))
                           for side in ("b", "c"))
        out.append(_chat(TEMPLATES[template] % values))
    return out


def upstream_first_match(source: Path, parts: list[str]) -> list[Messages]:
    """Upstream's message for players 0 and 1 of every I2R record (players: ``list``, then ``target_paper``)."""
    out = []
    for name in parts:
        for _, each in _release(source, name).iterrows():
            players = list(zip(each["list"]["title"], each["list"]["abstract"]))
            players += list(zip(each["target_paper"]["title"], each["target_paper"]["abstract"]))
            (t1, a1), (t2, a2) = players[:2]
            out.append(_chat(TEMPLATES["prompt_exp_3"] % (each["start_title"], each["start_abstract"], t1, a1, t2,
                                                          a2)))
    return out


CLASSIFICATION = (("ipi", "prompt_exp_1", "data_exp_1.json"), ("i3_set1", "prompt_exp_2", "data_exp_2_1.json"),
                  ("i3_set2", "prompt_exp_2", "data_exp_2_2.json"))


def _no(body: dict) -> str:
    return "Your verdict: No\nYour reason: Unrelated.\nConfidence score: 70\nSubject: []"


def _results(out: Path) -> dict:
    return json.loads(max((out / "results").rglob("results_*.json")).read_text())


def test_upstream_prompts_on_the_bundled_sample_are_upstreams_messages_byte_for_byte(tmp_path: Path,
                                                                                     capsys) -> None:
    with StubServer(reply=_no) as stub:
        model = f"openai/stub-model,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", "idrbench:ipi", "idrbench:i3_set1", "idrbench:i3_set2", "--model", model,
                     "--output-dir", str(tmp_path), "--prompts", "upstream", "--no-cache",
                     "--upstream-dir", str(STAND_INS / "idrbench")]) == 0
        sent = [r["messages"] for r in stub.requests]
    assert "warning" not in capsys.readouterr().err
    expected = [m for _, template, name in CLASSIFICATION for m in upstream_messages(SAMPLE, template, name)]
    assert len(expected) == 16 + 14 + 12
    # concurrent requests arrive in any order, and a message the two I3 sets share (their positives) is asked once
    assert {json.dumps(m) for m in sent} == {json.dumps(m) for m in expected}
    for task in _results(tmp_path)["sciprobe"]["tasks"].values():
        assert task["provenance"]["upstream_prompts"]["release_text"]["as_released"] is True


def test_data_built_with_normalised_whitespace_is_said_and_recorded(tmp_path: Path, capsys) -> None:
    normalised = sample_dataset_dir(IDR)  # the default build: whitespace collapsed
    unknown = tmp_path / "copied"  # the same Parquet files without sciprobe's build record
    shutil.copytree(normalised, unknown, ignore=shutil.ignore_patterns(BUILD_INFO_FILE))
    for data, as_released, said in ((normalised, False, "was built with normalize_whitespace=True"),
                                    (unknown, None, "cannot tell whether")):
        out = tmp_path / str(as_released)
        with StubServer(reply=_no) as stub:
            model = f"openai/stub-model,base_url={stub.base_url},api_key=sk-test"
            assert main(["evaluate", "idrbench:ipi", "--model", model, "--data", str(data), "--limit", "3",
                         "--output-dir", str(out), "--prompts", "upstream",
                         "--upstream-dir", str(STAND_INS / "idrbench")]) == 0
        err = capsys.readouterr().err
        assert err.count(f"warning: the idrbench data {said}" if as_released is False else said) == 1, err
        assert "sciprobe build idrbench --raw-whitespace" in err
        prov = _results(out)["sciprobe"]["tasks"]["idrbench:ipi|0"]["provenance"]
        assert prov["upstream_prompts"]["release_text"]["as_released"] is as_released
        assert said in prov["prompt_warnings"][0]
    # sciprobe's own prompts do not depend on it: no warning, nothing recorded
    with StubServer(reply=_no) as stub:
        model = f"openai/stub-model,base_url={stub.base_url},api_key=sk-test"
        assert main(["evaluate", "idrbench:ipi", "--model", model, "--data", str(normalised), "--limit", "3",
                     "--output-dir", str(tmp_path / "ours")]) == 0
    assert "warning" not in capsys.readouterr().err


def test_the_v1_release_built_raw_gives_upstreams_messages_for_every_item(idrbench_release: Path,
                                                                          tmp_path: Path) -> None:
    from idrbench_release_support import pinned_layout

    pinned = pinned_layout(idrbench_release.parent, tmp_path / "pinned")  # the files as aa621e4 names them
    built = tmp_path / "idrbench-raw"
    build_benchmark(IDR, pinned, built, configs=["ipi", "i3_set1", "i3_set2", "i2r"],
                    options={"normalize_whitespace": False})
    for config, template, name in CLASSIFICATION:
        task = IDR.task(config)
        build = prompt_set_for(IDR, task, "upstream", local_dir=STAND_INS / "idrbench").builders["build_messages"]
        rows = load_task_data(IDR, task, str(built)).rows
        expected = upstream_messages(pinned, template, name)
        identical = sum(build(row) == want for row, want in zip(rows, expected))
        assert (identical, len(rows)) == (len(expected), len(expected)), config
    compare = prompt_set_for(IDR, IDR.task("i2r"), "upstream",
                             local_dir=STAND_INS / "idrbench").builders["comparison_messages"]
    parts = sorted((p.name for p in idrbench_release.glob("data_exp_3_1_part_*.json")),
                   key=lambda n: int(n.rsplit("_", 1)[1].split(".")[0]))
    rows = load_task_data(IDR, IDR.task("i2r"), str(built)).rows
    sent = [compare(r["seed"], *(r["distractors"] + r["targets"])[:2]) for r in rows]
    assert sent == upstream_first_match(idrbench_release, parts)
