# A stand-in for SGI-Bench's experimental-reasoning step_1_get_answer.py (our own text, upstream's names).
CONTEXT = """
TEST-ER: reason step by step and end with the letter in \\boxed{}, e.g. \\boxed{A}.
    """.strip()
