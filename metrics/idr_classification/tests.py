"""Test cases in the evaluate module-template format; checked by tests/core/test_metric_folders.py.

`result` lists a subset of the returned keys; `kwargs` are extra compute() arguments.
"""

test_cases = [
    {
        "predictions": ["yes", "no", "", "Yes"],
        "references": ["yes", "yes", "no", "no"],
        "kwargs": {},
        "result": {"mode": "official", "macro_f1": 0.25, "n_scored": 3, "n_failed": 1},
    },
    {
        "predictions": ["yes", "no", "", "Yes"],
        "references": ["yes", "yes", "no", "no"],
        "kwargs": {"mode": "strict", "failure_policy": "no"},
        "result": {"mode": "strict", "macro_f1": 0.5, "tpr": 0.5, "tnr": 0.5, "n_scored": 4},
    },
    {
        "predictions": ["no", "no"],
        "references": ["no", "no"],
        "kwargs": {},
        "result": {"macro_f1": None, "positive_f1": None, "negative_f1": None, "accuracy": None, "n_scored": 0},
    },
]
