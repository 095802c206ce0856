"""Test cases in the evaluate module-template format; checked by tests/core/test_metric_folders.py.

`result` lists a subset of the returned keys; `kwargs` are extra compute() arguments.
"""

test_cases = [
    {
        "predictions": [["p1", "p2", "p3"], ["q1", "q2", "q3"]],
        "references": [["p2"], ["q1", "q3"]],
        "kwargs": {"k_values": [1, 3]},
        "result": {"mrr": 0.75, "per_query_rr": [0.5, 1.0], "hits@1": 0.5, "recall@3": 1.0},
    },
    {
        "predictions": [["Beta", "Alpha", "Gamma"]],
        "references": ["Beta"],
        "kwargs": {"scores": [[5.0, 5.0, 3.0]], "tie_policy": "alphabetical"},
        "result": {"mode": "alphabetical", "mrr": 0.5},
    },
    {
        "predictions": [["Beta", "Alpha", "Gamma"]],
        "references": ["Beta"],
        "kwargs": {"scores": [[5.0, 5.0, 3.0]], "tie_policy": "expected_rank"},
        "result": {"mode": "expected_rank", "mrr": 0.75, "hits@1": 0.5},
    },
]
