"""Test cases in the evaluate module-template format; checked by tests/core/test_metric_folders.py.

`result` lists a subset of the returned keys; `kwargs` are extra compute() arguments.
"""

_GOLD = [[60, 70, 50, 40, 30, 20, 10, 90], [40, 20, 30, 60, 50, 40, 80, 10], [80, 90, 70, 50, 60, 70, 40, 80]]

test_cases = [
    {
        # perfect ranks, +5 everywhere: 0.15*100 + 0.10*100 + 0.15*95 + 0.10*95 + 0.30*100 + 0.20*95 = 97.75
        "predictions": [[v + 5 for v in row] for row in _GOLD],
        "references": _GOLD,
        "kwargs": {},
        "result": {"mode": "reconstructed", "final": 97.75, "class": "excellent", "mae": 5.0, "bias": 5.0},
    },
    {
        # constant predictions: correlations undefined -> sub-scores 0; |bias| = |50 - 60| = 10
        "predictions": [[50.0] * 8] * 3,
        "references": _GOLD,
        "kwargs": {},
        "result": {"spearman": None, "pearson": None, "bias": -10.0},
    },
    {
        # one failed row dropped and counted
        "predictions": [[65, 75, 55, 45, 35, 25, 15, 95], [None] * 8, [85, 95, 75, 55, 65, 75, 45, 85]],
        "references": _GOLD,
        "kwargs": {"mae_share": 1.0},
        "result": {"n_scored": 2, "n_failed": 1, "mae": 5.0},
    },
]
