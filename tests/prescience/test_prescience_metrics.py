"""The PreScience evaluate modules (metrics/citation_forecast, topic_trend, text_similarity): offline loading,
equality with the sciprobe functions, template cases, doctests of module and README, Space card and app
(spec ecosystem.md §3; prescience.md §9 "Metrics needed")."""

from __future__ import annotations

import json
import re
from types import ModuleType
from typing import Any

import pytest
from metric_module_support import flat

from sciprobe.benchmarks.prescience.scoring.forecast import citation_forecast
from sciprobe.scoring.text_similarity import rouge_l
from sciprobe.benchmarks.prescience.scoring.topic_trend import topic_trend

from golden import REPO

METRICS = REPO / "metrics"
NAMES = ("citation_forecast", "topic_trend", "text_similarity", "lacer")


@pytest.fixture(scope="module")
def loaded(offline_evaluate: ModuleType) -> dict[str, Any]:
    return {name: offline_evaluate.load(str(METRICS / name)) for name in NAMES}


def test_module_layout() -> None:
    for name in NAMES:
        folder = METRICS / name
        assert {p.name for p in folder.iterdir() if not p.name.startswith((".", "__"))} >= \
            {f"{name}.py", "README.md", "app.py", "requirements.txt", "tests.py"}
        assert not (folder / "__init__.py").exists()
        source = (folder / f"{name}.py").read_text()
        assert not re.search(r"^import \w+\s*,", source, re.MULTILINE)  # one import per line (evaluate's scanner)
        assert "**kwargs" not in source
        assert "evaluate==0.4.6" in (folder / "requirements.txt").read_text()


def test_compute_equals_sciprobe(loaded: dict[str, Any]) -> None:
    preds, refs = [3.0, 0.0, 12.0, 5.0, None], [2.0, 1.0, 20.0, 5.0, 4.0]
    got = loaded["citation_forecast"].compute(predictions=preds, references=refs)
    assert got == flat(citation_forecast(preds, refs))
    hist = [4.0, 10.0, 0.0, 7.0, 1.0]
    got = loaded["topic_trend"].compute(predictions=preds, references=refs, history=hist)
    assert got == flat(topic_trend(preds, refs, hist))
    cands, golds = ["neural ranking models", "", "graph networks"], ["ranking with neural models", "x", "graphs"]
    got = loaded["text_similarity"].compute(predictions=cands, references=golds)
    report = rouge_l(cands, golds)
    assert got["rougeL"] == report.values["rougeL"] and got["n_failed"] == report.coverage.n_failed == 1


def test_bad_input_raises_value_errors(loaded: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="negative citation count"):
        loaded["citation_forecast"].compute(predictions=[1.0], references=[-3.0])
    with pytest.raises(ValueError, match="needs history"):
        loaded["topic_trend"].compute(predictions=[1.0], references=[1.0])
    with pytest.raises(ValueError, match="negative count"):
        loaded["topic_trend"].compute(predictions=[1.0, 2.0], references=[1.0, 2.0], history=[1, -1])
    with pytest.raises(ValueError, match="needs upstream_dir=.* or template_path"):
        loaded["lacer"].compute(predictions=[{"title": "a", "abstract": "b"}],
                                references=[{"title": "a", "abstract": "b"}], replies=["Score: 3"])
    with pytest.raises(ValueError, match="unknown text similarity metric"):
        loaded["text_similarity"].compute(predictions=["a"], references=["a"], metrics=["bleu"])


def test_lacer_module_sends_upstreams_judge_messages_from_upstream_dir(loaded: dict[str, Any]) -> None:
    """Official judge messages are upstream's: the template and lacer_score.py's system message (our stand-ins)."""
    sent: list[list[dict[str, str]]] = []

    def judge(messages: list[dict[str, str]]) -> str:
        sent.append(messages)
        return "Reasoning: close.\nScore: 8"

    paper = {"title": "A", "abstract": "a"}
    got = loaded["lacer"].compute(predictions=[paper], references=[paper], judge=judge, judge_id="mock",
                                  upstream_dir=str(REPO / "tests" / "cases" / "upstream" / "prescience"))
    assert sent[0][0] == {"role": "system", "content": "TEST-LACER-SYSTEM: you compare two research papers."}
    assert sent[0][1]["content"].startswith("TEST-LACER-TEMPLATE") and got["lacer"] == 8.0
    assert len(got["prompt_warnings"]) == 2 and len(got["system_prompt_sha256"]) == 64  # stand-ins: not the pins


def test_module_info(loaded: dict[str, Any]) -> None:
    for name, module in loaded.items():
        assert module.name == name and module.codebase_urls and module.reference_urls
        assert json.dumps(module.citation)
