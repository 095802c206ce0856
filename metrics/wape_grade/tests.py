"""Test cases in the evaluate module-template format; checked by tests/core/test_metric_folders.py.

`result` lists a subset of the returned keys; `kwargs` are extra compute() arguments.
"""

test_cases = [
    {
        # the paper's physics point: 13.1 % -> 75 - 3.1/10 * 15 = 70.35 (printed 70.4), grade C
        "predictions": [86.9],
        "references": [100.0],
        "kwargs": {},
        "result": {"mode": "paper", "wape_pct": 13.1, "score": 70.35, "grade": "C"},
    },
    {
        # A band: 2 % -> 96; the failed answer is dropped and counted
        "predictions": [49.0, None],
        "references": [50.0, 40.0],
        "kwargs": {},
        "result": {"wape_pct": 2.0, "score": 96.0, "grade": "A", "n_scored": 1, "n_failed": 1},
    },
    {
        # strict: the failed answer counts as 0 -> (1 + 40) / 90 = 45.56 % -> E
        "predictions": [49.0, None],
        "references": [50.0, 40.0],
        "kwargs": {"failure_policy": "zero"},
        "result": {"mode": "strict", "grade": "E", "n_scored": 2, "n_failed": 1},
    },
    {
        # exact band boundary: 5 % is grade B (lower bound inclusive), score 90
        "predictions": [95.0],
        "references": [100.0],
        "kwargs": {},
        "result": {"wape_pct": 5.0, "score": 90.0, "grade": "B"},
    },
]
