"""Test cases in the evaluate module-template format; checked by tests/core/test_metric_folders.py.

`result` lists a subset of the returned keys; `kwargs` are extra compute() arguments.
"""

test_cases = [
    {"predictions": [1, 2, 3], "references": [1, 2, 4], "kwargs": {},
     "result": {"mae": 1 / 3, "r2": 33 / 42, "spearman": 1.0}},
    {"predictions": [None, 3, 5], "references": [9, 2, 5], "kwargs": {"missing": "zero"},
     "result": {"mae": 10 / 3, "n_failed": 1}},
]
