"""Test cases in the evaluate module-template format; checked by tests/core/test_metric_folders.py.

`result` lists a subset of the returned keys; `kwargs` are extra compute() arguments.
"""

test_cases = [
    {"predictions": ["the cats are running fast"], "references": ["a cat runs fast"], "kwargs": {},
     "result": {"rougeL": 2 * 0.6 * 0.75 / 1.35, "n_failed": 0}},
    {"predictions": ["", "identical text"], "references": ["gold", "identical text"], "kwargs": {},
     "result": {"rougeL": 0.5, "n_failed": 1}},
]
