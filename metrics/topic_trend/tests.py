"""Test cases in the evaluate module-template format; checked by tests/core/test_metric_folders.py.

`result` lists a subset of the returned keys; `kwargs` are extra compute() arguments.
"""

test_cases = [
    {"predictions": [10, 30], "references": [5, 15], "kwargs": {"history": [10, 10]},
     "result": {"delta_share_r2": 1.0, "delta_share_mae": 0.0, "mode": "official"}},
    {"predictions": [10, 10], "references": [10, 5],
     "kwargs": {"history": [4, 2], "mode": "paper", "history_papers": 10, "forecast_papers": 20},
     "result": {"delta_share_mae": 0.125, "mode": "paper"}},
]
