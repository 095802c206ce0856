"""Test cases in the evaluate module-template format; checked by tests/test_prescience_lacer.py.

`kwargs` omit `template_path` (the test supplies a temporary template); `replies` stand in for the judge.
"""

test_cases = [
    {"predictions": [{"title": "A", "abstract": "a"}], "references": [{"title": "A", "abstract": "a"}],
     "kwargs": {"judge_id": "stored", "replies": ["Reasoning: same.\nScore: 10"]},
     "result": {"lacer": 10.0, "n_failed": 0}},
    {"predictions": [{"title": "A", "abstract": "a"}, {"title": "B", "abstract": "b"}],
     "references": [{"title": "A", "abstract": "a"}, {"title": "C", "abstract": "c"}],
     "kwargs": {"judge_id": "stored", "mode": "corrected",
                "replies": ["Score: 3 at first. Score: 7", "no score here"]},
     "result": {"lacer": 4.0, "n_failed": 1, "mode": "corrected"}},
]
