"""Every code example of every metric card runs as written (issue 14): each ```python block of
``metrics/<name>/README.md``, in order, in one namespace, from the repository root, with nothing injected (a
doctest block's outputs must match). And ``evaluate.load("metrics/sgi_score")`` without a config, or with an
unknown one, fails while loading and names the configs."""

from __future__ import annotations

from pathlib import Path

import pytest

from metric_card_examples import python_blocks, run_card

from golden import REPO

CARDS = sorted((REPO / "metrics").glob("*/README.md"))


def test_every_metric_folder_has_a_card_with_examples() -> None:
    assert len(CARDS) >= 9
    for card in CARDS:
        assert python_blocks(card), f"{card.parent.name}: no ```python example"


@pytest.mark.parametrize("card", CARDS, ids=[c.parent.name for c in CARDS])
def test_card_examples_run(card: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    failures = run_card(card)
    assert not failures, "\n\n".join(failures)


def test_card_examples_load_metrics_by_their_repository_path() -> None:
    """A bare `evaluate.load("<name>")` only works from inside metrics/; the cards say metrics/<name>."""
    import re

    for card in CARDS:
        for block in python_blocks(card):
            for target in re.findall(r"evaluate\.load\(\"([^\"]+)\"", block):
                assert target == f"metrics/{card.parent.name}", (card.parent.name, target)


def test_run_card_reports_a_wrong_output(tmp_path: Path) -> None:
    card = tmp_path / "x" / "README.md"
    card.parent.mkdir()
    card.write_text("```python\n>>> 1 + 1\n3\n```\n\n```python\nraise ValueError('boom')\n```\n", encoding="utf-8")
    failures = run_card(card)
    assert len(failures) == 2 and "Expected:\n    3" in failures[0] and "ValueError: boom" in failures[1]


@pytest.mark.parametrize("args", [(), ("nonsense",)], ids=["no config", "unknown config"])
def test_sgi_score_without_a_valid_config_fails_at_load_time(args: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    import evaluate

    from sciprobe.core.errors import SciprobeError

    monkeypatch.chdir(REPO)
    with pytest.raises(SciprobeError) as caught:
        evaluate.load("metrics/sgi_score", *args)
    message = str(caught.value)
    for config in ("deep_research", "idea_generation", "dry_experiment", "wet_experiment", "experimental_reasoning",
                   "overall"):
        assert config in message
    assert ("no config" if not args else "'nonsense'") in message
