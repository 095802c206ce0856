"""Test cases in the evaluate module-template format; checked by tests/core/test_metric_folders.py.

`config` names the module config; `result` lists a subset of the returned keys; `kwargs` are extra compute()
arguments.
"""

test_cases = [
    {
        "config": "deep_research",
        "predictions": ["<answer>12</answer> then <answer>46</answer>", "<answer>3.73,no peak</answer>"],
        "references": ["46", "3.73, no peak"],
        "kwargs": {},
        "result": {"mode": "official", "exact_match": 50.0},
    },
    {
        "config": "deep_research",
        "predictions": ["<answer>12</answer> then <answer>46</answer>", "<answer>3.73,no peak</answer>"],
        "references": ["46", "3.73, no peak"],
        "kwargs": {"mode": "paper"},
        "result": {"mode": "paper", "exact_match": 100.0},
    },
    {
        "config": "experimental_reasoning",
        "predictions": ["\\boxed{A} or \\boxed{B}", "\\boxed{C}"],
        "references": [1, 2],
        "kwargs": {},
        "result": {"mca": 50.0},
    },
    {
        "config": "overall",
        "predictions": [15.74, 38.09, 28.79, 29.02, 28.87],
        "references": ["deep_research", "idea_generation", "dry_experiment", "wet_experiment",
                       "experimental_reasoning"],
        "kwargs": {},
        "result": {"sgi_score": 28.1},
    },
]
