"""Test cases in the evaluate module-template format; checked by tests/core/test_metric_folders.py.

`files` are written to temporary files passed as keyword arguments (the LACER template); `replies` stand in for
the judge.
"""

files = {"template_path": "{{reference_title}}\n{{reference_abstract}}\n"
                          "{{generation_title}}\n{{generation_abstract}}\n"}

test_cases = [
    {"predictions": [{"title": "A", "abstract": "a"}], "references": [{"title": "A", "abstract": "a"}],
     "kwargs": {"judge_id": "stored", "replies": ["Reasoning: same.\nScore: 10"]},
     "result": {"lacer": 10.0, "n_failed": 0}},
    {"predictions": [{"title": "A", "abstract": "a"}, {"title": "B", "abstract": "b"}],
     "references": [{"title": "A", "abstract": "a"}, {"title": "C", "abstract": "c"}],
     "kwargs": {"judge_id": "stored", "mode": "corrected",
                "replies": ["Score: 3 at first. Score: 7", "no score here"]},
     "result": {"lacer": 7.0, "n_scored": 1, "n_failed": 1, "mode": "corrected"}},
]
