"""I2R's modes and their calls (issue 28): the plan shows the upper bound, results show the calls each mode
shared with an earlier one and the calls it paid itself, and ``--mode`` runs only the modes asked for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciprobe.cli import main
from sciprobe.testing.stub_server import StubServer


def _calls_by_mode(out: Path) -> dict[str, dict[str, int]]:
    results = json.loads(sorted((out / "results").rglob("results_*.json"))[-1].read_text())
    return {task["provenance"]["mode"]: task["provenance"]["i2r_calls"]
            for task in results["sciprobe"]["tasks"].values()}


def _evaluate(reply: str, out: Path, *extra: str) -> None:
    with StubServer(reply=lambda body: reply) as stub:
        assert main(["evaluate", "idrbench:i2r", "--model", f"openai/stub,base_url={stub.base_url},api_key=sk-t",
                     "--output-dir", str(out), *extra]) == 0


def test_modes_that_read_every_reply_alike_share_every_call(tmp_path, capsys):
    _evaluate("Your choice: Paper 1\nConfidence score: 60", tmp_path)
    calls = _calls_by_mode(tmp_path)
    assert calls["official"]["shared"] == 0 and calls["official"]["extra"] == calls["official"]["asked"] > 0
    assert calls["corrected"] == {"asked": calls["official"]["asked"], "shared": calls["official"]["asked"],
                                  "extra": 0}
    printed = capsys.readouterr().out
    assert f"corrected {calls['official']['asked']} shared + 0 extra" in printed


def test_modes_whose_winner_rules_diverge_pay_their_own_calls(tmp_path, capsys):
    _evaluate("your choice: paper 2", tmp_path)  # lower case: the official regex reads no winner
    calls = _calls_by_mode(tmp_path)
    assert calls["corrected"]["extra"] > 0
    assert calls["corrected"]["shared"] + calls["corrected"]["extra"] == calls["corrected"]["asked"]
    assert "corrected" in capsys.readouterr().out


def test_one_mode_asked_plays_one_tournament(tmp_path, capsys):
    _evaluate("Your choice: Paper 1", tmp_path, "--mode", "official")
    assert list(_calls_by_mode(tmp_path)) == ["official"]
    assert "calls by mode" not in capsys.readouterr().out


@pytest.mark.parametrize("modes, bound_shown", [((), True), (("--modes", "official"), False)])
def test_the_plan_shows_the_upper_bound_of_several_modes(modes, bound_shown, capsys):
    assert main(["evaluate", "idrbench:i2r", "--dry-run", "--json", "--model", "openai/x,base_url=http://127.0.0.1:9",
                 *modes]) == 0
    plan = json.loads(capsys.readouterr().out)
    task = plan["tasks"][0]
    bound = [n for n in task["notes"] if "up to" in n]
    assert bool(bound) is bound_shown
    if bound_shown:  # the planned calls assume agreement; the bound is every mode's own tournament
        assert f"{task['calls']} distinct comparisons" in bound[0]
        assert f"up to {2 * task['calls']}" in bound[0]
