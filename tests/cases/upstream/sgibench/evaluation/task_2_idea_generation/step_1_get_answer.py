# A stand-in for SGI-Bench's idea-generation step_1_get_answer.py (our own text, upstream's names): the example
# idea upstream dumps as JSON after the question.
import json

example = {
    "Idea": "TEST-IDEA: one paragraph.",
    "ImplementationSteps": {"1": "First.", "2": "Second."},
    "ImplementationOrder": ["1-2"],
    "Dataset": "Some data.",
    "EvaluationMetrics": {"Metric": "what it measures"},
    "ExpectedOutcome": "Better results.",
}


def get_answer(ques_dict):
    raise RuntimeError("never executed")
