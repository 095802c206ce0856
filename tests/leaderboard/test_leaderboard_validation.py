"""Submission validation: every hostile or broken case in tests/cases/submissions/cases.json is rejected with a
clear one-line message and leaves the store empty; a valid file is canonicalised and hashed stably."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sciprobe.leaderboard.app import LeaderboardService, Settings
from sciprobe.leaderboard.queue import data_for
from sciprobe.leaderboard.store import SQLiteStore
from sciprobe.leaderboard.validation import (
    SubmissionError,
    display_text,
    sanitize_text,
    task_target,
    validate_file_name,
    validate_model_info,
    validate_submission,
)

from golden import CASES_DIR, load_cases

SUBMISSIONS = CASES_DIR / "submissions"
CASES = load_cases("submissions/cases", "cases")


def _case_id(index: int, case: dict) -> str:
    extra = case.get("generate") or case.get("upload_name") or (case.get("model") or {}).get("model_name") \
        or case.get("user") or (case["task"] if case["task"] != "idrbench:ipi" else "")
    return f"{index:03d}-{case['file']}{'-' + str(extra)[:24] if extra else ''}"


def _materialise(case: dict, tmp_path: Path) -> Path:
    """The case's file in a fresh folder (generated cases are built here, not stored in the repo)."""
    source = SUBMISSIONS / case["file"]
    target = tmp_path / "upload" / case["file"]
    target.parent.mkdir(parents=True, exist_ok=True)
    if case.get("generate") == "huge_line":
        lines = source.read_text("utf-8").splitlines()
        lines[0] = json.dumps({"id": json.loads(lines[0])["id"], "response": "x" * 300_000})
        target.write_text("\n".join(lines) + "\n", "utf-8")
    elif case.get("generate") == "huge_response":
        lines = source.read_text("utf-8").splitlines()
        lines[0] = json.dumps({"id": json.loads(lines[0])["id"], "response": "y" * 100_001})
        target.write_text("\n".join(lines) + "\n", "utf-8")
    else:
        shutil.copyfile(source, target)
    return target


@pytest.fixture
def service(tmp_path) -> LeaderboardService:
    return LeaderboardService(SQLiteStore(tmp_path / "lb"), Settings(), ["idrbench", "scitaste"])


def test_there_are_enough_cases():
    assert len(CASES) >= 80
    assert len({c["file"] for c in CASES}) >= 60


def _submit_prior(service: LeaderboardService, prior: list[dict]) -> None:
    """Submissions that must succeed before the case (another user's model, a user's earlier uploads)."""
    for k, earlier in enumerate(prior):
        message, record = service.submit(earlier["user"], earlier.get("task", "idrbench:ipi"),
                                         str(SUBMISSIONS / earlier.get("file", "valid_ipi.jsonl")),
                                         earlier["model_name"], file_name=f"prior-{k}.jsonl")
        assert record["status"] == "FINISHED", message


@pytest.mark.parametrize("case", CASES, ids=[_case_id(k, c) for k, c in enumerate(CASES)])
def test_hostile_submission_rejected_and_nothing_stored(case, service, tmp_path):
    path = _materialise(case, tmp_path)
    service.settings = Settings(max_bytes=case.get("max_bytes", Settings().max_bytes),
                                max_recent=case.get("rate_limit", Settings().max_recent))
    _submit_prior(service, case.get("prior", []))
    before = ([r.request_id for r in service.store.list_requests()],
              [r.result_id for r in service.store.list_results()])
    model = {"model_name": "org/model", **case.get("model", {})}
    message, record = service.submit(case.get("user", "alice"), case["task"], str(path), model["model_name"],
                                     model.get("model_family", ""), model.get("model_revision", ""),
                                     model.get("model_cutoff", ""), model.get("description", ""),
                                     file_name=case.get("upload_name"))
    assert record["status"] == "REJECTED", message
    assert case["expect"] in record["error"], record["error"]
    assert "\n" not in record["error"] and len(record["error"]) < 400
    assert message.startswith("**Rejected:**")
    assert "<script" not in message and "<img" not in message and "<b " not in message  # escaped for display
    after = ([r.request_id for r in service.store.list_requests()],
             [r.result_id for r in service.store.list_results()])
    assert after == before  # nothing stored: no request, no result, no claim on a model name


def test_valid_file_is_canonical_and_hash_is_stable(tmp_path):
    data = data_for("idrbench")
    source = SUBMISSIONS / "valid_ipi.jsonl"
    model = validate_model_info("org/model")
    first = validate_submission("idrbench:ipi", source, model, data=data)
    assert first.n_predictions == 16 and first.target.dataset_fingerprint
    # reordered lines, extra whitespace, blank lines and a matching "task" field: same canonical bytes
    lines = [json.loads(line) for line in source.read_text().splitlines()]
    lines[0]["task"] = "idrbench:ipi"
    shuffled = tmp_path / "shuffled.jsonl"
    spaced = (json.dumps(i, indent=None, separators=(" , ", " : ")) for i in reversed(lines))
    shuffled.write_text("\n\n".join(spaced) + "\n")
    second = validate_submission("idrbench:ipi", shuffled, model, data=data)
    assert second.canonical == first.canonical and second.sha256 == first.sha256
    assert all(set(json.loads(line)) <= {"id", "prediction"} for line in first.canonical.decode().splitlines())


def test_valid_ranking_file(tmp_path):
    data = data_for("idrbench")
    target = task_target("idrbench:i2r", data)
    path = tmp_path / "i2r.jsonl"
    path.write_text("".join(json.dumps({"id": i, "ranking": sorted(target.candidates[i]),
                                        "scores": list(range(len(target.candidates[i])))}) + "\n" for i in target.ids))
    sub = validate_submission("idrbench:i2r", path, validate_model_info("org/model"), data=data)
    assert sub.n_predictions == len(target.ids)


def test_text_sanitising():
    assert sanitize_text("a\u202eb\u200bc\x00d\x07e\n\tf", 50) == "abcde f"
    assert sanitize_text("x" * 100, 10) == "x" * 9 + "…"
    assert display_text("<script>alert('x')</script>") == "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;"
    info = validate_model_info("org/model", " GPT\u202e ", "main", "2024-06", "<b>notes</b>\x00")
    assert info.model_family == "gpt" and info.description == "<b>notes</b>"
    assert validate_model_info("meta-llama/Llama-3.1-8B").model_family == "llama"


@pytest.mark.parametrize("name", ["preds.jsonl", "run 1_final-v2.json"])
def test_good_file_names(name):
    assert validate_file_name(name) == name


def test_submission_error_is_one_line_value_error():
    with pytest.raises(ValueError):
        raise SubmissionError("x")
