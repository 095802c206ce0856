"""IDRBench answer parsing: official regexes exactly (quirks included) and the tolerant fallbacks."""


import pytest

from sciprobe.benchmarks.idrbench.parsing import parse_i2r, parse_i3, parse_ipi

from golden import load_cases

PARSERS = {"ipi": parse_ipi, "i3": parse_i3, "i2r": parse_i2r}
CASES = load_cases("idrbench_parsing")


@pytest.mark.parametrize("case", CASES, ids=[f"{c['parser']}:{c['text'][:30]}" for c in CASES])
def test_parse_case(case):
    parsed = PARSERS[case["parser"]](case["text"])
    assert parsed.value == case["value"]
    assert parsed.extra["official"] == case["official"]
    assert parsed.path == case["path"]
    if "official_winner" in case:
        assert parsed.extra["official_winner"] == case["official_winner"]


def test_ipi_subjects_and_confidence_are_kept():
    parsed = parse_ipi('Your verdict: Yes\nConfidence score: 77\nSubject: ["Physics", "Other"]')
    assert parsed.extra["subjects"] == ["Physics", "Other"]
    assert parsed.extra["confidence"] == 77


def test_unparsable_subject_list_becomes_empty_as_upstream():
    parsed = parse_ipi("Your verdict: Yes\nConfidence score: 77\nSubject: [Physics, Other]")
    assert parsed.value == "yes" and parsed.extra["subjects"] == []
